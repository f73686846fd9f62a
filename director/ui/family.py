"""What the operator sees of a family run: every member's lines on one screen, each named by its plan and
never cut into by another's, held back while the operator answers a question; the family's summary table.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from director.ui.render import clean, is_plain

if TYPE_CHECKING:
    from rich.console import Console


class Screen:
    """One output stream shared by the members: whole lines, one writer at a time, held during a question."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self._lock = threading.Lock()
        self._held = 0
        self._waiting: list[str] = []

    def write_line(self, line: str) -> None:
        with self._lock:
            if self._held:
                self._waiting.append(line)
                return
            self.stream.write(line)

    def flush(self) -> None:
        with self._lock:
            if not self._held:
                self.stream.flush()

    @contextmanager
    def held(self) -> Iterator[None]:
        """Members' lines wait while the operator is asked something (they follow once it is answered)."""
        with self._lock:
            self._held += 1
            self.stream.flush()
        try:
            yield
        finally:
            with self._lock:
                self._held -= 1
                if not self._held:
                    self.stream.write("".join(self._waiting))
                    self._waiting.clear()
                    self.stream.flush()

    def member(self, label: str, width: int = 0) -> MemberStream:
        return MemberStream(self, label.ljust(width))


class MemberStream:
    """A member's stream: every line it writes goes to the screen whole, after `label │ `."""

    def __init__(self, screen: Screen, label: str) -> None:
        self._screen = screen
        self._prefix = f"{label} │ "
        self._partial = ""
        self._lock = threading.Lock()

    def write(self, text: str) -> int:
        with self._lock:
            *lines, self._partial = (self._partial + text).split("\n")
        for line in lines:
            self._screen.write_line(self._prefix + line + "\n")
        return len(text)

    def flush(self) -> None:
        self._screen.flush()

    def close(self) -> None:
        """What is left of an unfinished line."""
        with self._lock:
            rest, self._partial = self._partial, ""
        if rest:
            self._screen.write_line(self._prefix + rest + "\n")
        self._screen.flush()

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise OSError("a family member's stream has no file descriptor")

    @property
    def encoding(self) -> str:
        return "utf-8"


@dataclass(frozen=True)
class Row:
    """One line of the family's summary."""

    plan: str
    outcome: str
    exit_code: int | None
    duration_s: float | None
    detail: str


def family_table(c: Console, title: str, rows: list[Row]) -> None:
    """The family's one summary: each plan in the order it ran, how it ended, its exit code and time."""
    if is_plain(c):
        cells = [
            (
                r.plan,
                r.outcome,
                "" if r.exit_code is None else f"exit {r.exit_code}",
                "" if r.duration_s is None else f"{r.duration_s:.1f}s",
                clean(r.detail),
            )
            for r in rows
        ]
        widths = [max((len(x[i]) for x in cells), default=0) for i in range(4)]
        lines = [title]
        for a, b, e, d_, x in cells:
            line = f"  {a:<{widths[0]}}  {b:<{widths[1]}}  {e:<{widths[2]}}  {d_:>{widths[3]}}  {x}"
            lines.append(line.rstrip())
        c.file.write("".join(line + "\n" for line in lines))
        c.file.flush()
        return
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    table.add_column("plan")
    table.add_column("outcome", no_wrap=True)
    table.add_column("exit", justify="right")
    table.add_column("time", justify="right")
    table.add_column("detail", overflow="fold")
    for r in rows:
        table.add_row(
            r.plan,
            r.outcome,
            "" if r.exit_code is None else str(r.exit_code),
            "" if r.duration_s is None else f"{r.duration_s:.1f}s",
            clean(r.detail),
        )
    c.print(table)


def say(c: Console, line: str) -> None:
    """One plain line of the family's own (never read as markup)."""
    c.print(clean(line), markup=False, highlight=False)


def as_dict(row: Row) -> dict[str, Any]:
    return {"plan": row.plan, "outcome": row.outcome, "exit_code": row.exit_code}

"""What the operator sees of a family run: every member's lines on one screen, each named by its plan and
never cut into by another's, held back while the operator answers a question; the family's summary table.
"""

from __future__ import annotations

import os
import textwrap
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from director.ui.render import clean, is_plain

if TYPE_CHECKING:
    from rich.console import Console


# ---------------------------------------------------------------------------------------------------
# How the screen names a member


def display_names(labels: Sequence[str]) -> dict[str, str]:
    """Each member's name on screen: its path relative to the directory all members share
    (`plans/examples/database.local.md` → `database.local.md`), so never two alike; the paths as given when
    they share none."""
    if len(labels) < 2:
        return {label: os.path.basename(label) or label for label in labels}
    try:
        common = os.path.commonpath([os.path.dirname(os.path.normpath(label)) or "." for label in labels])
    except ValueError:  # absolute and relative together
        return {label: label for label in labels}
    out = {label: os.path.relpath(os.path.normpath(label), common or ".") for label in labels}
    return out if len(set(out.values())) == len(out) else {label: label for label in labels}


def gutter_names(names: Sequence[str], limit: int | None = None) -> dict[str, str]:
    """The names in the gutter of every streamed line, as short as they stay unambiguous: the ending every
    name shares is dropped (`.local.md`, `.md`), and, past `limit` columns, a name is cut (`…`) only where the
    cut names stay distinct from every other."""
    def ending(ns: Sequence[str]) -> str:
        first = ns[0]
        for i in range(len(first)):
            if first[i] == "." and all(n.endswith(first[i:]) and len(n) > len(first) - i for n in ns):
                return first[i:]
        return ""

    cut = ending(names) if len(names) > 1 else (names[0][names[0].find("."):] if "." in names[0][1:] else "")
    short = {n: n[: len(n) - len(cut)] if cut else n for n in names}
    if len(set(short.values())) != len(short):
        short = {n: n for n in names}
    if limit is None or all(len(v) <= limit for v in short.values()):
        return short
    trimmed = {n: v if len(v) <= limit else v[: limit - 1] + "…" for n, v in short.items()}
    for n, v in trimmed.items():
        if v.endswith("…") and sum(1 for x in short.values() if x.startswith(v[:-1])) > 1:
            trimmed[n] = short[n]  # the cut would name two members: this one stays whole
    return trimmed


class Screen:
    """One output stream shared by the members: whole lines, one writer at a time, held during a question.
    At a terminal (`width`), a line too long for it is cut at a space into rows under the member's gutter."""

    def __init__(self, stream: IO[str], width: int | None = None) -> None:
        self.stream = stream
        self.width = width
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
    """A member's stream: every line it writes goes to the screen whole, after `label │ ` (at a terminal,
    a longer line's further rows after a blank gutter and `↪`)."""

    def __init__(self, screen: Screen, label: str) -> None:
        self._screen = screen
        self._prefix = f"{label} │ "
        self._blank = " " * len(label) + " │ "
        self._partial = ""
        self._lock = threading.Lock()

    def _rows(self, line: str) -> str:
        width = self._screen.width
        room = None if width is None else width - len(self._prefix)
        if room is None or room < 20 or len(line) <= room:
            return self._prefix + line + "\n"
        from director.ui.gatelines import CONTINUED, wrap_command

        indent = " " * (len(line) - len(line.lstrip(" ")))
        out = []
        for i, (a, b) in enumerate(wrap_command(line, room)):
            piece = line[a:b].rstrip()
            cont = self._blank + indent + "  " + CONTINUED
            out.append(self._prefix + piece if not i else cont + piece.lstrip())
        return "".join(row + "\n" for row in out)

    def write(self, text: str) -> int:
        with self._lock:
            *lines, self._partial = (self._partial + text).split("\n")
        for line in lines:
            self._screen.write_line(self._rows(line))
        return len(text)

    def flush(self) -> None:
        self._screen.flush()

    def close(self) -> None:
        """What is left of an unfinished line."""
        with self._lock:
            rest, self._partial = self._partial, ""
        if rest:
            self._screen.write_line(self._rows(rest))
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

    plan: str  # as given (events, `--json`)
    outcome: str
    exit_code: int | None
    duration_s: float | None  # the member's own time: what it waited for the operator's answers is apart
    detail: str
    waited_s: float = 0.0  # time at the operator's questions (its own, and others' asked before it)
    name: str = ""  # as the screen names it (`display_names`); the plan as given when empty


_OUTCOME_STYLE = {"completed": "green", "in sync": "green", "no changes": "green", "unconfirmed": "yellow",
                  "changes pending": "yellow", "drift": "yellow", "awaiting-approval": "yellow",
                  "skipped": "dim", "interrupted": "yellow", "failed": "red", "error": "red"}  # fmt: skip


def family_table(c: Console, title: str, rows: list[Row], width: int | None = None) -> None:
    """The family's one summary: each plan in the order it ran, how it ended, its exit code, its own time
    and, apart, the time it waited for the operator. One line a member in a log or a pipe; at a terminal
    (`width`) a detail that does not fit goes on the rows below, cut at spaces, never into columns."""
    cells = [
        (
            r.name or r.plan,
            r.outcome,
            "" if r.exit_code is None else f"exit {r.exit_code}",
            "" if r.duration_s is None else f"{r.duration_s:.1f}s",
            f"waited {r.waited_s:.1f}s" if r.waited_s >= 0.05 else "",
            clean(r.detail),
        )
        for r in rows
    ]
    widths = [max((len(x[i]) for x in cells), default=0) for i in range(5)]
    if width is not None and 2 + sum(widths) + 8 > width:
        widths[4] = 0  # the waits go on the rows below: the columns must fit the screen
    lines: list[tuple[str, str, list[str]]] = []  # (before the outcome, the rest, the detail's own rows)
    for name, outcome, code, took, waited, detail in cells:
        head = f"  {name:<{widths[0]}}  "
        if not widths[4] and waited:
            detail, waited = f"{waited} at a question" + (f"; {detail}" if detail else ""), ""
        rest = f"  {code:<{widths[2]}}  {took:>{widths[3]}}  {waited:<{widths[4]}}".rstrip()
        line = f"{head}{outcome:<{widths[1]}}{rest}"
        if detail and (width is None or len(line) + 2 + len(detail) <= width):
            lines.append((head, f"{outcome:<{widths[1]}}{rest}  {detail}".rstrip(), []))
        elif detail:
            assert width is not None
            below = ["      " + b for b in _words(detail, width - 6)]
            lines.append((head, f"{outcome:<{widths[1]}}{rest}".rstrip(), below))
        else:
            lines.append((head, f"{outcome:<{widths[1]}}{rest}".rstrip(), []))
    if is_plain(c):
        text = [title] + [row for head, rest, below in lines for row in (head + rest, *below)]
        c.file.write("".join(line.rstrip() + "\n" for line in text))
        c.file.flush()
        return
    from rich.text import Text

    c.print(Text(title, style="bold"), soft_wrap=True)
    for (head, rest, below), r in zip(lines, rows, strict=True):
        out = Text(head, style="bold")
        out.append(rest[: len(r.outcome)], style=_OUTCOME_STYLE.get(r.outcome, ""))
        out.append(rest[len(r.outcome) :])
        c.print(out, soft_wrap=True)
        for b in below:
            c.print(Text(b, style="dim"), soft_wrap=True)


def _words(text: str, width: int) -> list[str]:
    """`text` in rows of at most `width` columns, cut at spaces; a word longer than a row (a path) after one
    of its `/`, never a character at a time where a cut between words or path parts will do."""
    from director.ui.gatelines import wrap_command

    out: list[str] = []
    for row in textwrap.wrap(text, max(20, width), break_long_words=False, break_on_hyphens=False):
        out += [row[a:b].strip() for a, b in wrap_command(row, max(20, width))] if len(row) > width else [row]
    return out


def say(c: Console, line: str) -> None:
    """One plain line of the family's own (never read as markup)."""
    c.print(clean(line), markup=False, highlight=False)


def as_dict(row: Row) -> dict[str, Any]:
    return {"plan": row.plan, "outcome": row.outcome, "exit_code": row.exit_code}

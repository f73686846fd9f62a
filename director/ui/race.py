"""At a gate, the typed confirmation races approvals from elsewhere: the terminal's line is read without
blocking (the terminal keeps its own line editing) between short waits for a receipt (`Elsewhere.wait`:
a read of the journal file on SQLite, LISTEN/NOTIFY on PostgreSQL); whichever comes first is the answer.
A line typed half-way when a receipt wins is discarded, so it is not read as the next command's input."""

from __future__ import annotations

import contextlib
import os
import select
import sys
import termios
from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

if TYPE_CHECKING:
    from director.run.gates import Arrival, Elsewhere, GateContent
    from director.state.records import ApprovalRecord

POLL_S = 0.25  # the longest a receipt's wait holds the terminal's line unread


def race(
    c: Console,
    content: GateContent,
    asked: Text,
    hint: Text,
    elsewhere: Elsewhere,
    page: Callable[[], None] | None = None,
) -> bool | Arrival:
    """Ask for the gate's confirmation word while waiting for a receipt: True only for the word typed
    exactly (and only where a typed word can approve, `elsewhere.typed`), False for any other line or end
    of input; the `Arrival` of the receipts that release the gate (or of the time running out) when that
    comes first. With `page`, a typed `d` calls it (the diff, paged; no receipt is waited for meanwhile)
    and asks again."""
    from director.ui.render import is_plain

    word = content.review.confirm or "go"
    plain = is_plain(c)

    def say(lines: tuple[str, ...]) -> None:
        for line in lines:  # plain output has them from the event stream already
            if not plain:
                c.print(Text(line, style="yellow"))

    say(elsewhere.refused)
    c.print(hint)
    question = asked.copy()
    question.append(": ")
    c.print(question, end="")
    c.file.flush()
    fd = sys.stdin.fileno()
    typed = b""
    while True:
        ready, _, _ = select.select([fd], [], [], 0)
        if ready:
            chunk = os.read(fd, 4096)
            if not chunk:  # end of input declines
                c.print()
                return False
            typed += chunk
            if b"\n" in typed:
                line, _, typed = typed.partition(b"\n")
                answer = line.decode("utf-8", "replace").strip()
                if page is not None and answer == "d" and word != "d":
                    page()
                    c.print(question, end="")
                    c.file.flush()
                    continue
                return elsewhere.typed and answer == word  # a prompt that cannot approve: any line stops
            continue
        got = elsewhere.wait(POLL_S)
        if got.refused and not plain:
            c.print()
            say(got.refused)
            c.print(question, end="")
            c.file.flush()
        if got.receipt is not None or got.timed_out:
            with contextlib.suppress(termios.error, OSError):
                termios.tcflush(fd, termios.TCIFLUSH)  # a line typed half-way is not the next input
            c.print()
            r = got.receipt
            if r is not None:
                whose = got.said or f"receipt {r.id} {approver(r, got.principal)}"
                said = f"approved from elsewhere: {whose}"
                c.print(Text(said, style="bold green"), markup=False, highlight=False)
            return got


def approver(r: ApprovalRecord, verified: str | None) -> str:
    """Who a receipt says approved: the principal whose signature verified, else who recorded it (a signer it
    claims without a check is said to be unchecked)."""
    recorded = f"{r.operator}@{r.host}"
    if verified:
        return f"by {verified} (signature verified; recorded by {recorded}, {r.how})"
    if r.principal:
        return f"by {recorded} ({r.how}; claims to be signed by {r.principal}, not checked)"
    return f"by {recorded} ({r.how})"


class PolledLine:
    """Standard input read a line at a time by polling it (the terminal keeps its own line editing): the
    main thread runs Python between polls, so a Ctrl-C the kernel handed to another thread still raises
    here at once (a thread blocked in `input()` would only see it at the next key)."""

    POLL_S = 0.1

    def __init__(self) -> None:
        self.reading = False  # a Ctrl-C is raised here only while reading (`prompts._cancellable`)
        self.cancelled = False  # a Ctrl-C came while the question was printed: raised when reading starts

    def readline(self) -> str:
        fd = sys.stdin.fileno()
        got = b""
        self.reading = True
        try:
            if self.cancelled:
                raise KeyboardInterrupt
            while not got.endswith(b"\n"):
                ready, _, _ = select.select([fd], [], [], self.POLL_S)
                if not ready:
                    continue
                chunk = os.read(fd, 4096)
                if not chunk:
                    if got:
                        break
                    raise EOFError
                got += chunk
        finally:
            self.reading = False
        return got.decode("utf-8", "replace")

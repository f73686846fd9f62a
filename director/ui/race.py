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
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

if TYPE_CHECKING:
    from director.run.gates import Arrival, Elsewhere, GateContent

POLL_S = 0.25  # the longest a receipt's wait holds the terminal's line unread


def race(c: Console, content: GateContent, asked: Text, hint: Text, elsewhere: Elsewhere) -> bool | Arrival:
    """Ask for the gate's confirmation word while waiting for a receipt: True only for the word typed
    exactly (and only where a typed word can approve, `elsewhere.typed`), False for any other line or end
    of input; the `Arrival` of the receipts that release the gate (or of the time running out) when that
    comes first."""
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
            if b"\n" in typed:  # a prompt that cannot approve: any line stops waiting
                line = typed.split(b"\n", 1)[0].decode("utf-8", "replace").strip()
                return elsewhere.typed and line == word
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
                whose = got.said or f"receipt {r.id} by {r.operator}@{r.host} ({r.how})"
                said = f"approved from elsewhere: {whose}"
                c.print(Text(said, style="bold green"), markup=False, highlight=False)
            return got

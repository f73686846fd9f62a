"""A traced block's command marks: which commands failed (and with which status) and which wrote output.

While a verify block runs traced, a `DEBUG` trap (`TRAP`, armed by the block's setup with `set -T`, so that
functions and subshells inherit it) writes, before every simple command, a short mark to descriptor
`FD` -- the block's own terminal, the one its commands write to:

    \\x1d <status of the command before> \\x1f <$BASHPID> \\x1f <$LINENO> \\x1f <function> \\x1c

The terminal keeps writes in order, so what a command prints arrives between its mark and the next one,
and the status a mark carries is that of the previous command of the same shell (`$BASHPID`: pipeline
parts and `$(…)` run in their own). `Marks` strips the marks from the output as it streams (the operator,
the journal and the verdict see the block's output as plain bash would print it) and keeps, bounded:

- `failed`: (line, function, status) of each command that ended non-zero;
- `wrote`: (line, function) of each command something was printed after (stdout or stderr, which share
  the terminal).

These never contain what was printed (words never decide, and a value may be secret): line numbers,
function names and exit statuses only. `entries()` hands them on as trace entries (`STATUS`, `WROTE`) so
that `director.plan.bash.unit_paths` can fold them into a check's path.

The marks stop where the block ends: the EXIT capture's first command is marked (its status is that of the
block's last command, and its function, `END`, says the block's end was reached), then the capture removes
the trap while `__director_marks` (set by the setup) says it is Director's, so that Director's own commands
cost no marks; the block's own EXIT handler runs with the marks armed again. A block that sets or removes a
DEBUG trap of its own through `trap` unsets `__director_marks`: its trap is then left as it is.

What this cannot see: a command whose output is captured (`x=$(cmd)`: nothing reaches the terminal), a
block that closes or moves descriptor `FD`, output a background job writes later (it lands after whatever
mark came last), and the status of the last command of a pipeline part or subshell (no mark follows it in
its own shell).
"""

from __future__ import annotations

import re

from director.plan.bash import TraceEntry
from director.plan.bash.trace import MARKED, STATUS, WROTE

__all__ = ["END", "FD", "TRAP", "Marks"]

FD = 62  # the descriptor the marks go to: a copy of the block's terminal (its stdout)
# The function of the block's EXIT capture (`director.exec.session`): a mark, or a trace entry, from it says
# that what was read reached the block's end.
END = "__director_exit"
# One builtin per command: its first expansion is `$?` (the status of the command that ran before the trap),
# and its last argument `$_` (that command's last argument), which `%.0s` consumes without printing -- so
# that after the trap `$_` is what the block's own command left, as plain bash has it.
COMMAND = (
    r"""builtin printf "\035%s\037%s\037%s\037%s\034%.0s" "$?" "$BASHPID" "$LINENO" "${FUNCNAME[0]-}" "$_" """
    f""">&{FD} 2>/dev/null || :"""
)  # no single quote in it: quoted as it is below, and shown by `trap -p` as `trap -- 'COMMAND' DEBUG`
# Armed as the setup's last command but one (before `set -x`): none of the setup's own commands is marked.
TRAP = f"builtin set -T; builtin trap '{COMMAND}' DEBUG"
_MARK = re.compile(r"\x1d(\d+)\x1f(\d+)\x1f(\d+)\x1f([^\x1c\x1d\x1f]{0,200})\x1c")
_MAX = 4096  # distinct (line, function[, status]) kept: a block has far fewer lines


class Marks:
    """Strips a traced block's marks from its output and keeps which commands failed and which wrote."""

    def __init__(self) -> None:
        self._held = ""  # an incomplete mark at the end of the last chunk
        self._last: tuple[int, str] | None = None  # the command whose mark came last (any shell)
        self._prev: dict[str, tuple[int, str]] = {}  # per shell ($BASHPID): the command before
        self.failed: set[tuple[int, str, int]] = set()
        self.wrote: set[tuple[int, str]] = set()
        self.reached_end = False  # a mark from the block's EXIT capture (`END`) was read

    def feed(self, text: str) -> str:
        """`text` without the marks in it (a mark cut at the end is held for the next chunk)."""
        text = self._held + text
        self._held = ""
        cut = text.rfind("\x1d")
        if cut >= 0 and "\x1c" not in text[cut:] and len(text) - cut < 256:
            text, self._held = text[:cut], text[cut:]
        out: list[str] = []
        pos = 0
        for m in _MARK.finditer(text):
            self._printed(text[pos : m.start()])
            out.append(text[pos : m.start()])
            self._mark(int(m.group(1)), m.group(2), int(m.group(3)), m.group(4))
            pos = m.end()
        self._printed(text[pos:])
        out.append(text[pos:])
        return "".join(out)

    def flush(self) -> str:
        """What is held (a cut mark that never completed: it was output after all)."""
        text, self._held = self._held, ""
        self._printed(text)
        return text

    def _printed(self, text: str) -> None:
        if text and self._last is not None and len(self.wrote) < _MAX:
            self.wrote.add(self._last)

    def _mark(self, status: int, shell: str, line: int, function: str) -> None:
        before = self._prev.get(shell)
        if before is not None and status != 0 and len(self.failed) < _MAX:
            self.failed.add((*before, status))
        if function.startswith("__director"):
            self.reached_end = self.reached_end or function == END
            self._last = None  # Director's own capture: nothing of the block's
            self._prev.pop(shell, None)
            return
        self._last = self._prev[shell] = (line, function)

    def entries(self) -> list[TraceEntry]:
        """What was seen, as trace entries: `MARKED` (the marks ran, whatever they saw), `STATUS` (rest: the
        status) and `WROTE`."""
        out = [TraceEntry(0, "", MARKED, "")]
        out += [TraceEntry(line, fn, STATUS, str(st)) for line, fn, st in sorted(self.failed)]
        out += [TraceEntry(line, fn, WROTE, "") for line, fn in sorted(self.wrote)]
        return out

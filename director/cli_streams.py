"""The standard streams at start: one the caller closed becomes /dev/null, before anything opens a file."""

from __future__ import annotations

import sys
from typing import Any, TextIO


def closed_std_streams_to_devnull() -> None:
    """A standard stream the caller closed (`<&-`, `>&-`, `2>&-`) becomes /dev/null.

    Otherwise the next file Director opens would take its number (a journal on descriptor 2 would receive
    warnings) and `sys.stdin`/`sys.stdout` would be None. So: a closed stdin reads EOF (the run is not
    interactive), a closed stdout or stderr discards what is written, and the command runs and exits with
    its usual code.
    """
    import os

    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        try:
            os.fstat(fd)
            if getattr(sys, name) is not None:
                continue
        except OSError:
            new = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
            if new != fd:
                os.dup2(new, fd)
                os.close(new)
        errors = "backslashreplace" if fd == 2 else "strict"
        stream = open(fd, "r" if fd == 0 else "w", encoding="utf-8", errors=errors, closefd=False)  # noqa: SIM115
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


class OutputClosed(Exception):
    """The reader of stdout went away (`director show plan.md | head -1`): the command's output is cut short.

    Not a `BrokenPipeError` on purpose: rich catches that one itself and exits 1, which means findings.
    `director.error_handler` turns this into exit 130, as the README's exit-code table says.
    """


class GuardedStdout:
    """`sys.stdout`, whose reader may go away: the first write or flush that finds the pipe closed points
    descriptor 1 at /dev/null, then either ends the command (`OutputClosed`, exit 130) or, for a command
    that must finish what it started (`keep_going()`: apply, teardown, plan, check), says so once on
    stderr and goes on with its output discarded, as under `nohup`: the run ends as it would have, its
    journal, ledger and exit code the same."""

    def __init__(self, inner: TextIO) -> None:
        self._inner = inner
        self.keep_going = False
        self.reader_gone = False

    def write(self, text: str) -> int:
        try:
            return self._inner.write(text)
        except BrokenPipeError:
            self._gone()
            return len(text)

    def flush(self) -> None:
        try:
            self._inner.flush()
        except BrokenPipeError:
            self._gone()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def _gone(self) -> None:
        import os

        if not self.reader_gone:
            self.reader_gone = True
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._inner.fileno())
            os.close(devnull)
            if self.keep_going:
                sys.stderr.write("director: stdout's reader went away; the run goes on, output discarded\n")
        if not self.keep_going:
            raise OutputClosed


def guard_stdout() -> None:
    """Put `GuardedStdout` in place of `sys.stdout` (at start, before anything holds the stream)."""
    if not isinstance(sys.stdout, GuardedStdout):
        sys.stdout = GuardedStdout(sys.stdout)


def keep_going_without_reader() -> None:
    """This command finishes what it started when stdout's reader goes away (its output discarded)."""
    if isinstance(sys.stdout, GuardedStdout):
        sys.stdout.keep_going = True

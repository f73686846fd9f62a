"""The standard streams at start: one the caller closed becomes /dev/null, before anything opens a file."""

from __future__ import annotations

import sys


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

"""The one place where whatever ends a command early becomes one `error: …` line and its exit code.

As pre-commit's `error_handler` and copier's `_handle_exceptions`: a `DirectorError` says its message
and its `ExitCode`; a usage error found by typer exits 64; Ctrl-C and a closed output pipe exit 130;
a full disk, a read-only mount or a permission is the machine's state, said in one line (70); anything
else is a bug, with its traceback (70). Never exit 1, which means findings.
"""

from __future__ import annotations

import errno
import os
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

import typer

from director.cli_streams import OutputClosed
from director.errors import DirectorError, ExitCode, one_line

# click's UsageError, reached through typer (click is typer's dependency, not ours).
ClickUsageError: type[Exception] = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")


def _say_error(message: str) -> None:
    """One `error: …` line on stderr (line breaks quoted from a plan or a path are shown escaped); never
    read as rich markup (it may quote block output)."""
    from rich.console import Console
    from rich.text import Text

    err = Console(stderr=True, highlight=False)
    err.print(Text.assemble(("error:", "bold red"), " ", one_line(message)), soft_wrap=True)


@contextmanager
def error_handler() -> Iterator[None]:
    """Turn whatever ends a command early into its exit code; a traceback only for a bug (exit 70)."""
    try:
        yield
    except DirectorError as exc:
        _say_error(str(exc))
        raise SystemExit(int(exc.exit_code)) from None
    except ClickUsageError as exc:  # a bad option or argument, found by typer
        exc.show()  # type: ignore[attr-defined]
        raise SystemExit(int(ExitCode.USAGE)) from None
    except (KeyboardInterrupt, typer.Abort):
        raise SystemExit(int(ExitCode.INTERRUPTED)) from None
    except OutputClosed:  # stdout's reader went away (cli_streams.GuardedStdout already muted it)
        raise SystemExit(int(ExitCode.INTERRUPTED)) from None
    except BrokenPipeError:
        # The reader went away (`director audit --jsonl | head -1`): the output was cut short, like an
        # interrupt. Point stdout at /dev/null so the interpreter's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(int(ExitCode.INTERRUPTED)) from None
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            # A path the system cannot even look up (a PLAN, --state-dir, --events… over its limits): a
            # bad argument, said in one line (`init` and `require_plan` name the argument themselves).
            _say_error(_os_error(exc))
            raise SystemExit(int(ExitCode.USAGE)) from None
        if exc.errno not in _ENVIRONMENT_FAULTS:
            _bug(exc)
        # Disk full, read-only file system, no permission: the machine's state, not a bug (no traceback).
        _say_error(_os_error(exc))
        raise SystemExit(int(ExitCode.INTERNAL)) from None
    except Exception as exc:  # a bug: say so, keep the traceback for the report, never exit 1
        _bug(exc)


# OS errors that describe the machine (a full disk, a read-only mount, a permission), never a bug.
_ENVIRONMENT_FAULTS = frozenset(
    {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO, errno.EMFILE}
)


def _os_error(exc: OSError) -> str:
    """`cannot write PATH: No space left on device` (the path the system named, if it named one)."""
    where = " → ".join(str(f) for f in (exc.filename, exc.filename2) if f is not None)
    reason = exc.strerror or str(exc)
    return f"{where}: {reason}" if where else reason


def _bug(exc: BaseException) -> NoReturn:
    traceback.print_exc()
    _say_error(f"internal error: {type(exc).__name__}: {exc}")
    raise SystemExit(int(ExitCode.INTERNAL)) from None

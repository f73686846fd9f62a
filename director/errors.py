"""One error hierarchy. Errors never print; `cli.py` alone turns them into messages and exit codes."""

from __future__ import annotations


class DirectorError(Exception):
    """Base of every error Director raises on purpose."""

    exit_code = 1


class PlanError(DirectorError):
    """A malformed plan: the message names file:line and what is wrong."""

    exit_code = 65

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        self.path = path
        self.line = line  # 1-based
        self.reason = message
        where = path or "<plan>"
        if line is not None:
            where = f"{where}:{line}"
        super().__init__(f"{where}: {message}")


class UsageError(DirectorError):
    """A bad option or argument (names the option)."""

    exit_code = 64


class TransitionError(DirectorError):
    """An invalid lifecycle transition (a bug or a corrupted journal, never silently applied)."""

    exit_code = 70


class LeaseHeld(DirectorError):
    """Another live process holds this plan's lease."""

    exit_code = 5


class PrerequisiteError(DirectorError):
    """The target cannot run here (wrangler missing, no credentials, Node too old…)."""

    exit_code = 6


class LedgerConflict(DirectorError):
    """The Live State section was edited while Director was running; refusing to clobber it."""

    exit_code = 7


class JournalError(DirectorError):
    """The journal database is unusable (corrupt, newer schema…)."""

    exit_code = 70


class CrashLoop(DirectorError):
    """A run keeps dying without progress; Director stops recovering it."""

    exit_code = 8


class UpstreamGuard(DirectorError):
    """A teardown command would destroy a bound (upstream) resource, or one disappeared during teardown."""

    exit_code = 9

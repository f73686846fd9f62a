"""One error hierarchy and one exit-code table. Errors never print; `cli.py` alone turns them into
messages and exit codes."""

from __future__ import annotations

import enum
from collections.abc import Iterable


class ExitCode(enum.IntEnum):
    """Every code the `director` command returns (README "Exit codes"); nothing else is ever returned."""

    OK = 0  # applied / in sync / no differences
    FINDINGS = 1  # lint findings, diff differences (only these two: CI reads 1 as "differences")
    CHANGES = 2  # plan: something would change; check: drift (terraform's -detailed-exitcode)
    STEP_FAILED = 3  # a block or a verify failed; the run is `failed`
    AWAITING_APPROVAL = 4  # a gate needs a human go; the run is `awaiting-approval`
    LEASE_HELD = 5  # another live process holds the plan's lease
    PREREQUISITES = 6  # target prerequisites missing
    LEDGER_CONFLICT = 7  # the Live State was edited during the run
    CRASH_LOOP = 8  # the run died repeatedly without progress
    UPSTREAM_GUARD = 9  # a teardown would destroy (or lost) a bound upstream resource
    UNCONFIRMED = 10  # completed, but a check after an act was inconclusive (docs/verify-semantics.md)
    STATE_UNAVAILABLE = 11  # the state database (--state-url) was unreachable or lost mid-run; apply resumes
    NOT_CREATED = 12  # check: the plan was never applied here (its Live State is the published template's)
    JOURNAL_TAMPERED = 13  # the journal's hash chain is broken: a row was edited, deleted or added by hand
    APPROVAL_REFUSED = 14  # approve: no run will release the gate on the receipt (its signers or policy)
    USAGE = 64  # a bad option or argument (sysexits EX_USAGE)
    PLAN_ERROR = 65  # a malformed plan (sysexits EX_DATAERR)
    INTERNAL = 70  # journal unusable, ledger write check failed, a bug (sysexits EX_SOFTWARE)
    INTERRUPTED = 130  # Ctrl-C / SIGTERM (128 + SIGINT); the next apply resumes


# What str.splitlines() (and a terminal) may break a line on: shown escaped wherever a message quotes a
# path or a plan's text, so that a one-line message stays one line (`director.error_handler`, `lint`).
_LINE_BREAKS = str.maketrans(
    {c: c.encode("unicode_escape").decode() for c in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"}
)


def one_line(text: str) -> str:
    """`text` with its line breaks shown escaped (`\\n`): one line, whatever a path or a plan holds."""
    return text.translate(_LINE_BREAKS)


# Several plans' codes as one (a family, a fleet `check`): the most severe wins, never the largest number --
# a member that failed (3) outranks one that completed unconfirmed (10), drift (2) outranks a plan never
# applied here (12). Outcomes first, least severe first; then failures; an interruption outranks all.
_SEVERITY: tuple[int, ...] = (
    ExitCode.OK,
    ExitCode.NOT_CREATED,
    ExitCode.UNCONFIRMED,
    ExitCode.FINDINGS,
    ExitCode.CHANGES,
    ExitCode.AWAITING_APPROVAL,
    ExitCode.APPROVAL_REFUSED,
    ExitCode.UPSTREAM_GUARD,
    ExitCode.STEP_FAILED,
    ExitCode.LEDGER_CONFLICT,
    ExitCode.CRASH_LOOP,
    ExitCode.LEASE_HELD,
    ExitCode.PREREQUISITES,
    ExitCode.STATE_UNAVAILABLE,
    ExitCode.USAGE,
    ExitCode.PLAN_ERROR,
    ExitCode.INTERNAL,
    ExitCode.JOURNAL_TAMPERED,  # an alarm: a journal edited by hand outranks every failure
    ExitCode.INTERRUPTED,
)


def most_severe(codes: Iterable[int]) -> ExitCode:
    """The one exit code of several plans' (`_SEVERITY`); OK when there are none."""
    rank = {c: i for i, c in enumerate(_SEVERITY)}
    return ExitCode(max(codes, key=lambda c: rank.get(c, len(rank)), default=ExitCode.OK))


class DirectorError(Exception):
    """Base of every error Director raises on purpose.

    Raise a subclass: the base's code is "internal" because 1 means findings/differences to CI.
    Every class's `exit_code` is an `ExitCode` member (typed `int` only so that a subclass elsewhere that
    still says `exit_code = 8` type-checks; tests/test_exit_codes.py checks the value is a member).
    """

    exit_code: int = ExitCode.INTERNAL


class PlanError(DirectorError):
    """A malformed plan: the message names file:line and what is wrong."""

    exit_code = ExitCode.PLAN_ERROR

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        self.path = path
        self.line = line  # 1-based
        self.reason = message
        where = path or "<plan>"
        if line is not None:
            where = f"{where}:{line}"
        super().__init__(f"{where}: {message}")


class UsageError(DirectorError):
    """A bad option or argument, or a command that does not apply yet (names what is wrong)."""

    exit_code = ExitCode.USAGE


class TransitionError(DirectorError):
    """An invalid lifecycle transition (a bug or a corrupted journal, never silently applied)."""

    exit_code = ExitCode.INTERNAL


class LeaseHeld(DirectorError):
    """Another live process holds this plan's lease."""

    exit_code = ExitCode.LEASE_HELD


class PrerequisiteError(DirectorError):
    """The target cannot run here (wrangler missing, no credentials, Node too old…)."""

    exit_code = ExitCode.PREREQUISITES


class LedgerConflict(DirectorError):
    """The Live State section was edited while Director was running; refusing to clobber it."""

    exit_code = ExitCode.LEDGER_CONFLICT


class CrashLoop(DirectorError):
    """A run keeps dying without progress; Director stops recovering it."""

    exit_code = ExitCode.CRASH_LOOP


class UpstreamGuard(DirectorError):
    """A teardown command would destroy a bound (upstream) resource, or one disappeared during teardown."""

    exit_code = ExitCode.UPSTREAM_GUARD


class JournalError(DirectorError):
    """The journal database is unusable (corrupt, newer schema…)."""

    exit_code = ExitCode.INTERNAL


class StorageError(DirectorError):
    """A file Director must write cannot be written (disk full, read-only file system, no permission).

    Not a bug, so no traceback: the message names the path and the system's reason, and whatever the
    failed write had begun is removed (a plan is replaced atomically or not at all).
    """

    exit_code = ExitCode.INTERNAL


class StateUnavailable(DirectorError):
    """The state database cannot be reached, or its connection was lost (server restart, network, an
    unlock that broke this run's lease). Nothing is retried: the next apply resumes from the journal."""

    exit_code = ExitCode.STATE_UNAVAILABLE


class SessionTooLarge(DirectorError):
    """A block left more session (variables, arrays, functions) than Director carries between blocks
    (`director.exec.session.SESSION_MAX_BYTES`, docs/limits.md): the run stops there, `failed`."""

    exit_code = ExitCode.STEP_FAILED


class JournalTampered(DirectorError):
    """The journal is not as Director wrote it: a row that bears on a gate was edited, deleted, added or
    moved (its hash chain is broken, `director.state.chain`). No gate is released across a break."""

    exit_code = ExitCode.JOURNAL_TAMPERED


class LedgerWriteError(DirectorError):
    """Write-back produced text that does not re-read as intended (a Director bug; nothing is written)."""

    exit_code = ExitCode.INTERNAL

"""`director unlock`: break a plan's lease that this host cannot check (its holder ran on another host).

With `--state-url` (PostgreSQL) the database knows whether the holder's session lives: a dead holder's
row is cleared, a live holder's session is ended (it stops at its next journal write, exit 11), after
the same confirmation; audited as `lease-unlocked`.

A holder on this host never needs this: when it dies the kernel drops its lock and the next `apply` takes
the lease over by itself; while it lives, unlock refuses. A holder on another host (the plan on a shared
file system) cannot be checked from here, so an operator vouches that it is gone: unlock names it, asks
(unless `--yes`), then takes the lease over and releases it, audited (`lease-takeover`, how
`director unlock`, by whom).
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path

from director.commands.paths import open_journal, paths_for, require_plan
from director.errors import ExitCode, LeaseHeld, UsageError


def unlock_command(
    plan_path: Path,
    *,
    state_dir: Path | None,
    yes: bool,
    operator: str | None,
    state_url: str | None = None,
) -> ExitCode:
    """Forget an unreleased lease holder after confirmation; refuses a holder that is running."""
    from director.exec.processes import pid_alive
    from director.run.gates import operator_name
    from director.state.lease import recorded_holder, unlock

    require_plan(plan_path)
    if state_url:
        return _unlock_shared(plan_path, state_dir=state_dir, state_url=state_url, yes=yes, operator=operator)
    from director.state.journal import Journal

    journal = open_journal(plan_path, state_dir)
    if journal is None:
        raise UsageError(f"{plan_path}: not locked (no run yet)")
    assert isinstance(journal, Journal)  # without --state-url the journal is SQLite's
    lock = paths_for(plan_path, state_dir, None).lock
    try:
        holder, busy = recorded_holder(lock, journal)
        here = socket.gethostname()
        if busy:
            who = holder.describe() if holder is not None else "a process"
            raise LeaseHeld(
                f"the lease is held right now by {who}; unlock never breaks a running holder "
                "(stop that process, or wait for it)"
            )
        if holder is None:
            raise UsageError(f"{plan_path}: not locked (no lease holder recorded)")
        if holder.host == here and pid_alive(holder.pid):
            # The lock is free, so this pid was reused by another process: the holder itself is gone.
            print(f"the holder (pid {holder.pid}) is gone; pid {holder.pid} now belongs to another process")
        if holder.host != here and not yes:
            if not sys.stdin.isatty():
                raise UsageError(
                    f"unlock: the lease was taken by {holder.describe()}; this host cannot tell whether it "
                    "still runs. If it does not, confirm with --yes"
                )
            print(f"The lease was taken by {holder.describe()} and never released.")
            print(f"This host ({here}) cannot tell whether that process still runs.")
            if not _confirm("Break the lease? Only if that process is gone"):
                return ExitCode.USAGE
        forgotten = unlock(lock, journal, operator=operator_name(operator), plan=str(plan_path))
    finally:
        journal.close()
    if forgotten is None:
        raise UsageError(f"{plan_path}: not locked (the holder released the lease meanwhile)")
    print(f"unlocked: forgot {forgotten.describe()} (audited; the next apply resumes the run)")
    return ExitCode.OK


def _confirm(question: str) -> bool:
    import typer

    if typer.confirm(question, default=False):
        return True
    print("not unlocked")
    return False


def _unlock_shared(
    plan_path: Path, *, state_dir: Path | None, state_url: str, yes: bool, operator: str | None
) -> ExitCode:
    """PostgreSQL: the database tells a live holder from a dead one; a live one's session is ended."""
    import os

    from director.commands.paths import backend_for
    from director.run.gates import operator_name
    from director.state.backends import PgBackend
    from director.state.identity import host_name

    backend = backend_for(plan_path, state_dir, state_url)
    assert isinstance(backend, PgBackend)  # a --state-url is PostgreSQL's
    store = backend.open(create=False)
    if store is None:
        raise UsageError(f"{plan_path}: nothing recorded yet; there is no lease to unlock")
    try:
        holder = store.lease_holder()
        if holder is None:
            print("the lease was free; nothing to unlock")
            return ExitCode.OK
        alive = backend.holder_alive(store, holder)
        if not yes:
            what = "is running: its database session will be ended" if alive else "is not running"
            if not sys.stdin.isatty():
                raise UsageError(
                    f"unlock: the lease is held by pid {holder.pid} on {holder.host}, which {what}; "
                    "confirm with --yes"
                )
            print(f"The lease is held by pid {holder.pid} on {holder.host}, which {what}.")
            if not _confirm("Break the lease?"):
                return ExitCode.USAGE
        by = {"host": host_name(), "pid": os.getpid(), "operator": operator_name(operator)}
        previous, alive = backend.unlock(store, by=by)
    finally:
        store.close()
    if previous is None:
        print("the lease was free; nothing to unlock")
    else:
        how = "ended its database session" if alive else "it was not running"
        print(f"unlocked: pid {previous.pid} on {previous.host} held it ({how}); audited")
    return ExitCode.OK

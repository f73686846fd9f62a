"""`director unlock`: break a plan's lease that this host cannot check (its holder ran on another host).

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


def unlock_command(plan_path: Path, *, state_dir: Path | None, yes: bool, operator: str | None) -> ExitCode:
    """Forget an unreleased lease holder after confirmation; refuses a holder that is running."""
    from director.exec.processes import pid_alive
    from director.run.gates import operator_name
    from director.state.lease import recorded_holder, unlock

    require_plan(plan_path)
    journal = open_journal(plan_path, state_dir)
    if journal is None:
        raise UsageError(f"{plan_path}: not locked (no run yet)")
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
            import typer

            print(f"The lease was taken by {holder.describe()} and never released.")
            print(f"This host ({here}) cannot tell whether that process still runs.")
            if not typer.confirm("Break the lease? Only if that process is gone", default=False):
                print("not unlocked")
                return ExitCode.USAGE
        forgotten = unlock(lock, journal, operator=operator_name(operator), plan=str(plan_path))
    finally:
        journal.close()
    if forgotten is None:
        raise UsageError(f"{plan_path}: not locked (the holder released the lease meanwhile)")
    print(f"unlocked: forgot {forgotten.describe()} (audited; the next apply resumes the run)")
    return ExitCode.OK

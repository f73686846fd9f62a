"""`director state forget PLAN`: reset a plan's local state, so that it reads as never applied here.

What is removed: the plan's state directory (`.director/<plan file>/` beside the plan, or `--state-dir`):
its journal (every run, step, approval receipt and event), lease, workspace and, under `--target local`,
its local account (the `wrangler dev` sessions' records and logs, wrangler's own debug logs). Refused
while a run holds the plan's lease (exit 5), and while the journal says what the plan created may still
exist (its latest run is not a completed teardown: exit 64) unless `--force`; it asks first unless `--yes`.

What is not removed, and said so: the plan file (its Live State is the plan's own text: `git checkout PLAN`
restores it), the wrangler that `--target local` installed (`DIRECTOR_CACHE`, shared by every plan), and a
PostgreSQL journal (`--state-url`: shared, never forgotten from one machine).
"""

from __future__ import annotations

import fcntl
import os
import shutil
from pathlib import Path

from director.commands.paths import paths_for
from director.errors import ExitCode, LeaseHeld, UsageError


def forget_command(plan_path: Path, *, state_dir: Path | None, yes: bool, force: bool) -> ExitCode:
    """Remove the plan's local state after the checks above; print what was removed and what remains."""
    import sys

    from director.state.backends import SqliteBackend

    if plan_path.is_dir():
        raise UsageError(f"PLAN: {plan_path} is a directory; name one plan file")
    p = paths_for(plan_path, state_dir, None)
    if not p.state.is_dir():
        print(f"nothing to forget: no local state for {plan_path} ({p.state} does not exist)")
        _say_what_remains(plan_path)
        return ExitCode.OK
    backend = SqliteBackend(p.journal, p.lock)
    journal = backend.open(create=False) if p.journal.exists() else None
    what = "no journal"
    if journal is not None:
        try:
            with backend.acquire(journal, run_kind="forget", plan=str(plan_path)):
                latest = journal.latest_run()
                runs = 0 if latest is None else latest.id
                what = f"{runs} run(s) in its journal"
                gone = latest is None or (latest.kind, str(latest.state)) == ("teardown", "completed")
                if not gone and not force:
                    assert latest is not None
                    raise UsageError(
                        f"{plan_path}: its journal says what it created may still exist (latest run: "
                        f"{latest.kind} #{latest.id}, {latest.state}); tear it down first "
                        f"(director teardown {plan_path} …), or pass --force to forget it anyway (what "
                        "exists stays, and Director no longer knows it)"
                    )
        finally:
            journal.close()
    print(f"forget {plan_path}: remove {p.state} ({what}, {_size(p.state)}): journal, approval receipts, "
          "lease, workspace, local account and logs")  # fmt: skip
    if not yes:
        if not sys.stdin.isatty():
            raise UsageError("state forget: pass --yes to confirm without a terminal")
        import typer

        if not typer.confirm("forget it?", default=False):
            print("nothing removed")
            return ExitCode.OK
    _remove_under_lock(p.state, p.lock)
    print(f"forgotten: {p.state} removed; {plan_path} now reads as never applied here")
    _say_what_remains(plan_path)
    return ExitCode.OK


def _remove_under_lock(state: Path, lock: Path) -> None:
    """Remove the directory while holding the plan's lock file, so that no run starts in it meanwhile."""
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise LeaseHeld(f"a run took the plan's lease meanwhile (lock {lock}); nothing removed") from None
        for entry in sorted(state.iterdir()):
            if entry == lock:
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        lock.unlink()
        state.rmdir()
    finally:
        os.close(fd)


def _size(path: Path) -> str:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                continue
    return f"{total / 1e6:.1f} MB" if total >= 100_000 else f"{total / 1e3:.0f} kB"


def _say_what_remains(plan_path: Path) -> None:
    """What `forget` never removes, and how to remove it."""
    from director.targets.install import cache_dir

    print(f"not removed: the plan file's Live State (`git checkout {plan_path}` restores the published one); "
          f"the wrangler --target local installed, shared by every plan ({cache_dir()}: "
          "`rm -rf` it to remove it); a --state-url journal (shared)")  # fmt: skip

"""One writer per plan: an OS lock on a lock file, with the holder recorded for humans and takeovers.

The `fcntl.flock` is the truth: the kernel drops it when the holder dies, however it dies. The holder
(pid, host, start, kind) is written twice, for two readers: into the lock file as JSON, so a contender
can name the holder without touching the database, and into the journal's `lease_holder` row, so a
later run can see that a holder never released (it crashed) and audit the takeover.

- flock busy                                   -> `LeaseHeld` naming pid, host, start time and kind.
- flock free, no unreleased holder recorded    -> acquire.
- flock free, unreleased holder on this host   -> stale (its pid is dead, or was reused by an unrelated
                                                  process since nothing holds the lock): take over and
                                                  record a `lease-takeover` audit event.
- flock free, unreleased holder on another host -> cannot be verified from here (flock on network file
                                                  systems is unreliable): `LeaseHeld`, unless `force`
                                                  (`director unlock`: an operator vouches that it is gone).

The lock file is never deleted: unlinking it would let a second process lock a fresh inode while the
first still holds the old one.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from director.errors import LeaseHeld
from director.proc import pid_alive
from director.state import planlock
from director.state.identity import host_name
from director.state.journal import Journal
from director.state.records import LeaseHolder, utc_now


@dataclass(frozen=True)
class Holder:
    """Who holds a lease, as recorded in the lock file."""

    pid: int
    host: str
    started_at: str  # UTC ISO-8601
    kind: str
    run_id: int | None = None

    def describe(self) -> str:
        """ "pid 123 on host h since 2025-…, running apply"."""
        return f"pid {self.pid} on host {self.host} since {self.started_at}, running {self.kind}"

    def to_json(self) -> dict[str, Any]:
        """Plain data for the lock file and the audit."""
        return {
            "pid": self.pid,
            "host": self.host,
            "started_at": self.started_at,
            "kind": self.kind,
            "run_id": self.run_id,
        }


def _holder_from_row(row: LeaseHolder) -> Holder:
    return Holder(row.pid, row.host, row.started_at.isoformat(timespec="seconds"), row.kind, row.run_id)


def _read_lock_file(fd: int) -> Holder | None:
    """The holder written in the lock file, or None if it is empty or half-written."""
    try:
        raw = os.pread(fd, 4096, 0)
        d = json.loads(raw.decode("utf-8"))
        return Holder(int(d["pid"]), str(d["host"]), str(d["started_at"]), str(d["kind"]), d.get("run_id"))
    except (OSError, ValueError, KeyError, TypeError):
        return None


class Lease:
    """A held plan lease; release it (or leave the `with` block) to let the next writer in.

    Dropping the object without `release()` keeps the lock until the process exits: losing the lease
    silently mid-run would be worse than holding it too long.
    """

    def __init__(self, path: Path, fd: int, journal: Journal, holder: Holder) -> None:
        """Wrap an acquired lock; use `acquire`."""
        self.path = path
        self.holder = holder
        self.previous: Holder | None = None  # the unreleased holder taken over (proven gone), if any
        self._fd: int | None = fd
        self._journal = journal
        self.plan_fd: planlock.Held | None = None  # the plan file's own lock (`director.state.planlock`)

    @property
    def previous_pid(self) -> int | None:
        """The pid of the unreleased holder taken over, if it ran on this host."""
        return self.previous.pid if self.previous is not None and self.previous.host == host_name() else None

    @property
    def held(self) -> bool:
        """Whether this lease is still held."""
        return self._fd is not None

    def attach_run(self, run_id: int) -> None:
        """Record which run the holder is executing (in the journal and the lock file)."""
        self.holder = Holder(
            self.holder.pid, self.holder.host, self.holder.started_at, self.holder.kind, run_id
        )
        self._write_lock_file()
        self._journal.lease_heartbeat(self.holder.pid, run_id)

    def heartbeat(self) -> None:
        """Refresh the holder's heartbeat in the journal (call between steps)."""
        self._journal.lease_heartbeat(self.holder.pid)

    def _write_lock_file(self) -> None:
        if self._fd is None:
            return
        data = json.dumps(self.holder.to_json(), sort_keys=True).encode()
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, data, 0)

    def release(self) -> None:
        """Clear the recorded holder and drop the lock (idempotent)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        planlock.unlock(self.plan_fd)
        self.plan_fd = None
        try:
            # Clear the journal first: a crash between the two leaves an unreleased holder, which the
            # next run treats as stale (safe); the reverse order could lose the record of a live holder.
            self._journal.clear_lease_holder(self.holder.pid)
            os.ftruncate(fd, 0)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


def acquire(
    lock_path: str | os.PathLike[str],
    journal: Journal,
    *,
    run_kind: str,
    force: bool = False,
    clock: Callable[[], datetime] = utc_now,
    plan: str = "PLAN",
    note: Mapping[str, Any] | None = None,
    plan_file: Path | None = None,
) -> Lease:
    """Take the plan's lease or raise LeaseHeld naming the holder; stale holders are taken over.

    `plan` names the plan in messages; `note` is added to a takeover's audit event (who unlocked, how);
    `plan_file`, the plan, is locked too (its other names: `director.state.planlock`).
    """
    path = Path(lock_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    plan_fd: planlock.Held | None = None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_lock_file(fd)
            if holder is None:  # the holder is between flock and writing the file: ask the journal
                row = journal.lease_holder()
                holder = None if row is None else _holder_from_row(row)
            who = holder.describe() if holder else "another process (holder not recorded yet)"
            raise LeaseHeld(f"plan is locked by {who} (lock {path})") from None
        plan_fd = planlock.lock(plan_file) if plan_file is not None else None

        host = host_name()
        me = Holder(os.getpid(), host, clock().isoformat(timespec="seconds"), run_kind)
        takeover: dict[str, Any] | None = None
        row = journal.lease_holder()
        previous = _holder_from_row(row) if row is not None else _read_lock_file(fd)
        if previous is not None and (previous.pid, previous.host) != (me.pid, me.host):
            if previous.host != host and not force:
                raise LeaseHeld(
                    f"plan lease was last taken by {previous.describe()} and never released; "
                    f"this host cannot tell whether it is still running (lock {path}). "
                    f"If it is not, break the lease with `director unlock {plan}` (it asks first)."
                )
            reason = (
                "other-host-forced"
                if previous.host != host
                else ("pid-reused" if pid_alive(previous.pid) else "holder-dead")
            )
            takeover = {"previous": previous.to_json(), "reason": reason, "by": me.to_json(), **(note or {})}
        journal.set_lease_holder(me.pid, me.host, run_kind, clock(), takeover=takeover)
        lease = Lease(path, fd, journal, me)
        lease.plan_fd, plan_fd = plan_fd, None
        lease.previous = previous if takeover is not None else None
        lease._write_lock_file()
        return lease
    except BaseException:
        os.close(fd)  # closing drops the flock if we took it
        planlock.unlock(plan_fd)
        raise


def recorded_holder(lock_path: str | os.PathLike[str], journal: Journal) -> tuple[Holder | None, bool]:
    """(the holder on record, whether a process holds the lock right now), without taking anything."""
    path = Path(lock_path)
    if not path.exists():
        row = journal.lease_holder()
        return (None if row is None else _holder_from_row(row)), False
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            busy = False
            fcntl.flock(fd, fcntl.LOCK_UN)
        except BlockingIOError:
            busy = True
        row = journal.lease_holder()
        holder = _holder_from_row(row) if row is not None else _read_lock_file(fd)
        return holder, busy
    finally:
        os.close(fd)


def unlock(
    lock_path: str | os.PathLike[str], journal: Journal, *, operator: str, plan: str = "PLAN"
) -> Holder | None:
    """Break an unreleased lease (`director unlock`): take it over, audited as such, and release it.

    Refuses (`LeaseHeld`) while any process holds the lock. Returns the holder that was forgotten.
    """
    note = {"how": "director unlock", "operator": operator}
    with acquire(lock_path, journal, run_kind="unlock", force=True, plan=plan, note=note) as lease:
        return lease.previous

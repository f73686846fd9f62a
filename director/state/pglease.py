"""One writer per plan through PostgreSQL: a session-level advisory lock plus a holder row.

The lock is the truth, the row is for humans and audits (the SQLite lease's `flock` + `lease_holder`):

- `pg_try_advisory_lock(key)` on the journal's own connection, the key being 64 bits of the plan key's
  sha256. The server drops it when that session ends, however it ends: the process exits or is
  SIGKILLed (its socket closes), its machine vanishes (TCP keepalives, ~25 s: `pgschema.KEEPALIVE`), the
  server restarts, or `director unlock` terminates the session.
- lock busy                      -> `LeaseHeld` naming the holder row's pid, host, start and kind.
- lock free, no holder row       -> acquire.
- lock free, a holder row        -> its session is gone, so it is dead, whichever machine it was on:
                                    taken over at once, audited as `lease-takeover` (reason
                                    `holder-session-gone`), in the commit that writes the new holder.
- breaking a live holder         -> only `unlock` (explicit): it terminates the holder's database
                                    session (allowed to the same role, no superuser), audited as
                                    `lease-unlocked`; that Director stops at its next journal write
                                    (exit 11), and the next apply re-runs its in-flight step.

Because the lock and the writes share one connection, a Director that lost its lease has also lost the
means to write: it can never write as a second holder.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping
from contextlib import suppress
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from director.errors import LeaseHeld, StateUnavailable
from director.state import planlock
from director.state.identity import host_name
from director.state.lease import Holder
from director.state.pgjournal import PgJournal
from director.state.records import LeaseHolder, utc_now


def _holder(row: LeaseHolder) -> Holder:
    return Holder(row.pid, row.host, row.started_at.isoformat(timespec="seconds"), row.kind, row.run_id)


# -- the rows and the lock (all on the journal's connection) ------------------------------------------


def lock_key(journal: PgJournal) -> int:
    """The advisory lock key of the plan's lease: 64 bits of the plan key's sha256."""
    digest = hashlib.sha256(f"director-lease:{journal.key}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _try_lock(journal: PgJournal) -> bool:
    rows = journal.query("SELECT pg_try_advisory_lock(:k) AS ok", k=lock_key(journal))
    return bool(rows and rows[0]["ok"])


def lock_session(journal: PgJournal) -> int | None:
    """The database session (backend pid) that holds the plan's lease lock now, if any."""
    k = lock_key(journal) & 0xFFFFFFFFFFFFFFFF
    rows = journal.query(
        "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = "
        "(SELECT oid FROM pg_database WHERE datname = current_database())"
        " AND classid::bigint = :hi AND objid::bigint = :lo AND objsubid = 1",
        hi=k >> 32,
        lo=k & 0xFFFFFFFF,
    )
    return None if not rows else int(rows[0]["pid"])


def _release(journal: PgJournal) -> None:
    journal.clear_lease_holder(os.getpid())
    journal.query("SELECT pg_advisory_unlock(:k) AS ok", k=lock_key(journal))


def _terminate(journal: PgJournal, session: int) -> bool:
    """End another database session (same role: no superuser needed), waiting up to 5 s for it."""
    rows = journal.query("SELECT pg_terminate_backend(:pid, 5000) AS ok", pid=session)
    return bool(rows and rows[0]["ok"])


class PgLease:
    """A held plan lease in PostgreSQL; release it (or leave the `with` block) to let the next writer in."""

    def __init__(self, journal: PgJournal, holder: Holder, plan_fd: planlock.Held | None = None) -> None:
        """Wrap an acquired lease; use `acquire`."""
        self._journal = journal
        self.holder = holder
        self._held = True
        self._plan_fd = plan_fd  # the plan file's own lock (`director.state.planlock`)

    @property
    def previous_pid(self) -> int | None:
        """None: a holder taken over through the database may have run anywhere; its temp files are
        swept by their pids (not running here) instead."""
        return None

    @property
    def held(self) -> bool:
        """Whether this lease is still held (as far as this process knows)."""
        return self._held

    def attach_run(self, run_id: int) -> None:
        """Record which run the holder is executing."""
        h = self.holder
        self.holder = Holder(h.pid, h.host, h.started_at, h.kind, run_id)
        self._journal.lease_heartbeat(h.pid, run_id)

    def heartbeat(self) -> None:
        """Refresh the holder row's heartbeat."""
        self._journal.lease_heartbeat(self.holder.pid)

    def release(self) -> None:
        """Clear the holder row and drop the lock (idempotent; a lost connection has dropped it already)."""
        if not self._held:
            return
        self._held = False
        planlock.unlock(self._plan_fd)
        self._plan_fd = None
        with suppress(StateUnavailable):  # the session is gone, and the server released the lock with it
            _release(self._journal)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


def acquire(
    journal: PgJournal,
    *,
    run_kind: str,
    clock: Callable[[], datetime] = utc_now,
    plan_file: Path | None = None,
) -> PgLease:
    """Take the plan's lease or raise LeaseHeld naming the holder; a dead holder is taken over at once.
    `plan_file`, the plan, is locked too (its other names on this machine: `director.state.planlock`)."""
    where = f"PostgreSQL lease of plan key {journal.key} in {journal.url}"
    if not _try_lock(journal):
        row = journal.lease_holder()
        who = _holder(row).describe() if row else "another Director (holder not recorded yet)"
        raise LeaseHeld(f"plan is locked by {who} ({where})")
    me = Holder(os.getpid(), host_name(), clock().isoformat(timespec="seconds"), run_kind)
    lease = PgLease(journal, me)
    try:
        lease._plan_fd = planlock.lock(plan_file) if plan_file is not None else None
        previous = journal.lease_holder()
        takeover: dict[str, Any] | None = None
        if previous is not None:
            takeover = {
                "previous": _holder(previous).to_json(),
                "reason": "holder-session-gone",
                "by": me.to_json(),
            }
        journal.set_lease_holder(me.pid, me.host, me.kind, clock(), takeover=takeover)
    except BaseException:
        lease.release()
        raise
    return lease


def holder_alive(journal: PgJournal, row: LeaseHolder) -> bool:
    """Whether the recorded holder still holds the lock (from any machine: the database knows)."""
    return lock_session(journal) is not None


def unlock(journal: PgJournal, *, by: Mapping[str, Any]) -> tuple[LeaseHolder | None, bool]:
    """Break the plan's lease: (the holder it had, whether that holder was alive).

    A live holder's database session is terminated (its Director stops at its next journal write, exit
    11); a dead holder's row is cleared. Either way the break is audited as `lease-unlocked`.
    """
    previous = journal.lease_holder()
    backend = lock_session(journal)
    alive = backend is not None
    if backend is not None and backend != journal.session_pid() and not _terminate(journal, backend):
        raise LeaseHeld(
            f"could not end the holder's database session {backend} (another role's?); "
            "ask its owner or an administrator to end it"
        )
    if previous is None and not alive:
        return None, False
    reason = "holder-alive-terminated" if alive else "holder-dead"
    journal.break_lease({"previous": previous and previous.to_json(), "reason": reason, "by": dict(by)})
    return previous, alive

"""The PostgreSQL journal (`--state-url postgresql://…`): the same records as the SQLite one, shared.

One connection per process, in autocommit mode; every write is one explicit transaction that changes the
row(s) and the audit event together (the SQLite journal's rule). Rows are scoped by the plan key
(`director.state.identity`); ids are numbered per plan (`plans.last_id`, taken in the write's own
transaction), so run 3 of a plan is run 3 whichever machine shows it, and push/pull keep ids.
Timestamps and JSON columns are stored as the SQLite journal stores them (ISO-8601 text, canonical
JSON text): both backends export identical data, which is what `director state push|pull` relies on.

The plan's lease (`director.state.pglease`) is a session-level advisory lock held on this very
connection: if the connection dies, the lease is gone and so is every later write of this process.

Faults: a lost or refused connection (server restart, network, `director state unlock` of a live holder)
raises `StateUnavailable` (exit 11) from whichever call meets it; nothing is retried, so no write is ever
made twice, and the next apply resumes from what was committed. Other database errors are
`JournalError` (exit 70).

Approvals across machines: `record_approval` sends `NOTIFY director_approval` in its transaction; a run
in `wait_for_approval` LISTENs and re-reads only when a notification for its plan arrives.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from datetime import datetime
from types import TracebackType
from typing import Any, Self

import psycopg

from director.errors import JournalError, StateUnavailable, TransitionError
from director.exec.capture import excerpt
from director.exec.secrets import is_secret_name
from director.state import pgschema
from director.state.identity import host_name
from director.state.journal import _scrub_session
from director.state.lifecycle import STEP_FINAL, RunState, StepState, check_transition
from director.state.pgschema import SCHEMA, Connection
from director.state.records import (
    ApprovalRecord,
    EventRecord,
    ExportFormat,
    LeaseHolder,
    RunRecord,
    StepRecord,
    TransitionRecord,
    decode_row,
    dump,
    encode_row,
    export_text,
    iso,
    utc_now,
)
from director.state.store import ApprovalHow, RunKind

Clock = Callable[[], datetime]
CHANNEL = "director_approval"
WAKE_S = 60.0  # a waiting run re-reads at least this often, in case a notification was lost with a restart

S = SCHEMA  # table prefix in the SQL below


class PgJournal:
    """A plan's journal in a PostgreSQL database. Not shared between threads; one per process."""

    def __init__(
        self,
        conn: Connection,
        url: str,
        key: str,
        *,
        clock: Clock = utc_now,
        is_secret: Callable[[str], bool] = is_secret_name,
    ) -> None:
        """Wrap an open, migrated connection; use `PgJournal.open`."""
        self._conn = conn
        self.url = pgschema.redact(url)
        self.key = key
        self._clock = clock
        self._is_secret = is_secret
        self.host = host_name()
        self.pid = os.getpid()

    @classmethod
    def open(
        cls,
        url: str,
        key: str,
        *,
        plan_path: str = "",
        create: bool = True,
        clock: Clock = utc_now,
        is_secret: Callable[[str], bool] = is_secret_name,
    ) -> PgJournal:
        """Connect, migrate on first use, and (with `create`) register the plan key."""
        conn = pgschema.connect(url)
        try:
            where = pgschema.redact(url)
            pgschema.migrate(conn, where, iso(clock()))
            j = cls(conn, url, key, clock=clock, is_secret=is_secret)
            if create:
                with j._tx() as db:
                    db.execute(
                        f"INSERT INTO {S}.plans (key, created_at, plan_path) VALUES (%s, %s, %s)"
                        " ON CONFLICT (key) DO NOTHING",
                        (key, j._now(), plan_path),
                    )
        except BaseException:
            conn.close()
            raise
        return j

    @property
    def location(self) -> str:
        """The database (no password) and the plan key."""
        return f"{self.url} (plan key {self.key})"

    def close(self) -> None:
        """Close the connection (idempotent; a lost connection closes quietly)."""
        with suppress(psycopg.Error):
            self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- plumbing ------------------------------------------------------------------------------

    def _now(self) -> str:
        return iso(self._clock())

    def _fault(self, e: psycopg.Error) -> Exception:
        text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        if isinstance(e, psycopg.OperationalError | psycopg.InterfaceError):
            return StateUnavailable(
                f"lost the state database {self.url} ({text}); nothing was retried: "
                "`director apply` resumes from what was committed"
            )
        return JournalError(f"state database {self.url}: {text}")

    @contextmanager
    def _tx(self) -> Iterator[Connection]:
        """One durable write transaction; database errors become StateUnavailable / JournalError."""
        try:
            with self._conn.transaction():
                yield self._conn
        except psycopg.Error as e:
            raise self._fault(e) from e

    def _all(self, sql: str, args: tuple[Any, ...] | list[Any] = ()) -> list[dict[str, Any]]:
        try:
            return self._conn.execute(sql, args).fetchall()
        except psycopg.Error as e:
            raise self._fault(e) from e

    def _one(self, sql: str, args: tuple[Any, ...] | list[Any] = ()) -> dict[str, Any] | None:
        rows = self._all(sql, args)
        return rows[0] if rows else None

    def _next_id(self, db: Connection) -> int:
        row = db.execute(
            f"UPDATE {S}.plans SET last_id = last_id + 1 WHERE key = %s RETURNING last_id", (self.key,)
        ).fetchone()
        if row is None:
            raise JournalError(f"plan key {self.key} is not registered in {self.url}")
        return int(row["last_id"])

    def _insert_event(
        self, db: Connection, run_id: int | None, kind: str, data: Mapping[str, Any], at: str
    ) -> int:
        eid = self._next_id(db)
        db.execute(
            f"INSERT INTO {S}.events (plan_key, id, run_id, at, kind, data_json)"
            " VALUES (%s, %s, %s, %s, %s, %s)",
            (self.key, eid, run_id, at, kind, dump(dict(data))),
        )
        return eid

    # -- runs ----------------------------------------------------------------------------------

    def create_run(
        self, kind: RunKind, plan_path: str, target: str, operator: str, inputs: Mapping[str, Any]
    ) -> int:
        """Journal a new run in state `pending`; returns its id."""
        if kind not in ("apply", "teardown"):
            raise ValueError(f"run kind must be apply or teardown, not {kind!r}")
        now = self._now()
        with self._tx() as db:
            run_id = self._next_id(db)
            db.execute(
                f"INSERT INTO {S}.runs (plan_key, id, kind, state, plan_path, target, operator, host, pid,"
                " created_at, updated_at, inputs_json)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (self.key, run_id, kind, RunState.PENDING.value, plan_path, target, operator, self.host,
                 self.pid, now, now, dump(dict(inputs))),
            )  # fmt: skip
            db.execute(
                f"INSERT INTO {S}.transitions (plan_key, run_id, seq, from_state, to_state, at, reason)"
                " VALUES (%s, %s, 1, NULL, %s, %s, 'created')",
                (self.key, run_id, RunState.PENDING.value, now),
            )
            self._insert_event(
                db, run_id, "run-created", {"kind": kind, "plan": plan_path, "target": target}, now
            )
        return run_id

    def transition(self, run_id: int, to: RunState | str, reason: str | None = None) -> None:
        """Move a run to `to` (checked against the table), journaling transition and audit together."""
        now = self._now()
        with self._tx() as db:
            row = db.execute(
                f"SELECT state FROM {S}.runs WHERE plan_key = %s AND id = %s FOR UPDATE", (self.key, run_id)
            ).fetchone()
            if row is None:
                raise JournalError(f"no run {run_id} for plan {self.key} in {self.url}")
            frm = row["state"]
            check_transition(frm, to)
            to_state = RunState(to)
            db.execute(
                f"UPDATE {S}.runs SET state = %s, updated_at = %s, reason = %s"
                " WHERE plan_key = %s AND id = %s",
                (to_state.value, now, reason, self.key, run_id),
            )
            db.execute(
                f"INSERT INTO {S}.transitions (plan_key, run_id, seq, from_state, to_state, at, reason)"
                f" SELECT %s, %s, coalesce(max(seq), 0) + 1, %s, %s, %s, %s FROM {S}.transitions"
                " WHERE plan_key = %s AND run_id = %s",
                (self.key, run_id, frm, to_state.value, now, reason, self.key, run_id),
            )
            self._insert_event(
                db, run_id, "transition", {"from": frm, "to": to_state.value, "reason": reason}, now
            )

    def run(self, run_id: int) -> RunRecord:
        """The run with this id (JournalError if none)."""
        row = self._one(f"SELECT * FROM {S}.runs WHERE plan_key = %s AND id = %s", (self.key, run_id))
        if row is None:
            raise JournalError(f"no run {run_id} for plan {self.key} in {self.url}")
        return RunRecord.from_row(row)

    def latest_run(self, kind: RunKind | None = None) -> RunRecord | None:
        """The most recently created run (of a kind), if any."""
        if kind is None:
            row = self._one(
                f"SELECT * FROM {S}.runs WHERE plan_key = %s ORDER BY id DESC LIMIT 1", (self.key,)
            )
        else:
            row = self._one(
                f"SELECT * FROM {S}.runs WHERE plan_key = %s AND kind = %s ORDER BY id DESC LIMIT 1",
                (self.key, kind),
            )
        return None if row is None else RunRecord.from_row(row)

    def transitions(self, run_id: int) -> list[TransitionRecord]:
        """A run's transitions in order (the first is its creation)."""
        rows = self._all(
            f"SELECT * FROM {S}.transitions WHERE plan_key = %s AND run_id = %s ORDER BY seq",
            (self.key, run_id),
        )
        return [TransitionRecord.from_row(r) for r in rows]

    def bump_recoveries(self, run_id: int) -> int:
        """Count one more recovery of a run; returns the new count."""
        with self._tx() as db:
            row = db.execute(
                f"UPDATE {S}.runs SET recoveries = recoveries + 1, updated_at = %s"
                " WHERE plan_key = %s AND id = %s RETURNING recoveries",
                (self._now(), self.key, run_id),
            ).fetchone()
            if row is None:
                raise JournalError(f"no run {run_id} for plan {self.key} in {self.url}")
            return int(row["recoveries"])

    def reset_recoveries(self, run_id: int) -> None:
        """Reset a run's recovery count (only after real progress)."""
        with self._tx() as db:
            db.execute(
                f"UPDATE {S}.runs SET recoveries = 0, updated_at = %s WHERE plan_key = %s AND id = %s",
                (self._now(), self.key, run_id),
            )

    # -- steps ---------------------------------------------------------------------------------

    def step_started(
        self,
        run_id: int,
        step_key: str,
        section_key: str,
        block_index: int,
        role: str,
        fingerprint: str,
        attempt: int = 1,
        flags: Mapping[str, Any] | None = None,
    ) -> int:
        """Commit the intent to run a block, before it runs; returns the step id."""
        now = self._now()
        with self._tx() as db:
            sid = self._next_id(db)
            db.execute(
                f"INSERT INTO {S}.steps (plan_key, id, run_id, step_key, section_key, block_index, role,"
                " attempt, state, fingerprint, started_at, flags_json)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (self.key, sid, run_id, step_key, section_key, block_index, role, attempt,
                 StepState.STARTED.value, fingerprint, now, dump(dict(flags or {}))),
            )  # fmt: skip
            db.execute(
                f"UPDATE {S}.runs SET current_section = %s, updated_at = %s WHERE plan_key = %s AND id = %s",
                (section_key, now, self.key, run_id),
            )
        return sid

    def step_finished(
        self,
        step_id: int,
        state: StepState | str,
        exit_code: int | None,
        duration_s: float | None,
        output: str,
        session: Mapping[str, Any] | None,
    ) -> None:
        """Record a started step's outcome (exactly once) and the persistable shell state after it."""
        st = StepState(state)
        if st not in STEP_FINAL:
            raise TransitionError(f"step {step_id}: {st.value} is not a final step state")
        now = self._now()
        session_json = None if session is None else dump(_scrub_session(session, self._is_secret))
        with self._tx() as db:
            row = db.execute(
                f"SELECT run_id, state FROM {S}.steps WHERE plan_key = %s AND id = %s FOR UPDATE",
                (self.key, step_id),
            ).fetchone()
            if row is None:
                raise JournalError(f"no step {step_id} for plan {self.key} in {self.url}")
            if row["state"] != StepState.STARTED.value:
                raise TransitionError(
                    f"invalid step transition {row['state']} -> {st.value} (step {step_id} already finished)"
                )
            db.execute(
                f"UPDATE {S}.steps SET state = %s, finished_at = %s, exit_code = %s, duration_s = %s,"
                " output = %s, session_json = %s WHERE plan_key = %s AND id = %s",
                (st.value, now, exit_code, duration_s, excerpt(output), session_json, self.key, step_id),
            )
            db.execute(
                f"UPDATE {S}.runs SET updated_at = %s WHERE plan_key = %s AND id = %s",
                (now, self.key, row["run_id"]),
            )

    def section_succeeded(
        self,
        run_id: int,
        step_key: str,
        section_key: str,
        fingerprint: str,
        session: Mapping[str, Any] | None,
    ) -> int:
        """Record a section's success and reset the run's recovery count (progress), in one commit."""
        now = self._now()
        session_json = None if session is None else dump(_scrub_session(session, self._is_secret))
        with self._tx() as db:
            sid = self._next_id(db)
            db.execute(
                f"INSERT INTO {S}.steps (plan_key, id, run_id, step_key, section_key, block_index, role,"
                " attempt, state, fingerprint, started_at, finished_at, exit_code, duration_s, output,"
                " session_json, flags_json)"
                " VALUES (%s, %s, %s, %s, %s, -1, 'section', 1, %s, %s, %s, %s, 0, 0.0, '', %s, '{}')",
                (self.key, sid, run_id, step_key, section_key, StepState.SUCCEEDED.value, fingerprint,
                 now, now, session_json),
            )  # fmt: skip
            db.execute(
                f"UPDATE {S}.runs SET recoveries = 0, current_section = %s, updated_at = %s"
                " WHERE plan_key = %s AND id = %s",
                (section_key, now, self.key, run_id),
            )
        return sid

    def step(self, step_id: int) -> StepRecord:
        """The step with this id."""
        row = self._one(f"SELECT * FROM {S}.steps WHERE plan_key = %s AND id = %s", (self.key, step_id))
        if row is None:
            raise JournalError(f"no step {step_id} for plan {self.key} in {self.url}")
        return StepRecord.from_row(row)

    def steps(self, run_id: int) -> list[StepRecord]:
        """A run's steps in the order they were started."""
        rows = self._all(
            f"SELECT * FROM {S}.steps WHERE plan_key = %s AND run_id = %s ORDER BY id", (self.key, run_id)
        )
        return [StepRecord.from_row(r) for r in rows]

    def last_success(self, step_key: str) -> StepRecord | None:
        """The most recent succeeded step with this key, in any run (the memo for fingerprints)."""
        row = self._one(
            f"SELECT * FROM {S}.steps WHERE plan_key = %s AND step_key = %s AND state = %s"
            " ORDER BY id DESC LIMIT 1",
            (self.key, step_key, StepState.SUCCEEDED.value),
        )
        return None if row is None else StepRecord.from_row(row)

    def last_session(self, run_id: int) -> dict[str, Any] | None:
        """The shell state left by the run's last succeeded block."""
        row = self._one(
            f"SELECT session_json FROM {S}.steps WHERE plan_key = %s AND run_id = %s AND state = %s"
            " AND role != 'section' AND session_json IS NOT NULL ORDER BY id DESC LIMIT 1",
            (self.key, run_id, StepState.SUCCEEDED.value),
        )
        return None if row is None else dict(json.loads(row["session_json"]))

    def unfinished_steps(self, run_id: int) -> list[StepRecord]:
        """Steps still `started`: after a crash their outcome is unknown and they are re-run."""
        rows = self._all(
            f"SELECT * FROM {S}.steps WHERE plan_key = %s AND run_id = %s AND state = %s ORDER BY id",
            (self.key, run_id, StepState.STARTED.value),
        )
        return [StepRecord.from_row(r) for r in rows]

    # -- approvals -----------------------------------------------------------------------------

    def record_approval(
        self,
        run_id: int | None,
        section_key: str,
        sha256: str,
        operator: str,
        how: ApprovalHow,
        content: Mapping[str, Any] | None = None,
    ) -> int:
        """Journal an approval of exactly this content (and its audit event), and notify waiting runs."""
        if how not in ("prompt", "flag", "approve-command", "auto"):
            raise ValueError(f"unknown approval method {how!r}")
        now = self._now()
        with self._tx() as db:
            aid = self._next_id(db)
            db.execute(
                f"INSERT INTO {S}.approvals (plan_key, id, run_id, section_key, sha256, operator, host, at,"
                " how, content_json) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (self.key, aid, run_id, section_key, sha256, operator, self.host, now, how,
                 dump(dict(content or {}))),
            )  # fmt: skip
            self._insert_event(
                db,
                run_id,
                "approval",
                {"id": aid, "section": section_key, "sha256": sha256, "operator": operator, "how": how},
                now,
            )
            payload = dump({"plan": self.key, "section": section_key, "sha256": sha256, "id": aid})
            db.execute("SELECT pg_notify(%s, %s)", (CHANNEL, payload))  # delivered at commit
        return aid

    def find_approval(self, section_key: str, sha256: str) -> ApprovalRecord | None:
        """The latest approval of this exact content of this section, if any."""
        return self._approval_after(section_key, sha256, 0)

    def _approval_after(self, section_key: str, sha256: str, after_id: int) -> ApprovalRecord | None:
        row = self._one(
            f"SELECT * FROM {S}.approvals WHERE plan_key = %s AND section_key = %s AND sha256 = %s"
            " AND id > %s ORDER BY id DESC LIMIT 1",
            (self.key, section_key, sha256, after_id),
        )
        return None if row is None else ApprovalRecord.from_row(row)

    def approvals(self, run_id: int | None = None) -> list[ApprovalRecord]:
        """All approvals (or those made in one run), oldest first."""
        if run_id is None:
            rows = self._all(f"SELECT * FROM {S}.approvals WHERE plan_key = %s ORDER BY id", (self.key,))
        else:
            rows = self._all(
                f"SELECT * FROM {S}.approvals WHERE plan_key = %s AND run_id = %s ORDER BY id",
                (self.key, run_id),
            )
        return [ApprovalRecord.from_row(r) for r in rows]

    def wait_for_approval(
        self, section_key: str, sha256: str, after_id: int, timeout_s: float
    ) -> ApprovalRecord | None:
        """A receipt for this content newer than `after_id`, waiting up to `timeout_s` for one.

        LISTEN first, then read (a receipt committed in between is found by the read, one committed
        after it wakes the wait): no polling; the database is read again only when a notification for
        this plan and section arrives (or every `WAKE_S`, as a safety net).
        """
        deadline = time.monotonic() + timeout_s
        try:
            self._conn.execute(f"LISTEN {CHANNEL}")
            while True:
                found = self._approval_after(section_key, sha256, after_id)
                if found is not None:
                    return found
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._await_notice(section_key, min(left, WAKE_S))
        except psycopg.Error as e:
            raise self._fault(e) from e
        finally:
            with suppress(psycopg.Error):  # a lost connection listens no more anyway
                self._conn.execute(f"UNLISTEN {CHANNEL}")

    def _await_notice(self, section_key: str, timeout_s: float) -> None:
        """Return when a receipt for this plan's section is announced, or after `timeout_s`."""
        for n in self._conn.notifies(timeout=timeout_s):
            try:
                data = json.loads(n.payload)
            except ValueError:
                continue
            if data.get("plan") == self.key and data.get("section") == section_key:
                return

    # -- audit events --------------------------------------------------------------------------

    def record_event(self, run_id: int | None, kind: str, data: Mapping[str, Any] | None = None) -> int:
        """Append an audit event; returns its id."""
        now = self._now()
        with self._tx() as db:
            return self._insert_event(db, run_id, kind, data or {}, now)

    def events(self, run_id: int | None = None, kind: str | None = None) -> list[EventRecord]:
        """Audit events, oldest first; filtered by run and/or kind when given."""
        sql = f"SELECT * FROM {S}.events WHERE plan_key = %s"
        args: list[Any] = [self.key]
        if run_id is not None:
            sql += " AND run_id = %s"
            args.append(run_id)
        if kind is not None:
            sql += " AND kind = %s"
            args.append(kind)
        return [EventRecord.from_row(r) for r in self._all(sql + " ORDER BY id", args)]

    # -- lease (used by director.state.pglease) ------------------------------------------------

    def lease_holder(self) -> LeaseHolder | None:
        """The recorded lease holder, if the lease is held or was not released."""
        row = self._one(f"SELECT * FROM {S}.lease_holder WHERE plan_key = %s", (self.key,))
        return None if row is None else LeaseHolder.from_row(row)

    def lease_lock_key(self) -> int:
        """The advisory lock key of this plan's lease (64 bits from the plan key)."""
        digest = hashlib.sha256(f"director-lease:{self.key}".encode()).digest()
        return int.from_bytes(digest[:8], "big", signed=True)

    def try_lease_lock(self) -> bool:
        """Take the plan's session-level advisory lock on this connection, if it is free."""
        row = self._one("SELECT pg_try_advisory_lock(%s) AS ok", (self.lease_lock_key(),))
        return bool(row and row["ok"])

    def lease_lock_backend(self) -> int | None:
        """The database session (backend pid) that holds this plan's lease lock now, if any."""
        k = self.lease_lock_key() & 0xFFFFFFFFFFFFFFFF
        row = self._one(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = "
            "(SELECT oid FROM pg_database WHERE datname = current_database())"
            " AND classid::bigint = %s AND objid::bigint = %s AND objsubid = 1",
            (k >> 32, k & 0xFFFFFFFF),
        )
        return None if row is None else int(row["pid"])

    def backend_pid(self) -> int:
        """This connection's database session."""
        return int(self._conn.info.backend_pid)

    def set_lease_holder(
        self, pid: int, host: str, kind: str, started_at: datetime, *, takeover: Mapping[str, Any] | None
    ) -> None:
        """Record this process as the holder (and audit the holder it replaces, in the same commit)."""
        now = self._now()
        with self._tx() as db:
            db.execute(
                f"INSERT INTO {S}.lease_holder (plan_key, pid, host, kind, started_at, heartbeat_at, run_id,"
                " backend_pid) VALUES (%s, %s, %s, %s, %s, %s, NULL, pg_backend_pid())"
                " ON CONFLICT (plan_key) DO UPDATE SET pid = EXCLUDED.pid, host = EXCLUDED.host,"
                " kind = EXCLUDED.kind, started_at = EXCLUDED.started_at,"
                " heartbeat_at = EXCLUDED.heartbeat_at, run_id = NULL, backend_pid = EXCLUDED.backend_pid",
                (self.key, pid, host, kind, iso(started_at), now),
            )
            if takeover is not None:
                self._insert_event(db, None, "lease-takeover", takeover, now)

    def lease_heartbeat(self, run_id: int | None = None) -> None:
        """Refresh the holder's heartbeat (and attach its run), if this session is the holder."""
        with self._tx() as db:
            db.execute(
                f"UPDATE {S}.lease_holder SET heartbeat_at = %s, run_id = coalesce(%s, run_id)"
                " WHERE plan_key = %s AND backend_pid = pg_backend_pid()",
                (self._now(), run_id, self.key),
            )

    def release_lease(self) -> None:
        """Forget the holder row (if it is this session's) and drop the advisory lock."""
        with self._tx() as db:
            db.execute(
                f"DELETE FROM {S}.lease_holder WHERE plan_key = %s AND backend_pid = pg_backend_pid()",
                (self.key,),
            )
        self._all("SELECT pg_advisory_unlock(%s) AS ok", (self.lease_lock_key(),))

    def break_lease(self, previous: LeaseHolder | None, reason: str, by: Mapping[str, Any]) -> None:
        """Clear the holder row and audit who broke the lease, whose and why (`director state unlock`)."""
        now = self._now()
        with self._tx() as db:
            db.execute(f"DELETE FROM {S}.lease_holder WHERE plan_key = %s", (self.key,))
            prev = None if previous is None else _holder_json(previous)
            data = {"previous": prev, "reason": reason, "by": dict(by)}
            self._insert_event(db, None, "lease-unlocked", data, now)

    def terminate_backend(self, backend_pid: int) -> bool:
        """End another database session (same role: no superuser needed), waiting up to 5 s for it."""
        row = self._one("SELECT pg_terminate_backend(%s, 5000) AS ok", (backend_pid,))
        return bool(row and row["ok"])

    # -- whole journal -------------------------------------------------------------------------

    def has_history(self) -> bool:
        """Whether any run, approval or event was ever recorded for this plan."""
        row = self._one(
            f"SELECT EXISTS (SELECT 1 FROM {S}.runs WHERE plan_key = %s)"
            f" OR EXISTS (SELECT 1 FROM {S}.approvals WHERE plan_key = %s)"
            f" OR EXISTS (SELECT 1 FROM {S}.events WHERE plan_key = %s) AS any",
            (self.key, self.key, self.key),
        )
        return bool(row and row["any"])

    def export_data(self) -> dict[str, Any]:
        """Every table's rows of this plan as plain JSON-able data (JSON columns decoded), as SQLite's."""
        out: dict[str, Any] = {"schema_version": pgschema.SCHEMA_VERSION, "path": self.location}
        for table in TABLES_IN_ORDER:
            order = pgschema.ORDER.get(table, "id")
            rows = self._all(f"SELECT * FROM {S}.{table} WHERE plan_key = %s ORDER BY {order}", (self.key,))
            out[table] = [decode_row({k: v for k, v in r.items() if k != "plan_key"}) for r in rows]
        return out

    def export(self, fmt: ExportFormat = "json") -> str:
        """All runs, transitions, steps, approvals, events (and the holder) as JSON or JSON Lines text."""
        return export_text(self.export_data(), fmt)

    def import_data(self, data: Mapping[str, Any], *, replace: bool = False) -> int:
        """Copy an exported journal into this plan, ids kept, in one commit; the plan must have no
        history, unless `replace` (its rows are then deleted in that commit)."""
        if self.has_history() and not replace:
            raise JournalError(
                f"plan {self.key} already has history in {self.url}; refusing to mix two histories"
            )
        n = 0
        top = 0
        with self._tx() as db:
            for table in ("events", "approvals", "steps", "transitions", "runs"):  # children first
                db.execute(f"DELETE FROM {S}.{table} WHERE plan_key = %s", (self.key,))
            for table in TABLES_IN_ORDER:
                if table == "lease_holder":
                    continue
                cols = [
                    r["column_name"]
                    for r in db.execute(
                        "SELECT column_name FROM information_schema.columns WHERE table_schema = %s"
                        " AND table_name = %s ORDER BY ordinal_position",
                        (SCHEMA, table),
                    ).fetchall()
                ]
                for row in data.get(table, []):
                    values = encode_row({**row, "plan_key": self.key}, cols)
                    names = ", ".join(values)
                    marks = ", ".join("%s" for _ in values)
                    db.execute(f"INSERT INTO {S}.{table} ({names}) VALUES ({marks})", list(values.values()))
                    top = max(top, int(row.get("id") or 0))
                    n += 1
            db.execute(
                f"UPDATE {S}.plans SET last_id = greatest(last_id, %s) WHERE key = %s", (top, self.key)
            )
        return n


TABLES_IN_ORDER = pgschema.TABLES


def _holder_json(h: LeaseHolder) -> dict[str, Any]:
    return {
        "pid": h.pid,
        "host": h.host,
        "kind": h.kind,
        "started_at": h.started_at.isoformat(),
        "run_id": h.run_id,
    }

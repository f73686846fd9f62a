"""The PostgreSQL journal (`--state-url postgresql://…`): the same records as the SQLite one, shared by
every machine that uses the database (connection, transactions, faults, copying: `director.state.pgbase`).

The plan's lease (`director.state.pglease`) is a session-level advisory lock held on this very
connection: if the connection dies, the lease is gone and so is every later write of this process.

Approvals across machines: `record_approval` sends `NOTIFY director_approval` in its transaction; a run
in `wait_for_approval` LISTENs and re-reads only when a notification for its plan and section arrives.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from contextlib import suppress
from typing import Any

import psycopg

from director.errors import JournalError, TransitionError
from director.exec.capture import excerpt
from director.state.lifecycle import STEP_FINAL, RunState, StepState, check_transition
from director.state.pgbase import PgBase, S
from director.state.records import (
    ApprovalRecord,
    EventRecord,
    LeaseHolder,
    RunRecord,
    StepRecord,
    TransitionRecord,
    approval_signature,
    approval_signer,
    dump,
    scrub_session,
)
from director.state.signing import Signed
from director.state.store import ApprovalHow, RunKind
from director.state.worlds import PgWorlds

NEXT_ID = f"UPDATE {S}.plans SET last_id = last_id + 1 WHERE key = %(k)s RETURNING last_id"
CHANNEL = "director_approval"
WAKE_S = 60.0  # a waiting run re-reads at least this often, in case a notification was lost with a restart


class PgJournal(PgBase, PgWorlds):
    """A plan's journal in a PostgreSQL database. Not shared between threads; one per process."""

    # -- runs ----------------------------------------------------------------------------------

    def create_run(
        self, kind: RunKind, plan_path: str, target: str, operator: str, inputs: Mapping[str, Any]
    ) -> int:
        """Journal a new run in state `pending`; returns its id."""
        if kind not in ("apply", "teardown"):
            raise ValueError(f"run kind must be apply or teardown, not {kind!r}")
        now = self._now()
        with self.tx() as db:
            run_id = self.next_id(db)
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
            self.insert_event(
                db, run_id, "run-created", {"kind": kind, "plan": plan_path, "target": target}, now
            )
        return run_id

    def transition(self, run_id: int, to: RunState | str, reason: str | None = None) -> None:
        """Move a run to `to` (checked against the table), journaling transition and audit together."""
        now = self._now()
        with self.tx() as db:
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
            self.insert_event(
                db, run_id, "transition", {"from": frm, "to": to_state.value, "reason": reason}, now
            )

    def run(self, run_id: int) -> RunRecord:
        """The run with this id (JournalError if none)."""
        row = self.row(f"SELECT * FROM {S}.runs WHERE plan_key = %s AND id = %s", (self.key, run_id))
        if row is None:
            raise JournalError(f"no run {run_id} for plan {self.key} in {self.url}")
        return RunRecord.from_row(row)

    def latest_run(self, kind: RunKind | None = None) -> RunRecord | None:
        """The most recently created run (of a kind), if any."""
        if kind is None:
            row = self.row(
                f"SELECT * FROM {S}.runs WHERE plan_key = %s ORDER BY id DESC LIMIT 1", (self.key,)
            )
        else:
            row = self.row(
                f"SELECT * FROM {S}.runs WHERE plan_key = %s AND kind = %s ORDER BY id DESC LIMIT 1",
                (self.key, kind),
            )
        return None if row is None else RunRecord.from_row(row)

    def transitions(self, run_id: int) -> list[TransitionRecord]:
        """A run's transitions in order (the first is its creation)."""
        rows = self.rows(
            f"SELECT * FROM {S}.transitions WHERE plan_key = %s AND run_id = %s ORDER BY seq",
            (self.key, run_id),
        )
        return [TransitionRecord.from_row(r) for r in rows]

    def bump_recoveries(self, run_id: int) -> int:
        """Count one more recovery of a run; returns the new count."""
        with self.tx() as db:
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
        with self.tx() as db:
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
        """Commit the intent to run a block, before it runs; returns the step id. One statement (one round
        trip, atomic on its own): the id, the step row and the run's position together."""
        row = self.row(
            f"WITH n AS ({NEXT_ID}), s AS (INSERT INTO {S}.steps (plan_key, id, run_id, step_key,"
            " section_key, block_index, role, attempt, state, fingerprint, started_at, flags_json)"
            " SELECT %(k)s, n.last_id, %(run)s, %(key)s, %(sec)s, %(block)s, %(role)s, %(attempt)s,"
            " %(state)s, %(fp)s, %(now)s, %(flags)s FROM n RETURNING id),"
            f" r AS (UPDATE {S}.runs SET current_section = %(sec)s, updated_at = %(now)s"
            " WHERE plan_key = %(k)s AND id = %(run)s) SELECT id FROM s",
            {"k": self.key, "run": run_id, "key": step_key, "sec": section_key, "block": block_index,
             "role": role, "attempt": attempt, "state": StepState.STARTED.value, "fp": fingerprint,
             "now": self._now(), "flags": dump(dict(flags or {}))},
        )  # fmt: skip
        if row is None:
            raise JournalError(f"plan key {self.key} is not registered in {self.url}")
        return int(row["id"])

    def step_finished(
        self,
        step_id: int,
        state: StepState | str,
        exit_code: int | None,
        duration_s: float | None,
        output: str,
        session: Mapping[str, Any] | None,
    ) -> None:
        """Record a started step's outcome (exactly once: the update matches only a `started` row, so a
        second finish, from anywhere, matches nothing) and the persistable shell state after it."""
        st = StepState(state)
        if st not in STEP_FINAL:
            raise TransitionError(f"step {step_id}: {st.value} is not a final step state")
        session_json = None if session is None else dump(scrub_session(session, self._is_secret))
        row = self.row(
            f"WITH s AS (UPDATE {S}.steps SET state = %(st)s, finished_at = %(now)s, exit_code = %(code)s,"
            " duration_s = %(dur)s, output = %(out)s, session_json = %(session)s"
            " WHERE plan_key = %(k)s AND id = %(id)s AND state = %(started)s RETURNING run_id),"
            f" r AS (UPDATE {S}.runs SET updated_at = %(now)s WHERE plan_key = %(k)s"
            " AND id IN (SELECT run_id FROM s)) SELECT run_id FROM s",
            {"st": st.value, "now": self._now(), "code": exit_code, "dur": duration_s, "out": excerpt(output),
             "session": session_json, "k": self.key, "id": step_id, "started": StepState.STARTED.value},
        )  # fmt: skip
        if row is None:
            was = self.row(
                f"SELECT state FROM {S}.steps WHERE plan_key = %s AND id = %s", (self.key, step_id)
            )
            if was is None:
                raise JournalError(f"no step {step_id} for plan {self.key} in {self.url}")
            raise TransitionError(
                f"invalid step transition {was['state']} -> {st.value} (step {step_id} already finished)"
            )

    def section_succeeded(
        self,
        run_id: int,
        step_key: str,
        section_key: str,
        fingerprint: str,
        session: Mapping[str, Any] | None,
        event: tuple[str, Mapping[str, Any]] | None = None,
    ) -> int:
        """Record a section's success and reset the run's recovery count (progress), in one statement;
        `event` (kind, data), the audit event that belongs to it (its basis), in the same one."""
        session_json = None if session is None else dump(scrub_session(session, self._is_secret))
        kind, data = event if event is not None else ("", {})
        row = self.row(
            f"WITH n AS (UPDATE {S}.plans SET last_id = last_id + %(inc)s WHERE key = %(k)s"
            f" RETURNING last_id), s AS (INSERT INTO {S}.steps (plan_key, id, run_id, step_key, section_key,"
            " block_index, role, attempt, state, fingerprint, started_at, finished_at,"
            " exit_code, duration_s, output, session_json, flags_json)"
            " SELECT %(k)s, n.last_id - %(inc)s + 1, %(run)s, %(key)s, %(sec)s, -1, 'section', 1, %(state)s,"
            " %(fp)s, %(now)s, %(now)s, 0, 0.0, '', %(session)s, '{}' FROM n RETURNING id),"
            f" r AS (UPDATE {S}.runs SET recoveries = 0, current_section = %(sec)s, updated_at = %(now)s"
            " WHERE plan_key = %(k)s AND id = %(run)s),"
            f" e AS (INSERT INTO {S}.events (plan_key, id, run_id, at, kind, data_json)"
            " SELECT %(k)s, n.last_id, %(run)s, %(now)s, %(kind)s, %(data)s FROM n WHERE %(inc)s = 2)"
            " SELECT id FROM s",
            {"k": self.key, "run": run_id, "key": step_key, "sec": section_key, "fp": fingerprint,
             "state": StepState.SUCCEEDED.value, "now": self._now(), "session": session_json,
             "inc": 1 if event is None else 2, "kind": kind, "data": dump(dict(data))},
        )  # fmt: skip
        if row is None:
            raise JournalError(f"plan key {self.key} is not registered in {self.url}")
        return int(row["id"])

    def step(self, step_id: int) -> StepRecord:
        """The step with this id."""
        row = self.row(f"SELECT * FROM {S}.steps WHERE plan_key = %s AND id = %s", (self.key, step_id))
        if row is None:
            raise JournalError(f"no step {step_id} for plan {self.key} in {self.url}")
        return StepRecord.from_row(row)

    def steps(self, run_id: int) -> list[StepRecord]:
        """A run's steps in the order they were started."""
        rows = self.rows(
            f"SELECT * FROM {S}.steps WHERE plan_key = %s AND run_id = %s ORDER BY id", (self.key, run_id)
        )
        return [StepRecord.from_row(r) for r in rows]

    def last_success(self, step_key: str) -> StepRecord | None:
        """The most recent succeeded step with this key, in any run (the memo for fingerprints)."""
        row = self.row(
            f"SELECT * FROM {S}.steps WHERE plan_key = %s AND step_key = %s AND state = %s"
            " ORDER BY id DESC LIMIT 1",
            (self.key, step_key, StepState.SUCCEEDED.value),
        )
        return None if row is None else StepRecord.from_row(row)

    def section_successes(self) -> dict[str, StepRecord]:
        """`last_success` of every section's step key (`KEY/section`), in one query."""
        rows = self.rows(
            f"SELECT * FROM {S}.steps WHERE plan_key = %s AND id IN"
            f" (SELECT max(id) FROM {S}.steps WHERE plan_key = %s AND role = 'section' AND state = %s"
            " GROUP BY step_key)",
            (self.key, self.key, StepState.SUCCEEDED.value),
        )
        return {r["step_key"]: StepRecord.from_row(r) for r in rows}

    def last_session(self, run_id: int) -> dict[str, Any] | None:
        """The shell state left by the run's last succeeded block."""
        row = self.row(
            f"SELECT session_json FROM {S}.steps WHERE plan_key = %s AND run_id = %s AND state = %s"
            " AND role != 'section' AND session_json IS NOT NULL ORDER BY id DESC LIMIT 1",
            (self.key, run_id, StepState.SUCCEEDED.value),
        )
        return None if row is None else dict(json.loads(row["session_json"]))

    def unfinished_steps(self, run_id: int) -> list[StepRecord]:
        """Steps still `started`: after a crash their outcome is unknown and they are re-run."""
        rows = self.rows(
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
        signed: Signed | None = None,
    ) -> int:
        """Journal an approval of exactly this content, signed or not (and its audit event), and notify
        waiting runs."""
        if how not in ("prompt", "flag", "approve-command", "auto"):
            raise ValueError(f"unknown approval method {how!r}")
        now = self._now()
        with self.tx() as db:
            aid = self.next_id(db)
            db.execute(
                f"INSERT INTO {S}.approvals (plan_key, id, run_id, section_key, sha256, operator, host, at,"
                " how, content_json, principal, signed_payload, signature)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (self.key, aid, run_id, section_key, sha256, operator, self.host, now, how,
                 dump(dict(content or {})), *approval_signature(signed)),
            )  # fmt: skip
            data = {"id": aid, "section": section_key, "sha256": sha256, "operator": operator, "how": how}
            self.insert_event(db, run_id, "approval", {**data, **approval_signer(signed)}, now)
            payload = dump({"plan": self.key, "section": section_key, "sha256": sha256, "id": aid})
            db.execute("SELECT pg_notify(%s, %s)", (CHANNEL, payload))  # delivered at commit
        return aid

    def find_approval(self, section_key: str, sha256: str) -> ApprovalRecord | None:
        """The latest approval of this exact content of this section, if any."""
        return self._approval_after(section_key, sha256, 0)

    def _approval_after(self, section_key: str, sha256: str, after_id: int) -> ApprovalRecord | None:
        row = self.row(
            f"SELECT * FROM {S}.approvals WHERE plan_key = %s AND section_key = %s AND sha256 = %s"
            " AND id > %s ORDER BY id DESC LIMIT 1",
            (self.key, section_key, sha256, after_id),
        )
        return None if row is None else ApprovalRecord.from_row(row)

    def approvals(self, run_id: int | None = None) -> list[ApprovalRecord]:
        """All approvals (or those made in one run), oldest first."""
        if run_id is None:
            rows = self.rows(f"SELECT * FROM {S}.approvals WHERE plan_key = %s ORDER BY id", (self.key,))
        else:
            rows = self.rows(
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
        """Append an audit event (one statement); returns its id."""
        row = self.row(
            f"WITH n AS ({NEXT_ID}) INSERT INTO {S}.events (plan_key, id, run_id, at, kind, data_json)"
            " SELECT %(k)s, n.last_id, %(run)s, %(now)s, %(kind)s, %(data)s FROM n RETURNING id",
            {"k": self.key, "run": run_id, "now": self._now(), "kind": kind, "data": dump(dict(data or {}))},
        )
        if row is None:
            raise JournalError(f"plan key {self.key} is not registered in {self.url}")
        return int(row["id"])

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
        return [EventRecord.from_row(r) for r in self.rows(sql + " ORDER BY id", args)]

    # -- lease (used by director.state.pglease) ------------------------------------------------

    def lease_holder(self) -> LeaseHolder | None:
        """The recorded lease holder, if the lease is held or was not released."""
        row = self.row(f"SELECT * FROM {S}.lease_holder WHERE plan_key = %s", (self.key,))
        return None if row is None else LeaseHolder.from_row(row)

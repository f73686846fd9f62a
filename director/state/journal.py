"""The journal: the machine record behind a plan, written once for both backends.

`Journal` is the `StateStore` (`director.state.store`) over a dialect (`director.state.dialect`): an
SQLite file beside the plan (`Journal.open(path)`, the default) or a shared PostgreSQL database
(`director.state.pgjournal.PgJournal.open(url, key)`, `--state-url`). Every method below is written once;
the SQL is neutral and the dialect runs it. How writes are grouped and when they are durable:
`director.state.writes` (docs/durability.md). Whole-journal operations (export, import, the chain's
check, where the plan lives): `director.state.history`; the worlds each check was seen in:
`director.state.worlds`.

Intent before effect: `step_started` is committed before the block runs; a step still `started` after a
crash is "outcome unknown" (`unfinished_steps`). Secret-named variables are dropped from session JSON here
as a last line of defence (callers pass `SessionState.persistable(...)` already). Structured columns hold
JSON text (never pickle); timestamps come from an injectable clock (`director.state.records`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from director.errors import TransitionError
from director.excerpt import excerpt
from director.secretnames import is_secret_name
from director.state import schema
from director.state.dialect import SqliteDialect
from director.state.history import History
from director.state.lifecycle import STEP_FINAL, RunState, StepState, check_transition
from director.state.records import (
    ApprovalRecord,
    EventRecord,
    ExportFormat,
    LeaseHolder,
    RunRecord,
    StepRecord,
    TransitionRecord,
    approval_signature,
    approval_signer,
    dump,
    iso,
    scrub_session,
    utc_now,
)
from director.state.signing import Signed
from director.state.store import ApprovalHow, RunKind
from director.state.worlds import Worlds
from director.state.writes import Clock

__all__ = [
    "SCHEMA_VERSION",
    "ApprovalHow",
    "ApprovalRecord",
    "EventRecord",
    "ExportFormat",
    "Journal",
    "LeaseHolder",
    "RunKind",
    "RunRecord",
    "StepRecord",
    "TransitionRecord",
    "utc_now",
]

SCHEMA_VERSION = schema.SCHEMA_VERSION
HOWS = ("prompt", "flag", "approve-command", "auto")


class Journal(History, Worlds):
    """A plan's journal. Not shared between threads; open one per process."""

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        clock: Clock = utc_now,
        is_secret: Callable[[str], bool] = is_secret_name,
    ) -> Journal:
        """Open the SQLite journal at `path`, creating it (and its directory) if needed; migrated."""
        p = Path(path)
        return cls(SqliteDialect(schema.connect(p, iso(clock())), p), clock=clock, is_secret=is_secret)

    @property
    def path(self) -> Path:
        """The journal file (SQLite)."""
        if not isinstance(self._d, SqliteDialect):
            raise AttributeError("a PostgreSQL journal has no file")
        return self._d.path

    def pragma(self, name: str) -> Any:
        """The value of an SQLite PRAGMA (for diagnostics and tests)."""
        if not name.replace("_", "").isalnum() or not isinstance(self._d, SqliteDialect):
            raise ValueError(name)
        return self._d.db.execute(f"PRAGMA {name}").fetchone()[0]

    def integrity_check(self) -> str:
        """`PRAGMA integrity_check`: "ok" when the SQLite database is sound."""
        return str(self.pragma("integrity_check"))

    # -- runs ----------------------------------------------------------------------------------

    def create_run(
        self, kind: RunKind, plan_path: str, target: str, operator: str, inputs: Mapping[str, Any]
    ) -> int:
        """Journal a new run in state `pending`; returns its id."""
        if kind not in ("apply", "teardown"):
            raise ValueError(f"run kind must be apply or teardown, not {kind!r}")
        now = self._now()
        with self._write():
            run_id = self._insert(
                "runs",
                {
                    "kind": kind,
                    "state": RunState.PENDING.value,
                    "plan_path": plan_path,
                    "target": target,
                    "operator": operator,
                    "host": self.host,
                    "pid": self.pid,
                    "created_at": now,
                    "updated_at": now,
                    "inputs_json": dump(dict(inputs)),
                },
            )
            self._insert(
                "transitions",
                {
                    "run_id": run_id,
                    "seq": 1,
                    "from_state": None,
                    "to_state": RunState.PENDING.value,
                    "at": now,
                    "reason": "created",
                },
                new_id=False,
            )
            self.insert_event(run_id, "run-created", {"kind": kind, "plan": plan_path, "target": target}, now)
        return run_id

    def transition(self, run_id: int, to: RunState | str, reason: str | None = None) -> None:
        """Move a run to `to` (checked against the table), journaling transition and audit together; a
        commit point: what a batch wrote before it is committed with it."""
        now = self._now()
        with self._write():
            row = self._one("SELECT state FROM {runs} WHERE {scope} AND id = :id{for_update}", id=run_id)
            frm = self._must(row, f"run {run_id}")["state"]
            check_transition(frm, to)  # TransitionError: nothing was written
            to_state = RunState(to)
            self._x(
                "UPDATE {runs} SET state = :state, updated_at = :now, reason = :reason"
                " WHERE {scope} AND id = :id",
                state=to_state.value,
                now=now,
                reason=reason,
                id=run_id,
            )
            seq = self._one(
                "SELECT coalesce(max(seq), 0) + 1 AS n FROM {transitions} WHERE {scope} AND run_id = :id",
                id=run_id,
            )
            self._insert(
                "transitions",
                {
                    "run_id": run_id,
                    "seq": int(self._must(seq, "seq")["n"]),
                    "from_state": frm,
                    "to_state": to_state.value,
                    "at": now,
                    "reason": reason,
                },
                new_id=False,
            )
            self.insert_event(
                run_id, "transition", {"from": frm, "to": to_state.value, "reason": reason}, now
            )
        self.commit()

    def run(self, run_id: int) -> RunRecord:
        """The run with this id (JournalError if none)."""
        return RunRecord.from_row(
            self._must(
                self._one("SELECT * FROM {runs} WHERE {scope} AND id = :id", id=run_id), f"run {run_id}"
            )
        )

    def latest_run(self, kind: RunKind | None = None) -> RunRecord | None:
        """The most recently created run (of a kind), if any."""
        which = "" if kind is None else " AND kind = :kind"
        row = self._one(f"SELECT * FROM {{runs}} WHERE {{scope}}{which} ORDER BY id DESC LIMIT 1", kind=kind)
        return None if row is None else RunRecord.from_row(row)

    def run_before(self, run_id: int, kind: RunKind | None = None) -> RunRecord | None:
        """The run (of a kind) created last before the run `run_id`, if any."""
        which = "" if kind is None else " AND kind = :kind"
        row = self._one(
            f"SELECT * FROM {{runs}} WHERE {{scope}}{which} AND id < :id ORDER BY id DESC LIMIT 1",
            kind=kind, id=run_id,
        )  # fmt: skip
        return None if row is None else RunRecord.from_row(row)

    def transitions(self, run_id: int) -> list[TransitionRecord]:
        """A run's transitions in order (the first is its creation)."""
        rows = self._rows(
            "SELECT * FROM {transitions} WHERE {scope} AND run_id = :id ORDER BY seq", id=run_id
        )
        return [TransitionRecord.from_row(r) for r in rows]

    def bump_recoveries(self, run_id: int) -> int:
        """Count one more recovery of a run (resume after a crash/interrupt); returns the new count."""
        with self._write():
            self._x(
                "UPDATE {runs} SET recoveries = recoveries + 1, updated_at = :now WHERE {scope} AND id = :id",
                now=self._now(),
                id=run_id,
            )
            row = self._one("SELECT recoveries FROM {runs} WHERE {scope} AND id = :id", id=run_id)
            return int(self._must(row, f"run {run_id}")["recoveries"])

    def reset_recoveries(self, run_id: int) -> None:
        """Reset a run's recovery count (only after real progress)."""
        with self._write():
            self._x(
                "UPDATE {runs} SET recoveries = 0, updated_at = :now WHERE {scope} AND id = :id",
                now=self._now(),
                id=run_id,
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
        *,
        lazy: bool = False,
    ) -> int:
        """Commit the intent to run a block, before it runs (a commit point); returns the step id.
        `lazy`: the block only reads the world (an observation, a verify): losing its intent to a power cut
        can only make it run again, so the commit reaches the disk with the next durable one."""
        now = self._now()
        with self._write(lazy=lazy):
            sid = self._insert(
                "steps",
                {
                    "run_id": run_id,
                    "step_key": step_key,
                    "section_key": section_key,
                    "block_index": block_index,
                    "role": role,
                    "attempt": attempt,
                    "state": StepState.STARTED.value,
                    "fingerprint": fingerprint,
                    "started_at": now,
                    "flags_json": dump(dict(flags or {})),
                },
            )
            self._x(
                "UPDATE {runs} SET current_section = :sec, updated_at = :now WHERE {scope} AND id = :id",
                sec=section_key,
                now=now,
                id=run_id,
            )
        self.commit()
        return sid

    def step_finished(
        self,
        step_id: int,
        state: StepState | str,
        exit_code: int | None,
        duration_s: float | None,
        output: str,
        session: Mapping[str, Any] | None,
        *,
        lazy: bool = False,
    ) -> None:
        """Record a started step's outcome (exactly once: only a `started` row is updated) and the
        persistable shell state after it. `lazy`: as `step_started`'s (the outcome of a check)."""
        st = StepState(state)
        if st not in STEP_FINAL:
            raise TransitionError(f"step {step_id}: {st.value} is not a final step state")
        session_json = None if session is None else dump(scrub_session(session, self._is_secret))
        with self._write(lazy=lazy):
            n = self._x(
                "UPDATE {steps} SET state = :st, finished_at = :now, exit_code = :code, duration_s = :dur,"
                " output = :out, session_json = :session WHERE {scope} AND id = :id AND state = :started",
                st=st.value,
                now=self._now(),
                code=exit_code,
                dur=duration_s,
                out=excerpt(output),
                session=session_json,
                id=step_id,
                started=StepState.STARTED.value,
            )
            if n == 0:
                was = self._must(
                    self._one("SELECT state FROM {steps} WHERE {scope} AND id = :id", id=step_id),
                    f"step {step_id}",
                )
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
        *,
        unconfirmed: bool = False,
    ) -> int:
        """Record a section's success and reset the run's recovery count (progress), with `event` (kind,
        data), the audit event that belongs to the success (its basis), in one write. Lazy: it rests on
        its checks, which run again when a power cut loses it (what its act did is durable already).
        `unconfirmed`: a check after its act was inconclusive (its flag `unconfirmed`: such a success is
        no evidence that the section holds)."""
        now = self._now()
        session_json = None if session is None else dump(scrub_session(session, self._is_secret))
        with self._write(lazy=True):
            sid = self._insert(
                "steps",
                {
                    "run_id": run_id,
                    "step_key": step_key,
                    "section_key": section_key,
                    "block_index": -1,
                    "role": "section",
                    "attempt": 1,
                    "state": StepState.SUCCEEDED.value,
                    "fingerprint": fingerprint,
                    "started_at": now,
                    "finished_at": now,
                    "exit_code": 0,
                    "duration_s": 0.0,
                    "output": "",
                    "session_json": session_json,
                    "flags_json": dump({"unconfirmed": True}) if unconfirmed else "{}",
                },
            )
            self._x(
                "UPDATE {runs} SET recoveries = 0, current_section = :sec, updated_at = :now"
                " WHERE {scope} AND id = :id",
                sec=section_key,
                now=now,
                id=run_id,
            )
            if event is not None:
                self.insert_event(run_id, event[0], event[1], now)
        return sid

    def step(self, step_id: int) -> StepRecord:
        """The step with this id."""
        row = self._one("SELECT * FROM {steps} WHERE {scope} AND id = :id", id=step_id)
        return StepRecord.from_row(self._must(row, f"step {step_id}"))

    def steps(self, run_id: int) -> list[StepRecord]:
        """A run's steps in the order they were started."""
        rows = self._rows("SELECT * FROM {steps} WHERE {scope} AND run_id = :id ORDER BY id", id=run_id)
        return [StepRecord.from_row(r) for r in rows]

    def last_success(self, step_key: str) -> StepRecord | None:
        """The most recent succeeded step with this key, in any run (the memo for fingerprints)."""
        row = self._one(
            "SELECT * FROM {steps} WHERE {scope} AND step_key = :key AND state = :ok"
            " ORDER BY id DESC LIMIT 1",
            key=step_key,
            ok=StepState.SUCCEEDED.value,
        )
        return None if row is None else StepRecord.from_row(row)

    def section_successes(self) -> dict[str, StepRecord]:
        """`last_success` of every section's step key (`KEY/section`), in one query."""
        rows = self._rows(
            "SELECT * FROM {steps} WHERE {scope} AND id IN (SELECT max(id) FROM {steps} WHERE {scope}"
            " AND role = 'section' AND state = :ok GROUP BY step_key)",
            ok=StepState.SUCCEEDED.value,
        )
        return {r["step_key"]: StepRecord.from_row(r) for r in rows}

    def last_session(self, run_id: int) -> dict[str, Any] | None:
        """The shell state left by the run's last succeeded block (a resumed run, or a gate, starts there)."""
        row = self._one(
            "SELECT session_json FROM {steps} WHERE {scope} AND run_id = :id AND state = :ok"
            " AND role != 'section' AND session_json IS NOT NULL ORDER BY id DESC LIMIT 1",
            id=run_id,
            ok=StepState.SUCCEEDED.value,
        )
        return None if row is None else dict(json.loads(row["session_json"]))

    def unfinished_steps(self, run_id: int) -> list[StepRecord]:
        """Steps still `started`: after a crash their outcome is unknown and they are re-run."""
        rows = self._rows(
            "SELECT * FROM {steps} WHERE {scope} AND run_id = :id AND state = :started ORDER BY id",
            id=run_id,
            started=StepState.STARTED.value,
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
        """Journal an approval of exactly this section content, signed or not, with its audit event (and
        wake the runs waiting for one)."""
        if how not in HOWS:
            raise ValueError(f"unknown approval method {how!r}")
        now, (principal, payload, signature) = self._now(), approval_signature(signed)
        with self._write():
            aid = self._insert(
                "approvals",
                {
                    "run_id": run_id,
                    "section_key": section_key,
                    "sha256": sha256,
                    "operator": operator,
                    "host": self.host,
                    "at": now,
                    "how": how,
                    "content_json": dump(dict(content or {})),
                    "principal": principal,
                    "signed_payload": payload,
                    "signature": signature,
                },
            )
            data = {"id": aid, "section": section_key, "sha256": sha256, "operator": operator, "how": how}
            self.insert_event(run_id, "approval", {**data, **approval_signer(signed)}, now)
            key = str(self._d.params.get("plan_key", ""))
            self._d.notify_approval(dump({"plan": key, "section": section_key, "sha256": sha256, "id": aid}))
        return aid

    def find_approval(self, section_key: str, sha256: str) -> ApprovalRecord | None:
        """The latest approval of this exact content of this section, if any."""
        return self._approval_after(section_key, sha256, 0)

    def _approval_after(self, section_key: str, sha256: str, after_id: int) -> ApprovalRecord | None:
        row = self._one(
            "SELECT * FROM {approvals} WHERE {scope} AND section_key = :sec AND sha256 = :sha"
            " AND id > :after ORDER BY id DESC LIMIT 1",
            sec=section_key,
            sha=sha256,
            after=after_id,
        )
        return None if row is None else ApprovalRecord.from_row(row)

    def approvals(self, run_id: int | None = None) -> list[ApprovalRecord]:
        """All approvals (or those made in one run), oldest first."""
        which = "" if run_id is None else " AND run_id = :run"
        rows = self._rows(f"SELECT * FROM {{approvals}} WHERE {{scope}}{which} ORDER BY id", run=run_id)
        return [ApprovalRecord.from_row(r) for r in rows]

    def wait_for_approval(
        self, section_key: str, sha256: str, after_id: int, timeout_s: float
    ) -> ApprovalRecord | None:
        """A receipt for this content newer than `after_id`, waiting up to `timeout_s` for one (a commit
        point: nothing is held open while a human decides). SQLite reads the file every 0.25 s;
        PostgreSQL waits for a NOTIFY."""
        self.commit()
        return self._d.wait(
            lambda: self._approval_after(section_key, sha256, after_id), section_key, timeout_s
        )

    # -- audit events --------------------------------------------------------------------------

    def record_event(self, run_id: int | None, kind: str, data: Mapping[str, Any] | None = None) -> int:
        """Append an audit event (input resolution, shim action, ledger write…); returns its id."""
        now = self._now()
        with self._write():
            return self.insert_event(run_id, kind, data or {}, now)

    def events(self, run_id: int | None = None, kind: str | None = None) -> list[EventRecord]:
        """Audit events, oldest first; filtered by run and/or kind when given."""
        which = ("" if run_id is None else " AND run_id = :run") + (
            "" if kind is None else " AND kind = :kind"
        )
        rows = self._rows(
            f"SELECT * FROM {{events}} WHERE {{scope}}{which} ORDER BY id", run=run_id, kind=kind
        )
        return [EventRecord.from_row(r) for r in rows]

    # -- the lease holder (written by the backend's lease) ---------------------------------------

    def lease_holder(self) -> LeaseHolder | None:
        """The recorded lease holder, if the lease is held or was not released."""
        row = self._one("SELECT * FROM {lease_holder} WHERE {scope}")
        return None if row is None else LeaseHolder.from_row(row)

    def set_lease_holder(
        self, pid: int, host: str, kind: str, started_at: Any, *, takeover: Mapping[str, Any] | None = None
    ) -> None:
        """Record this process as the lease holder; with `takeover`, audit the stale holder it replaces."""
        now = self._now()
        start = started_at if isinstance(started_at, str) else iso(started_at)
        with self._write():
            self._x(
                "INSERT INTO {lease_holder} ({scope_cols}{holder_cols}pid, host, kind, started_at,"
                " heartbeat_at, run_id)"
                " VALUES ({scope_vals}{holder_vals}:pid, :host, :kind, :start, :now, NULL)"
                " ON CONFLICT ({holder_key}) DO UPDATE SET {holder_set}pid = excluded.pid,"
                " host = excluded.host, kind = excluded.kind, started_at = excluded.started_at,"
                " heartbeat_at = excluded.heartbeat_at, run_id = NULL",
                pid=pid,
                host=host,
                kind=kind,
                start=start,
                now=now,
            )
            if takeover is not None:
                self.insert_event(None, "lease-takeover", takeover, now)

    def lease_heartbeat(self, pid: int, run_id: int | None = None) -> None:
        """Refresh this holder's heartbeat (and attach the run it is executing)."""
        with self._write():
            self._x(
                "UPDATE {lease_holder} SET heartbeat_at = :now, run_id = coalesce(:run, run_id)"
                " WHERE {scope} AND {holder_mine}",
                now=self._now(),
                run=run_id,
                pid=pid,
                host=self.host,
            )

    def clear_lease_holder(self, pid: int) -> None:
        """Forget the holder if it is this one (a release)."""
        with self._write():
            self._x("DELETE FROM {lease_holder} WHERE {scope} AND {holder_mine}", pid=pid, host=self.host)

    def break_lease(self, data: Mapping[str, Any]) -> None:
        """Forget whoever holds the lease, audited as `lease-unlocked` (`director unlock`)."""
        with self._write():
            self._x("DELETE FROM {lease_holder} WHERE {scope}")
            self.insert_event(None, "lease-unlocked", data, self._now())

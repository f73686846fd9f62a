"""The SQLite journal: the machine record behind a plan, and the only module that writes it.

One database per plan (the caller chooses the path, e.g. `.director/<plan>/journal.sqlite3`).
Durability settings: `journal_mode=WAL`, `synchronous=FULL`, `busy_timeout` 10 s; every write is one
`BEGIN IMMEDIATE` transaction that changes the row(s) and the audit event together, so a crash leaves
either all or none of a transition. Structured columns hold JSON text (never pickle); timestamps come
from an injectable clock (`director.state.records`). Opening a journal brings its schema up to date. A
durable commit: median 0.26 ms idle, ~4 ms busy (`python bench/bench_shell.py --journal`).

Tables (DDL, migrations: `director.state.schema`): runs, transitions (per run, numbered), steps (one row per
attempt; role 'section' marks a section's success; session_json the persistable shell state after it),
approvals (receipts), events (audit), verify_paths (`director.state.worlds`), lease_holder, schema_version.

Intent before effect: `step_started` commits before the block runs; a step still `started` after a crash
is "outcome unknown" (`unfinished_steps`). Secret-named variables are dropped from session JSON here as a
last line of defence (callers pass `SessionState.persistable(...)` already).
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from director.errors import JournalError, TransitionError
from director.exec.capture import excerpt
from director.exec.secrets import is_secret_name
from director.state import schema
from director.state.identity import host_name
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
    decode_row,
    dump,
    encode_row,
    export_text,
    history_tables,
    insert_sql,
    iso,
    poll,
    scrub_session,
    utc_now,
)
from director.state.signing import Signed
from director.state.store import ApprovalHow, RunKind
from director.state.worlds import SqliteWorlds

__all__ = [
    "SCHEMA_VERSION", "ApprovalHow", "ApprovalRecord", "EventRecord", "Journal", "LeaseHolder", "RunKind",
    "RunRecord", "StepRecord", "TransitionRecord", "utc_now",
]  # fmt: skip

SCHEMA_VERSION = schema.SCHEMA_VERSION

Clock = Callable[[], datetime]
APPROVAL_POLL_S = 0.25  # `wait_for_approval` on SQLite: how often the file is read (no cross-process events)


class Journal(SqliteWorlds):
    """A plan's journal database. Not shared between threads; open one per process."""

    def __init__(
        self,
        db: sqlite3.Connection,
        path: Path,
        *,
        clock: Clock = utc_now,
        is_secret: Callable[[str], bool] = is_secret_name,
    ) -> None:
        """Wrap an open connection; use `Journal.open`."""
        self._db = db
        self.path = path
        self._clock = clock
        self._is_secret = is_secret
        self.host = host_name()
        self.pid = os.getpid()

    @property
    def location(self) -> str:
        """The journal file."""
        return str(self.path)

    # -- opening -------------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        clock: Clock = utc_now,
        is_secret: Callable[[str], bool] = is_secret_name,
    ) -> Journal:
        """Open (creating it and its parent directory if needed) the journal at `path`."""
        p = Path(path)
        return cls(schema.connect(p, iso(clock())), p, clock=clock, is_secret=is_secret)

    def close(self) -> None:
        """Close the connection (idempotent)."""
        self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- plumbing ------------------------------------------------------------------------------

    def _now(self) -> str:
        return iso(self._clock())

    @contextmanager
    def _tx(self, *, durable: bool = True) -> Iterator[sqlite3.Connection]:
        """One write transaction; sqlite errors become JournalError.

        Durable: committed with an fsync (`synchronous=FULL`). Not durable: no fsync of its own; the WAL is
        append-only, so the next durable commit's fsync makes it durable too (a crash of the process loses
        nothing either way; only a power loss in between can).
        """
        if not durable:
            self._db.execute("PRAGMA synchronous = NORMAL")
        try:
            with self._write() as db:
                yield db
        finally:
            if not durable:
                self._db.execute("PRAGMA synchronous = FULL")

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as e:
            raise JournalError(f"journal {self.path} is busy or unwritable: {e}") from e
        try:
            yield self._db
        except BaseException as e:
            self._db.execute("ROLLBACK")
            if isinstance(e, sqlite3.Error):
                raise JournalError(f"journal write failed ({self.path}): {e}") from e
            raise
        else:
            try:
                self._db.execute("COMMIT")
            except sqlite3.Error as e:
                raise JournalError(f"journal commit failed ({self.path}): {e}") from e

    def _insert_event(
        self, db: sqlite3.Connection, run_id: int | None, kind: str, data: Mapping[str, Any], at: str
    ) -> int:
        cur = db.execute(
            "INSERT INTO events (run_id, at, kind, data_json) VALUES (?, ?, ?, ?)",
            (run_id, at, kind, dump(dict(data))),
        )
        return int(cur.lastrowid or 0)

    def pragma(self, name: str) -> Any:
        """The value of a PRAGMA (for diagnostics and tests)."""
        if not name.replace("_", "").isalnum():
            raise ValueError(name)
        return self._db.execute(f"PRAGMA {name}").fetchone()[0]

    def integrity_check(self) -> str:
        """`PRAGMA integrity_check`: "ok" when the database is sound."""
        return str(self._db.execute("PRAGMA integrity_check").fetchone()[0])

    # -- runs ----------------------------------------------------------------------------------

    def create_run(
        self,
        kind: RunKind,
        plan_path: str,
        target: str,
        operator: str,
        inputs: Mapping[str, Any],
    ) -> int:
        """Journal a new run in state `pending`; returns its id."""
        if kind not in ("apply", "teardown"):
            raise ValueError(f"run kind must be apply or teardown, not {kind!r}")
        now = self._now()
        with self._tx() as db:
            cur = db.execute(
                "INSERT INTO runs (kind, state, plan_path, target, operator, host, pid, created_at,"
                " updated_at, inputs_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (kind, RunState.PENDING.value, plan_path, target, operator, self.host, self.pid, now, now,
                 dump(dict(inputs))),
            )  # fmt: skip
            run_id = int(cur.lastrowid or 0)
            db.execute(
                "INSERT INTO transitions (run_id, seq, from_state, to_state, at, reason)"
                " VALUES (?, 1, NULL, ?, ?, ?)",
                (run_id, RunState.PENDING.value, now, "created"),
            )
            self._insert_event(
                db, run_id, "run-created", {"kind": kind, "plan": plan_path, "target": target}, now
            )
        return run_id

    def transition(self, run_id: int, to: RunState | str, reason: str | None = None) -> None:
        """Move a run to `to` (checked against the table), journaling transition and audit together."""
        now = self._now()
        with self._tx() as db:
            row = db.execute("SELECT state FROM runs WHERE id = ?", (run_id,)).fetchone()
            if row is None:
                raise JournalError(f"no run {run_id} in {self.path}")
            frm = row["state"]
            check_transition(frm, to)  # TransitionError rolls the transaction back
            to_state = RunState(to)
            db.execute(
                "UPDATE runs SET state = ?, updated_at = ?, reason = ? WHERE id = ?",
                (to_state.value, now, reason, run_id),
            )
            seq = db.execute(
                "SELECT coalesce(max(seq), 0) + 1 FROM transitions WHERE run_id = ?", (run_id,)
            ).fetchone()[0]
            db.execute(
                "INSERT INTO transitions (run_id, seq, from_state, to_state, at, reason)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (run_id, seq, frm, to_state.value, now, reason),
            )
            self._insert_event(
                db, run_id, "transition", {"from": frm, "to": to_state.value, "reason": reason}, now
            )

    def run(self, run_id: int) -> RunRecord:
        """The run with this id (JournalError if none)."""
        row = self._db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise JournalError(f"no run {run_id} in {self.path}")
        return RunRecord.from_row(row)

    def latest_run(self, kind: RunKind | None = None) -> RunRecord | None:
        """The most recently created run (of a kind), if any."""
        if kind is None:
            row = self._db.execute("SELECT * FROM runs ORDER BY id DESC LIMIT 1").fetchone()
        else:
            row = self._db.execute(
                "SELECT * FROM runs WHERE kind = ? ORDER BY id DESC LIMIT 1", (kind,)
            ).fetchone()
        return None if row is None else RunRecord.from_row(row)

    def transitions(self, run_id: int) -> list[TransitionRecord]:
        """A run's transitions in order (the first is its creation)."""
        rows = self._db.execute(
            "SELECT * FROM transitions WHERE run_id = ? ORDER BY seq", (run_id,)
        ).fetchall()
        return [TransitionRecord.from_row(r) for r in rows]

    def bump_recoveries(self, run_id: int) -> int:
        """Count one more recovery of a run (resume after a crash/interrupt); returns the new count."""
        with self._tx() as db:
            db.execute(
                "UPDATE runs SET recoveries = recoveries + 1, updated_at = ? WHERE id = ?",
                (self._now(), run_id),
            )
            row = db.execute("SELECT recoveries FROM runs WHERE id = ?", (run_id,)).fetchone()
            if row is None:
                raise JournalError(f"no run {run_id} in {self.path}")
            return int(row[0])

    def reset_recoveries(self, run_id: int) -> None:
        """Reset a run's recovery count (only after real progress)."""
        with self._tx() as db:
            db.execute("UPDATE runs SET recoveries = 0, updated_at = ? WHERE id = ?", (self._now(), run_id))

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
            cur = db.execute(
                "INSERT INTO steps (run_id, step_key, section_key, block_index, role, attempt, state,"
                " fingerprint, started_at, flags_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (run_id, step_key, section_key, block_index, role, attempt, StepState.STARTED.value,
                 fingerprint, now, dump(dict(flags or {}))),
            )  # fmt: skip
            db.execute(
                "UPDATE runs SET current_section = ?, updated_at = ? WHERE id = ?",
                (section_key, now, run_id),
            )
            return int(cur.lastrowid or 0)

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
        session_json = None if session is None else dump(scrub_session(session, self._is_secret))
        with self._tx() as db:
            row = db.execute("SELECT run_id, state FROM steps WHERE id = ?", (step_id,)).fetchone()
            if row is None:
                raise JournalError(f"no step {step_id} in {self.path}")
            if row["state"] != StepState.STARTED.value:
                raise TransitionError(
                    f"invalid step transition {row['state']} -> {st.value} (step {step_id} already finished)"
                )
            db.execute(
                "UPDATE steps SET state = ?, finished_at = ?, exit_code = ?, duration_s = ?, output = ?,"
                " session_json = ? WHERE id = ?",
                (st.value, now, exit_code, duration_s, excerpt(output), session_json, step_id),
            )
            db.execute("UPDATE runs SET updated_at = ? WHERE id = ?", (now, row["run_id"]))

    def section_succeeded(
        self,
        run_id: int,
        step_key: str,
        section_key: str,
        fingerprint: str,
        session: Mapping[str, Any] | None,
        event: tuple[str, Mapping[str, Any]] | None = None,
    ) -> int:
        """Record a section's success and reset the run's recovery count (progress), in one commit, with
        `event` (kind, data): the audit event that belongs to the success (its basis).

        Not fsynced on its own: the next durable commit (a step's, a transition's) carries it to disk. Lost
        only with a power cut before that, which costs nothing: the section's steps are journaled
        durably, so a resumed run finds them finished and records the section again without re-running
        them (at most two fsyncs per block: its step started and finished).
        """
        now = self._now()
        session_json = None if session is None else dump(scrub_session(session, self._is_secret))
        with self._tx(durable=False) as db:
            cur = db.execute(
                "INSERT INTO steps (run_id, step_key, section_key, block_index, role, attempt, state,"
                " fingerprint, started_at, finished_at, exit_code, duration_s, output, session_json,"
                " flags_json)"
                " VALUES (?, ?, ?, -1, 'section', 1, ?, ?, ?, ?, 0, 0.0, '', ?, '{}')",
                (
                    run_id,
                    step_key,
                    section_key,
                    StepState.SUCCEEDED.value,
                    fingerprint,
                    now,
                    now,
                    session_json,
                ),
            )
            db.execute(
                "UPDATE runs SET recoveries = 0, current_section = ?, updated_at = ? WHERE id = ?",
                (section_key, now, run_id),
            )
            if event is not None:
                self._insert_event(db, run_id, event[0], event[1], now)
            return int(cur.lastrowid or 0)

    def step(self, step_id: int) -> StepRecord:
        """The step with this id."""
        row = self._db.execute("SELECT * FROM steps WHERE id = ?", (step_id,)).fetchone()
        if row is None:
            raise JournalError(f"no step {step_id} in {self.path}")
        return StepRecord.from_row(row)

    def steps(self, run_id: int) -> list[StepRecord]:
        """A run's steps in the order they were started."""
        rows = self._db.execute("SELECT * FROM steps WHERE run_id = ? ORDER BY id", (run_id,)).fetchall()
        return [StepRecord.from_row(r) for r in rows]

    def last_success(self, step_key: str) -> StepRecord | None:
        """The most recent succeeded step with this key, in any run (the memo for fingerprints)."""
        row = self._db.execute(
            "SELECT * FROM steps WHERE step_key = ? AND state = ? ORDER BY id DESC LIMIT 1",
            (step_key, StepState.SUCCEEDED.value),
        ).fetchone()
        return None if row is None else StepRecord.from_row(row)

    def section_successes(self) -> dict[str, StepRecord]:
        """`last_success` of every section's step key (`KEY/section`), in one query."""
        rows = self._db.execute(
            "SELECT * FROM steps WHERE id IN"
            " (SELECT max(id) FROM steps WHERE role = 'section' AND state = ? GROUP BY step_key)",
            (StepState.SUCCEEDED.value,),
        ).fetchall()
        return {r["step_key"]: StepRecord.from_row(r) for r in rows}

    def last_session(self, run_id: int) -> dict[str, Any] | None:
        """The shell state left by the run's last succeeded block (a resumed run, or a gate, starts there)."""
        row = self._db.execute(
            "SELECT session_json FROM steps WHERE run_id = ? AND state = ? AND role != 'section'"
            " AND session_json IS NOT NULL ORDER BY id DESC LIMIT 1",
            (run_id, StepState.SUCCEEDED.value),
        ).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def unfinished_steps(self, run_id: int) -> list[StepRecord]:
        """Steps still `started`: after a crash their outcome is unknown and they are re-run."""
        rows = self._db.execute(
            "SELECT * FROM steps WHERE run_id = ? AND state = ? ORDER BY id",
            (run_id, StepState.STARTED.value),
        ).fetchall()
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
        """Journal an approval of exactly this section content, signed or not (and its audit event)."""
        if how not in ("prompt", "flag", "approve-command", "auto"):
            raise ValueError(f"unknown approval method {how!r}")
        now, sig = self._now(), approval_signature(signed)
        with self._tx() as db:
            cur = db.execute(
                "INSERT INTO approvals (run_id, section_key, sha256, operator, host, at, how, content_json,"
                " principal, signed_payload, signature) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (run_id, section_key, sha256, operator, self.host, now, how, dump(dict(content or {})), *sig),
            )
            aid = int(cur.lastrowid or 0)
            data = {"id": aid, "section": section_key, "sha256": sha256, "operator": operator, "how": how}
            self._insert_event(db, run_id, "approval", {**data, **approval_signer(signed)}, now)
        return aid

    def find_approval(self, section_key: str, sha256: str) -> ApprovalRecord | None:
        """The latest approval of this exact content of this section, if any."""
        row = self._db.execute(
            "SELECT * FROM approvals WHERE section_key = ? AND sha256 = ? ORDER BY id DESC LIMIT 1",
            (section_key, sha256),
        ).fetchone()
        return None if row is None else ApprovalRecord.from_row(row)

    def approvals(self, run_id: int | None = None) -> list[ApprovalRecord]:
        """All approvals (or those made in one run), oldest first."""
        if run_id is None:
            rows = self._db.execute("SELECT * FROM approvals ORDER BY id").fetchall()
        else:
            rows = self._db.execute(
                "SELECT * FROM approvals WHERE run_id = ? ORDER BY id", (run_id,)
            ).fetchall()
        return [ApprovalRecord.from_row(r) for r in rows]

    def wait_for_approval(
        self, section_key: str, sha256: str, after_id: int, timeout_s: float
    ) -> ApprovalRecord | None:
        """A receipt for this content newer than `after_id`, waiting up to `timeout_s` for one: SQLite has
        no cross-process notification, so the file is read every `APPROVAL_POLL_S` s (one indexed query)."""

        def read() -> ApprovalRecord | None:
            row = self._db.execute(
                "SELECT * FROM approvals WHERE section_key = ? AND sha256 = ? AND id > ? ORDER BY id DESC",
                (section_key, sha256, after_id),
            ).fetchone()
            return None if row is None else ApprovalRecord.from_row(row)

        return poll(read, timeout_s, APPROVAL_POLL_S)

    # -- audit events --------------------------------------------------------------------------

    def record_event(self, run_id: int | None, kind: str, data: Mapping[str, Any] | None = None) -> int:
        """Append an audit event (input resolution, shim action, ledger write…); returns its id."""
        now = self._now()
        with self._tx() as db:
            return self._insert_event(db, run_id, kind, data or {}, now)

    def events(self, run_id: int | None = None, kind: str | None = None) -> list[EventRecord]:
        """Audit events, oldest first; filtered by run and/or kind when given."""
        sql = "SELECT * FROM events"
        args: list[Any] = []
        where = []
        if run_id is not None:
            where.append("run_id = ?")
            args.append(run_id)
        if kind is not None:
            where.append("kind = ?")
            args.append(kind)
        if where:
            sql += " WHERE " + " AND ".join(where)
        rows = self._db.execute(sql + " ORDER BY id", args).fetchall()
        return [EventRecord.from_row(r) for r in rows]

    # -- lease holder (written by director.state.lease) ----------------------------------------------

    def lease_holder(self) -> LeaseHolder | None:
        """The recorded lease holder, if the lease is held or was not released."""
        row = self._db.execute("SELECT * FROM lease_holder WHERE id = 1").fetchone()
        return None if row is None else LeaseHolder.from_row(row)

    def set_lease_holder(
        self,
        pid: int,
        host: str,
        kind: str,
        started_at: datetime,
        *,
        takeover: Mapping[str, Any] | None = None,
    ) -> None:
        """Record this process as the lease holder; with `takeover`, audit the stale holder it replaces."""
        now = self._now()
        with self._tx() as db:
            db.execute(
                "INSERT OR REPLACE INTO lease_holder (id, pid, host, kind, started_at, heartbeat_at, run_id)"
                " VALUES (1, ?, ?, ?, ?, ?, NULL)",
                (pid, host, kind, iso(started_at), now),
            )
            if takeover is not None:
                self._insert_event(db, None, "lease-takeover", takeover, now)

    def lease_heartbeat(self, pid: int, run_id: int | None = None) -> None:
        """Refresh the holder's heartbeat (and attach the run it is executing)."""
        with self._tx() as db:
            db.execute(
                "UPDATE lease_holder SET heartbeat_at = ?, run_id = coalesce(?, run_id)"
                " WHERE id = 1 AND pid = ? AND host = ?",
                (self._now(), run_id, pid, self.host),
            )

    def clear_lease_holder(self, pid: int) -> None:
        """Forget the holder if it is `pid` on this host (a release)."""
        with self._tx() as db:
            db.execute("DELETE FROM lease_holder WHERE id = 1 AND pid = ? AND host = ?", (pid, self.host))

    # -- export --------------------------------------------------------------------------------

    def export_data(self) -> dict[str, Any]:
        """Every table as plain JSON-able data (JSON columns decoded)."""
        out: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "path": str(self.path)}
        for table in schema.TABLES:
            rows = self._db.execute(f"SELECT * FROM {table} ORDER BY rowid")  # fixed table names
            out[table] = [decode_row(dict(r)) for r in rows]
        return out

    def export(self, fmt: ExportFormat = "json") -> str:
        """All runs, transitions, steps, approvals, events (and the holder) as JSON or JSON Lines text."""
        return export_text(self.export_data(), fmt)

    def has_history(self) -> bool:
        """Whether any run, approval or event was ever recorded here."""
        return any(
            self._db.execute(f"SELECT EXISTS (SELECT 1 FROM {t})").fetchone()[0]  # fixed table names
            for t in ("runs", "approvals", "events")
        )

    def import_data(self, data: Mapping[str, Any], *, replace: bool = False) -> int:
        """Copy an exported journal (`export_data` of either backend) into this one, ids kept.

        One transaction: all of it or nothing. This journal must have no history, unless `replace`
        (its history is then deleted in that transaction). The lease holder is not history: not copied.
        """
        if self.has_history() and not replace:
            raise JournalError(f"journal {self.path} already has history; refusing to mix two histories")
        tables, n = history_tables(schema.TABLES), 0
        with self._tx() as db:
            for table in reversed(tables):
                db.execute(f"DELETE FROM {table}")  # fixed table names; children first
            for table in tables:
                columns = [r["name"] for r in db.execute(f"PRAGMA table_info({table})")]
                for row in data.get(table, []):
                    db.execute(*insert_sql(table, encode_row(row, columns), "?"))
                    n += 1
        return n

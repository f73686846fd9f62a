"""The PostgreSQL side of the dialect seam (`director.state.dialect`): one connection to the shared
state database, the rows of one plan key (`director.state.identity`).

One connection per process, in autocommit mode; the journal's writes are explicit `BEGIN` … `COMMIT`
transactions on it. Ids are numbered per plan from `plans.last_id`, read with the row locked in the
write's own transaction and written back before its commit, so run 3 of a plan is run 3 whichever
machine shows it, and push/pull keep ids. Timestamps and JSON columns are stored as the SQLite journal
stores them (ISO-8601 text, canonical JSON text): both backends export identical data.

Faults: a lost or refused connection (server restart, network, `director unlock` of a live holder)
raises `StateUnavailable` (exit 11) from whichever call meets it; nothing is retried, so no write is ever
made twice, and the next apply resumes from what was committed. Other database errors are
`JournalError` (exit 70).

Approvals across machines: `record_approval` sends `NOTIFY director_approval` in its transaction; a run
in `wait_for_approval` LISTENs and re-reads only when a notification for its plan and section arrives.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from contextlib import suppress
from typing import Any

import psycopg

from director.errors import DirectorError, JournalError, StateUnavailable
from director.state import pgschema
from director.state.dialect import TABLES, Dialect, Params
from director.state.pgschema import SCHEMA, Connection
from director.state.records import T

CHANNEL = "director_approval"
WAKE_S = 60.0  # a waiting run re-reads at least this often, in case a notification was lost with a restart


class PgDialect(Dialect):
    """The `director` schema of a PostgreSQL database, seen as one plan's journal."""

    name = "postgresql"
    pyformat = True
    errors = (psycopg.Error,)
    schema_version = pgschema.SCHEMA_VERSION
    chain_lock = "plan"  # the plan's `plans` row, locked by reading its id counter

    def __init__(self, conn: Connection, url: str, key: str) -> None:
        names = {t: f"{SCHEMA}.{t}" for t in (*TABLES, "plans")}
        names["meta"] = f"{SCHEMA}.plan_meta"
        names |= {
            "scope": "plan_key = :plan_key",
            "scope_cols": "plan_key, ",
            "scope_vals": ":plan_key, ",
            "for_update": " FOR UPDATE",
            # the lease holder: one row per plan, named by its database session (which holds the lock)
            "holder_cols": "backend_pid, ",
            "holder_vals": "pg_backend_pid(), ",
            "holder_key": "plan_key",
            "holder_set": "backend_pid = excluded.backend_pid, ",
            "holder_mine": "backend_pid = pg_backend_pid()",
        }
        super().__init__(names, {"plan_key": key})
        self.conn = conn
        self.url = pgschema.redact(url)
        self.key = key

    @property
    def where(self) -> str:
        return f"{self.url} (plan key {self.key})"

    def execute(self, sql: str, params: Params) -> Any:
        return self.conn.execute(sql.encode() if not params else sql, params or None)

    def fault(self, e: BaseException) -> DirectorError:
        text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        if isinstance(e, psycopg.OperationalError | psycopg.InterfaceError):
            return StateUnavailable(
                f"lost the state database {self.url} ({text}); nothing was retried: "
                "`director apply` resumes from what was committed"
            )
        return JournalError(f"state database {self.url}: {text}")

    def _plain(self, statement: str) -> None:
        try:
            self.conn.execute(statement.encode())
        except psycopg.Error as e:
            raise self.fault(e) from e

    def begin(self) -> None:
        self._plain("BEGIN")

    def commit(self, durable: bool = True) -> None:
        if not durable:  # acknowledged before the server's WAL is flushed; a later durable commit flushes it
            self._plain("SET LOCAL synchronous_commit TO OFF")
        self._plain("COMMIT")

    def sync(self) -> None:
        """A write of nothing new (the plan's row, as it is) committed durably: the server flushes its WAL
        up to that commit, and the lazy commits before it with it (an empty transaction flushes nothing)."""
        self.begin()
        try:
            self.run("UPDATE {plans} SET last_id = last_id WHERE key = :plan_key", {})
        except BaseException:
            self.rollback()
            raise
        self.commit()

    def rollback(self) -> None:
        with suppress(psycopg.Error):  # a lost connection has no transaction left to end
            if self.conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                self.conn.execute(b"ROLLBACK")

    def ids_of(self, table: str) -> str | None:
        return "plan"  # one counter per plan for runs, steps, receipts and events

    def last_id(self, sequence: str) -> int:
        row = self.run(
            "UPDATE {plans} SET last_id = last_id WHERE key = :plan_key RETURNING last_id", {}
        ).fetchone()
        if row is None:
            raise JournalError(f"plan key {self.key} is not registered in {self.url}")
        return int(row["last_id"])

    def save_ids(self, last: Mapping[str, int]) -> None:
        if "plan" in last:
            self.run("UPDATE {plans} SET last_id = :last WHERE key = :plan_key", {"last": last["plan"]})

    def notify_approval(self, payload: str) -> None:
        self.run("SELECT pg_notify(:channel, :payload)", {"channel": CHANNEL, "payload": payload})

    def wait(self, read: Callable[[], T | None], section_key: str, timeout_s: float) -> T | None:
        """LISTEN first, then read (a receipt committed in between is found by the read, one committed
        after it wakes the wait): the database is read again only when a notification for this plan and
        section arrives (or every `WAKE_S`, as a safety net)."""
        deadline = time.monotonic() + timeout_s
        try:
            self.conn.execute(f"LISTEN {CHANNEL}".encode())
            while True:
                found = read()
                if found is not None:
                    return found
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._await_notice(section_key, min(left, WAKE_S))
        except psycopg.Error as e:
            raise self.fault(e) from e
        finally:
            with suppress(psycopg.Error):  # a lost connection listens no more anyway
                self.conn.execute(f"UNLISTEN {CHANNEL}".encode())

    def _await_notice(self, section_key: str, timeout_s: float) -> None:
        """Return when a receipt for this plan's section is announced, or after `timeout_s`."""
        for n in self.conn.notifies(timeout=timeout_s):
            try:
                data = json.loads(n.payload)
            except ValueError:
                continue
            if data.get("plan") == self.key and data.get("section") == section_key:
                return

    def columns(self, table: str) -> list[str]:
        rows = self.run(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = :schema"
            " AND table_name = :table ORDER BY ordinal_position",
            {"schema": SCHEMA, "table": "plan_meta" if table == "meta" else table},
        ).fetchall()
        return [r["column_name"] for r in rows if r["column_name"] != "plan_key"]

    def session_pid(self) -> int:
        """This connection's database session (its backend pid): the holder of the plan's lease lock."""
        return int(self.conn.info.backend_pid)

    def close(self) -> None:
        with suppress(psycopg.Error):
            self.conn.close()

"""The PostgreSQL journal's plumbing: one connection, its transactions and faults, and the whole-journal
operations (history, export, import) that `director state push|pull` uses.

One connection per process, in autocommit mode; every write is one explicit transaction (`tx`) that
changes the row(s) and the audit event together (the SQLite journal's rule). Rows are scoped by the
plan key (`director.state.identity`); ids are numbered per plan (`plans.last_id`, taken in the write's
own transaction by `next_id`), so run 3 of a plan is run 3 whichever machine shows it, and push/pull
keep ids. Timestamps and JSON columns are stored as the SQLite journal stores them (ISO-8601 text,
canonical JSON text): both backends export identical data.

Faults: a lost or refused connection (server restart, network, `director unlock` of a live holder)
raises `StateUnavailable` (exit 11) from whichever call meets it; nothing is retried, so no write is ever
made twice, and the next apply resumes from what was committed. Other database errors are
`JournalError` (exit 70).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from datetime import datetime
from types import TracebackType
from typing import Any, Self

import psycopg

from director.errors import JournalError, StateUnavailable
from director.exec.secrets import is_secret_name
from director.state import pgschema
from director.state.identity import host_name
from director.state.pgschema import SCHEMA, Connection
from director.state.records import (
    ExportFormat,
    decode_row,
    dump,
    encode_row,
    export_text,
    history_tables,
    insert_sql,
    iso,
    utc_now,
)

Clock = Callable[[], datetime]
Params = tuple[Any, ...] | list[Any] | Mapping[str, Any]
S = SCHEMA  # table prefix in the SQL below


class PgBase:
    """A connection to the state database for one plan key. Not shared between threads."""

    def __init__(
        self,
        conn: Connection,
        url: str,
        key: str,
        *,
        clock: Clock = utc_now,
        is_secret: Callable[[str], bool] = is_secret_name,
    ) -> None:
        """Wrap an open, migrated connection; use `open`."""
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
    ) -> Self:
        """Connect, migrate on first use, and (with `create`) register the plan key."""
        conn = pgschema.connect(url)
        try:
            where = pgschema.redact(url)
            pgschema.migrate(conn, where, iso(clock()))
            j = cls(conn, url, key, clock=clock, is_secret=is_secret)
            if create:
                with j.tx() as db:
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

    def now_iso(self) -> str:
        """Now, as stored (from the injectable clock)."""
        return self._now()

    def session_pid(self) -> int:
        """This connection's database session (its backend pid)."""
        return int(self._conn.info.backend_pid)

    def _fault(self, e: psycopg.Error) -> Exception:
        text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        if isinstance(e, psycopg.OperationalError | psycopg.InterfaceError):
            return StateUnavailable(
                f"lost the state database {self.url} ({text}); nothing was retried: "
                "`director apply` resumes from what was committed"
            )
        return JournalError(f"state database {self.url}: {text}")

    @contextmanager
    def tx(self) -> Iterator[Connection]:
        """One durable write transaction; database errors become StateUnavailable / JournalError."""
        try:
            with self._conn.transaction():
                yield self._conn
        except psycopg.Error as e:
            raise self._fault(e) from e

    def rows(self, sql: str, args: Params = ()) -> list[dict[str, Any]]:
        try:
            return self._conn.execute(sql, args).fetchall()
        except psycopg.Error as e:
            raise self._fault(e) from e

    def row(self, sql: str, args: Params = ()) -> dict[str, Any] | None:
        rows = self.rows(sql, args)
        return rows[0] if rows else None

    def next_id(self, db: Connection) -> int:
        row = db.execute(
            f"UPDATE {S}.plans SET last_id = last_id + 1 WHERE key = %s RETURNING last_id", (self.key,)
        ).fetchone()
        if row is None:
            raise JournalError(f"plan key {self.key} is not registered in {self.url}")
        return int(row["last_id"])

    def insert_event(
        self, db: Connection, run_id: int | None, kind: str, data: Mapping[str, Any], at: str
    ) -> int:
        eid = self.next_id(db)
        db.execute(
            f"INSERT INTO {S}.events (plan_key, id, run_id, at, kind, data_json)"
            " VALUES (%s, %s, %s, %s, %s, %s)",
            (self.key, eid, run_id, at, kind, dump(dict(data))),
        )
        return eid

    # -- whole journal -------------------------------------------------------------------------

    def has_history(self) -> bool:
        """Whether any run, approval or event was ever recorded for this plan."""
        row = self.row(
            f"SELECT EXISTS (SELECT 1 FROM {S}.runs WHERE plan_key = %s)"
            f" OR EXISTS (SELECT 1 FROM {S}.approvals WHERE plan_key = %s)"
            f" OR EXISTS (SELECT 1 FROM {S}.events WHERE plan_key = %s) AS any",
            (self.key, self.key, self.key),
        )
        return bool(row and row["any"])

    def export_data(self) -> dict[str, Any]:
        """Every table's rows of this plan as plain JSON-able data (JSON columns decoded), as SQLite's."""
        out: dict[str, Any] = {"schema_version": pgschema.SCHEMA_VERSION, "path": self.location}
        for table in pgschema.TABLES:
            order = pgschema.ORDER.get(table, "id")
            rows = self.rows(f"SELECT * FROM {S}.{table} WHERE plan_key = %s ORDER BY {order}", (self.key,))
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
        with self.tx() as db:
            for table in reversed(history_tables(pgschema.TABLES)):  # children first
                db.execute(f"DELETE FROM {S}.{table} WHERE plan_key = %s", (self.key,))
            for table in history_tables(pgschema.TABLES):
                cols = [
                    r["column_name"]
                    for r in db.execute(
                        "SELECT column_name FROM information_schema.columns WHERE table_schema = %s"
                        " AND table_name = %s ORDER BY ordinal_position",
                        (SCHEMA, table),
                    ).fetchall()
                ]
                for row in data.get(table, []):
                    db.execute(
                        *insert_sql(f"{S}.{table}", encode_row({**row, "plan_key": self.key}, cols), "%s")
                    )
                    top = max(top, int(row.get("id") or 0))
                    n += 1
            db.execute(
                f"UPDATE {S}.plans SET last_id = greatest(last_id, %s) WHERE key = %s", (top, self.key)
            )
        return n

"""The seam between the one journal (`director.state.journal`) and the database that keeps it.

The journal's SQL is written once, in a neutral form: tables as `{runs}`, parameters as `:name`, and
`{scope}` wherever a query must see only this plan's rows. A `Dialect` turns it into its database's SQL
and runs it. What differs between SQLite and PostgreSQL is here and nowhere else:

- tables and scope: SQLite keeps one file per plan (`runs`, and `{scope}` is `TRUE`); PostgreSQL one
  `director` schema for every plan (`director.runs`, the rows whose `plan_key` is this plan's);
- parameters: `:name` in SQLite, `%(name)s` in psycopg;
- ids: per table in SQLite (`max(id) + 1`, read in the write's transaction); per plan in PostgreSQL
  (`plans.last_id`, shared by runs, steps, receipts and events);
- a write: `BEGIN IMMEDIATE` … `COMMIT` / `BEGIN` … `COMMIT`; a durable commit then syncs the write-ahead
  log (`fdatasync`, what `synchronous = FULL` does at every commit) / commits with `synchronous_commit`
  on, a lazy one does not (docs/durability.md); row locks: SQLite's write lock / `SELECT … FOR UPDATE`
  and the plan's row;
- waiting for a receipt: the file read every 0.25 s / `LISTEN director_approval` (`record_approval`
  sends `NOTIFY` in its transaction);
- schema and migrations: `director.state.schema` / `director.state.pgschema`;
- faults: `JournalError` (exit 70) / a lost connection is `StateUnavailable` (exit 11), else `JournalError`.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar, Literal

from director.errors import DirectorError, JournalError, StorageError
from director.state import chain, schema
from director.state.records import T, poll

Params = Mapping[str, Any]
Row = Mapping[str, Any]

TABLES = ("runs", "transitions", "steps", "approvals", "events", "verify_paths", "lease_holder", "meta")
APPROVAL_POLL_S = 0.25  # SQLite: how often a waiting run reads the file for a receipt

_PARAM = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")
_NAME = re.compile(r"\{(\w+)\}")


@lru_cache(maxsize=512)
def translate(text: str, names: tuple[tuple[str, str], ...], pyformat: bool) -> str:
    """The neutral SQL `text` with `{name}` replaced from `names` and, if `pyformat`, `:p` as `%(p)s`."""
    table = dict(names)
    out = _NAME.sub(lambda m: table[m.group(1)], text)
    if pyformat:
        out = _PARAM.sub(r"%(\1)s", out.replace("%", "%%"))
    return out


class Dialect(ABC):
    """One database connection, and how the journal's neutral SQL runs on it."""

    name: ClassVar[Literal["sqlite", "postgresql"]]
    pyformat: ClassVar[bool] = False
    errors: tuple[type[BaseException], ...] = ()  # the driver's exception classes
    schema_version: ClassVar[int]  # the schema this Director writes (`schema` / `pgschema`)
    # The id sequence whose row lock orders appends to the chain (None: the write lock does).
    chain_lock: ClassVar[str | None] = None

    def __init__(self, names: Mapping[str, str], params: Params) -> None:
        self._names = tuple(sorted(names.items()))
        self.params = dict(params)  # bound into every statement (the plan key, on PostgreSQL)

    @property
    @abstractmethod
    def where(self) -> str:
        """Where the journal is, for messages: the file, or the database (no password) and plan key."""

    def sql(self, text: str) -> str:
        """`text` in this database's SQL."""
        return translate(text, self._names, self.pyformat)

    def run(self, text: str, params: Params) -> Any:
        """Execute one statement (its cursor); database errors become Director's."""
        try:
            return self.execute(self.sql(text), {**self.params, **params})
        except self.errors as e:
            raise self.fault(e) from e

    def rows(self, text: str, params: Params) -> list[Row]:
        """The rows of a query, as dicts in both backends."""
        return [dict(r) for r in self.run(text, params).fetchall()]

    @abstractmethod
    def execute(self, sql: str, params: Params) -> Any: ...

    @abstractmethod
    def fault(self, e: BaseException) -> DirectorError:
        """A database error as Director's error (naming the journal)."""

    @abstractmethod
    def begin(self) -> None: ...

    @abstractmethod
    def commit(self, durable: bool = True) -> None:
        """Commit the open transaction. `durable`: on the disk when this returns (survives a power cut);
        else it survives any crash of Director, and the next durable commit carries it to the disk."""

    @abstractmethod
    def sync(self) -> None:
        """Outside a transaction: every commit so far on the disk (what a durable commit would do)."""

    @abstractmethod
    def rollback(self) -> None:
        """End the open transaction without keeping it (quietly, whatever state the connection is in)."""

    @abstractmethod
    def ids_of(self, table: str) -> str | None:
        """Which id sequence a table's new rows take their ids from (its own, or the plan's); None: the
        database assigns it on insert."""

    @abstractmethod
    def last_id(self, sequence: str) -> int:
        """Inside a write: the last id of a sequence in use (the first new one is that + 1)."""

    def save_ids(self, last: Mapping[str, int]) -> None:  # noqa: B027 - nothing to keep in SQLite
        """Inside a write, before its commit: the last ids the write used (PostgreSQL keeps a counter)."""

    def notify_approval(self, payload: str) -> None:  # noqa: B027 - SQLite has no one to notify
        """Inside the write that records a receipt: wake the runs waiting for one (PostgreSQL)."""

    @abstractmethod
    def wait(self, read: Callable[[], T | None], section_key: str, timeout_s: float) -> T | None:
        """`read()` until it finds something or `timeout_s` passes, waking when a receipt may have come."""

    @abstractmethod
    def columns(self, table: str) -> list[str]:
        """The table's columns (without the plan key)."""

    @abstractmethod
    def close(self) -> None: ...


SQLITE_NAMES = {
    "scope": "TRUE",
    "scope_cols": "",
    "scope_vals": "",
    "for_update": "",
    # the lease holder: one row (id 1), the holder named by its pid and host
    "holder_cols": "id, ",
    "holder_vals": "1, ",
    "holder_key": "id",
    "holder_set": "",
    "holder_mine": "pid = :pid AND host = :host",
}


class SqliteDialect(Dialect):
    """A plan's journal file (`director.state.schema`: settings and migrations)."""

    name = "sqlite"
    errors = (sqlite3.Error,)
    schema_version = schema.SCHEMA_VERSION

    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        super().__init__({t: t for t in TABLES} | SQLITE_NAMES, {})
        self.db = db
        self.path = path
        self._wal_ino: int | None = None  # the write-ahead log whose directory entry was synced

    @property
    def where(self) -> str:
        return str(self.path)

    def execute(self, sql: str, params: Params) -> sqlite3.Cursor:
        return self.db.execute(sql, params)

    def fault(self, e: BaseException) -> DirectorError:
        text = str(e) or type(e).__name__
        if isinstance(e, sqlite3.OperationalError) and "disk is full" in text:
            return StorageError(f"cannot write the journal {self.path}: No space left on device")
        return JournalError(f"journal {self.path}: {text}")

    def begin(self) -> None:
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as e:
            raise JournalError(f"journal {self.path} is busy or unwritable: {e}") from e

    def commit(self, durable: bool = True) -> None:
        try:
            self.db.execute("COMMIT")
        except sqlite3.Error as e:
            raise self.fault(e) from e
        if durable:
            self._sync_log()

    def sync(self) -> None:
        self._sync_log()

    def _sync_log(self) -> None:
        """What `synchronous = FULL` does at a commit in WAL mode (the connection runs at NORMAL,
        `schema.connect`): the log's frames, the commit's among them, to the disk -- and, the first time
        this log file is seen, its directory entry."""
        try:
            fd = os.open(f"{self.path}-wal", os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            return  # checkpointed into the database file (synced by the checkpoint) and removed
        except OSError as e:
            raise StorageError(f"cannot sync the journal {self.path}: {e.strerror or e}") from None
        try:
            os.fdatasync(fd)
            ino = os.fstat(fd).st_ino
            if ino != self._wal_ino:
                d = os.open(self.path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
                try:
                    os.fsync(d)
                finally:
                    os.close(d)
                self._wal_ino = ino
        except OSError as e:
            raise StorageError(f"cannot sync the journal {self.path}: {e.strerror or e}") from None
        finally:
            os.close(fd)

    def rollback(self) -> None:
        if self.db.in_transaction:
            with contextlib.suppress(sqlite3.Error):  # a failed COMMIT may have ended it already
                self.db.execute("ROLLBACK")

    def ids_of(self, table: str) -> str | None:
        # Per table: the rowid SQLite assigns (max + 1), chosen before the insert where a hash covers it.
        return table if table in chain.CHAINED else None

    def last_id(self, sequence: str) -> int:
        return int(self.db.execute(f"SELECT coalesce(max(id), 0) FROM {sequence}").fetchone()[0])

    def wait(self, read: Callable[[], T | None], section_key: str, timeout_s: float) -> T | None:
        """No cross-process notification in SQLite: the file is read every `APPROVAL_POLL_S` s."""
        return poll(read, timeout_s, APPROVAL_POLL_S)

    def columns(self, table: str) -> list[str]:
        return [r["name"] for r in self.db.execute(f"PRAGMA table_info({table})")]  # fixed table names

    def close(self) -> None:
        self.db.close()

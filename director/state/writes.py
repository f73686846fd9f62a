"""How the journal writes: transactions, batches and their commit points, ids, and the hash chain.

Every write method of the journal (`director.state.journal`) is one `_write()`: its rows, and the audit
event that belongs to them, change together or not at all. Outside a batch that is one transaction,
committed when the method returns. Inside `batch()` the writes join one open transaction, which is
committed at the next **commit point**: a step's intent (`step_started`: committed before its block
runs), a run transition, a wait for an approval, `commit()`, `close()`, or the batch's end. So the outcome
of a block and what follows from it (the section's success, its receipt spent, the values it realized)
are committed together, with the next block's intent.

A commit is **durable** (on the disk when it returns: it survives a power cut) when its transaction holds
any write that is not *lazy*; a lazy write is one whose loss can only make a check run again: the intent
and the outcome of an observation or a verify (blocks that read the world) and the section's success
that rests on them (docs/durability.md). Every commit, lazy or not, survives a crash of Director, and the
next durable commit carries the lazy ones before it to the disk.

A write is never cut in half: SIGINT and SIGTERM are held while one runs (their handler runs right
after it), and a write that fails in the database ends the open transaction without keeping it (as a
crash would). A write that refuses (an invalid transition) has changed nothing and keeps the batch.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from types import TracebackType
from typing import Any, Self

from director.errors import DirectorError, JournalError
from director.secretnames import is_secret_name
from director.state import chain
from director.state.dialect import Dialect, Row
from director.state.identity import host_name
from director.state.records import dump, iso, utc_now

Clock = Callable[[], datetime]
_HELD = {signal.SIGINT, signal.SIGTERM}


@contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT/SIGTERM wait while the body runs, then reach the handler they would have reached.

    Held by Python-level handlers, not by the thread's signal mask: a process-directed signal goes to any
    thread that does not block it (a family's member threads, a reader's), and Python then runs the main
    thread's handler at once, mid-write. A handler is set from the main thread only (Python runs every
    handler there); elsewhere the body runs as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []

    def hold(signum: int, _frame: object) -> None:
        caught.append(signum)

    old = {s: signal.signal(s, hold) for s in _HELD}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler if handler is not None else signal.SIG_DFL)
        for signum in dict.fromkeys(caught):  # each once, in the order they came
            handler = old[signal.Signals(signum)]
            if callable(handler):
                handler(signum, None)
            elif handler in (signal.SIG_DFL, None):
                signal.raise_signal(signum)  # the default action, now that the write is whole


class JournalBase:
    """A connection through a dialect, and the transactions the journal's writes run in."""

    def __init__(
        self, dialect: Dialect, *, clock: Clock = utc_now, is_secret: Callable[[str], bool] = is_secret_name
    ) -> None:
        self._d = dialect
        self._clock = clock
        self._is_secret = is_secret
        self.host = host_name()
        self.pid = os.getpid()
        self._batches = 0  # open `batch()` scopes
        self._depth = 0  # writes under way (a write may call another: they are one)
        self._open = False  # a transaction is open on the connection
        self._ids: dict[str, int] = {}  # the last id used per id sequence, in the open transaction
        self._head: chain.Link | None = None  # the chain's head in the open transaction, once read
        self._head_moved = False
        self._durable = False  # the open transaction holds a write that is not lazy
        self._unsynced = False  # a lazy commit is not on the disk yet

    @property
    def location(self) -> str:
        """Where the state lives, for humans (a file path, or a URL without password + the plan key)."""
        return self._d.where

    @property
    def backend(self) -> str:
        """`sqlite` or `postgresql`."""
        return self._d.name

    def close(self) -> None:
        """Commit what a batch left open, and every commit durably, then close the connection
        (idempotent)."""
        try:
            self.commit(durable=True)
        finally:
            self._d.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _now(self) -> str:
        return iso(self._clock())

    def now_iso(self) -> str:
        """Now, as stored (from the injectable clock)."""
        return self._now()

    # -- reads ---------------------------------------------------------------------------------

    def _rows(self, sql: str, **params: Any) -> list[Row]:
        return self._d.rows(sql, params)

    def _one(self, sql: str, **params: Any) -> Row | None:
        rows = self._d.rows(sql, params)
        return rows[0] if rows else None

    # -- writes --------------------------------------------------------------------------------

    @contextmanager
    def batch(self) -> Iterator[Self]:
        """Group the writes made inside into one transaction, committed at each commit point and at the
        end (however the body ends: what was written is true). Batches nest; the outermost ends it."""
        self._batches += 1
        try:
            yield self
        finally:
            self._batches -= 1
            if self._batches == 0:
                self.commit()

    def commit(self, *, durable: bool = False) -> None:
        """A commit point: commit what is written so far, durably if any of it is not lazy or `durable`.
        Outside a transaction, `durable` puts on the disk what lazy commits left (else nothing to do)."""
        if self._open:
            with _signals_held():
                self._commit(durable)
        elif durable and self._unsynced:
            with _signals_held():
                self._d.sync()
            self._unsynced = False

    @contextmanager
    def _write(self, *, lazy: bool = False) -> Iterator[None]:
        """One write: its statements join the open transaction (opened if none is); outside a batch the
        transaction is committed at the end. A database error ends it without keeping it. `lazy`: losing
        it to a power cut can only make a check run again (its commit need not reach the disk at once)."""
        with _signals_held():
            if not self._open:
                self._d.begin()
                self._open = True
            if not lazy:
                self._durable = True
            joined = self._batches > 0 or self._depth > 0
            self._depth += 1
            try:
                yield
            except DirectorError as e:
                if e.__cause__ is not None or not joined:
                    self._abort()  # a database fault (or a refusal with nothing else in the transaction)
                raise
            except BaseException:
                self._abort()
                raise
            finally:
                self._depth -= 1
            if not joined:
                self._commit()

    def _commit(self, durable: bool = False) -> None:
        try:
            if self._ids:
                self._d.save_ids(self._ids)
            if self._head_moved and self._head is not None:
                self._set_meta(chain.HEAD, chain.head_text(self._head))
            synced = durable or self._durable
            self._unsynced = True  # until the commit and its sync are both done
            self._d.commit(synced)
            self._unsynced = not synced
        except BaseException:
            self._abort()
            raise
        self._reset()

    def _abort(self) -> None:
        self._d.rollback()
        self._reset()

    def _reset(self) -> None:
        self._open = False
        self._ids = {}
        self._head, self._head_moved = None, False
        self._durable = False

    def _x(self, sql: str, **params: Any) -> int:
        """Execute a statement inside a write; the rows it changed."""
        return int(self._exec(sql, params).rowcount)

    def _exec(self, sql: str, params: Mapping[str, Any]) -> Any:
        assert self._open, "a write statement outside _write()"
        return self._d.run(sql, params)

    def _new_id(self, seq: str) -> int:
        if seq not in self._ids:
            self._ids[seq] = self._d.last_id(seq)
        self._ids[seq] += 1
        return self._ids[seq]

    def _insert(self, table: str, values: Mapping[str, Any], *, new_id: bool = True) -> int:
        """Insert a row (with a new id unless `new_id` is False); a chained table's row is chained. The
        id is chosen here, or by the database on insert (SQLite's rowid, for rows no hash covers)."""
        row = dict(values)
        seq = self._d.ids_of(table) if new_id else None
        if seq is not None:
            row["id"] = self._new_id(seq)
        if table in chain.CHAINED:
            row |= self._link(table, row)
        cols = ", ".join(row)
        marks = ", ".join(f":{c}" for c in row)
        sql = f"INSERT INTO {{{table}}} ({{scope_cols}}{cols}) VALUES ({{scope_vals}}{marks})"
        cur = self._exec(sql, row)
        if "id" in row or not new_id:
            return int(row.get("id", 0))
        return int(cur.lastrowid or 0)

    def _link(self, table: str, row: Mapping[str, Any]) -> dict[str, Any]:
        """The chain columns of a new row of a chained table: after the head, which it becomes."""
        if self._head is None:
            lock = self._d.chain_lock  # the row whose lock makes appends to the chain one at a time
            if lock is not None and lock not in self._ids:
                self._ids[lock] = self._d.last_id(lock)
            self._head = chain.Link.parse(self._meta(chain.HEAD), seq=-1) or chain.GENESIS_LINK
        cols = chain.link(self._head.seq + 1, table, row, self._head)
        self._head = chain.Link(
            cols["chain_seq"], cols["chain_hash"], table, chain.ident(table, row), chain.label(table, row)
        )
        self._head_moved = True
        return cols

    def insert_event(self, run_id: int | None, kind: str, data: Mapping[str, Any], at: str) -> int:
        """An audit event, inside a write (the lease modules journal their takeovers with it)."""
        return self._insert(
            "events", {"run_id": run_id, "at": at, "kind": kind, "data_json": dump(dict(data))}
        )

    # -- meta: the journal's own facts (its location, the chain's head) ------------------------

    def _meta(self, name: str) -> str | None:
        row = self._one("SELECT value FROM {meta} WHERE {scope} AND name = :name", name=name)
        return None if row is None else str(row["value"])

    def _set_meta(self, name: str, value: str) -> None:
        self._x(
            "INSERT INTO {meta} ({scope_cols}name, value) VALUES ({scope_vals}:name, :value)"
            " ON CONFLICT ({scope_cols}name) DO UPDATE SET value = excluded.value",
            name=name,
            value=value,
        )

    def _must(self, row: Row | None, what: str) -> Row:
        if row is None:
            raise JournalError(f"no {what} in {self.location}")
        return row

"""The journal on both backends for contract tests: an SQLite file in a temp dir, or a fresh database of
the session's throwaway PostgreSQL cluster (`pg_url`), each with a clock that advances a second a reading."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from director.state.journal import Journal
from director.state.pgjournal import PgJournal

BACKENDS = ["sqlite", "postgresql"]
KEY = "git:plan.md"


class FakeClock:
    """A clock that advances one second per reading."""

    def __init__(self) -> None:
        self.now = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


class LogSyncs:
    """Counts the syncs of a journal's write-ahead log (`os.fdatasync` on a `-wal` file, where Director makes a
    commit durable: docs/durability.md), appending "sync" to `log` as well when one is given."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, log: list[str] | None = None) -> None:
        self.n = 0
        real = os.fdatasync

        def fdatasync(fd: int) -> None:
            if os.readlink(f"/proc/self/fd/{fd}").endswith("-wal"):
                self.n += 1
                if log is not None:
                    log.append("sync")
            real(fd)

        monkeypatch.setattr(os, "fdatasync", fdatasync)

    def since(self) -> int:
        """The syncs since the last call."""
        n, self.n = self.n, 0
        return n


def open_journal(backend: str, request: pytest.FixtureRequest, tmp_path: Path, **kw: Any) -> Journal:
    """A new journal of `backend` (its file or database fresh for the test)."""
    if backend == "sqlite":
        return Journal.open(tmp_path / "state" / "journal.sqlite3", clock=FakeClock(), **kw)
    return PgJournal.open(request.getfixturevalue("pg_url"), KEY, clock=FakeClock(), **kw)


def reopen(j: Journal) -> Journal:
    """Another connection to the same journal (another process would have one)."""
    if isinstance(j, PgJournal):
        return PgJournal.open(j._d.conn.info.dsn, j.key)
    return Journal.open(j.path)


class Raw:
    """The journal's database at the SQL level, as an operator with `sqlite3` or `psql` sees it: the
    plan's rows only, tables named as in SQLite."""

    def __init__(self, j: Journal) -> None:
        self.pg = isinstance(j, PgJournal)
        if isinstance(j, PgJournal):
            self.conn: Any = psycopg.connect(j._d.conn.info.dsn, autocommit=True)
            self.key = j.key
        else:
            self.conn = sqlite3.connect(j.path, isolation_level=None)

    def __call__(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        """`sql` with `?` placeholders and bare table names (`events`), on this plan's rows."""
        if self.pg:
            for t in ("runs", "transitions", "steps", "approvals", "events", "meta"):
                sql = sql.replace(f" {t}", f" director.{'plan_meta' if t == 'meta' else t}")
            sql = sql.replace("?", "%s")
        cur = self.conn.execute(sql, args)
        return list(cur.fetchall()) if cur.description else []

    def close(self) -> None:
        self.conn.close()


@pytest.fixture(params=BACKENDS)
def journal(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Journal]:
    with open_journal(request.param, request, tmp_path) as j:
        yield j

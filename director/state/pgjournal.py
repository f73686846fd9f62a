"""The PostgreSQL journal (`--state-url postgresql://…`): the same `Journal`, over the PostgreSQL dialect
(`director.state.pgdialect`), shared by every machine that uses the database; a plan's rows are those of
its key (`director.state.identity`).

The plan's lease (`director.state.pglease`) is a session-level advisory lock held on this very
connection: if the connection dies, the lease is gone and so is every later write of this process.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Self

from director.secretnames import is_secret_name
from director.state import pgschema
from director.state.journal import Journal
from director.state.pgdialect import PgDialect
from director.state.records import iso, utc_now
from director.state.writes import Clock

__all__ = ["PgJournal"]


class PgJournal(Journal):
    """A plan's journal in a PostgreSQL database. Not shared between threads; one per process."""

    _d: PgDialect

    @classmethod
    def open(  # type: ignore[override]
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
            pgschema.migrate(conn, pgschema.redact(url), iso(clock()))
            j = cls(PgDialect(conn, url, key), clock=clock, is_secret=is_secret)
            if create:
                with j._write():
                    j._x("INSERT INTO {plans} (key, created_at, plan_path) VALUES (:plan_key, :now, :path)"
                         " ON CONFLICT (key) DO NOTHING", now=j.now_iso(), path=plan_path)  # fmt: skip
        except BaseException:
            conn.close()
            raise
        return j

    @property
    def key(self) -> str:
        """The plan key whose rows this journal reads and writes."""
        return self._d.key

    @property
    def url(self) -> str:
        """The database, without password."""
        return self._d.url

    def session_pid(self) -> int:
        """This connection's database session (its backend pid)."""
        return self._d.session_pid()

    def query(self, sql: str, **params: Any) -> list[dict[str, Any]]:
        """Rows of one statement in the neutral SQL (`:name` parameters; the lease's own queries)."""
        return [dict(r) for r in self._rows(sql, **params)]

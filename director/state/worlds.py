"""The worlds each check was seen in: the paths its runs took when it held and when it did not.

Verdicts by contrast (`director.plan.contrast`) need, per check (its code's `block_key`) and per family
(`apply` or `teardown`), the paths each of its units took in the known worlds. Both backends keep them
in a `verify_paths` table, learned in one durable commit with an audit event (`paths-learned`), so that
a path learned in one run decides in the next -- and on another machine with `--state-url`.

A path is learned in one world at a time: learning it in another moves it there (the world it was last
seen in wins), so a check that changed meaning is judged by what it did most recently. `settled` is the
path a check took right after a successful act when the act did not change it: not evidence that it holds,
only what "unchanged since the last act" looks like.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Literal, Protocol

World = Literal["held", "not-held", "settled"]


@dataclass(frozen=True)
class SeenPath:
    """Unit `unit` of a check took `path` (positions of its messages and exits) in `world`."""

    unit: int
    world: World
    path: tuple[int, ...]


def _path(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in json.loads(text))


def _text(path: Sequence[int]) -> str:
    return json.dumps(list(path), separators=(",", ":"))


def _event(block_key: str, family: str, seen: Sequence[SeenPath]) -> dict[str, Any]:
    return {
        "block": block_key[:16],
        "family": family,
        "paths": [{"unit": s.unit, "world": s.world, "path": list(s.path)} for s in seen],
    }


_UPDATE = " DO UPDATE SET world = excluded.world, run_id = excluded.run_id, seen_at = excluded.seen_at"


class _SqliteLike(Protocol):
    def _tx(self, *, durable: bool = True) -> AbstractContextManager[Any]: ...
    def _now(self) -> str: ...
    def _insert_event(self, db: Any, run_id: int | None, kind: str, data: Any, at: str) -> int: ...
    @property
    def _db(self) -> Any: ...


class SqliteWorlds:
    """`verify_paths` on the SQLite journal (mixed into `director.state.journal.Journal`)."""

    def seen_paths(self: _SqliteLike, block_key: str, family: str) -> list[SeenPath]:
        """Every path learned for this check and family."""
        rows = self._db.execute(
            "SELECT unit, world, path_json FROM verify_paths WHERE block_key = ? AND family = ?"
            " ORDER BY unit, path_json",
            (block_key, family),
        )
        return [SeenPath(int(r["unit"]), r["world"], _path(r["path_json"])) for r in rows]

    def learn_paths(
        self: _SqliteLike, run_id: int, block_key: str, family: str, seen: Sequence[SeenPath]
    ) -> None:
        """Remember these paths (one durable commit, with its audit event)."""
        if not seen:
            return
        now = self._now()
        with self._tx() as db:
            for s in seen:
                db.execute(
                    "INSERT INTO verify_paths (block_key, family, unit, path_json, world, run_id, seen_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (block_key, family, unit, path_json)"
                    + _UPDATE,
                    (block_key, family, s.unit, _text(s.path), s.world, run_id, now),
                )
            self._insert_event(db, run_id, "paths-learned", _event(block_key, family, seen), now)


class _PgLike(Protocol):
    key: str

    def tx(self) -> AbstractContextManager[Any]: ...
    def rows(self, sql: str, args: Any = ()) -> list[dict[str, Any]]: ...
    def _now(self) -> str: ...
    def insert_event(self, db: Any, run_id: int | None, kind: str, data: Any, at: str) -> int: ...


class PgWorlds:
    """`verify_paths` on PostgreSQL (mixed into `director.state.pgjournal.PgJournal`)."""

    def seen_paths(self: _PgLike, block_key: str, family: str) -> list[SeenPath]:
        """Every path learned for this check and family (this plan's)."""
        rows = self.rows(
            "SELECT unit, world, path_json FROM director.verify_paths"
            " WHERE plan_key = %s AND block_key = %s AND family = %s ORDER BY unit, path_json",
            (self.key, block_key, family),
        )
        return [SeenPath(int(r["unit"]), r["world"], _path(r["path_json"])) for r in rows]

    def learn_paths(
        self: _PgLike, run_id: int, block_key: str, family: str, seen: Sequence[SeenPath]
    ) -> None:
        """Remember these paths (one transaction, with its audit event)."""
        if not seen:
            return
        now = self._now()
        with self.tx() as db:
            for s in seen:
                db.execute(
                    "INSERT INTO director.verify_paths"
                    " (plan_key, block_key, family, unit, path_json, world, run_id, seen_at)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
                    " ON CONFLICT (plan_key, block_key, family, unit, path_json)" + _UPDATE,
                    (self.key, block_key, family, s.unit, _text(s.path), s.world, run_id, now),
                )
            self.insert_event(db, run_id, "paths-learned", _event(block_key, family, seen), now)


def by_unit(seen: Sequence[SeenPath]) -> Iterator[tuple[int, list[SeenPath]]]:
    """Seen paths grouped by unit, in unit order."""
    units = sorted({s.unit for s in seen})
    for u in units:
        yield u, [s for s in seen if s.unit == u]

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
from dataclasses import dataclass
from typing import Any, Literal

from director.state.writes import JournalBase

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


class Worlds(JournalBase):
    """`verify_paths` in the journal (mixed into `director.state.journal.Journal`), both backends."""

    def seen_paths(self, block_key: str, family: str) -> list[SeenPath]:
        """Every path learned for this check and family."""
        rows = self._rows(
            "SELECT unit, world, path_json FROM {verify_paths} WHERE {scope} AND block_key = :key"
            " AND family = :family ORDER BY unit, path_json",
            key=block_key,
            family=family,
        )
        return [SeenPath(int(r["unit"]), r["world"], _path(r["path_json"])) for r in rows]

    def learn_paths(self, run_id: int, block_key: str, family: str, seen: Sequence[SeenPath]) -> None:
        """Remember these paths (one write, with its audit event)."""
        if not seen:
            return
        now = self._now()
        with self._write():
            for s in seen:
                self._x(
                    "INSERT INTO {verify_paths} ({scope_cols}block_key, family, unit, path_json, world,"
                    " run_id, seen_at) VALUES ({scope_vals}:key, :family, :unit, :path, :world, :run, :now)"
                    " ON CONFLICT ({scope_cols}block_key, family, unit, path_json) DO UPDATE SET"
                    " world = excluded.world, run_id = excluded.run_id, seen_at = excluded.seen_at",
                    key=block_key, family=family, unit=s.unit, path=_text(s.path), world=s.world, run=run_id,
                    now=now,
                )  # fmt: skip
            self.insert_event(run_id, "paths-learned", _event(block_key, family, seen), now)


def by_unit(seen: Sequence[SeenPath]) -> Iterator[tuple[int, list[SeenPath]]]:
    """Seen paths grouped by unit, in unit order."""
    units = sorted({s.unit for s in seen})
    for u in units:
        yield u, [s for s in seen if s.unit == u]

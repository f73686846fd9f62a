"""Test hook (tests/race.py): with `DIRECTOR_TEST_BARRIER=DIR` set, the first time this process puts an
SQLite file under a `.director/` directory into WAL mode (what creating a journal does first) it waits until
`DIRECTOR_TEST_BARRIER_N` processes (2) have come to the same point, so that two Directors create a plan's
journal at the very same moment. Nothing else changes; without the variable this module does nothing."""

from __future__ import annotations

import os
import sqlite3
import time
from typing import Any

_dir = os.environ.get("DIRECTOR_TEST_BARRIER")
_met: list[bool] = []


def _wait() -> None:
    assert _dir is not None
    _met.append(True)
    open(os.path.join(_dir, str(os.getpid())), "w").close()
    deadline = time.monotonic() + 60
    while len(os.listdir(_dir)) < int(os.environ.get("DIRECTOR_TEST_BARRIER_N", "2")):
        if time.monotonic() > deadline:
            break
        time.sleep(0.0005)


class _Barrier(sqlite3.Connection):
    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        if not _met and sql.strip().upper().startswith("PRAGMA JOURNAL_MODE"):
            _wait()
        return super().execute(sql, *args)


if _dir:
    _connect = sqlite3.connect

    def _barrier_connect(path: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        if "/.director/" in str(path) and "factory" not in kwargs:
            kwargs["factory"] = _Barrier
        db: sqlite3.Connection = _connect(path, *args, **kwargs)
        return db

    sqlite3.connect = _barrier_connect  # type: ignore[assignment]

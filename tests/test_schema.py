"""Journal schema versions: old journals open and are migrated in place, data kept; nothing else is."""

from __future__ import annotations

import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from director.errors import JournalError
from director.state import schema
from director.state.journal import Journal
from director.state.lifecycle import RunState, StepState

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def _v1_journal(path: Path) -> None:
    """A journal exactly as Director wrote it before migrations existed (schema version 1), with a run."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("BEGIN")
    for stmt in schema.V1_DDL.split(";"):
        if stmt.strip():
            db.execute(stmt)
    db.execute(f"PRAGMA application_id = {schema.APPLICATION_ID}")
    db.execute("PRAGMA user_version = 1")
    t = "2025-01-01T00:00:00.000000+00:00"
    db.execute(
        "INSERT INTO runs (id, kind, state, plan_path, target, operator, host, pid, created_at, updated_at,"
        " inputs_json, recoveries, progress_marker, current_section, reason)"
        " VALUES (1, 'apply', 'failed', 'plan.md', 'local', 'op', 'h', 42, ?, ?, '{\"A\":\"b\"}', 2, NULL, '3',"
        " 'exit 1')",
        (t, t),
    )
    db.execute(
        "INSERT INTO steps (run_id, step_key, section_key, block_index, role, attempt, state, fingerprint,"
        " started_at, finished_at, exit_code, duration_s, output, session_json, flags_json)"
        " VALUES (1, '3/0', '3', 0, 'act', 1, 'succeeded', 'fp', ?, ?, 0, 0.5, 'ok', '{\"cwd\":\"/\"}', '{}')",
        (t, t),
    )
    db.execute("INSERT INTO transitions VALUES (1, 1, NULL, 'pending', ?, 'created')", (t,))
    db.execute("COMMIT")
    db.close()


def _columns(path: Path, table: str) -> list[str]:
    db = sqlite3.connect(path)
    try:
        return [r[1] for r in db.execute(f"PRAGMA table_info({table})")]
    finally:
        db.close()


def test_migrations_are_numbered_one_to_n() -> None:
    assert [m.version for m in schema.MIGRATIONS] == list(range(1, schema.SCHEMA_VERSION + 1))


def test_a_version_1_journal_opens_migrated_with_its_data(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    _v1_journal(path)
    with Journal.open(path, clock=lambda: NOW) as j:
        assert j.pragma("user_version") == schema.SCHEMA_VERSION
        run = j.run(1)
        assert run.state is RunState.FAILED and run.inputs == {"A": "b"} and run.recoveries == 2
        assert run.current_section == "3" and run.reason == "exit 1"
        last = j.last_success("3/0")
        assert last is not None and last.state is StepState.SUCCEEDED and last.session == {"cwd": "/"}
        # The journal goes on: resume the old run.
        j.transition(1, RunState.RUNNING, "resumed")
        assert j.integrity_check() == "ok"
    db = sqlite3.connect(path)
    rows = db.execute(
        "SELECT version, applied_at, description FROM schema_version ORDER BY version"
    ).fetchall()
    db.close()
    assert [r[0] for r in rows] == list(range(1, schema.SCHEMA_VERSION + 1))
    assert rows[0][1] is None  # version 1 was applied before the table existed: when is unknown
    assert {r[1] for r in rows[1:]} == {NOW.isoformat(timespec="microseconds")}


@pytest.mark.skipif(sqlite3.sqlite_version_info < (3, 35), reason="DROP COLUMN needs SQLite 3.35")
def test_the_column_never_written_is_gone(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    _v1_journal(path)
    assert "progress_marker" in _columns(path, "runs")
    Journal.open(path).close()
    assert "progress_marker" not in _columns(path, "runs")
    fresh = tmp_path / "fresh.sqlite3"
    Journal.open(fresh).close()
    assert _columns(fresh, "runs") == _columns(path, "runs")  # migrated and new journals are alike


def test_a_fresh_journal_records_every_migration_and_reopening_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    Journal.open(path, clock=lambda: NOW).close()
    Journal.open(path, clock=lambda: datetime(2030, 1, 1, tzinfo=UTC)).close()
    db = sqlite3.connect(path)
    rows = db.execute("SELECT version, applied_at FROM schema_version ORDER BY version").fetchall()
    db.close()
    stamp = NOW.isoformat(timespec="microseconds")
    assert rows == [(m.version, stamp) for m in schema.MIGRATIONS]


def test_an_empty_file_left_by_a_kill_during_creation_becomes_a_journal(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode = WAL")  # what a killed `open` leaves: a database without tables
    db.close()
    with Journal.open(path) as j:
        assert j.pragma("user_version") == schema.SCHEMA_VERSION


def test_a_failed_migration_leaves_the_journal_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "journal.sqlite3"
    _v1_journal(path)

    def broken(db: sqlite3.Connection) -> None:
        db.execute("CREATE TABLE half_done (x)")
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(schema, "MIGRATIONS", (*schema.MIGRATIONS[:1], schema.Migration(2, "broken", broken)))
    with pytest.raises(JournalError, match="disk I/O error"):
        Journal.open(path)
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 1
    assert db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'half_done'").fetchone()[0] == 0
    db.close()
    monkeypatch.undo()
    with Journal.open(path) as j:  # the real migration still applies afterwards
        assert j.run(1).recoveries == 2


def test_two_processes_opening_an_old_journal_migrate_it_once(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    _v1_journal(path)
    errors: list[BaseException] = []

    def open_it() -> None:
        try:
            Journal.open(path).close()
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=open_it) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    db = sqlite3.connect(path)
    assert db.execute("SELECT count(*) FROM schema_version").fetchone()[0] == len(schema.MIGRATIONS)
    db.close()

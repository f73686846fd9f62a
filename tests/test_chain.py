"""The journal's hash chain: every row that bears on a gate carries the hash of the row before it.

On both backends: an intact history has no break; a row deleted (in the middle, at the end), edited (a
named column), moved or added by hand is named. Old journals are chained when migrated (`sqlite3` and
`psql` delete a row afterwards: named). Through the real CLI: tests/test_chain_cli.py.
"""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from director.state import chain, pgschema, schema
from director.state.journal import Journal
from director.state.lifecycle import RunState
from director.state.pgjournal import PgJournal
from tests.journals import Raw
from tests.journals import journal as journal  # the fixture: both backends
from tests.test_chain_cli import _psql


def _history(j: Journal) -> dict[str, int]:
    """A run through a gate: receipts, their use, transitions, events."""
    rid = j.create_run("apply", "plan.md", "local", "alice", {"MODE": "a"})
    j.transition(rid, RunState.RUNNING, "started")
    a1 = j.record_approval(None, "2", "abc", "bob", "approve-command", {"commands": ["deploy"]})
    used = j.record_event(rid, "approval-used", {"approval_id": a1, "section": "2"})
    j.record_event(rid, "realized", {"section": "2", "values": {"URL": "https://x"}})
    a2 = j.record_approval(rid, "3", "def", "alice", "prompt")
    last = j.record_event(rid, "approval-used", {"approval_id": a2, "section": "3"})
    return {"run": rid, "a1": a1, "used": used, "a2": a2, "last": last}


def _breaks(j: Journal) -> list[str]:
    return [str(b) for b in j.chain_breaks()]


def test_an_intact_history_has_no_break_and_every_row_is_chained(journal: Journal) -> None:
    _history(journal)
    assert journal.chain_breaks() == []
    data = journal.export_data()
    seqs = sorted(r["chain_seq"] for t in chain.CHAINED for r in data[t])
    assert seqs == list(range(1, len(seqs) + 1))
    assert data["chain_head"].split()[0] == str(len(seqs))


def test_a_deleted_use_of_a_receipt_is_named(journal: Journal) -> None:
    ids = _history(journal)
    raw = Raw(journal)
    try:
        raw("DELETE FROM events WHERE id = ?", ids["used"])
    finally:
        raw.close()
    assert _breaks(journal) == [
        f"event {ids['used']} (approval-used) was deleted (it came before event {ids['used'] + 1} (realized))"
    ]
    with pytest.raises(Exception, match=rf"tampered with: event {ids['used']} \(approval-used\) was deleted"):
        journal.require_intact()


def test_the_last_row_deleted_is_named_by_the_head(journal: Journal) -> None:
    ids = _history(journal)
    raw = Raw(journal)
    try:
        raw("DELETE FROM events WHERE id = ?", ids["last"])
    finally:
        raw.close()
    assert _breaks(journal) == [
        f"event {ids['last']} (approval-used) was deleted (it was the last row written)"
    ]


@pytest.mark.parametrize(
    ("column", "value"),
    [("content_json", '{"commands":["rm -rf /"]}'), ("at", "2020-01-01T00:00:00.000000+00:00")],
)
def test_an_edited_receipt_names_the_column(journal: Journal, column: str, value: str) -> None:
    ids = _history(journal)
    raw = Raw(journal)
    try:
        raw(f"UPDATE approvals SET {column} = ? WHERE id = ?", value, ids["a1"])
    finally:
        raw.close()
    [b] = journal.chain_breaks()
    assert (b.kind, b.table, b.ident) == ("edited", "approvals", str(ids["a1"]))
    assert str(b) == f"receipt {ids['a1']} (§2) was edited: its {column} changed since it was written"


def test_rows_put_in_another_order_and_rows_added_by_hand_are_named(journal: Journal) -> None:
    ids = _history(journal)
    raw = Raw(journal)
    try:
        (s1,), (s2,) = raw(
            "SELECT chain_seq FROM events WHERE id IN (?, ?) ORDER BY id", ids["used"], ids["used"] + 1
        )
        raw("UPDATE events SET chain_seq = ? WHERE id = ?", -1, ids["used"])
        raw("UPDATE events SET chain_seq = ? WHERE id = ?", s1, ids["used"] + 1)
        raw("UPDATE events SET chain_seq = ? WHERE id = ?", s2, ids["used"])
    finally:
        raw.close()
    kinds = {b.kind for b in journal.chain_breaks()}
    assert "reordered" in kinds, _breaks(journal)
    other = Raw(journal)
    try:
        if other.pg:
            other(
                "INSERT INTO events (plan_key, id, run_id, at, kind, data_json) VALUES (?, 999, NULL, 'x', 'approval-used', '{}')",
                "git:plan.md",
            )
        else:
            other(
                "INSERT INTO events (id, run_id, at, kind, data_json) VALUES (999, NULL, 'x', 'approval-used', '{}')"
            )
    finally:
        other.close()
    assert "event 999 (approval-used) was added outside Director (it is not in the chain)" in _breaks(journal)


T0 = "2025-01-02T03:04:0{}.000000+00:00"
OLD_ROWS: list[
    tuple[str, dict[str, Any]]
] = [  # a run through a gate, as Director wrote it before the chain (table, columns)
    (
        "runs",
        {
            "id": 1,
            "kind": "apply",
            "state": "running",
            "plan_path": "plan.md",
            "target": "local",
            "operator": "alice",
            "host": "h",
            "pid": 42,
            "created_at": T0.format(1),
            "updated_at": T0.format(1),
        },
    ),
    (
        "transitions",
        {
            "run_id": 1,
            "seq": 1,
            "from_state": None,
            "to_state": "pending",
            "at": T0.format(1),
            "reason": "created",
        },
    ),
    ("events", {"id": 2, "run_id": 1, "at": T0.format(1), "kind": "run-created", "data_json": "{}"}),
    (
        "transitions",
        {
            "run_id": 1,
            "seq": 2,
            "from_state": "pending",
            "to_state": "running",
            "at": T0.format(2),
            "reason": "started",
        },
    ),
    (
        "approvals",
        {
            "id": 3,
            "run_id": None,
            "section_key": "2",
            "sha256": "abc",
            "operator": "bob",
            "host": "h",
            "at": T0.format(3),
            "how": "approve-command",
            "content_json": "{}",
        },
    ),
    (
        "events",
        {"id": 4, "run_id": 1, "at": T0.format(4), "kind": "approval-used", "data_json": '{"approval_id":3}'},
    ),
    ("events", {"id": 5, "run_id": 1, "at": T0.format(5), "kind": "realized", "data_json": "{}"}),
]


def _insert_old(execute: Any, mark: str, key: str | None = None) -> None:
    for table, values in OLD_ROWS:
        row = {"plan_key": key, **values} if key is not None else values
        marks = ", ".join(mark for _ in row)
        execute(
            f"INSERT INTO {'director.' if key else ''}{table} ({', '.join(row)}) VALUES ({marks})",
            list(row.values()),
        )


def test_an_old_sqlite_journal_is_chained_as_it_stands_when_migrated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "journal.sqlite3"
    db = sqlite3.connect(path, isolation_level=None)
    db.row_factory = sqlite3.Row
    db.execute("PRAGMA journal_mode = WAL")
    monkeypatch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:4])
    monkeypatch.setattr(schema, "SCHEMA_VERSION", 4)
    schema.migrate(db, path, T0.format(0))  # the journal as Director 4 left it
    monkeypatch.undo()
    db.execute("BEGIN")
    _insert_old(db.execute, "?")
    db.execute("COMMIT")
    assert "chain_hash" not in [r[1] for r in db.execute("PRAGMA table_info(events)")]
    db.close()
    with Journal.open(path) as j:
        assert j.pragma("user_version") == schema.SCHEMA_VERSION
        assert j.chain_breaks() == []
        assert j.export_data()["chain_head"].split()[:4] == [
            "6",
            j.export_data()["events"][-1]["chain_hash"],
            "events",
            "5",
        ]
        j.record_event(1, "after-the-migration")
        assert j.chain_breaks() == []
    subprocess.run(["sqlite3", str(path), "DELETE FROM events WHERE id = 4"], check=True)
    with Journal.open(path) as j:
        assert [str(b) for b in j.chain_breaks()] == [
            "event 4 (approval-used) was deleted (it came before event 5 (realized))"
        ]


def test_an_old_postgresql_database_is_chained_as_it_stands_when_migrated(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import psycopg
    from psycopg.rows import dict_row

    conn = psycopg.connect(pg_url, autocommit=True, row_factory=dict_row)
    monkeypatch.setattr(pgschema, "MIGRATIONS", pgschema.MIGRATIONS[:3])
    monkeypatch.setattr(pgschema, "SCHEMA_VERSION", 3)
    pgschema.migrate(conn, "test", T0.format(0))  # the database as Director's PostgreSQL schema 3 left it
    monkeypatch.undo()
    with conn.transaction():
        for key in ("git:a.md", "git:b.md"):
            conn.execute(
                "INSERT INTO director.plans (key, created_at, plan_path, last_id) VALUES (%s, 'x', 'p', 5)",
                (key,),
            )
            _insert_old(conn.execute, "%s", key)
    conn.close()
    with PgJournal.open(pg_url, "git:a.md") as a, PgJournal.open(pg_url, "git:b.md") as b:
        assert a.chain_breaks() == [] and b.chain_breaks() == []
        a.record_event(1, "after-the-migration")
        assert a.chain_breaks() == [] and a.export_data()["chain_head"].split()[0] == "7"
        assert b.export_data()["chain_head"].split()[0] == "6"  # each plan its own chain
    _psql(pg_url, "DELETE FROM director.events WHERE plan_key = 'git:b.md' AND id = 4")
    with PgJournal.open(pg_url, "git:a.md") as a, PgJournal.open(pg_url, "git:b.md") as b:
        assert a.chain_breaks() == [] and [b_.kind for b_ in b.chain_breaks()] == ["deleted"]

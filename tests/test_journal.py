"""The SQLite journal on real files in temp dirs."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from director.errors import JournalError, TransitionError
from director.exec.capture import excerpt
from director.state.journal import SCHEMA_VERSION, Journal
from director.state.lifecycle import RunState, StepState
from director.state.records import ExportFormat


class FakeClock:
    """A clock that advances one second per reading."""

    def __init__(self) -> None:
        self.now = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    with Journal.open(tmp_path / "state" / "plan.db", clock=FakeClock()) as j:
        yield j


def new_run(j: Journal) -> int:
    return j.create_run("apply", "plan.md", "local", "alice", {"TRIGGER": "http"})


def test_open_creates_parent_and_sets_durability_pragmas(journal: Journal, tmp_path: Path) -> None:
    assert (tmp_path / "state" / "plan.db").exists()
    assert journal.pragma("journal_mode") == "wal"
    assert journal.pragma("synchronous") == 2  # FULL
    assert journal.pragma("busy_timeout") >= 5000
    assert journal.pragma("user_version") == SCHEMA_VERSION
    assert journal.integrity_check() == "ok"


def test_create_run_is_pending_and_journaled(journal: Journal) -> None:
    rid = new_run(journal)
    run = journal.run(rid)
    assert run.state is RunState.PENDING
    assert run.inputs == {"TRIGGER": "http"} and run.kind == "apply" and run.recoveries == 0
    assert run.created_at.tzinfo is not None
    [t] = journal.transitions(rid)
    assert t.frm is None and t.to is RunState.PENDING
    assert [e.kind for e in journal.events(rid)] == ["run-created"]
    assert journal.latest_run() == run and journal.latest_run("teardown") is None


def test_valid_transitions_are_journaled_with_audit(journal: Journal) -> None:
    rid = new_run(journal)
    journal.transition(rid, RunState.RUNNING, "apply started")
    journal.transition(rid, "awaiting-approval", "gate §4")
    journal.transition(rid, RunState.RUNNING)
    journal.transition(rid, RunState.COMPLETED)
    assert journal.run(rid).state is RunState.COMPLETED
    ts = journal.transitions(rid)
    assert [(t.frm, t.to) for t in ts][1:] == [
        (RunState.PENDING, RunState.RUNNING),
        (RunState.RUNNING, RunState.AWAITING_APPROVAL),
        (RunState.AWAITING_APPROVAL, RunState.RUNNING),
        (RunState.RUNNING, RunState.COMPLETED),
    ]
    assert [t.seq for t in ts] == [1, 2, 3, 4, 5]
    assert ts[2].reason == "gate §4"
    events = journal.events(rid, kind="transition")
    assert [e.data["to"] for e in events] == ["running", "awaiting-approval", "running", "completed"]


def test_invalid_transition_raises_and_changes_nothing(journal: Journal) -> None:
    rid = new_run(journal)
    with pytest.raises(TransitionError, match="pending -> completed"):
        journal.transition(rid, RunState.COMPLETED)
    with pytest.raises(TransitionError, match="unknown run state"):
        journal.transition(rid, "paused")
    assert journal.run(rid).state is RunState.PENDING
    assert len(journal.transitions(rid)) == 1
    assert journal.events(rid, kind="transition") == []
    with pytest.raises(JournalError, match="no run 99"):
        journal.transition(99, RunState.RUNNING)


def test_steps_started_finished_and_memo(journal: Journal) -> None:
    rid = new_run(journal)
    journal.transition(rid, RunState.RUNNING)
    sid = journal.step_started(rid, "3/0", "3", 0, "act", "f1", attempt=1)
    assert [s.id for s in journal.unfinished_steps(rid)] == [sid]
    assert journal.run(rid).current_section == "3"
    assert journal.last_success("3/0") is None
    session = {"variables": {"WF": "flow"}, "exported": ["WF"], "functions": "", "cwd": "/tmp"}
    journal.step_finished(sid, StepState.SUCCEEDED, 0, 0.25, "ok\n", session)
    step = journal.step(sid)
    assert step.state is StepState.SUCCEEDED and step.exit_code == 0 and step.duration_s == 0.25
    assert step.session == session and step.finished_at is not None
    assert journal.unfinished_steps(rid) == []
    assert journal.last_success("3/0") == step
    assert journal.last_session(rid) == session
    with pytest.raises(TransitionError, match="already finished"):
        journal.step_finished(sid, StepState.FAILED, 1, 0.1, "", None)
    with pytest.raises(TransitionError, match="not a final"):
        journal.step_finished(sid, StepState.STARTED, 1, 0.1, "", None)

    # A later failure does not replace the memo; a later success does, across runs.
    sid2 = journal.step_started(rid, "3/0", "3", 0, "act", "f2", attempt=2, flags={"rerun_after_crash": True})
    journal.step_finished(sid2, StepState.FAILED, 1, 0.1, "boom", None)
    assert journal.last_success("3/0") == step
    assert journal.step(sid2).flags == {"rerun_after_crash": True}
    # Only a succeeded block's session counts: not a failed one's, not a section record's.
    sec = journal.section_succeeded(rid, "3", "3", "fs", {"cwd": "/elsewhere"})
    assert journal.last_session(rid) == session
    rid2 = new_run(journal)
    sid3 = journal.step_started(rid2, "3/0", "3", 0, "act", "f2")
    journal.step_finished(sid3, StepState.SUCCEEDED, 0, 0.1, "", None)
    last = journal.last_success("3/0")
    assert last is not None and last.id == sid3 and last.fingerprint == "f2"
    assert [s.id for s in journal.steps(rid)] == [sid, sid2, sec]


def test_output_is_bounded(journal: Journal) -> None:
    rid = new_run(journal)
    sid = journal.step_started(rid, "1/0", "1", 0, "act", "f")
    big = "h" * 20000 + "m" * 100000 + "t" * 50000
    journal.step_finished(sid, StepState.SUCCEEDED, 0, 1.0, big, None)
    out = journal.step(sid).output
    assert out is not None and out == excerpt(big)
    assert out.startswith("h" * 16384) and out.endswith("t" * 49152) and "chars elided" in out
    assert len(out) < 70000


def test_secret_names_never_reach_the_file(tmp_path: Path) -> None:
    path = tmp_path / "p.db"
    with Journal.open(path) as j:
        rid = new_run(j)
        sid = j.step_started(rid, "0/0", "0", 0, "act", "f")
        session = {
            "variables": {"API_TOKEN": "tok-zzzz-1234", "WF": "flow"},
            "exported": ["API_TOKEN", "WF"],
            "functions": "",
            "cwd": "/",
        }
        j.step_finished(sid, StepState.SUCCEEDED, 0, 0.1, "", session)
        saved = j.step(sid).session
        assert saved is not None and saved["variables"] == {"WF": "flow"} and saved["exported"] == ["WF"]
    data = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert b"tok-zzzz-1234" not in data and b"API_TOKEN" not in data


def test_approvals(journal: Journal) -> None:
    assert journal.find_approval("4", "abc") is None
    a1 = journal.record_approval(None, "4", "abc", "bob", "approve-command", {"title": "Deploy"})
    rid = new_run(journal)
    journal.record_approval(rid, "5", "def", "alice", "prompt")
    found = journal.find_approval("4", "abc")
    assert (
        found is not None and found.id == a1 and found.run_id is None and found.content == {"title": "Deploy"}
    )
    assert journal.find_approval("4", "other") is None
    assert [a.section_key for a in journal.approvals()] == ["4", "5"]
    assert len(journal.events(kind="approval")) == 2
    with pytest.raises(ValueError):
        journal.record_approval(rid, "5", "x", "a", "telepathy")  # type: ignore[arg-type]


def test_events_and_recoveries(journal: Journal) -> None:
    rid = new_run(journal)
    journal.record_event(rid, "input-resolved", {"name": "TRIGGER", "value": "http", "how": "default"})
    journal.record_event(None, "shim", {"cmd": "deploy"})
    assert [e.kind for e in journal.events(rid)] == ["run-created", "input-resolved"]
    assert [e.kind for e in journal.events()][-1] == "shim"
    assert journal.bump_recoveries(rid) == 1
    assert journal.bump_recoveries(rid) == 2
    journal.reset_recoveries(rid)
    assert journal.run(rid).recoveries == 0
    journal.bump_recoveries(rid)
    journal.section_succeeded(rid, "3", "3", "f", None)  # progress: the count restarts in the same commit
    run = journal.run(rid)
    assert run.recoveries == 0 and run.current_section == "3"


def test_timestamps_come_from_the_clock(journal: Journal) -> None:
    rid = new_run(journal)
    run = journal.run(rid)
    assert run.created_at.year == 2025 and run.created_at.utcoffset() == timedelta(0)


def test_export_json_and_jsonl(journal: Journal) -> None:
    rid = new_run(journal)
    journal.transition(rid, RunState.RUNNING)
    sid = journal.step_started(rid, "1/0", "1", 0, "act", "f")
    journal.step_finished(sid, StepState.SUCCEEDED, 0, 0.1, "out", {"variables": {}, "cwd": "/"})
    journal.record_approval(rid, "1", "s", "op", "flag")
    data = json.loads(journal.export("json"))
    assert data["schema_version"] == SCHEMA_VERSION
    assert data["runs"][0]["inputs"] == {"TRIGGER": "http"}
    assert data["steps"][0]["session"] == {"variables": {}, "cwd": "/"}
    assert len(data["transitions"]) == 2 and len(data["approvals"]) == 1
    lines = [json.loads(x) for x in journal.export("jsonl").splitlines()]
    assert lines[0] == {"record": "journal", "schema_version": SCHEMA_VERSION}
    assert {x["record"] for x in lines[1:]} == {"run", "transition", "step", "approval", "event"}
    sid2 = journal.step_started(rid, "1/1", "1", 1, "act", "f")
    journal.step_finished(sid2, StepState.SUCCEEDED, 0, 0.1, "", {"variables": {"B": "\udcff é"}})
    formats: tuple[ExportFormat, ...] = ("json", "jsonl")
    for fmt in formats:
        text = journal.export(fmt)
        text.encode("utf-8")  # printable whatever the shell held
        assert "\\udcff é" in text
    assert json.loads(journal.export("json"))["steps"][1]["session"]["variables"]["B"] == "\udcff é"
    with pytest.raises(ValueError):
        journal.export("xml")  # type: ignore[arg-type]


def test_reopen_keeps_data(tmp_path: Path) -> None:
    path = tmp_path / "p.db"
    with Journal.open(path) as j:
        rid = new_run(j)
    with Journal.open(path) as j:
        assert j.run(rid).plan_path == "plan.md"


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "p.db"
    Journal.open(path).close()
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(JournalError, match="newer than this Director"):
        Journal.open(path)


def test_foreign_database_and_garbage_are_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()
    with pytest.raises(JournalError, match="not a Director journal"):
        Journal.open(other)
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(JournalError, match="not a usable SQLite journal"):
        Journal.open(garbage)


def test_two_connections_see_each_other(tmp_path: Path) -> None:
    path = tmp_path / "p.db"
    with Journal.open(path) as a, Journal.open(path) as b:
        rid = new_run(a)
        b.transition(rid, RunState.RUNNING)
        assert a.run(rid).state is RunState.RUNNING

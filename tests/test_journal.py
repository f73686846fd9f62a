"""The journal's contract, run on both backends (an SQLite file in a temp dir, a real PostgreSQL server),
and what only the SQLite file has (its settings, its refusals)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from director.errors import JournalError, StateUnavailable, TransitionError
from director.excerpt import excerpt
from director.state.journal import SCHEMA_VERSION, Journal
from director.state.lifecycle import RunState, StepState
from director.state.pgjournal import PgJournal
from director.state.records import ExportFormat
from tests.journals import FakeClock, LogSyncs, Raw, reopen
from tests.journals import journal as journal  # the fixture: both backends


def new_run(j: Journal) -> int:
    return j.create_run("apply", "plan.md", "local", "alice", {"TRIGGER": "http"})


# ------------------------------------------------------------------------------ the contract, both backends


def test_create_run_is_pending_and_journaled(journal: Journal) -> None:
    rid = new_run(journal)
    run = journal.run(rid)
    assert run.state is RunState.PENDING
    assert run.inputs == {"TRIGGER": "http"} and run.kind == "apply" and run.recoveries == 0
    assert run.created_at.tzinfo is not None and run.created_at.year == 2025
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
    assert journal.chain_breaks() == []


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
    with pytest.raises(JournalError, match="no step 999"):
        journal.step_finished(999, StepState.FAILED, 1, 0.1, "", None)

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


def test_secret_names_never_reach_the_store(journal: Journal, tmp_path: Path) -> None:
    rid = new_run(journal)
    sid = journal.step_started(rid, "0/0", "0", 0, "act", "f")
    session = {
        "variables": {"API_TOKEN": "tok-zzzz-1234", "WF": "flow"},
        "exported": ["API_TOKEN", "WF"],
        "functions": "",
        "cwd": "/",
    }
    journal.step_finished(sid, StepState.SUCCEEDED, 0, 0.1, "", session)
    journal.section_succeeded(rid, "0/section", "0", "f", session)
    saved = journal.step(sid).session
    assert saved is not None and saved["variables"] == {"WF": "flow"} and saved["exported"] == ["WF"]
    assert "tok-zzzz-1234" not in journal.export("json") and "API_TOKEN" not in journal.export("json")
    if not isinstance(journal, PgJournal):
        journal.close()
        data = b"".join(p.read_bytes() for p in journal.path.parent.iterdir())
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
    assert [a.section_key for a in journal.approvals(rid)] == ["5"]
    assert len(journal.events(kind="approval")) == 2
    with pytest.raises(ValueError):
        journal.record_approval(rid, "5", "x", "a", "telepathy")  # type: ignore[arg-type]


def test_events_and_recoveries(journal: Journal) -> None:
    rid = new_run(journal)
    journal.record_event(rid, "input-resolved", {"name": "TRIGGER", "value": "http", "how": "default"})
    journal.record_event(None, "shim", {"cmd": "deploy"})
    assert [e.kind for e in journal.events(rid)] == ["run-created", "input-resolved"]
    assert [e.kind for e in journal.events()][-1] == "shim"
    assert [e.kind for e in journal.events(rid, kind="input-resolved")] == ["input-resolved"]
    assert journal.bump_recoveries(rid) == 1
    assert journal.bump_recoveries(rid) == 2
    journal.reset_recoveries(rid)
    assert journal.run(rid).recoveries == 0
    journal.bump_recoveries(rid)
    journal.section_succeeded(rid, "3", "3", "f", None)  # progress: the count restarts in the same commit
    run = journal.run(rid)
    assert run.recoveries == 0 and run.current_section == "3"


def test_export_json_and_jsonl(journal: Journal) -> None:
    rid = new_run(journal)
    journal.transition(rid, RunState.RUNNING)
    sid = journal.step_started(rid, "1/0", "1", 0, "act", "f")
    journal.step_finished(sid, StepState.SUCCEEDED, 0, 0.1, "out", {"variables": {}, "cwd": "/"})
    journal.record_approval(rid, "1", "s", "op", "flag")
    data = json.loads(journal.export("json"))
    assert data["schema_version"] >= 1 and data["chain_head"].split()[0] == "6"
    assert data["runs"][0]["inputs"] == {"TRIGGER": "http"}
    assert data["steps"][0]["session"] == {"variables": {}, "cwd": "/"}
    assert len(data["transitions"]) == 2 and len(data["approvals"]) == 1
    assert "plan_key" not in data["runs"][0]
    lines = [json.loads(x) for x in journal.export("jsonl").splitlines()]
    assert lines[0]["record"] == "journal"
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


def test_two_connections_see_each_other_and_reopen_keeps_data(journal: Journal) -> None:
    rid = new_run(journal)
    with reopen(journal) as other:
        other.transition(rid, RunState.RUNNING)
        assert journal.run(rid).state is RunState.RUNNING
        assert other.run(rid).plan_path == "plan.md"
        assert other.record_event(rid, "x") > journal.events()[-2].id
    assert journal.chain_breaks() == []


# ------------------------------------------------------------------- batches and their commit points


def _seen(other: Journal) -> list[str]:
    return [f"{s.step_key}:{s.state.value}" for s in other.steps(1)]


def test_a_batch_commits_at_each_intent_and_at_its_end(journal: Journal) -> None:
    """Inside a batch, a block's outcome is durable with the next block's intent (before it runs), the
    section's success with the batch's end; another process sees nothing in between."""
    rid = new_run(journal)
    with reopen(journal) as other:
        with journal.batch():
            a = journal.step_started(rid, "1/0", "1", 0, "act", "f")
            assert _seen(other) == ["1/0:started"]  # the intent is committed before the block runs
            journal.step_finished(a, StepState.SUCCEEDED, 0, 0.1, "", None)
            journal.record_event(rid, "target", {"op": "deploy"})
            assert _seen(other) == ["1/0:started"] and other.events(kind="target") == []
            b = journal.step_started(rid, "1/1", "1", 1, "verify", "f")
            assert _seen(other) == ["1/0:succeeded", "1/1:started"] and len(other.events(kind="target")) == 1
            journal.step_finished(b, StepState.SUCCEEDED, 0, 0.1, "", None)
            journal.section_succeeded(rid, "1/section", "1", "fp", None, ("section-basis", {"x": 1}))
            assert _seen(other) == ["1/0:succeeded", "1/1:started"]
            assert journal.last_success("1/section") is not None  # the writer reads its own writes
        assert _seen(other) == ["1/0:succeeded", "1/1:succeeded", "1/section:succeeded"]
        assert other.chain_breaks() == []


def test_a_batch_keeps_what_was_written_however_it_ends(journal: Journal) -> None:
    rid = new_run(journal)
    with pytest.raises(RuntimeError), journal.batch():
        journal.record_event(rid, "before-the-error")
        raise RuntimeError("a block's error, not the journal's")
    with journal.batch():
        journal.record_event(rid, "kept")
        with pytest.raises(TransitionError):
            journal.transition(rid, RunState.COMPLETED)  # refused: nothing written, the batch goes on
        journal.record_event(rid, "after-the-refusal")
    with reopen(journal) as other:
        assert [e.kind for e in other.events(rid)][1:] == ["before-the-error", "kept", "after-the-refusal"]


def test_transitions_and_waits_are_commit_points(journal: Journal) -> None:
    rid = new_run(journal)
    with reopen(journal) as other, journal.batch():
        journal.record_event(rid, "gate-waiting")
        journal.transition(rid, RunState.RUNNING)
        assert [e.kind for e in other.events(rid, kind="gate-waiting")] == ["gate-waiting"]
        journal.record_event(rid, "approval-asked")
        assert journal.wait_for_approval("2", "abc", 0, 0.01) is None  # nothing is held while it waits
        assert len(other.events(rid, kind="approval-asked")) == 1
        journal.record_event(rid, "pending")
        journal.commit()
        assert len(other.events(rid, kind="pending")) == 1


def test_a_failed_write_ends_the_batch_without_keeping_it(journal: Journal, monkeypatch: Any) -> None:
    """A fault of the database inside a batch: what the batch wrote since its last commit is dropped, as
    a crash would drop it, and the error says so; the journal goes on."""
    rid = new_run(journal)
    real = journal._d.execute
    broken = sqlite3.OperationalError("disk I/O error")
    if isinstance(journal, PgJournal):
        import psycopg

        broken = psycopg.OperationalError("server closed the connection unexpectedly")  # type: ignore[assignment]

    def execute(sql: str, params: Any) -> Any:
        if "INSERT INTO" in sql and "events" in sql and params.get("kind") == "boom":
            raise broken
        return real(sql, params)

    monkeypatch.setattr(journal._d, "execute", execute)
    with pytest.raises((JournalError, StateUnavailable)), journal.batch():
        journal.record_event(rid, "lost")
        journal.record_event(rid, "boom")
    monkeypatch.undo()
    if isinstance(journal, PgJournal):
        return  # the connection is gone (StateUnavailable): nothing more from this process
    assert [e.kind for e in journal.events(rid)] == ["run-created"]
    journal.record_event(rid, "afterwards")
    assert [e.kind for e in journal.events(rid)] == ["run-created", "afterwards"]
    assert journal.chain_breaks() == []


@pytest.mark.parametrize("threads", ["alone", "beside another thread"])
def test_a_signal_during_a_write_lands_after_it(journal: Journal, monkeypatch: Any, threads: str) -> None:
    """Ctrl-C while a write runs (between its statements) is delivered when the write is done: the
    write is whole (its row and its audit event), never half. Also while another thread lives (a family's
    members, a reader): the kernel hands a process's signal to a thread that does not block it."""
    # Ctrl-C's own handler, whatever this process inherited: a test run started in the background by a
    # shell (`… &`) has SIGINT ignored, and an ignored signal raises nothing however it is held
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    if threads != "alone":
        stop = threading.Event()
        other = threading.Thread(target=stop.wait, daemon=True)
        other.start()
    rid = new_run(journal)
    real = journal._d.execute
    sent: list[bool] = []

    def execute(sql: str, params: Any) -> Any:
        if "INSERT INTO" in sql and "approvals" in sql and not sent:
            sent.append(True)
            os.kill(os.getpid(), signal.SIGINT)  # arrives between the receipt's row and its event
        return real(sql, params)

    monkeypatch.setattr(journal._d, "execute", execute)
    try:
        with pytest.raises(KeyboardInterrupt):
            journal.record_approval(rid, "2", "abc", "bob", "flag")
    finally:
        signal.signal(signal.SIGINT, previous)
    monkeypatch.undo()
    if threads != "alone":
        stop.set()
        other.join()
    assert sent and [a.section_key for a in journal.approvals()] == ["2"]
    assert [e.kind for e in journal.events(kind="approval")] == ["approval"]


def test_a_lazy_commit_is_a_commit_every_other_connection_reads(journal: Journal) -> None:
    rid = new_run(journal)
    with journal.batch():
        sid = journal.step_started(rid, "1/1", "1", 1, "observe", "f", lazy=True)
        other = reopen(journal)
        try:
            assert [(s.id, s.state) for s in other.steps(rid)] == [(sid, StepState.STARTED)]
        finally:
            other.close()
        journal.step_finished(sid, StepState.SUCCEEDED, 0, 0.1, "ok", None, lazy=True)
    journal.commit(durable=True)  # what the lazy commits left, on the disk (PostgreSQL: a write of nothing)
    journal.commit(durable=True)
    assert journal.step(sid).state is StepState.SUCCEEDED
    assert journal.run(rid).state is RunState.PENDING


# ------------------------------------------------------------------------------------ SQLite only


def test_open_creates_parent_and_sets_durability_pragmas(tmp_path: Path) -> None:
    with Journal.open(tmp_path / "state" / "plan.db", clock=FakeClock()) as journal:
        assert (tmp_path / "state" / "plan.db").exists()
        assert journal.pragma("journal_mode") == "wal"
        # NORMAL: a commit survives any crash of the process; a durable one syncs the log itself
        assert journal.pragma("synchronous") == 1
        assert journal.pragma("busy_timeout") >= 5000
        assert journal.pragma("user_version") == SCHEMA_VERSION
        assert journal.integrity_check() == "ok"
    assert [p.name for p in (tmp_path / "state").iterdir()] == ["plan.db"]  # no temp left from creating it


def test_only_a_commit_that_holds_more_than_a_check_syncs_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    syncs = LogSyncs(monkeypatch)
    j = Journal.open(tmp_path / "plan.db", clock=FakeClock())
    rid = new_run(j)
    assert syncs.since() == 1  # a write outside a batch: durable when it returns
    with j.batch():
        obs = j.step_started(rid, "1/1", "1", 1, "observe", "f", lazy=True)
        assert syncs.since() == 0  # a check's intent: committed, not synced
        j.step_finished(obs, StepState.SUCCEEDED, 1, 0.1, "", None, lazy=True)
        act = j.step_started(rid, "1/0", "1", 0, "act", "f")
        assert syncs.since() == 1  # an act's intent is on the disk before it runs (the check's outcome too)
        j.step_finished(act, StepState.SUCCEEDED, 0, 0.1, "", None)
        ver = j.step_started(rid, "1/1", "1", 1, "verify", "f", lazy=True)
        assert syncs.since() == 1  # the act's outcome, before the verify runs
        j.step_finished(ver, StepState.SUCCEEDED, 0, 0.1, "", None, lazy=True)
        j.section_succeeded(rid, "1/section", "1", "f", None)
    assert syncs.since() == 0  # the batch's end: only the check's outcome and the success it rests on
    j.commit(durable=True)
    assert syncs.since() == 1  # asked for (before Live State is written): what lazy commits left
    j.commit(durable=True)
    assert syncs.since() == 0  # nothing left
    j.step_started(rid, "2/1", "2", 1, "observe", "f", lazy=True)
    assert syncs.since() == 0
    j.close()
    assert syncs.since() == 1  # closing leaves nothing only committed


def test_a_lazy_commit_survives_a_crash_of_the_process(tmp_path: Path) -> None:
    path = tmp_path / "plan.db"
    j = Journal.open(path, clock=FakeClock())
    rid = new_run(j)
    j.close()
    pid = os.fork()
    if pid == 0:  # the child: a lazy commit, then killed inside its batch, nothing closed
        child = Journal.open(path, clock=FakeClock())
        with child.batch():
            child.step_started(rid, "1/1", "1", 1, "observe", "f", lazy=True)
            os.kill(os.getpid(), signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == -signal.SIGKILL
    with Journal.open(path, clock=FakeClock()) as again:
        [step] = again.steps(rid)
    assert (step.step_key, step.state) == ("1/1", StepState.STARTED)


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


def test_raw_sql_sees_the_same_rows(journal: Journal) -> None:
    """(The tests' `Raw` reads what an operator's sqlite3/psql would: the plan's rows.)"""
    rid = new_run(journal)
    raw = Raw(journal)
    try:
        assert raw("SELECT kind FROM events WHERE run_id = ?", rid) == [("run-created",)]
    finally:
        raw.close()

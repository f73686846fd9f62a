"""The `StateStore` interface on both backends (SQLite files, a real PostgreSQL server), and what only
PostgreSQL has: plan keys, the advisory-lock lease, LISTEN/NOTIFY approvals, migrations, a non-superuser
role, lost connections."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest

from director.errors import JournalError, LeaseHeld, StateUnavailable, TransitionError
from director.state import pglease, pgschema
from director.state.backends import PgBackend, SqliteBackend
from director.state.identity import plan_key
from director.state.journal import Journal
from director.state.lifecycle import RunState, StepState
from director.state.pgjournal import PgJournal
from director.state.store import SectionSuccesses, StateStore
from tests.pgcluster import ROLE, Cluster


class FakeClock:
    def __init__(self) -> None:
        self.now = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StateStore]:
    if request.param == "sqlite":
        s: StateStore = Journal.open(tmp_path / "journal.sqlite3", clock=FakeClock())
    else:
        s = PgJournal.open(request.getfixturevalue("pg_url"), "git:plan.md", clock=FakeClock())
    with s:
        yield s


def _run(s: StateStore) -> int:
    return s.create_run("apply", "plan.md", "local", "alice", {"TRIGGER": "http"})


# ------------------------------------------------------------------------------------ one interface


def test_runs_transitions_and_audit(store: StateStore) -> None:
    rid = _run(store)
    store.transition(rid, RunState.RUNNING, "started")
    store.transition(rid, "awaiting-approval", "gate §2")
    store.transition(rid, RunState.RUNNING)
    assert store.run(rid).state is RunState.RUNNING and store.run(rid).inputs == {"TRIGGER": "http"}
    assert [t.seq for t in store.transitions(rid)] == [1, 2, 3, 4]
    assert [e.data["to"] for e in store.events(rid, kind="transition")] == [
        "running",
        "awaiting-approval",
        "running",
    ]
    with pytest.raises(TransitionError):
        store.transition(rid, RunState.PENDING)
    assert store.run(rid).state is RunState.RUNNING  # the invalid transition changed nothing
    assert store.latest_run("apply") == store.run(rid) and store.latest_run("teardown") is None
    assert store.bump_recoveries(rid) == 1 and store.bump_recoveries(rid) == 2
    store.reset_recoveries(rid)
    assert store.run(rid).recoveries == 0
    with pytest.raises(JournalError):
        store.run(rid + 1000)


def test_steps_memo_session_and_unfinished(store: StateStore) -> None:
    rid = _run(store)
    sid = store.step_started(rid, "1/0", "1", 0, "act", "fp1", flags={"rerun_after_crash": True})
    assert [s.id for s in store.unfinished_steps(rid)] == [sid]
    store.step_finished(sid, StepState.SUCCEEDED, 0, 0.5, "ok", {"variables": {"X": "1", "API_TOKEN": "s"}})
    with pytest.raises(TransitionError):
        store.step_finished(sid, StepState.FAILED, 1, 0.1, "again", None)  # recorded exactly once
    step = store.step(sid)
    assert step.state is StepState.SUCCEEDED and step.flags == {"rerun_after_crash": True}
    assert step.session == {"variables": {"X": "1"}}  # secret-named variables never stored
    assert store.last_session(rid) == {"variables": {"X": "1"}}
    store.section_succeeded(rid, "1/section", "1", "fps", None)
    last = store.last_success("1/section")
    assert last is not None and last.fingerprint == "fps" and last.role == "section"
    assert store.last_success("2/section") is None and store.unfinished_steps(rid) == []
    assert [s.step_key for s in store.steps(rid)] == ["1/0", "1/section"]


def test_every_sections_last_success_in_one_query(store: StateStore) -> None:
    """`section_successes` is `last_success` for every section key at once (resume, preview, status)."""
    rid = _run(store)
    store.section_succeeded(rid, "1/section", "1", "old", None)
    store.section_succeeded(rid, "2/section", "2", "two", None)
    store.section_succeeded(rid, "1/section", "1", "new", None)
    failed = store.step_started(rid, "3/0", "3", 0, "act", "fp3")
    store.step_finished(failed, StepState.FAILED, 1, 0.1, "no", None)
    found = store.section_successes()
    assert set(found) == {"1/section", "2/section"}
    assert {k: v.fingerprint for k, v in found.items()} == {"1/section": "new", "2/section": "two"}
    assert all(found[k] == store.last_success(k) for k in found)
    memo = SectionSuccesses(store)
    assert memo.last("1/section") == found["1/section"] and memo.last("3/section") is None
    store.section_succeeded(rid, "1/section", "1", "newer", None)
    memo.recorded("1/section")
    newer = memo.last("1/section")
    assert newer is not None and newer.fingerprint == "newer"


def test_approvals_are_found_by_content_and_waited_for(store: StateStore) -> None:
    rid = _run(store)
    assert store.find_approval("2", "abc") is None
    a1 = store.record_approval(None, "2", "abc", "bob", "approve-command", {"commands": ["x"]})
    found = store.find_approval("2", "abc")
    assert found is not None and found.id == a1 and found.content == {"commands": ["x"]}
    assert store.find_approval("2", "other") is None
    # an older receipt does not end a wait for a new one; the wait times out
    t0 = time.monotonic()
    assert store.wait_for_approval("2", "abc", a1, 0.3) is None
    assert 0.3 <= time.monotonic() - t0 < 2
    a2 = store.record_approval(rid, "2", "abc", "alice", "flag")
    got = store.wait_for_approval("2", "abc", a1, 5)
    assert got is not None and got.id == a2 and got.run_id == rid
    assert [a.id for a in store.approvals()] == [a1, a2] and [a.id for a in store.approvals(rid)] == [a2]


def test_export_import_keeps_every_row_and_id(store: StateStore, tmp_path: Path, pg_url: str) -> None:
    rid = _run(store)
    store.transition(rid, RunState.RUNNING)
    sid = store.step_started(rid, "1/0", "1", 0, "act", "fp")
    store.step_finished(sid, StepState.SUCCEEDED, 0, 0.25, "out é", {"variables": {"V": "é\udcff"}})
    store.record_approval(None, "2", "abc", "bob", "approve-command")
    store.record_event(None, "plan-before-run", {"text": "# plan"})
    data = store.export_data()
    assert store.has_history()
    history = {k: v for k, v in data.items() if isinstance(v, list) and k != "lease_holder"}
    # into the other backend and back: identical history, ids kept
    other: StateStore
    if isinstance(store, Journal):
        other = PgJournal.open(pg_url, "git:copy.md")
    else:
        other = Journal.open(tmp_path / "copy.sqlite3")
    with other:
        assert not other.has_history()
        assert other.import_data(data) == sum(len(v) for v in history.values())
        back = other.export_data()
        assert {k: v for k, v in back.items() if k in history} == history
        assert back["chain_head"] == data["chain_head"] and other.chain_breaks() == []  # the chain goes along
        with pytest.raises(JournalError, match="already has history"):
            other.import_data(data)
        assert other.import_data(data, replace=True) > 0  # replace: the same history again, not twice
        assert len(other.export_data()["runs"]) == 1
        nxt = other.create_run("apply", "plan.md", "local", "carol", {})
        assert nxt > max(r["id"] for r in data["runs"])  # new ids never collide with copied ones
        assert other.chain_breaks() == []  # and the chain goes on from the copied head


# ------------------------------------------------------------------------------- PostgreSQL only


def test_the_role_is_no_superuser_and_the_schema_is_versioned(pg_cluster: Cluster, pg_url: str) -> None:
    with psycopg.connect(pg_url) as c:
        row = c.execute("SELECT rolsuper, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = %s", (ROLE,))
        assert row.fetchone() == (False, False, False)
    # two Directors opening a fresh database at once: one migrates, the other finds it done
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            PgJournal.open(pg_url, "git:plan.md").close()
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with psycopg.connect(pg_url) as c:
        rows = c.execute("SELECT version, description FROM director.schema_version").fetchall()
        assert [r[0] for r in rows] == [m.version for m in pgschema.MIGRATIONS]
        c.execute("INSERT INTO director.schema_version VALUES (999, 'x', 'from the future')")
    with pytest.raises(JournalError, match="newer than this Director"):
        PgJournal.open(pg_url, "git:plan.md")


def test_a_role_without_create_gets_a_clear_error(pg_cluster: Cluster) -> None:
    url = pg_cluster.new_database()
    with psycopg.connect(pg_cluster.admin_url(url.rsplit("/", 1)[1]), autocommit=True) as c:
        c.execute(f"REVOKE CREATE ON DATABASE {url.rsplit('/', 1)[1]} FROM {ROLE}")
    with pytest.raises(JournalError, match="may not create the `director` schema"):
        PgJournal.open(url, "git:plan.md")


def test_plans_are_kept_apart_by_key(pg_url: str) -> None:
    with PgJournal.open(pg_url, "git:a.md") as a, PgJournal.open(pg_url, "git:b.md") as b:
        ra = _run(a)
        assert b.latest_run() is None and a.latest_run() is not None
        rb = _run(b)
        assert ra == rb == 1  # ids are numbered per plan
        a.record_approval(None, "2", "abc", "bob", "approve-command")
        assert b.find_approval("2", "abc") is None


def test_plan_key_is_the_path_in_the_repository_or_the_plan_id(tmp_path: Path) -> None:
    for clone in ("a", "b"):
        (tmp_path / clone / "plans").mkdir(parents=True)
        (tmp_path / clone / ".git").mkdir()
    ka = plan_key(tmp_path / "a" / "plans" / "x.md")
    kb = plan_key(tmp_path / "b" / "plans" / "x.md")
    assert ka.key == kb.key == "git:plans/x.md" and ka.source == "git"
    assert plan_key(tmp_path / "a" / "plans" / "x.md", "payments-prod").key == "id:payments-prod"
    (tmp_path / "loose").mkdir()
    assert plan_key(tmp_path / "loose" / "x.md").source in ("path", "git")  # tmp may itself be in a repo


def test_a_receipt_from_another_connection_wakes_the_waiter_at_once(pg_url: str) -> None:
    with PgJournal.open(pg_url, "git:plan.md") as waiter, PgJournal.open(pg_url, "git:plan.md") as approver:
        got: list[object] = []
        t = threading.Thread(target=lambda: got.append(waiter.wait_for_approval("2", "abc", 0, 30)))
        t.start()
        time.sleep(0.5)
        approver.record_approval(None, "2", "other-content", "bob", "approve-command")  # not this gate
        approver.record_approval(None, "9", "abc", "bob", "approve-command")  # another section
        time.sleep(0.2)
        assert t.is_alive()
        t0 = time.monotonic()
        aid = approver.record_approval(None, "2", "abc", "bob", "approve-command")
        t.join(10)
        woke = time.monotonic() - t0
        assert not t.is_alive() and getattr(got[0], "id", None) == aid
        assert woke < 0.5, f"the waiter woke {woke:.3f}s after the receipt"


HOLDER = textwrap.dedent(
    """
    import sys
    from director.state.pgjournal import PgJournal
    from director.state.pglease import acquire
    j = PgJournal.open(sys.argv[1], "git:plan.md")
    lease = acquire(j, run_kind="teardown")
    lease.attach_run(7)
    print("held", flush=True)
    sys.stdin.readline()
    """
)


def _holder(url: str, host: str) -> subprocess.Popen[str]:
    p = subprocess.Popen(
        [sys.executable, "-c", HOLDER, url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "DIRECTOR_HOST": host},
    )
    assert p.stdout is not None and p.stdout.readline().strip() == "held"
    return p


def test_lease_held_then_taken_over_at_once_when_the_holder_dies(pg_url: str) -> None:
    p = _holder(pg_url, "machine-a")
    try:
        with PgJournal.open(pg_url, "git:plan.md") as j:
            with pytest.raises(LeaseHeld, match=r"pid \d+ on host machine-a.*running teardown"):
                pglease.acquire(j, run_kind="apply")
            row = j.lease_holder()
            assert row is not None and row.host == "machine-a" and row.run_id == 7
            assert pglease.holder_alive(j, row) is True
            p.kill()
            p.wait()
            t0 = time.monotonic()
            while True:  # the server ends the dead client's session as soon as its socket closes
                try:
                    lease = pglease.acquire(j, run_kind="apply")
                    break
                except LeaseHeld:
                    assert time.monotonic() - t0 < 2, "the dead holder's lock outlived it"
                    time.sleep(0.01)
            assert lease.held and j.lease_holder() is not None
            [ev] = j.events(kind="lease-takeover")
            assert ev.data["previous"]["host"] == "machine-a" and ev.data["reason"] == "holder-session-gone"
            lease.release()
            assert j.lease_holder() is None
            assert pglease.acquire(j, run_kind="apply").held  # free again, no takeover this time
            assert len(j.events(kind="lease-takeover")) == 1
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_unlock_ends_a_live_holders_session_audited(pg_url: str) -> None:
    p = _holder(pg_url, "machine-a")
    try:
        with PgJournal.open(pg_url, "git:plan.md") as j:
            previous, alive = pglease.unlock(j, by={"host": "machine-b"})
            assert previous is not None and previous.host == "machine-a" and alive
            lease = pglease.acquire(j, run_kind="apply")  # no takeover needed: the row was cleared
            assert lease.held and j.events(kind="lease-takeover") == []
            [ev] = j.events(kind="lease-unlocked")
            assert ev.data["by"] == {"host": "machine-b"} and ev.data["reason"] == "holder-alive-terminated"
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_a_lost_connection_is_state_unavailable_and_nothing_is_written_twice(
    pg_cluster: Cluster, pg_url: str
) -> None:
    with PgJournal.open(pg_url, "git:plan.md") as j:
        rid = _run(j)
        sid = j.step_started(rid, "1/0", "1", 0, "act", "fp")
        pg_cluster.restart()
        with pytest.raises(StateUnavailable, match="lost the state database"):
            j.step_finished(sid, StepState.SUCCEEDED, 0, 0.1, "", None)
        with pytest.raises(StateUnavailable):
            j.latest_run()
    with PgJournal.open(pg_url, "git:plan.md") as j:
        [step] = j.steps(rid)
        assert step.state is StepState.STARTED  # outcome unknown: the next apply re-runs it, once


def test_backends_describe_where_and_which_key(tmp_path: Path, pg_url: str) -> None:
    sq = SqliteBackend(tmp_path / "j.sqlite3", tmp_path / "lease.lock")
    assert sq.describe()["backend"] == "sqlite" and sq.open(create=False) is None
    pg = PgBackend(pg_url.replace("director@", "director:secret@"), plan_key(tmp_path / "p.md", "x"), "p.md")
    d = pg.describe()
    assert d["backend"] == "postgresql" and d["key"] == "id:x" and d["key_source"] == "plan_id"
    assert "secret" not in str(d)

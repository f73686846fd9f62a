"""SIGKILL Director at many points of a multi-section plan, then apply again (real CLI, bash, SQLite; and
the same against a real PostgreSQL server with `--state-url`)."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from director.plan.parse import parse_file
from tests import forkserver, sweeps
from tests.faults import finished_acts
from tests.pgcluster import Cluster
from tests.planmaker import CounterPlan, Step, director, write_plan

pytestmark = pytest.mark.slow

SECTIONS = 5
# Episodes of each SIGKILL sweep (a plan applied under kills at random moments until it completes): two in
# the suite, the first two of the same seeded sequence; five under DIRECTOR_SWEEPS=long (bench/sweeps.py).
EPISODES = sweeps.length(2, 5)


def _plan(tmp: Path) -> Path:
    # Each act block logs its start and its end; between them it sleeps, so kills land inside blocks too.
    steps = [
        Step(extra=f'sleep 0.{2 + i % 3}\necho "end-s{i}" >> "$OUT/acts"') for i in range(1, SECTIONS + 1)
    ]
    return write_plan(tmp, CounterPlan(steps))


def _env(out: Path, state_url: str | None = None) -> dict[str, str]:
    e = dict(os.environ)
    e.update({"COUNTER_OUT": str(out), "CI": "1", "NO_COLOR": "1"})
    if state_url:
        e["DIRECTOR_STATE_URL"] = state_url
    return e


def _finished_acts(db_path: Path, state_url: str | None = None) -> set[str]:
    if state_url:
        import psycopg

        with psycopg.connect(state_url) as c:
            if c.execute("SELECT to_regclass('director.steps')").fetchone() == (None,):
                return set()  # killed before the schema was created
            rows = c.execute("SELECT step_key FROM director.steps WHERE role = 'act' AND state = 'succeeded'")
            return {r[0].split("/")[0] for r in rows.fetchall()}
    # Read-only, and empty whatever a kill left: no file, no schema yet (killed during the journal's
    # creation), a half-created file (tests/faults.py).
    return finished_acts(db_path)


def _lines(out: Path) -> list[str]:
    p = out / "acts"
    return p.read_text().split() if p.exists() else []


def _episode(tmp: Path, rng: random.Random, state_url: str | None = None) -> int:
    """Kill Director at random moments until the run completes; returns the number of kills."""
    out = tmp / "out"
    out.mkdir()
    plan = _plan(tmp)
    db_path = tmp / ".director" / plan.name / "journal.sqlite3"
    kills = 0
    for _ in range(40):
        finished = _finished_acts(db_path, state_url)
        seen = len(_lines(out))
        proc = forkserver.Popen(
            # a loaded machine may need many kills before an act finishes: the crash-loop bound (tested
            # below) is lifted so this test measures memoization, not the bound
            [sys.executable, "-m", "director", "apply", str(plan), "--max-recoveries", "1000"],
            cwd=tmp,
            env=_env(out, state_url),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(rng.uniform(0.1, 0.9))
        done = proc.poll() is not None
        if not done:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait(timeout=30)
        # what ran after the previous kill never includes an act Director had journaled as finished
        again = [ln for ln in _lines(out)[seen:] if ln.startswith("s") and ln[1:] in finished]
        assert again == [], f"finished act(s) executed again after a crash: {again}"
        parse_file(str(plan))  # the plan file always parses (old or new ledger, never half-written)
        if db_path.exists() and not state_url:
            db = sqlite3.connect(db_path)
            assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            db.close()
        if done:
            break
    env = {"DIRECTOR_STATE_URL": state_url} if state_url else None
    r = director("apply", str(plan), "--max-recoveries", "1000", cwd=tmp, out=out, timeout=120, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    starts = [ln for ln in _lines(out) if ln.startswith("s")]
    assert sorted(set(starts)) == [f"s{i}" for i in range(1, SECTIONS + 1)]
    ls = parse_file(str(plan)).live_state
    assert ls is not None and ls.data["status"] == "live"
    return kills


def test_sigkill_anywhere_never_reruns_a_finished_act_and_the_run_completes(tmp_path: Path) -> None:
    rng = random.Random(20261129)
    kills = 0
    for i in range(EPISODES):
        (tmp_path / f"e{i}").mkdir()
        kills += _episode(tmp_path / f"e{i}", rng)
    assert kills >= 2 * EPISODES, f"only {kills} kills landed; the test must kill Director many times"


def test_sigkill_anywhere_on_postgresql_never_reruns_a_finished_act(
    tmp_path: Path, pg_cluster: Cluster
) -> None:
    # each episode its own database: the plans of the episodes share a file name, so they would share a key
    rng = random.Random(20261201)
    kills = 0
    for i in range(EPISODES):
        (tmp_path / f"e{i}").mkdir()
        kills += _episode(tmp_path / f"e{i}", rng, pg_cluster.new_database())
    assert kills >= 2 * EPISODES, f"only {kills} kills landed; the test must kill Director many times"
    assert not (
        tmp_path / "e0" / ".director" / "counter.md" / "journal.sqlite3"
    ).exists()  # all in PostgreSQL


@pytest.fixture(params=["sqlite", "postgresql"])
def state_env(request: pytest.FixtureRequest) -> dict[str, str]:
    """The environment that picks the backend: nothing (SQLite beside the plan) or DIRECTOR_STATE_URL."""
    if request.param == "sqlite":
        return {}
    return {"DIRECTOR_STATE_URL": request.getfixturevalue("pg_url")}


def test_a_block_that_kills_director_every_time_is_stopped_as_a_crash_loop(
    tmp_path: Path, state_env: dict[str, str]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    # The block SIGKILLs the Director process (its nearest ancestor running `-m director`) mid-block, every
    # time; it walks up because Director may run a block's bash under a session leader.
    kill_director = (
        'p=$PPID; while [ "$p" -gt 1 ] && ! tr "\\0" " " < /proc/$p/cmdline | grep -q -- "-m director"; '
        'do p=$(ps -o ppid= -p "$p" | tr -d " "); done; [ "$p" -gt 1 ] && kill -9 "$p"; sleep 5'
    )
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(extra=kill_director)]))
    codes = []
    for _ in range(8):
        r = director("apply", str(plan), cwd=tmp_path, out=out, timeout=60, env=state_env)
        codes.append(r.returncode)
        if r.returncode == 8:
            assert "without progress" in r.stderr
            break
    assert codes[-1] == 8, codes
    assert all(c == -signal.SIGKILL for c in codes[:-1])
    assert _lines(out).count("s1") == 1, "§1 finished before the crashes and never ran again"


def test_two_concurrent_applies_one_runs_the_other_gets_the_lease_message(
    tmp_path: Path, state_env: dict[str, str]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    plan = write_plan(tmp_path, CounterPlan([Step(extra="sleep 3")]))
    first = forkserver.Popen(
        [sys.executable, "-m", "director", "apply", str(plan)],
        cwd=tmp_path,
        env={**_env(out), **state_env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.time() + 20
        while not (out / "acts").exists() and time.time() < deadline:
            time.sleep(0.05)
        second = director("apply", str(plan), cwd=tmp_path, out=out, timeout=30, env=state_env)
        assert second.returncode == 5, second.stdout + second.stderr
        assert f"pid {first.pid}" in second.stderr
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
        # the holder is dead: the next apply takes the lease over (audited) and resumes the run
        third = director("apply", str(plan), cwd=tmp_path, out=out, timeout=60, env=state_env)
        assert third.returncode == 0, third.stdout + third.stderr
        audit = director("audit", str(plan), "--jsonl", cwd=tmp_path, out=out, env=state_env)
        assert "lease-takeover" in audit.stdout
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()

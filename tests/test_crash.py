"""SIGKILL Director at many points of a multi-section plan, then apply again (real CLI, bash, SQLite)."""

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
from tests.faults import finished_acts
from tests.planmaker import CounterPlan, Step, director, write_plan

pytestmark = pytest.mark.slow

SECTIONS = 5


def _plan(tmp: Path) -> Path:
    # Each act block logs its start and its end; between them it sleeps, so kills land inside blocks too.
    steps = [
        Step(extra=f'sleep 0.{2 + i % 3}\necho "end-s{i}" >> "$OUT/acts"') for i in range(1, SECTIONS + 1)
    ]
    return write_plan(tmp, CounterPlan(steps))


def _env(out: Path) -> dict[str, str]:
    e = dict(os.environ)
    e.update({"COUNTER_OUT": str(out), "CI": "1", "NO_COLOR": "1"})
    return e


def _finished_acts(db_path: Path) -> set[str]:
    # Read-only, and empty whatever a kill left: no file, no schema yet (killed during the journal's
    # creation), a half-created file (tests/faults.py).
    return finished_acts(db_path)


def _lines(out: Path) -> list[str]:
    p = out / "acts"
    return p.read_text().split() if p.exists() else []


def _episode(tmp: Path, rng: random.Random) -> int:
    """Kill Director at random moments until the run completes; returns the number of kills."""
    out = tmp / "out"
    out.mkdir()
    plan = _plan(tmp)
    db_path = tmp / ".director" / plan.name / "journal.sqlite3"
    kills = 0
    for _ in range(40):
        finished = _finished_acts(db_path)
        seen = len(_lines(out))
        proc = subprocess.Popen(
            # a loaded machine may need many kills before an act finishes: the crash-loop bound (tested
            # below) is lifted so this test measures memoization, not the bound
            [sys.executable, "-m", "director", "apply", str(plan), "--max-recoveries", "1000"],
            cwd=tmp,
            env=_env(out),
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
        if db_path.exists():
            db = sqlite3.connect(db_path)
            assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            db.close()
        if done:
            break
    r = director("apply", str(plan), "--max-recoveries", "1000", cwd=tmp, out=out, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    starts = [ln for ln in _lines(out) if ln.startswith("s")]
    assert sorted(set(starts)) == [f"s{i}" for i in range(1, SECTIONS + 1)]
    ls = parse_file(str(plan)).live_state
    assert ls is not None and ls.data["status"] == "live"
    return kills


def test_sigkill_anywhere_never_reruns_a_finished_act_and_the_run_completes(tmp_path: Path) -> None:
    rng = random.Random(20261129)
    kills = sum(_episode(tmp_path / f"e{i}", rng) for i in range(5) if (tmp_path / f"e{i}").mkdir() is None)
    assert kills >= 10, f"only {kills} kills landed; the test must kill Director many times"


def test_a_block_that_kills_director_every_time_is_stopped_as_a_crash_loop(tmp_path: Path) -> None:
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
        r = director("apply", str(plan), cwd=tmp_path, out=out, timeout=60)
        codes.append(r.returncode)
        if r.returncode == 8:
            assert "without progress" in r.stderr
            break
    assert codes[-1] == 8, codes
    assert all(c == -signal.SIGKILL for c in codes[:-1])
    assert _lines(out).count("s1") == 1, "§1 finished before the crashes and never ran again"


def test_two_concurrent_applies_one_runs_the_other_gets_the_lease_message(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    plan = write_plan(tmp_path, CounterPlan([Step(extra="sleep 3")]))
    first = subprocess.Popen(
        [sys.executable, "-m", "director", "apply", str(plan)],
        cwd=tmp_path,
        env=_env(out),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.time() + 20
        while not (out / "acts").exists() and time.time() < deadline:
            time.sleep(0.05)
        second = director("apply", str(plan), cwd=tmp_path, out=out, timeout=30)
        assert second.returncode == 5, second.stdout + second.stderr
        assert f"pid {first.pid}" in second.stderr
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
        # the holder is dead: the next apply takes the lease over (audited) and resumes the run
        third = director("apply", str(plan), cwd=tmp_path, out=out, timeout=60)
        assert third.returncode == 0, third.stdout + third.stderr
        audit = director("audit", str(plan), "--jsonl", cwd=tmp_path, out=out)
        assert "lease-takeover" in audit.stdout
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()

"""`apply --wait-for-approval [TIMEOUT]` on the default SQLite backend (it reads the journal file every
0.25 s; the PostgreSQL backend's LISTEN/NOTIFY wait is in tests/test_pg_machines.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import forkserver
from tests.planmaker import CounterPlan, Step, acts, director, write_plan

# slow: end to end through the real CLI, many runs; CI runs it with the rest
pytestmark = pytest.mark.slow

GATE = "🔴"


def _start(plan: Path, out: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "COUNTER_OUT": str(out), "CI": "1", "NO_COLOR": "1"}
    return forkserver.Popen(
        [sys.executable, "-m", "director", "apply", str(plan), *args],
        cwd=plan.parent,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _waiting(plan: Path, out: Path) -> bool:
    r = director("status", str(plan), "--json", cwd=plan.parent, out=out)
    last = json.loads(r.stdout)["last_run"] if r.returncode == 0 else None
    return bool(last and last["state"] == "awaiting-approval")


def test_a_receipt_from_another_terminal_releases_the_waiting_run(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    p = _start(plan, out, "--wait-for-approval")  # no TIMEOUT: no limit
    try:
        deadline = time.monotonic() + 60
        while not _waiting(plan, out):
            assert p.poll() is None and time.monotonic() < deadline, p.stderr.read() if p.stderr else ""
            time.sleep(0.1)
        assert director("approve", str(plan), "2", "--yes", cwd=tmp_path, out=out).returncode == 0
        stdout, stderr = p.communicate(timeout=60)
        assert p.returncode == 0, stdout + stderr
        assert "waits for `director approve" in stdout
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert acts(out) == ["s1", "s2"]


def test_the_wait_times_out_into_the_usual_stop_and_ctrl_c_interrupts_it(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    t0 = time.monotonic()
    r = director("apply", str(plan), "--wait-for-approval", "0.5", cwd=tmp_path, out=out)
    assert r.returncode == 4, r.stdout + r.stderr
    assert time.monotonic() - t0 < 30 and "director approve" in r.stdout
    p = _start(plan, out, "--wait-for-approval", "600")
    try:
        deadline = time.monotonic() + 60
        while not _waiting(plan, out) or "waits up to 600" not in _transitions(plan, out):
            assert time.monotonic() < deadline
            time.sleep(0.1)
        p.send_signal(signal.SIGINT)
        p.communicate(timeout=30)
        assert p.returncode == 130
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert director("apply", str(plan), "--wait-for-approval", "0", cwd=tmp_path, out=out).returncode == 64
    assert acts(out) == ["s1"]


def _transitions(plan: Path, out: Path) -> str:
    r = director("audit", str(plan), "--json", cwd=plan.parent, out=out)
    return json.dumps(json.loads(r.stdout)["transitions"]) if r.returncode == 0 else ""

"""Issue 14 through the real CLI: temp files follow the lease (6)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.planmaker import CounterPlan, Step, director, write_plan


def _audit(plan: Path, tmp: Path, out: Path) -> dict[str, Any]:
    r = director("audit", str(plan), "--json", cwd=tmp, out=out)
    assert r.returncode == 0, r.stderr
    data: dict[str, Any] = json.loads(r.stdout)
    return data


def _acts_steps(data: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(s["step_key"], s["state"], s["flags"]) for s in data["steps"] if s["role"] == "act"]


@pytest.fixture
def out(tmp_path: Path) -> Path:
    d = tmp_path / "out"
    d.mkdir()
    return d


# --------------------------------------------------------------- 6. temp files follow the lease

# Director, run with the atomic writer's test hook: SIGKILL itself once the plan's temp file is durable
# (right before the rename that would replace the plan).
_KILL_IN_LEDGER_WRITE = textwrap.dedent(
    """
    import glob, os, signal, sys
    from director import files
    from director.cli import main

    plan = os.path.abspath(sys.argv[2])
    pattern = os.path.join(os.path.dirname(plan), "." + os.path.basename(plan) + ".*.director-tmp")

    def hook():
        if glob.glob(pattern):
            os.kill(os.getpid(), signal.SIGKILL)

    files._before_replace = hook
    main(sys.argv[1:])
    """
)


def test_a_sigkill_during_a_ledger_write_leaves_a_temp_file_the_next_run_removes_at_once(
    tmp_path: Path, out: Path
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step()]))
    text = plan.read_bytes()
    env = dict(os.environ, COUNTER_OUT=str(out), CI="1", NO_COLOR="1")
    killed = subprocess.run(
        [sys.executable, "-c", _KILL_IN_LEDGER_WRITE, "apply", str(plan)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
    )
    assert killed.returncode == -signal.SIGKILL
    assert plan.read_bytes() == text  # the rename never happened
    [temp] = tmp_path.glob(".counter.md.*.director-tmp")
    owner = int(temp.name.split(".")[3])  # `.counter.md.<pid>.<random>.director-tmp`
    # The next run takes the lease over from that dead pid and removes its temp file at once (it is
    # seconds old: no age rule), then completes.
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert list(tmp_path.glob(".counter.md.*")) == []
    takeovers = [e for e in _audit(plan, tmp_path, out)["events"] if e["kind"] == "lease-takeover"]
    assert [t["data"]["previous"]["pid"] for t in takeovers] == [owner]


def test_a_live_writers_temp_file_is_never_taken(tmp_path: Path, out: Path) -> None:
    # Another plan's writer (or this plan's under another --state-dir) that is still running: its pid is
    # alive, so its temp file stays, however old.
    plan = write_plan(tmp_path, CounterPlan([Step()]))
    live = tmp_path / f".counter.md.{os.getpid()}.abcd1234.director-tmp"
    live.write_text("partial")
    os.utime(live, (1, 1))
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    assert live.exists()

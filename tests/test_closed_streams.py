"""Director started with a standard stream closed (`<&-`, `>&-`, `2>&-`), through the real CLI (issue 27).

No traceback: a closed stdin makes the run non-interactive, a closed stdout or stderr discards what is
written there, and the run still acts and ends with its documented exit code. The world is checked, not
Director's word: the blocks' evidence files, the plan's Live State, the journal's integrity.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from director.plan.parse import parse_file
from tests.planmaker import CounterPlan, Step, acts, write_plan


def _run(redirections: str, *args: str, cwd: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """`director ARGS REDIRECTIONS` through bash, so that the stream is really closed when Director starts."""
    env = {**os.environ, "COUNTER_OUT": str(out), "NO_COLOR": "1"}
    env.pop("CI", None)  # not CI: only the closed stream may make the run non-interactive
    env.pop("GITHUB_ACTIONS", None)
    cmd = " ".join([sys.executable, "-m", "director", *args])
    # stderr is kept through descriptor 3 when the test closes 2 (so a traceback would still be seen)
    return subprocess.run(
        ["bash", "-c", f'exec 3>&2; exec {cmd} {redirections}'],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def _status(plan: Path) -> object:
    ls = parse_file(str(plan)).live_state
    return ls.data.get("status") if ls is not None else None


@pytest.mark.parametrize(
    "redirections",
    ["<&-", ">&-", "2>&-", "<&- >&- 2>&-"],
    ids=["stdin", "stdout", "stderr", "all-three"],
)
def test_a_run_with_a_closed_stream_acts_and_exits_0(
    tmp_path: Path, out: Path, redirections: str
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step()]))
    r = _run(redirections, "apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    assert acts(out) == ["s1", "s2"] and _status(plan) == "live"
    if ">&-" in redirections.split():
        assert r.stdout == ""
    db = tmp_path / ".director" / plan.name / "journal.sqlite3"
    with sqlite3.connect(db) as c:
        assert c.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    c.close()


def test_a_failing_run_with_stdout_closed_exits_3(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(extra="exit 9")]))
    r = _run(">&-", "apply", str(plan), "--non-interactive", cwd=tmp_path, out=out)
    assert r.returncode == 3, r.stderr
    assert "Traceback" not in r.stderr and _status(plan) == "partially applied"  # what exists (issue 25)


def test_a_gate_with_stdin_closed_waits_for_approval_instead_of_asking(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(marker="🔴")]))
    r = _run("<&-", "apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 4, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and "awaiting approval" in r.stdout
    assert acts(out) == []

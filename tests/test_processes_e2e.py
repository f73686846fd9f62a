"""Processes a plan's blocks start (issue 27, docs/processes.md), through the real CLI.

Every process a block starts carries the step's identity in its environment (read here from /proc, never
from Director's word); an act that runs again stops what its earlier attempt left, unless its fence says
`processes=keep`; a teardown is not `gone` while a process of the plan runs; `status` lists them. The
SIGKILL case (an act killed after it started a `setsid` server) is the soak in tests/test_soak_processes.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from director.plan.parse import parse_file
from tests.planmaker import CounterPlan, Step, director, write_plan

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs /proc")


def _environ(pid: int) -> dict[str, str]:
    with open(f"/proc/{pid}/environ", "rb") as f:
        items = f.read().decode("utf-8", "replace").split("\0")
    return dict(i.partition("=")[::2] for i in items if "=" in i)


def _alive(pid: int) -> bool:
    """Runs (a zombie, which nobody may reap in a container, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def _pids(out: Path, name: str = "pids") -> list[int]:
    p = out / name
    return [int(x) for x in p.read_text().split()] if p.exists() else []


@pytest.fixture
def reap(out: Path) -> Iterator[None]:
    """Whatever a test's blocks left running (their pids in `$OUT/pids`) is killed at the end, by pid."""
    yield
    for pid in _pids(out):
        with contextlib.suppress(OSError):
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def _wait_gone(pids: list[int], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.02)


# §1's act starts three background processes that outlive it, each in its own way, and records their pids.
_STARTS = (
    'setsid sleep 300 </dev/null >/dev/null 2>&1 & echo "$!" >> "$OUT/pids"\n'
    'nohup sleep 301 </dev/null >/dev/null 2>&1 & echo "$!" >> "$OUT/pids"; disown\n'
    '( ( sleep 302 </dev/null >/dev/null 2>&1 & echo "$!" >> "$OUT/pids" ) & ); sleep 0.2'
)


def test_each_process_a_block_starts_carries_its_step_and_a_teardown_is_not_gone_while_one_runs(
    tmp_path: Path, out: Path, reap: None, validate_json: Callable[..., Any]
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(extra=_STARTS), Step()]))
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    pids = _pids(out)
    assert len(pids) == 3 and all(_alive(p) for p in pids)
    envs = [_environ(p) for p in pids]
    plans = {e["DIRECTOR_PLAN"] for e in envs}
    assert len(plans) == 1 and next(iter(plans)).startswith("counter.md@")
    # <plan>/<run>/<section>/<block>/<attempt>: run 1, §1's act (block 0)
    for e in envs:
        ident, run, section, block, attempt = e["DIRECTOR_STEP"].rsplit("/", 4)
        assert (ident, run, section, block) == (e["DIRECTOR_PLAN"], "1", "1", "0") and attempt.isdigit()
        assert "DIRECTOR_PROCESSES" not in e
    # The marks are no part of the session: never journaled, never restored.
    audit = json.loads(director("audit", str(plan), "--json", cwd=tmp_path, out=out).stdout)
    assert "DIRECTOR_" not in json.dumps(audit["steps"])

    st = director("status", str(plan), "--json", cwd=tmp_path, out=out)
    listed = validate_json(st.stdout, "status")["processes"]
    assert sorted(p["pid"] for p in listed) == sorted(pids)
    assert {(p["section"], p["block"], p["run_id"], p["kept"]) for p in listed} == {("1", 0, 1, False)}
    text = director("status", str(plan), cwd=tmp_path, out=out).stdout
    assert all(str(p) in text for p in pids) and "§1 block 0" in text

    # The plan's teardown does not stop them: the teardown fails, naming them, and Live State is not gone.
    td = director("teardown", str(plan), "--approve", "teardown", cwd=tmp_path, out=out)
    assert td.returncode == 3, td.stdout + td.stderr
    assert all(f"pid {p} (sleep)" in td.stdout for p in pids), td.stdout
    ls = parse_file(str(plan)).live_state
    # Live State says what exists (a teardown that acted and stopped), the run's failure is its last action
    assert ls is not None
    assert ls.data.get("status") == "partially torn down" and "failed" in str(ls.data.get("last_action")), ls.data
    audit = json.loads(director("audit", str(plan), "--json", cwd=tmp_path, out=out).stdout)
    left = [e for e in audit["events"] if e["kind"] == "processes-left"]
    assert sorted(p["pid"] for p in left[-1]["data"]["processes"]) == sorted(pids)
    assert all(_alive(p) for p in pids)  # listed, not stopped: they are the operator's to stop

    for p in pids:
        os.kill(p, signal.SIGTERM)
    _wait_gone(pids)
    td = director("teardown", str(plan), "--approve", "teardown", cwd=tmp_path, out=out)
    assert td.returncode == 0, td.stdout + td.stderr
    ls = parse_file(str(plan)).live_state
    assert ls is not None and ls.data.get("status") == "gone"
    st = director("status", str(plan), "--json", cwd=tmp_path, out=out)
    assert validate_json(st.stdout, "status")["processes"] == []


# An act that starts a server and fails its first attempt: the retry must not find the first one running.
_RETRIED = (
    'setsid sleep 300 </dev/null >/dev/null 2>&1 & echo "$!" >> "$OUT/pids"\n'
    '[ "$(wc -l < "$OUT/pids")" -ge 2 ] || exit 7'
)


@pytest.mark.parametrize("keep", [False, True], ids=["stopped", "processes=keep"])
def test_an_act_that_runs_again_stops_what_its_earlier_attempt_left_unless_it_keeps_them(
    tmp_path: Path, out: Path, reap: None, keep: bool
) -> None:
    info = "bash {retries=1 delay=0s" + (" processes=keep}" if keep else "}")
    plan = write_plan(tmp_path, CounterPlan([Step(extra=_RETRIED, info=info)]))
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    first, second = _pids(out)
    assert _alive(second)
    audit = json.loads(director("audit", str(plan), "--json", cwd=tmp_path, out=out).stdout)
    stopped = [e["data"] for e in audit["events"] if e["kind"] == "processes-stopped"]
    if keep:
        assert _alive(first) and stopped == []
        assert _environ(first)["DIRECTOR_PROCESSES"] == "keep"
    else:
        _wait_gone([first], timeout=5)  # stopped before the retry: only a zombie may be left
        assert not _alive(first)
        assert [(d["section"], [(p["pid"], p["signal"]) for p in d["processes"]]) for d in stopped] == [
            ("1", [(first, "SIGTERM")])
        ]
        assert f"pid {first} (sleep, SIGTERM)" in r.stdout
    # A kept process does not hold a teardown back, but it is listed.
    for p in (second,) if keep else ():
        os.kill(p, signal.SIGKILL)
    _wait_gone([second] if keep else [])
    td = director("teardown", str(plan), "--approve", "teardown", cwd=tmp_path, out=out)
    if keep:
        assert td.returncode == 0, td.stdout + td.stderr
        assert f"still running: pid {first} (sleep)" in td.stdout
    else:
        assert td.returncode == 3 and f"pid {second} (sleep)" in td.stdout, td.stdout + td.stderr


def test_a_bad_processes_attribute_is_a_plan_error(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(info="bash {processes=kill}")]))
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 65
    assert "bad processes='kill': expected stop or keep" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / ".director").exists()

"""Two machines, one plan, one PostgreSQL server: two git clones of one repository, each with its own
working directory and `DIRECTOR_HOST`, driving the real CLI against a real server.

`$COUNTER_OUT` (the act blocks' side effects) is shared by both "machines": it stands for the world
they both change (the cloud account), so counting its lines counts what really ran, wherever it ran.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests import forkserver
from tests.pgcluster import Cluster
from tests.planmaker import CounterPlan, Step, acts, director, write_plan

# slow: end to end through the real CLI, many runs; CI runs it with the rest
pytestmark = pytest.mark.slow

ONCE_SLEEP = 'if [ ! -e "$OUT/slept" ]; then touch "$OUT/slept"; sleep {s}; fi'  # slow the first time only
# an act that runs until the test releases it (at most 2 min): what another machine sees meanwhile is seen
# while it runs, however slowly a loaded machine runs the CLI calls that look
HOLD = 'for i in $(seq 1 1200); do [ -e "$OUT/release" ] && break; sleep 0.1; done'


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def _clones(tmp: Path, plan: CounterPlan) -> tuple[Path, Path]:
    """The plan committed in a repository, cloned twice: machine A's copy and machine B's."""
    origin = tmp / "origin"
    origin.mkdir()
    write_plan(origin, plan)
    _git("init", "-q", cwd=origin)
    _git("add", "counter.md", cwd=origin)
    _git("commit", "-qm", "plan", cwd=origin)
    for m in ("machine-a", "machine-b"):
        _git("clone", "-q", str(origin), str(tmp / m), cwd=tmp)
    return tmp / "machine-a" / "counter.md", tmp / "machine-b" / "counter.md"


def _env(url: str, host: str) -> dict[str, str]:
    return {"DIRECTOR_STATE_URL": url, "DIRECTOR_HOST": host}


def _start(plan: Path, url: str, host: str, out: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "COUNTER_OUT": str(out), "CI": "1", "NO_COLOR": "1", **_env(url, host)}
    return forkserver.Popen(
        [sys.executable, "-m", "director", "apply", str(plan), *args],
        cwd=plan.parent,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _until(cond: Any, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)


def _audit(plan: Path, url: str, host: str, out: Path) -> dict[str, Any]:
    r = director("audit", str(plan), "--json", cwd=plan.parent, out=out, env=_env(url, host))
    assert r.returncode == 0, r.stderr
    data: dict[str, Any] = json.loads(r.stdout)
    return data


@pytest.fixture
def out(tmp_path: Path) -> Path:
    d = tmp_path / "world"
    d.mkdir()
    return d


def test_exactly_one_of_two_machines_applies_and_both_see_both_runs(
    tmp_path: Path, out: Path, pg_url: str
) -> None:
    a, b = _clones(tmp_path, CounterPlan([Step(extra=HOLD)]))
    first = _start(a, pg_url, "machine-a", out)
    try:
        _until(lambda: "s1" in acts(out))
        second = director("apply", str(b), cwd=b.parent, out=out, env=_env(pg_url, "machine-b"))
        assert second.returncode == 5, second.stdout + second.stderr
        assert "on host machine-a" in second.stderr and f"pid {first.pid}" in second.stderr
        status = director("status", str(b), "--json", cwd=b.parent, out=out, env=_env(pg_url, "machine-b"))
        st = json.loads(status.stdout)
        assert st["lease"]["host"] == "machine-a" and st["lease"]["alive"] is True  # seen from machine B
        assert st["state"]["backend"] == "postgresql" and st["state"]["key"] == "git:counter.md"
        assert st["state"]["key_source"] == "git" and "secret" not in status.stdout
        (out / "release").touch()
        assert first.wait(60) == 0, first.stderr
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert acts(out) == ["s1"]  # one of the two ran
    # machine B applies next: a new run (in sync), on its host; either machine's audit shows both
    again = director("apply", str(b), cwd=b.parent, out=out, env=_env(pg_url, "machine-b"))
    assert again.returncode == 0, again.stdout + again.stderr
    assert acts(out) == ["s1"]
    for plan, host in ((a, "machine-a"), (b, "machine-b")):
        runs = _audit(plan, pg_url, host, out)["runs"]
        assert [(r["id"], r["host"], r["state"]) for r in runs] == [
            (runs[0]["id"], "machine-a", "completed"),
            (runs[1]["id"], "machine-b", "completed"),
        ]


def test_sigkill_of_the_holder_lets_the_other_machine_take_over_at_once(
    tmp_path: Path, out: Path, pg_url: str
) -> None:
    a, b = _clones(tmp_path, CounterPlan([Step(), Step(extra=ONCE_SLEEP.format(s=60)), Step()]))
    first = _start(a, pg_url, "machine-a", out)
    try:
        _until(lambda: "s2" in acts(out))
        first.send_signal(signal.SIGKILL)
        first.wait(10)
        t0 = time.monotonic()
        second = director("apply", str(b), cwd=b.parent, out=out, env=_env(pg_url, "machine-b"))
        took = time.monotonic() - t0
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert second.returncode == 0, second.stdout + second.stderr  # no exit 5, no --force, no waiting
    assert took < 30
    assert acts(out).count("s1") == 1 and acts(out).count("s3") == 1  # finished steps never re-run
    assert acts(out).count("s2") == 2  # the step in flight at the kill: outcome unknown, run again once
    data = _audit(a, pg_url, "machine-a", out)
    [takeover] = [e for e in data["events"] if e["kind"] == "lease-takeover"]
    assert takeover["data"]["previous"]["host"] == "machine-a"
    assert takeover["data"]["previous"]["pid"] == first.pid
    assert (
        takeover["data"]["by"]["host"] == "machine-b" and takeover["data"]["reason"] == "holder-session-gone"
    )
    reruns = [s for s in data["steps"] if s["flags"].get("rerun_after_crash")]
    assert [s["step_key"] for s in reruns] == ["2/0"]


def _ts(text: str) -> datetime:
    return datetime.fromisoformat(text)


def test_approve_on_machine_b_releases_the_wait_on_machine_a_within_a_second(
    tmp_path: Path, out: Path, pg_url: str
) -> None:
    a, b = _clones(tmp_path, CounterPlan([Step(), Step(marker="🔴")]))
    events = tmp_path / "a-events.jsonl"
    first = _start(a, pg_url, "machine-a", out, "--wait-for-approval", "--events", str(events))
    try:
        _until(lambda: events.exists() and '"type": "gate"' in events.read_text().replace('":"', '": "'))
        st = json.loads(
            director("status", str(b), "--json", cwd=b.parent, out=out, env=_env(pg_url, "machine-b")).stdout
        )
        assert st["last_run"]["state"] == "awaiting-approval" and st["last_run"]["waiting_on"] == "2"
        approve = director(
            "approve", str(b), "2", "--yes", "--operator", "bob", cwd=b.parent, out=out, env=_env(pg_url, "machine-b")
        )
        assert approve.returncode == 0, approve.stdout + approve.stderr
        assert first.wait(60) == 0, "".join(first.communicate())
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert acts(out) == ["s1", "s2"]
    data = _audit(b, pg_url, "machine-b", out)
    [receipt] = [x for x in data["approvals"] if x["how"] == "approve-command"]
    assert receipt["host"] == "machine-b" and receipt["operator"] == "bob"
    [resumed] = [
        t for t in data["transitions"] if (t["reason"] or "").startswith(f"receipt {receipt['id']} ")
    ]
    released = (_ts(resumed["at"]) - _ts(receipt["at"])).total_seconds()
    print(f"receipt committed on machine-b -> run on machine-a running again: {released * 1000:.0f} ms")
    assert 0 <= released < 1.0, f"the waiting run resumed {released:.3f}s after the receipt"
    used = [e for e in data["events"] if e["kind"] == "approval-used"]
    assert [e["data"]["approval_id"] for e in used] == [receipt["id"]]


def test_the_server_restarting_mid_run_stops_with_11_and_the_next_apply_resumes(
    tmp_path: Path, out: Path, pg_url: str, pg_cluster: Cluster
) -> None:
    a, _ = _clones(tmp_path, CounterPlan([Step(), Step(extra=ONCE_SLEEP.format(s=3)), Step()]))
    first = _start(a, pg_url, "machine-a", out)
    try:
        _until(lambda: "s2" in acts(out))
        pg_cluster.restart()
        _, err = first.communicate(timeout=60)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert first.returncode == 11, err
    assert "lost the state database" in err and "Traceback" not in err
    again = director("apply", str(a), cwd=a.parent, out=out, env=_env(pg_url, "machine-a"))
    assert again.returncode == 0, again.stdout + again.stderr
    assert acts(out) == ["s1", "s2", "s2", "s3"]  # s1 never again; s2's outcome was unknown: once more
    data = _audit(a, pg_url, "machine-a", out)
    # every act recorded once as succeeded (verify blocks are re-observed on resume, by design); the one
    # in flight at the restart stays `interrupted`, its re-run is flagged
    done = [s["step_key"] for s in data["steps"] if s["role"] == "act" and s["state"] == "succeeded"]
    assert sorted(done) == ["0/0", "1/0", "2/0", "3/0"], done
    s2 = [(s["state"], s["flags"].get("rerun_after_crash")) for s in data["steps"] if s["step_key"] == "2/0"]
    assert s2 == [("interrupted", None), ("succeeded", True)]


def test_unlock_from_machine_b_breaks_a_live_lease_audited(tmp_path: Path, out: Path, pg_url: str) -> None:
    a, b = _clones(tmp_path, CounterPlan([Step(extra=ONCE_SLEEP.format(s=3)), Step()]))
    first = _start(a, pg_url, "machine-a", out)
    try:
        _until(lambda: "s1" in acts(out))
        r = director("unlock", str(b), "--yes", cwd=b.parent, out=out, env=_env(pg_url, "machine-b"))
        assert r.returncode == 0 and "machine-a" in r.stdout, r.stdout + r.stderr
        _, err = first.communicate(timeout=60)
        assert first.returncode == 11, err  # it stopped at its next journal write
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    again = director("apply", str(b), cwd=b.parent, out=out, env=_env(pg_url, "machine-b"))
    assert again.returncode == 0, again.stdout + again.stderr
    assert acts(out) == ["s1", "s1", "s2"]
    [ev] = [e for e in _audit(b, pg_url, "machine-b", out)["events"] if e["kind"] == "lease-unlocked"]
    assert ev["data"]["previous"]["host"] == "machine-a" and ev["data"]["by"]["host"] == "machine-b"


def test_state_push_and_pull_move_the_history_without_losing_any(
    tmp_path: Path, out: Path, pg_url: str
) -> None:
    a, _ = _clones(tmp_path, CounterPlan([Step(), Step(marker="🔴")]))
    local: dict[str, str] = {"DIRECTOR_HOST": "machine-a"}
    assert director("apply", str(a), cwd=a.parent, out=out, env=local).returncode == 4
    assert director("approve", str(a), "2", "--yes", cwd=a.parent, out=out, env=local).returncode == 0

    def history(extra: dict[str, str]) -> dict[str, Any]:
        r = director("audit", str(a), "--json", cwd=a.parent, out=out, env={**local, **extra})
        assert r.returncode == 0, r.stderr
        data = {k: v for k, v in json.loads(r.stdout).items() if isinstance(v, list) and k != "lease_holder"}
        data["events"] = [e for e in data["events"] if e["kind"] not in ("state-push", "state-pull")]
        return data

    before = history({})
    push = director("state", "push", str(a), "--state-url", pg_url, cwd=a.parent, out=out, env=local)
    assert push.returncode == 0, push.stdout + push.stderr
    assert history({"DIRECTOR_STATE_URL": pg_url}) == before
    again = director("state", "push", str(a), "--state-url", pg_url, cwd=a.parent, out=out, env=local)
    assert again.returncode == 64 and "already has history" in again.stderr
    # the run goes on in PostgreSQL with the receipt made on SQLite
    r = director("apply", str(a), cwd=a.parent, out=out, env=_env(pg_url, "machine-a"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert acts(out) == ["s1", "s2"]
    pull = director("state", "pull", str(a), "--state-url", pg_url, cwd=a.parent, out=out, env=local)
    assert pull.returncode == 64  # the SQLite journal has history of its own
    pull = director(
        "state", "pull", str(a), "--state-url", pg_url, "--replace", cwd=a.parent, out=out, env=local
    )
    assert pull.returncode == 0, pull.stdout + pull.stderr
    assert history({}) == history({"DIRECTOR_STATE_URL": pg_url})
    assert list((a.parent / ".director" / "counter.md").glob("journal.sqlite3.replaced-*"))  # old one kept

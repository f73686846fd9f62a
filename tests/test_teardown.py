"""Teardown through the real CLI, real bash and real SQLite: observe first, 💥 approval, resumable, upstream guard.

The plans are the counter plans of `tests/planmaker.py` with their teardown replaced where a test needs
more than one teardown block; every teardown act block appends to `$OUT/td-log`, so the tests count what
really ran.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from director.plan.parse import parse_file
from tests import forkserver
from tests.jsonschemas import validated
from tests.planmaker import CounterPlan, Step, acts, director, write_plan

# slow: end to end through the real CLI, many runs; CI runs it with the rest
pytestmark = pytest.mark.slow

GATE = "🔴 *(`MODE=a` — outward-facing)*  /  🟡 *(`b`)*"

# Three teardown act blocks; the middle one sleeps, so a test can kill Director while it runs.
RESUMABLE_TEARDOWN = """\
## Teardown (observe-first, resumable)  💥

```bash
echo "t1" >> "$OUT/td-log"
rm -f "$OUT/s1"
```
```bash
echo "t2-start" >> "$OUT/td-log"
sleep {sleep}
rm -f "$OUT/s2"
echo "t2-end" >> "$OUT/td-log"
```
```bash
echo "t3" >> "$OUT/td-log"
rm -f "$OUT"/s[0-9]*
```
```bash
# ✔ verify teardown — nothing left
ls "$OUT"/s[0-9]* >/dev/null 2>&1 && {{ echo "still present"; exit 1; }} || echo "all gone"
```
"""

# A plan bound to an upstream resource it only discovers (BIND_DB), and a teardown that deletes it anyway.
GUARDED = """\
# Guarded — a plan bound to an upstream database

> **Provides / Requires**: **Provides** `mine`. **Requires** `db(BIND_DB)`.

## 🤖 Director prompt

You are the Director. Execute this plan:
- Teardown is resumable and **never deletes a bound (upstream) resource**

```
Legend  🟢 create · 🟡 config · 🔴 GATE (human go) · 💥 destructive (human go) · ⏳ wait · ✔ verify
```

## 0. Variables

```bash
export OUT="${{COUNTER_OUT:-$PWD/out}}"
export BIND_DB="{db}"
export MINE="$OUT/mine"
mkdir -p "$OUT"
```

## Requires-discovery (read-only — upstream resources this plan binds to)  ✔

```bash
{discovery}
```

## 1. Mine  🟢

```bash
echo "s1" >> "$OUT/acts"
mkdir -p "$MINE"
```
```bash
# ✔ mine exists
[ -d "$MINE" ] && echo "mine present" || {{ echo "mine missing"; exit 1; }}
```

## Live State

```yaml
status:        not-created
last_action:   —
```

| key   | value (filled on apply) |
|-------|-------------------------|
| MINE  | `${{MINE}}` |

## Teardown (observe-first, resumable)  💥

```bash
echo "td" >> "$OUT/td-log"
rm -rf "$MINE"
{offending}
```
```bash
# ✔ verify teardown — mine is gone
[ ! -e "$MINE" ] && echo "mine gone" || {{ echo "mine still present"; exit 1; }}
```
"""

TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00")
DAY = re.compile(r"\d{4}-\d\d-\d\d")


def _with_teardown(plan: CounterPlan, teardown: str) -> str:
    text = plan.text()
    return text[: text.index("## Teardown")] + teardown


def _env(out: Path) -> dict[str, str]:
    e = dict(os.environ)
    e.update({"COUNTER_OUT": str(out), "CI": "1", "NO_COLOR": "1"})
    return e


def _audit(plan: Path, tmp: Path, out: Path) -> dict[str, Any]:
    r = director("audit", str(plan), "--json", cwd=tmp, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    data: dict[str, Any] = validated(r.stdout)
    return data


def _transitions(data: dict[str, Any], run_id: int) -> list[tuple[str | None, str]]:
    return [(t["from_state"], t["to_state"]) for t in data["transitions"] if t["run_id"] == run_id]


def _live_state(plan: Path) -> str:
    """The Live State section as text, time stamps normalised."""
    text = plan.read_text(encoding="utf-8")
    block = text[text.index("## Live State") : text.index("## Teardown")]
    return DAY.sub("<DAY>", TS.sub("<TS>", block))


def _wait_for(path: Path, needle: str, proc: subprocess.Popen[Any], timeout: float = 20) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if path.exists() and needle in path.read_text():
            return
        assert proc.poll() is None, f"Director ended before {needle!r} appeared"
        time.sleep(0.02)
    raise AssertionError(f"{needle!r} never appeared in {path}")


LIVE_AFTER_APPLY = """\
## Live State

```yaml
status:        live
last_action:   '<TS> apply run 1: applied §0–§2; verified §3'
last_verified: <DAY> — chain complete · s1 exists · s2 exists
resolved_inputs: { mode: a, resolved_by: tester, resolved_at: '<TS>' }
```

| key   | value (filled on apply) |
|-------|-------------------------|
| NAME  | `chain-a` (the chain)   |
| V1    | `value-1-a`             |
| V2    | `value-2-a`             |

| ✔ check         | expected            | observed | result |
|-----------------|---------------------|----------|--------|
| chain complete  | every step ran once | 1: chain holds | ✅ <DAY> |
| s1 exists       | s1 present        | s1 present | ✅ <DAY> |
| s2 exists       | s2 present        | s2 present | ✅ <DAY> |

"""

LIVE_AFTER_TEARDOWN = """\
## Live State

```yaml
status:        gone
last_action:   '<TS> teardown run 2: torn down NAME=chain-a, V1=value-1-a, V2=value-2-a'
last_verified: — (torn down <DAY>)
resolved_inputs: { mode: a, resolved_by: tester, resolved_at: '<TS>' }
```

| key   | value (filled on apply) |
|-------|-------------------------|
| NAME  | `chain-${MODE}` (the chain) |
| V1    | `${V1}`                 |
| V2    | `${V2}`                 |

| ✔ check         | expected            | observed | result |
|-----------------|---------------------|----------|--------|
| chain complete  | every step ran once | —        | — torn down <DAY> |
| s1 exists       | s1 present        | —        | — torn down <DAY> |
| s2 exists       | s2 present        | —        | — torn down <DAY> |

"""


def test_teardown_after_apply_goes_gone_restores_templates_and_is_its_own_journaled_run(
    tmp_path: Path, out: Path
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step()]))
    original = plan.read_text()
    r = director("apply", str(plan), "--operator", "tester", cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert _live_state(plan) == LIVE_AFTER_APPLY

    r = director(
        "teardown", str(plan), "--approve", "teardown", "--operator", "tester", cwd=tmp_path, out=out
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert acts(out, "teardown-acts") == ["td"]
    assert not list(out.glob("s[0-9]*")), "the teardown block removed what the plan created"
    assert _live_state(plan) == LIVE_AFTER_TEARDOWN
    ls = parse_file(str(plan)).live_state
    assert ls is not None and ls.data["status"] == "gone"
    last = str(ls.data["last_action"])
    assert TS.match(last) and "teardown run 2" in last and "torn down NAME=chain-a" in last
    # every byte outside Live State is the author's
    text = plan.read_text()
    assert text[: text.index("## Live State")] == original[: original.index("## Live State")]
    assert text[text.index("## Teardown") :] == original[original.index("## Teardown") :]

    data = _audit(plan, tmp_path, out)
    runs = {run["id"]: run for run in data["runs"]}
    assert (runs[1]["kind"], runs[1]["state"]) == ("apply", "completed")
    assert (runs[2]["kind"], runs[2]["state"]) == ("teardown", "completed")
    assert _transitions(data, 2) == [(None, "pending"), ("pending", "running"), ("running", "completed")]
    td_steps = [
        (s["step_key"], s["role"], s["state"])
        for s in data["steps"]
        if s["run_id"] == 2 and s["section_key"] == "teardown"
    ]
    assert td_steps == [
        ("teardown/1", "observe", "failed"),
        ("teardown/0", "act", "succeeded"),
        ("teardown/1", "verify", "succeeded"),
        ("teardown/section", "section", "succeeded"),
    ]
    receipts = [(a["run_id"], a["section_key"], a["how"], a["operator"]) for a in data["approvals"]]
    assert receipts == [(2, "teardown", "flag", "tester")]


def test_teardown_when_already_gone_runs_no_destructive_command(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step()]))
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    # Someone removed everything out of band: observing first finds nothing to delete, so no 💥 gate either.
    for p in out.glob("s[0-9]*"):
        p.unlink()
    r = director("teardown", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "already gone" in r.stdout
    assert acts(out, "teardown-acts") == [], "no destructive command may run when there is nothing to delete"
    ls = parse_file(str(plan)).live_state
    assert ls is not None and ls.data["status"] == "gone"
    assert "no destructive command ran" in str(ls.data["last_action"])
    # and again, after a real teardown
    r = director("teardown", str(plan), "--approve", "teardown", cwd=tmp_path, out=out)
    assert r.returncode == 0 and "already gone" in r.stdout
    assert acts(out, "teardown-acts") == []
    data = _audit(plan, tmp_path, out)
    assert not [s for s in data["steps"] if s["section_key"] == "teardown" and s["role"] == "act"]


def test_sigkill_during_teardown_then_teardown_resumes_without_rerunning_finished_steps(
    tmp_path: Path, out: Path
) -> None:
    plan = tmp_path / "counter.md"
    plan.write_text(_with_teardown(CounterPlan([Step(), Step(), Step()]), RESUMABLE_TEARDOWN.format(sleep=5)))
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    log = out / "td-log"
    proc = forkserver.Popen(
        [sys.executable, "-m", "director", "teardown", str(plan), "--approve", "teardown"],
        cwd=tmp_path,
        env=_env(out),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for(log, "t2-start", proc)
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=10) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert log.read_text().split() == ["t1", "t2-start"]
    assert not (out / "s1").exists() and (out / "s3").exists()
    ls = parse_file(str(plan)).live_state
    assert ls is not None and ls.data["status"] != "gone"

    r = director("teardown", str(plan), "--approve", "teardown", cwd=tmp_path, out=out, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "resuming teardown run 2" in r.stdout
    lines = log.read_text().split()
    assert lines.count("t1") == 1, "the finished first teardown step must not run again"
    assert lines.count("t2-start") == 2, "the interrupted step (outcome unknown) runs again"
    assert lines.count("t3") == 1
    assert lines[-2:] == ["t2-end", "t3"]
    assert not list(out.glob("s[0-9]*"))
    ls = parse_file(str(plan)).live_state
    assert ls is not None and ls.data["status"] == "gone"

    data = _audit(plan, tmp_path, out)
    assert [(run["id"], run["kind"], run["state"]) for run in data["runs"]] == [
        (1, "apply", "completed"),
        (2, "teardown", "completed"),
    ]
    assert _transitions(data, 2) == [
        (None, "pending"),
        ("pending", "running"),
        ("running", "interrupted"),
        ("interrupted", "running"),
        ("running", "completed"),
    ]
    acts2 = [
        (s["step_key"], s["state"], {k: v for k, v in s["flags"].items() if k != "observed"})
        for s in data["steps"]
        if s["run_id"] == 2 and s["role"] == "act" and s["section_key"] == "teardown"
    ]
    # the first act's intent carries what the teardown's check saw before it (a resumed run's before)
    first = next(s for s in data["steps"] if s["run_id"] == 2 and s["step_key"] == "teardown/0")
    assert [o["family"] for o in first["flags"]["observed"]] == ["teardown"]
    assert acts2 == [
        ("teardown/0", "succeeded", {}),
        ("teardown/1", "interrupted", {}),
        ("teardown/1", "succeeded", {"rerun_after_crash": True}),
        ("teardown/2", "succeeded", {}),
    ]


def test_teardown_needs_a_named_approval_and_refuses_auto_approve(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step()]))
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    r = director("teardown", str(plan), "--auto-approve", cwd=tmp_path, out=out)
    assert r.returncode == 4, r.stdout + r.stderr  # --auto-approve passes 🔴, never the 💥 teardown
    assert f"director approve {plan} teardown" in r.stdout
    assert acts(out, "teardown-acts") == []

    r = director("teardown", str(plan), "--approve", "1", cwd=tmp_path, out=out)
    assert r.returncode == 4, "approving another section is not approving the teardown"
    assert f"director approve {plan} teardown" in r.stdout
    assert acts(out, "teardown-acts") == []
    ls = parse_file(str(plan)).live_state
    assert ls is not None and ls.data["status"] == "live", "nothing was destroyed: the ledger says what exists"

    r = director("teardown", str(plan), "--approve", "teardown", cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert acts(out, "teardown-acts") == ["td"]
    data = _audit(plan, tmp_path, out)
    assert [(a["section_key"], a["how"]) for a in data["approvals"]] == [("teardown", "flag")]


def test_approve_command_receipt_lets_a_waiting_teardown_pass(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step()]))
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    assert director("teardown", str(plan), cwd=tmp_path, out=out).returncode == 4
    a = director("approve", str(plan), "teardown", "--yes", "--operator", "bob", cwd=tmp_path, out=out)
    assert a.returncode == 0, a.stdout + a.stderr
    assert f'rm -f "{out}"/s[0-9]*' in a.stdout, "the approval shows the destructive commands, as they run"
    r = director("teardown", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "resuming teardown run 2" in r.stdout
    assert acts(out, "teardown-acts") == ["td"]


def test_an_earlier_teardown_approval_does_not_approve_the_next_teardown(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step()]))
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    assert director("teardown", str(plan), "--approve", "teardown", cwd=tmp_path, out=out).returncode == 0
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    r = director("teardown", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 4, "yesterday's go is not a go for destroying what was re-created today"
    assert acts(out, "teardown-acts") == ["td"]


def test_teardown_while_an_apply_holds_the_lease_is_refused(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(extra="sleep 4")]))
    first = forkserver.Popen(
        [sys.executable, "-m", "director", "apply", str(plan)],
        cwd=tmp_path,
        env=_env(out),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for(out / "acts", "s1", first)
        before = plan.read_bytes()
        r = director("teardown", str(plan), "--approve", "teardown", cwd=tmp_path, out=out, timeout=30)
        assert r.returncode == 5, r.stdout + r.stderr
        assert f"pid {first.pid}" in r.stderr
        assert acts(out, "teardown-acts") == []
        assert plan.read_bytes() == before
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)


@pytest.mark.parametrize("stopped", ["awaiting-approval", "failed"])
def test_teardown_cancels_a_stopped_apply_run_first(tmp_path: Path, out: Path, stopped: str) -> None:
    second = Step(marker=GATE) if stopped == "awaiting-approval" else Step(extra='echo "boom"; exit 1')
    plan = write_plan(tmp_path, CounterPlan([Step(), second, Step()]))
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == (4 if stopped == "awaiting-approval" else 3), r.stdout + r.stderr
    r = director("teardown", str(plan), "--approve", "teardown", cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert acts(out, "teardown-acts") == ["td"] and not (out / "s1").exists()
    data = _audit(plan, tmp_path, out)
    runs = {run["id"]: run for run in data["runs"]}
    assert runs[1]["state"] == "cancelled"
    assert (runs[2]["kind"], runs[2]["state"]) == ("teardown", "completed")
    cancel = [t for t in data["transitions"] if t["run_id"] == 1][-1]
    assert (cancel["from_state"], cancel["to_state"]) == (stopped, "cancelled")
    assert "teardown" in cancel["reason"]
    # the cancelled run is never resumed: the next apply is a fresh run that starts from §1
    r = director("apply", str(plan), "--approve", "2", cwd=tmp_path, out=out)
    assert "starting apply run 3" in r.stdout


DISCOVER_DB = (
    '[ -d "$BIND_DB" ] && echo "upstream $BIND_DB present" || { echo "upstream $BIND_DB missing"; exit 1; }'
)


def _guarded(tmp: Path, out: Path, offending: str, discovery: str = DISCOVER_DB) -> Path:
    """The guarded plan, its upstream database directory created (the upstream plan was applied), applied."""
    db = out / "orders-db-prod"
    db.mkdir()
    plan = tmp / "guarded.md"
    plan.write_text(GUARDED.format(db=db, discovery=discovery, offending=offending.format(db=db)))
    r = director("apply", str(plan), cwd=tmp, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (out / "mine").is_dir()
    return plan


@pytest.mark.parametrize(
    "offending",
    ['rm -rf "$BIND_DB"', "rm -rf {db}   # its value written out"],
    ids=["variable", "value"],
)
def test_upstream_guard_refuses_a_teardown_that_names_a_discovered_resource(
    tmp_path: Path, out: Path, offending: str
) -> None:
    plan = _guarded(tmp_path, out, offending)
    before = plan.read_bytes()
    line = plan.read_text().splitlines().index(offending.format(db=out / "orders-db-prod")) + 1
    r = director("teardown", str(plan), "--approve", "teardown", cwd=tmp_path, out=out)
    assert r.returncode == 9, r.stdout + r.stderr
    assert f"{plan}:{line}:" in r.stderr, r.stderr
    assert "BIND_DB" in r.stderr and str(out / "orders-db-prod") in r.stderr
    assert not (out / "td-log").exists(), "no teardown command ran"
    assert (out / "orders-db-prod").is_dir() and (out / "mine").is_dir()
    assert plan.read_bytes() == before


@pytest.mark.parametrize(
    "offending",
    [
        'rm -rf "$OUT"/orders-db-*',  # a glob that matches it
        'rm -rf "$OUT"   # the directory that holds it',
        "rm -rf {db}/../orders-db-prod",
    ],
    ids=["glob", "parent-directory", "dotdot"],
)
def test_upstream_guard_reads_what_a_command_destroys(tmp_path: Path, out: Path, offending: str) -> None:
    """Refused before anything ran: the destroyed words, expanded with the session's values, name it."""
    plan = _guarded(tmp_path, out, offending)
    before = plan.read_bytes()
    r = director("teardown", str(plan), "--approve", "teardown", cwd=tmp_path, out=out)
    if offending.startswith("rm -rf {db}/.."):
        # Not a textual match: the observation after the block catches it (exit 9, the rest not run).
        assert r.returncode == 9, r.stdout + r.stderr
        assert "no longer there" in r.stderr and "stopped the teardown at once" in r.stderr
        assert plan.read_bytes() == before
        return
    assert r.returncode == 9, r.stdout + r.stderr
    assert "would destroy the bound upstream resource" in r.stderr
    assert not (out / "td-log").exists(), "no teardown command ran"
    assert (out / "orders-db-prod").is_dir() and plan.read_bytes() == before


def test_upstream_guard_lets_read_only_mentions_run(tmp_path: Path, out: Path) -> None:
    plan = _guarded(tmp_path, out, 'ls -la "$BIND_DB" >/dev/null\ncp -r "$BIND_DB" "$OUT/backup"')
    r = director("teardown", str(plan), "--approve", "teardown", cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (out / "orders-db-prod").is_dir() and (out / "backup").is_dir() and not (out / "mine").exists()


def test_upstream_guard_lets_a_teardown_that_leaves_the_upstream_alone_run(tmp_path: Path, out: Path) -> None:
    plan = _guarded(tmp_path, out, "# the upstream database belongs to its own plan")
    r = director("teardown", str(plan), "--approve", "teardown", cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert acts(out, "td-log") == ["td"]
    assert (out / "orders-db-prod").is_dir() and not (out / "mine").exists()


def test_upstream_guard_does_not_treat_every_variable_discovery_reads_as_upstream(
    tmp_path: Path, out: Path
) -> None:
    discovery = (
        '[ -d "$OUT/$(basename "$BIND_DB")" ] && echo "upstream present" || { echo "missing"; exit 1; }'
    )
    plan = _guarded(tmp_path, out, "# the upstream database belongs to its own plan", discovery=discovery)
    r = director("teardown", str(plan), "--approve", "teardown", cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (out / "orders-db-prod").is_dir() and not (out / "mine").exists()


def test_a_refused_teardown_is_not_left_running(tmp_path: Path, out: Path) -> None:
    plan = _guarded(tmp_path, out, 'rm -rf "$BIND_DB"')
    assert director("teardown", str(plan), "--approve", "teardown", cwd=tmp_path, out=out).returncode == 9
    status = validated(director("status", str(plan), "--json", cwd=tmp_path, out=out).stdout)
    assert status["last_run"]["kind"] == "teardown"
    assert status["last_run"]["state"] in ("failed", "cancelled")
    # the author fixes the plan; the next teardown runs without a crash recovery and leaves the upstream alone
    plan.write_text(plan.read_text().replace('rm -rf "$BIND_DB"\n', ""))
    r = director("teardown", str(plan), "--approve", "teardown", cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (out / "orders-db-prod").is_dir() and not (out / "mine").exists()
    data = _audit(plan, tmp_path, out)
    assert all(run["recoveries"] == 0 for run in data["runs"])
    assert not [t for t in data["transitions"] if t["to_state"] == "interrupted"]


def test_plan_teardown_previews_read_only(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step()]))
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    before = plan.read_bytes()
    runs_before = _audit(plan, tmp_path, out)["runs"]
    r = director("plan", str(plan), "--teardown", cwd=tmp_path, out=out)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "would tear down" in r.stdout and "changes pending" in r.stdout
    assert plan.read_bytes() == before, "a preview never writes the plan"
    assert acts(out, "teardown-acts") == [] and (out / "s1").exists() and (out / "s2").exists()
    assert _audit(plan, tmp_path, out)["runs"] == runs_before, "a preview records no run"
    # after the teardown, the preview says there is nothing to do
    assert director("teardown", str(plan), "--approve", "teardown", cwd=tmp_path, out=out).returncode == 0
    after = plan.read_bytes()
    r = director("plan", str(plan), "--teardown", cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "already gone" in r.stdout and plan.read_bytes() == after
    assert acts(out, "teardown-acts") == ["td"]


def test_check_after_teardown_is_in_sync_with_the_ledger(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step()]))
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    assert director("teardown", str(plan), "--approve", "teardown", cwd=tmp_path, out=out).returncode == 0
    text = _live_state(plan)
    table = text[text.index("| ✔ check") :]
    assert "✅" not in table, "the ledger must not claim checks pass for what was torn down"
    r = director("check", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout

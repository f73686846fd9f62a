"""The durable apply engine through the real CLI, real bash and real SQLite (plans written for the tests)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from director.plan.parse import parse_file
from tests.jsonschemas import validated, validated_lines
from tests.planmaker import CounterPlan, Step, acts, director, write_plan

GATE = "🔴 *(`MODE=a` — outward-facing)*  /  🟡 *(`b`)*"


def _journal(plan: Path) -> sqlite3.Connection:
    db = sqlite3.connect(plan.parent / ".director" / plan.name / "journal.sqlite3")
    db.row_factory = sqlite3.Row
    return db


def test_apply_runs_every_act_once_then_is_in_sync(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan())
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert acts(out) == ["s1", "s2", "s3"]
    ls = parse_file(str(plan)).live_state
    assert ls is not None and ls.data["status"] == "live"
    rows = {row.name: row for row in ls.check_rows}
    assert (
        rows["chain complete"].result.startswith("✅") and rows["chain complete"].observed == "1: chain holds"
    )
    assert rows["s2 exists"].observed == "s2 present"
    kv = {row.key: row.value for row in ls.kv_rows}
    assert kv["NAME"] == "`chain-a` (the chain)" and kv["V2"] == "`value-2-a`"
    r2 = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r2.returncode == 0, r2.stdout + r2.stderr
    assert acts(out) == ["s1", "s2", "s3"], "in-sync sections must not act again"
    assert r2.stdout.count("in sync") >= 3


def test_session_state_flows_across_blocks_and_sections(tmp_path: Path, out: Path) -> None:
    cp = CounterPlan(
        [
            Step(extra='greet() { echo "hi $1"; }\nCOUNT=41\ncd "$OUT"'),
            Step(
                extra='[ "$V1" = "value-1-a" ] || exit 7\n[ "$(greet x)" = "hi x" ] || exit 8\n'
                '[ "$PWD" = "$OUT" ] || exit 9\n[ "$COUNT" = 41 ] || exit 10'
            ),
        ]
    )
    plan = write_plan(tmp_path, cp)
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert acts(out) == ["s1", "s2"]


def test_exit_1_fails_that_block_only_and_resume_continues(tmp_path: Path, out: Path) -> None:
    cp = CounterPlan([Step(), Step(extra='[ -f "$OUT/fixed" ] || { echo "not yet"; exit 1; }'), Step()])
    plan = write_plan(tmp_path, cp)
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 3, r.stdout + r.stderr
    assert "§2" in r.stdout and "not yet" in r.stdout
    assert acts(out) == ["s1", "s2"]
    ls = parse_file(str(plan)).live_state
    # the ledger says what exists (§1 was applied); how the run ended is `last_action`'s
    assert ls is not None and ls.data["status"] == "partially applied"
    assert str(ls.data["last_action"]).endswith("— failed at §2"), ls.data["last_action"]
    (out / "fixed").touch()
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "resuming apply run 1" in r.stdout
    assert acts(out) == ["s1", "s2", "s2", "s3"], "§1 finished: never again; §2 failed: re-run"


def test_changed_block_is_reapplied_and_others_stay_in_sync(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan())
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    text = plan.read_text().replace('touch "$OUT/s2"', 'touch "$OUT/s2"  # now with a comment')
    plan.write_text(text)
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert acts(out) == ["s1", "s2", "s3", "s2"]


def test_changing_a_knob_reapplies_what_depends_on_it(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan())
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    r = director("apply", str(plan), "--set", "mode=b", cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    # every act exports V{i} with $MODE: the fingerprints change, so each section re-applies
    assert acts(out) == ["s1", "s2", "s3", "s1", "s2", "s3"]
    ls = parse_file(str(plan)).live_state
    assert ls is not None and ls.data["resolved_inputs"]["mode"] == "b"
    # and a later apply reuses mode=b without being told
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert "MODE=b (previous)" in r.stdout and len(acts(out)) == 6


def test_failed_verify_stops_the_run_at_that_section(tmp_path: Path, out: Path) -> None:
    cp = CounterPlan([Step(), Step(extra='rm -f "$OUT/s2"; touch "$OUT/never"'), Step()])
    cp_text = cp.text().replace('touch "$OUT/s2"\n', "\n")
    plan = tmp_path / "counter.md"
    plan.write_text(cp_text)
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 3, r.stdout + r.stderr
    assert "§2 verify failed" in r.stdout and "s2 missing" in r.stdout
    assert acts(out) == ["s1", "s2"], "§3 must not start while §2's verify fails"
    rows = {row.name: row for row in parse_file(str(plan)).live_state.check_rows}  # type: ignore[union-attr]
    assert rows["s1 exists"].result.startswith("✅") and rows["s2 exists"].result.startswith("❌")


def test_bad_set_value_is_refused_before_anything_runs(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan())
    before = plan.read_bytes()
    r = director("apply", str(plan), "--set", "mode=z", cwd=tmp_path, out=out)
    assert r.returncode == 64 and "a / b" in r.stderr
    assert acts(out) == [] and plan.read_bytes() == before


def test_gate_stops_non_interactive_run_then_approve_command_lets_it_pass(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE), Step()]))
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 4, r.stdout + r.stderr
    assert f"director approve {plan} 2" in r.stdout
    assert acts(out) == ["s1"], "nothing of the gated section ran"
    a = director("approve", str(plan), "2", "--yes", "--operator", "alice", cwd=tmp_path, out=out)
    assert a.returncode == 0, a.stdout + a.stderr
    assert f'echo "s2" >> "{out}/acts"' in a.stdout  # it shows what is approved, as it runs
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert acts(out) == ["s1", "s2", "s3"]
    receipts = _journal(plan).execute("SELECT operator, how, sha256 FROM approvals").fetchall()
    assert [(x["operator"], x["how"]) for x in receipts] == [("alice", "approve-command")]
    assert len(receipts[0]["sha256"]) == 64


def test_plan_edited_after_approval_asks_again(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 4
    assert director("approve", str(plan), "2", "--yes", cwd=tmp_path, out=out).returncode == 0
    plan.write_text(plan.read_text().replace('touch "$OUT/s2"', 'touch "$OUT/s2"; echo changed'))
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 4, r.stdout + r.stderr
    assert acts(out) == ["s1"]


def test_conditional_gate_is_only_a_gate_for_its_knob_value(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    r = director("apply", str(plan), "--set", "MODE=b", cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert acts(out) == ["s1", "s2"]


def test_auto_approve_passes_red_gates_but_never_destructive(tmp_path: Path, out: Path) -> None:
    cp = CounterPlan([Step(marker=GATE), Step(marker="💥 *(purges the cache)*"), Step()])
    plan = write_plan(tmp_path, cp)
    r = director("apply", str(plan), "--auto-approve", cwd=tmp_path, out=out)
    assert r.returncode == 4, r.stdout + r.stderr
    assert acts(out) == ["s1"]
    r = director("apply", str(plan), "--auto-approve", "--approve", "2", cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert acts(out) == ["s1", "s2", "s3"]


def test_teardown_needs_a_named_approval_and_clears_the_ledger(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan())
    original = plan.read_text()
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    r = director("teardown", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 4 and acts(out, "teardown-acts") == []
    r = director("teardown", str(plan), "--approve", "teardown", cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert acts(out, "teardown-acts") == ["td"]
    ls = parse_file(str(plan)).live_state
    assert ls is not None and ls.data["status"] == "gone"
    kv = {row.key: row.value for row in ls.kv_rows}
    assert kv["NAME"] == "`chain-${MODE}` (the chain)", "realized ids cleared back to their templates"
    # outside Live State nothing changed
    start = original.index("## Live State")
    assert plan.read_text()[:start] == original[:start]
    # already gone: observe first, no destructive command runs
    r = director("teardown", str(plan), "--approve", "teardown", cwd=tmp_path, out=out)
    assert r.returncode == 0 and "already gone" in r.stdout
    assert acts(out, "teardown-acts") == ["td"]


def test_retry_policy_from_the_fence_is_journaled_attempt_by_attempt(tmp_path: Path, out: Path) -> None:
    flaky = (
        'n=$(cat "$OUT/tries" 2>/dev/null || echo 0); echo $((n+1)) > "$OUT/tries"; [ "$n" -ge 2 ] || exit 1'
    )
    cp = CounterPlan([Step(extra=flaky, info="bash {retries=3 backoff=constant delay=100ms}")])
    plan = write_plan(tmp_path, cp)
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = (
        _journal(plan)
        .execute("SELECT attempt, state FROM steps WHERE step_key = '1/0' AND role = 'act' ORDER BY id")
        .fetchall()
    )
    assert [(x["attempt"], x["state"]) for x in rows] == [(1, "failed"), (2, "failed"), (3, "succeeded")]


def test_step_timeout_and_keyboard_input_fail_clearly(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(extra="sleep 30")]))
    r = director("apply", str(plan), "--step-timeout", "1", cwd=tmp_path, out=out)
    assert r.returncode == 3 and "timed out" in r.stdout
    plan2 = write_plan(tmp_path, CounterPlan([Step(extra='read -r answer; [ "$answer" = y ]')]), "reads.md")
    r = director("apply", str(plan2), cwd=tmp_path, out=out, timeout=30)
    assert r.returncode == 3 and "keyboard input" in r.stdout


def test_status_audit_and_json(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    director("apply", str(plan), cwd=tmp_path, out=out)
    s = director("status", str(plan), "--json", cwd=tmp_path, out=out)
    data = validated(s.stdout)
    assert data["last_run"]["state"] == "awaiting-approval" and data["last_run"]["waiting_on"] == "2"
    a = director("audit", str(plan), "--jsonl", cwd=tmp_path, out=out)
    kinds = {rec["record"] for rec in validated_lines(a.stdout)}
    assert {"run", "transition", "step", "event"} <= kinds

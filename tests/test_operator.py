"""What an operator reads is true (issue 13), through the real CLI without a terminal: an in-sync run is a
no-op on the plan file, `plan` agrees with `apply --non-interactive` about gates, the numbers and words of a
run are right, nothing prints a control sequence, and what a run realized or printed can be found again
(`director output`, `director logs`)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
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
ANSI = r"printf '\033[31mred\033[0m\n'; printf '\033]0;title\007osc\n'; printf 'bar 10%%\rbar 100%%\n'"
BOX = re.compile(r"[┏┓┗┛┃━┡┩┢┪└┘┌┐╭╮╰╯┼┬┴├┤]|─{3,}")


def events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]


def audit(plan: Path, out: Path) -> dict[str, Any]:
    r = director("audit", str(plan), "--json", cwd=plan.parent, out=out)
    assert r.returncode == 0, r.stderr
    return dict(json.loads(r.stdout))


def summary(stdout: str) -> dict[str, list[str]]:
    """The plain summary: section label -> [outcome, time?, detail?] (columns split at 2+ spaces)."""
    rows = {}
    for line in stdout.splitlines():
        m = re.match(r"^  (§\d+|teardown|discovery) ", line)
        if m:
            rows[m.group(1)] = re.split(r" {2,}", line.strip())[1:]
    return rows


# ------------------------------------------------------------------------------ an in-sync run is a no-op


def test_an_in_sync_apply_leaves_the_plan_byte_identical_and_counts_nothing_as_applied(
    tmp_path: Path, out: Path
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE), Step()]))
    assert director("apply", str(plan), "--auto-approve", cwd=tmp_path, out=out).returncode == 0
    first = plan.read_bytes()
    ev = tmp_path / "ev.jsonl"
    r = director("apply", str(plan), "--non-interactive", "--events", str(ev), cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert plan.read_bytes() == first, "a run that changed nothing leaves the plan file byte-identical"
    assert acts(out) == ["s1", "s2", "s3"]
    assert "applied" not in r.stdout.split("apply run 2\n", 1)[1], "nothing counted as applied, §0 neither"
    assert "apply completed: in sync §0–§3; verified §4" in r.stdout
    assert [e["changed"] for e in events(ev) if e["type"] == "ledger.write"] in ([], [False])
    kinds = [e["kind"] for e in audit(plan, out)["events"] if e["run_id"] == 2]
    assert "ledger-unchanged" in kinds, "the journal keeps when it re-verified"


def test_the_first_apply_drops_the_template_comments_and_a_teardown_forgets_what_it_verified(
    tmp_path: Path, out: Path
) -> None:
    text = CounterPlan([Step()]).text().replace(
        "status:        not-created      # template",
        "status:        not-created      # published template - run it to realize state",
    )
    plan = tmp_path / "p.md"
    plan.write_text(text, encoding="utf-8")
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    after = plan.read_text(encoding="utf-8")
    assert "published template" not in after and "# comment kept" not in after
    ls = parse_file(str(plan)).live_state
    assert ls is not None and "s1 exists" in str(ls.data["last_verified"])
    r = director("teardown", str(plan), "--approve", "teardown", cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    ls = parse_file(str(plan)).live_state
    assert ls is not None and ls.data["status"] == "gone"
    assert "exists" not in str(ls.data["last_verified"]) and "chain complete" not in str(ls.data["last_verified"])
    assert str(ls.data["last_verified"]).startswith("— (torn down ")


# ------------------------------------------------------------------------------ plan agrees with apply


def _plan_verdicts(plan: Path, out: Path) -> dict[str, str]:
    r = director("plan", str(plan), cwd=plan.parent, out=out)
    assert r.returncode in (0, 2), r.stdout + r.stderr
    return {k: v[0] for k, v in summary(r.stdout).items()}


def _stops_at(plan: Path, out: Path) -> str | None:
    r = director("apply", str(plan), "--non-interactive", cwd=plan.parent, out=out)
    assert r.returncode in (0, 4), r.stdout + r.stderr
    if r.returncode == 0:
        return None
    m = re.search(r"approve with:  director approve \S+ (\S+)", r.stdout)
    assert m, r.stdout
    return f"§{m.group(1)}"


def _edit(plan: Path, old: str, new: str) -> None:
    text = plan.read_text(encoding="utf-8")
    assert old in text
    plan.write_text(text.replace(old, new, 1), encoding="utf-8")


def _both_edited(plan: Path, out: Path) -> None:
    _edit(plan, 'touch "$OUT/s1"', 'touch "$OUT/s1" # e')
    (out / "s2").unlink()


def _approved_from_another_terminal(plan: Path, out: Path) -> None:
    _edit(plan, 'touch "$OUT/s2"', 'touch "$OUT/s2"  # edited')
    director("apply", str(plan), "--non-interactive", cwd=plan.parent, out=out)
    director("approve", str(plan), "2", "--yes", cwd=plan.parent, out=out)


SCENARIOS: dict[str, Callable[[Path, Path], None]] = {
    "nothing changed": lambda plan, out: None,
    "the gated block edited": lambda plan, out: _edit(plan, 'touch "$OUT/s2"', 'touch "$OUT/s2"  # edited'),
    "what the gated section made is gone": lambda plan, out: (out / "s2").unlink(),
    "the section before the gate edited": lambda plan, out: _edit(plan, 'touch "$OUT/s1"', 'touch "$OUT/s1" # e'),
    "both edited, the gate's observation fails": _both_edited,
    "approved from another terminal": _approved_from_another_terminal,
}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_plan_says_needs_approval_exactly_where_apply_non_interactive_stops(
    tmp_path: Path, out: Path, scenario: str
) -> None:
    # §2 is gated and reads what §1 exported (its gate content covers V1's value)
    cp = CounterPlan([Step(), Step(marker=GATE, extra='echo "got $V1"'), Step()])
    plan = write_plan(tmp_path, cp)
    assert director("apply", str(plan), "--auto-approve", cwd=tmp_path, out=out).returncode == 0
    SCENARIOS[scenario](plan, out)
    verdicts = _plan_verdicts(plan, out)
    stop = _stops_at(plan, out)
    needs = {k for k, v in verdicts.items() if v == "⏸ needs approval"}
    assert needs == ({stop} if stop else set()), (scenario, verdicts, stop)


def test_a_fresh_plan_needs_approval_at_the_gate_apply_will_stop_at(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE), Step(marker=GATE)]))
    verdicts = _plan_verdicts(plan, out)
    assert verdicts["§1"] == "→ will apply" and verdicts["§2"] == "⏸ needs approval"
    assert verdicts["§3"] == "… blocked", "behind a gate apply stops at"
    assert _stops_at(plan, out) == "§2"


# ------------------------------------------------------------------------------ inputs


def test_a_changed_input_is_named_as_the_reason_a_section_re_applies(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step()]))
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    r = director("apply", str(plan), "--set", "mode=b", cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = summary(r.stdout)
    assert rows["§1"][0] == "✓ applied" and "input MODE changed: a → b" in rows["§1"][-1], rows
    assert rows["§1"][-1].count("MODE") == 1, "named once: as the input, not again as a value it reads"


def test_reinterview_without_a_terminal_keeps_the_previous_answers(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step()]))
    assert director("apply", str(plan), "--set", "mode=b", cwd=tmp_path, out=out).returncode == 0
    r = director("apply", str(plan), "--reinterview", cwd=tmp_path, out=out)
    assert r.returncode == 0 and "inputs: MODE=b (previous)" in r.stdout, r.stdout


# ------------------------------------------------------------------------------ numbers and words


def _teardown_sleeps(tmp: Path) -> Path:
    plan = write_plan(tmp, CounterPlan([Step()]))
    _edit(plan, 'echo "td" >> "$OUT/teardown-acts"', 'echo "td" >> "$OUT/teardown-acts"; sleep 0.6')
    return plan


def test_teardown_durations_are_the_time_its_act_took(tmp_path: Path, out: Path) -> None:
    plan = _teardown_sleeps(tmp_path)
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    ev = tmp_path / "ev.jsonl"
    r = director("teardown", str(plan), "--approve", "teardown", "--events", str(ev), cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    took = float(summary(r.stdout)["teardown"][1].rstrip("s"))
    assert took >= 0.6, r.stdout
    verdict = next(e for e in events(ev) if e["type"] == "section.verdict" and e["section"] == "teardown")
    assert verdict["duration_s"] >= 0.6


def _interrupt(plan: Path, out: Path, sig: int) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COUNTER_OUT=str(out), CI="1", NO_COLOR="1")
    p = forkserver.Popen([sys.executable, "-m", "director", "apply", str(plan)], cwd=plan.parent, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while "s1" not in acts(out) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)
        p.send_signal(sig)
        stdout, stderr = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr)


def test_a_step_ctrl_c_interrupted_is_re_run_but_not_flagged_as_after_a_crash(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(extra='[ -f "$OUT/fast" ] || sleep 60')]))
    r = _interrupt(plan, out, signal.SIGINT)
    assert r.returncode == 130 and "interrupted by the operator (Ctrl-C)" in r.stdout, r.stdout
    (out / "fast").touch()
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "it was running when Director died" not in r.stdout
    steps = [s for s in audit(plan, out)["steps"] if s["step_key"] == "1/0"]
    assert len(steps) == 2 and steps[0]["state"] == "interrupted"
    assert all("rerun_after_crash" not in (s.get("flags") or {}) for s in steps), steps


def test_sigterm_is_reported_as_sigterm_not_ctrl_c(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(extra="sleep 60")]))
    r = _interrupt(plan, out, signal.SIGTERM)
    assert r.returncode == 130, r.stdout + r.stderr
    assert "interrupted by SIGTERM" in r.stdout and "Ctrl-C" not in r.stdout, r.stdout
    reasons = [t["reason"] for t in audit(plan, out)["transitions"] if t["to_state"] == "interrupted"]
    assert reasons and all("SIGTERM" in x and "Ctrl-C" not in x for x in reasons), reasons


def test_a_verify_that_exits_1_is_never_followed_by_verified(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step()]))
    # the acceptance check becomes a false precondition (rule 4): bash exits 1, its checks were skipped
    _edit(plan, '[ "$(cat "$OUT/acts" | sort -u | wc -l)" -ge 1 ] && echo "1: chain holds" || { echo "1: chain broken"; exit 1; }',
          '[ -n "$NOT_SET" ] && { [ -f "$OUT/s1" ] || { echo "1: chain broken"; exit 1; }; }')
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    tail = r.stdout[r.stdout.index("── §2 Acceptance"):]
    assert "■ verify exit 1: a precondition was false, its checks were skipped" in tail
    assert "✓ verified" not in tail and "· skipped" in tail
    assert summary(r.stdout)["§2"][0] == "· skipped"
    # and one whose check really fails stops the run: failed, never verified
    _edit(plan, '[ -n "$NOT_SET" ] && { [ -f "$OUT/s1" ] || { echo "1: chain broken"; exit 1; }; }',
          '[ -f "$OUT/nope" ] || { echo "1: chain broken"; exit 1; }')
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 3 and "✓ verified" not in r.stdout.split("── §2 Acceptance", 1)[1], r.stdout


def test_no_control_sequence_in_audit_events_or_plain_output(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(extra=ANSI), Step()]))
    ev = tmp_path / "ev.jsonl"
    r = director("apply", str(plan), "--plain", "--events", str(ev), cwd=tmp_path, out=out,
                 env={"CI": "", "NO_COLOR": ""})
    assert r.returncode == 0, r.stdout + r.stderr
    texts = "".join(e["text"] for e in events(ev) if e["type"] == "step.output")
    assert "red\n" in texts and "osc\n" in texts and "bar 10%\rbar 100%" in texts
    assert "\x1b" not in ev.read_text(encoding="utf-8")
    for fmt in ([], ["--json"], ["--jsonl"]):
        a = director("audit", str(plan), *fmt, cwd=tmp_path, out=out, env={"CI": "", "NO_COLOR": ""})
        assert a.returncode == 0 and "\x1b" not in a.stdout, fmt
        assert "\\u001b" not in a.stdout, "not escaped into JSON either"
    logs = director("logs", str(plan), "1", cwd=tmp_path, out=out)
    assert logs.returncode == 0 and "\x1b" not in logs.stdout and "   red" in logs.stdout
    assert "   bar 100%" in logs.stdout


@pytest.mark.parametrize("command", ["apply", "plan", "teardown", "approve"])
def test_plain_output_draws_no_box_and_leaves_no_trailing_space(tmp_path: Path, out: Path, command: str) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(extra=ANSI), Step(marker=GATE)]))
    if command in ("teardown", "approve"):
        assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 4
    args = {
        "apply": ["apply", str(plan), "--plain", "--approve", "2"],
        "plan": ["plan", str(plan), "--plain"],
        "teardown": ["teardown", str(plan), "--plain", "--approve", "teardown"],
        "approve": ["approve", str(plan), "2", "--yes"],
    }[command]
    r = director(*args, cwd=tmp_path, out=out)
    assert r.returncode in (0, 2), r.stdout + r.stderr
    for line in (r.stdout + r.stderr).splitlines():
        assert not BOX.search(line), f"a box drawing character: {line!r}"
        assert "│" not in line or line.startswith("     │"), f"only block output is marked with │: {line!r}"
        assert line == line.rstrip(), f"trailing space: {line!r}"


# ------------------------------------------------------------------------------ outputs and logs


def test_apply_ends_with_the_realized_values_and_output_prints_them(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step()]))
    r = director("output", str(plan), "V1", cwd=tmp_path, out=out)
    assert r.returncode == 64 and "V1 holds no realized value" in r.stderr and "never applied" in r.stderr
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0
    assert r.stdout.rstrip().endswith("outputs:\n  NAME = chain-a\n  V1   = value-1-a\n  V2   = value-2-a")
    r = director("output", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0 and "  V2   = value-2-a" in r.stdout
    r = director("output", str(plan), "v1", "--raw", cwd=tmp_path, out=out)
    assert r.returncode == 0 and r.stdout == "value-1-a", "case-insensitive key, the bare value"
    r = director("output", str(plan), "--json", cwd=tmp_path, out=out)
    assert validated(r.stdout)["values"] == {"NAME": "chain-a", "V1": "value-1-a", "V2": "value-2-a"}
    r = director("output", str(plan), "NOPE", cwd=tmp_path, out=out)
    assert r.returncode == 64 and "no key 'NOPE'" in r.stderr


def test_logs_print_the_full_output_of_every_step_or_one_section(tmp_path: Path, out: Path) -> None:
    many = 'for i in $(seq 1 200); do echo "line $i"; done'
    plan = write_plan(tmp_path, CounterPlan([Step(extra=many), Step()]))
    r = director("logs", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 64 and "no run yet" in r.stderr
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    r = director("logs", str(plan), "1", cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stderr
    assert all(f"   line {i}\n" in r.stdout for i in range(1, 201)), "every line, not a tail"
    heads = [ln for ln in r.stdout.splitlines() if ln.startswith("── ")]
    assert [h.split(" · ")[0] for h in heads] == ["── §1 observe (plan line 43)", "── §1 act (plan line 37)",
                                                  "── §1 verify (plan line 43)"], heads
    assert "run 1 · succeeded · exit 0" in heads[1]
    r = director("logs", str(plan), cwd=tmp_path, out=out)
    assert "── §2 act" in r.stdout and "── §3 verify" in r.stdout
    assert director("logs", str(plan), "9", cwd=tmp_path, out=out).returncode == 64
    assert director("logs", str(plan), "--run", "7", cwd=tmp_path, out=out).returncode == 64


def test_the_next_apply_says_whose_receipt_it_used(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 4
    r = director("approve", str(plan), "2", cwd=tmp_path, out=out)
    assert r.returncode == 64 and "--yes" in r.stderr, "no terminal to confirm at: --yes is required"
    assert audit(plan, out)["approvals"] == []
    assert director("approve", str(plan), "2", "--yes", "--operator", "alice", cwd=tmp_path, out=out).returncode == 0
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"✓ approved with receipt \(approve-command by alice@\S+ at ", r.stdout), r.stdout
    detail = summary(r.stdout)["§2"][-1]
    assert re.search(r"approved with the receipt alice@\S+ recorded by `director approve` at ", detail), detail


def test_expanded_commands_leave_single_quotes_comments_and_quoted_heredocs_alone() -> None:
    from director.run.approval import expanded

    cmd = ('wrangler deploy --config "$CONFIG" --name ${WORKER}\n# $WORKER in a comment\n'
           "echo '$WORKER' \"$WORKER\"\ncat > x <<'JS'\nconst a = `${WORKER}`;\nJS\necho $UNSET $API_TOKEN\n")
    got = expanded(cmd, {"CONFIG": "/w/orders.jsonc", "WORKER": "orders-dev", "API_TOKEN": "s3cr3t"})
    assert got.splitlines() == [  # the command once, as it runs: every line, values put in
        'wrangler deploy --config "/w/orders.jsonc" --name orders-dev',
        "# $WORKER in a comment",
        "echo '$WORKER' \"orders-dev\"",
        "cat > x <<'JS'",
        "const a = `${WORKER}`;",
        "JS",
        "echo $UNSET ***",
    ]

"""`director plan`: a read-only preview, per section, through the real CLI.

Read-only means: the plan file is byte-identical afterwards, no act block ran (the counter plans append to
`$OUT/acts` in every act block), no Live State was written; only observation (verify) blocks and §0 run.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from tests.planmaker import CounterPlan, Step, acts, director, write_plan

GATE = "🔴 *(`MODE=a` — outward-facing)*  /  🟡 *(`b`)*"


def verdicts(stdout: str) -> dict[str, str]:
    """The preview summary (aligned plain lines: section, outcome, detail): section label -> outcome."""
    out = {}
    for line in stdout.splitlines():
        m = re.match(r"^  (§\d+|teardown) ", line)
        if m:
            out[m.group(1)] = re.split(r" {2,}", line.strip())[1]
    return out


def preview(plan: Path, out: Path, *args: str) -> tuple[int, str, dict[str, str]]:
    """Run `director plan` and prove it changed nothing: plan bytes, acts, teardown acts, journal runs."""
    before = plan.read_bytes()
    acts_before, td_before = acts(out), acts(out, "teardown-acts")
    runs_before = _runs(plan, out)
    r = director("plan", str(plan), *args, cwd=plan.parent, out=out)
    assert plan.read_bytes() == before, "the plan file is byte-identical after a preview"
    assert acts(out) == acts_before and acts(out, "teardown-acts") == td_before, "no act block ran"
    assert _runs(plan, out) == runs_before, "a preview starts no run"
    return r.returncode, r.stdout, verdicts(r.stdout)


def _runs(plan: Path, out: Path) -> list[tuple[object, ...]]:
    """The journal's runs and their states (read directly: a CLI call per check would double the time)."""
    db = plan.parent / ".director" / plan.name / "journal.sqlite3"
    if not db.exists():
        return []
    con = sqlite3.connect(db)
    try:
        return [tuple(r) for r in con.execute("SELECT id, kind, state, updated_at FROM runs ORDER BY id")]
    finally:
        con.close()


def test_fresh_plan_previews_will_apply_then_blocked_and_exits_2(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE), Step()]))
    code, stdout, v = preview(plan, out)
    assert code == 2, stdout
    # §2's gate is reached once §1 applied: apply --non-interactive stops there, so it needs approval
    assert v == {"§0": "· observed", "§1": "→ will apply", "§2": "⏸ needs approval", "§3": "… blocked",
                 "§4": "✔ will verify"}
    assert "never applied" in stdout and "after §1 applies" in stdout and "behind §2" in stdout
    assert "changes pending" in stdout
    assert not (out / "s1").exists()


def test_a_gate_at_the_frontier_needs_approval_and_a_receipt_turns_it_into_will_apply(
        tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE), Step()]))
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 4  # §1 applied, stops at §2
    code, stdout, v = preview(plan, out)
    assert code == 2, stdout
    assert v["§1"] == "✓ in sync" and v["§2"] == "⏸ needs approval" and v["§3"] == "… blocked"
    # with MODE=b every act block reads another $MODE: §1 would re-apply first, the rest waits behind it
    code, stdout, v = preview(plan, out, "--set", "mode=b")
    assert v["§1"] == "→ will apply" and v["§2"] == "… blocked", stdout
    assert director("approve", str(plan), "2", "--yes", cwd=tmp_path, out=out).returncode == 0
    code, stdout, v = preview(plan, out)
    assert code == 2 and v["§2"] == "→ will apply", stdout


def test_fully_applied_plan_is_all_in_sync_and_exits_0(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan())
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    code, stdout, v = preview(plan, out)
    assert code == 0, stdout
    assert v == {"§0": "· observed", "§1": "✓ in sync", "§2": "✓ in sync", "§3": "✓ in sync",
                 "§4": "✔ will verify"}
    assert "no changes: everything is in sync" in stdout
    assert acts(out) == ["s1", "s2", "s3"]


def test_an_edited_section_previews_as_will_apply(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan())
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    plan.write_text(plan.read_text().replace('touch "$OUT/s2"', 'touch "$OUT/s2"  # edited'))
    code, stdout, v = preview(plan, out)
    assert code == 2, stdout
    assert v["§1"] == "✓ in sync" and v["§2"] == "→ will apply" and v["§3"] == "✓ in sync"
    assert "changed since its last success" in stdout


def test_plan_teardown_previews_the_teardown(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan())
    code, stdout, v = preview(plan, out, "--teardown")
    assert code == 0 and v == {"§0": "· observed", "teardown": "✓ in sync"}, stdout
    assert "already gone" in stdout
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    code, stdout, v = preview(plan, out, "--teardown")
    assert code == 2, stdout
    assert v == {"§0": "· observed", "teardown": "⏸ needs approval"}
    assert "would tear down" in stdout
    assert all((out / f"s{i}").exists() for i in (1, 2, 3)), "nothing was torn down"
    # after a teardown run stopped at its 💥 gate and was approved, the preview says it will apply
    assert director("teardown", str(plan), cwd=tmp_path, out=out).returncode == 4
    assert director("approve", str(plan), "teardown", "--yes", cwd=tmp_path, out=out).returncode == 0
    code, stdout, v = preview(plan, out, "--teardown")
    assert code == 2 and v["teardown"] == "→ will apply", stdout
    assert acts(out, "teardown-acts") == []


def test_preview_without_a_terminal_prints_no_time_column_and_no_escapes(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(extra="printf '\\033[35mmagenta\\033[0m\\n'")]))
    r = director("plan", str(plan), cwd=tmp_path, out=out, env={"CI": "", "NO_COLOR": ""})
    assert r.returncode == 2
    assert "\x1b" not in r.stdout + r.stderr
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("  §1 "))
    assert not re.search(r"\d\.\ds", line), "a preview times nothing"

"""Every example plan is a sound program on its own: its blocks, run by plain bash, apply and tear down cleanly.

No Director here (see `tests/plainbash.py`): this is the control for `test_examples_e2e.py`. When a plan fails
there but passes here, the fault is Director's reading of the plan, not the plan.

For each plan, in a fresh directory, in one bash session:
- the apply path (§0, Requires-discovery, §1 …) — every block exits 0 (a trailing `[ -n "$X" ] && { … }`
  precondition whose `X` is empty counts as skipped, as in the seed);
- observe-first: before its act blocks run, a section's verify fails on the fresh world (else Director would
  call it in sync and never act);
- teardown: its verify fails while the world exists, its blocks then exit 0, and afterwards the working
  directory holds exactly what it held before the apply (the SQLite plan's upstream, untouched) and no
  process started by the plan is left.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.e2e_helpers import NEW_PLANS, OLD_PLANS, plan_param, setup_workdir
from tests.plainbash import blocks, kill_processes_under, run_plan, wait_no_processes
from tests.pristine import EXAMPLES

# slow: end to end through the real CLI, many runs; CI runs it with the rest
pytestmark = pytest.mark.slow

PLANS = NEW_PLANS + OLD_PLANS


def _tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
        for p in sorted(root.rglob("*"))
    }


@pytest.mark.parametrize("name", [plan_param(n) for n in PLANS])
def test_plan_applies_and_tears_down_under_plain_bash(name: str, tmp_path: Path) -> None:
    work = tmp_path / "work"
    setup_workdir(name, work)
    before = _tree(work)
    try:
        run = run_plan(EXAMPLES / name, work, tmp_path / "scratch")
        bad = run.failures("apply")
        assert not bad, "apply path failed under plain bash:\n" + run.report(bad)
        assert run.phase("apply"), "no block ran"

        held = [r for r in run.phase("observe") if r.ok]
        assert not held, "a section's verify already holds before its act ran:\n" + run.report(held)

        gone_early = [r for r in run.phase("teardown-observe") if r.ok]
        assert not gone_early, "teardown's verify passes while the world exists:\n" + run.report(gone_early)
        bad = run.failures("teardown")
        assert not bad, "teardown failed under plain bash:\n" + run.report(bad)

        assert _tree(work) == before, "teardown left the working directory different from before the apply"
        assert wait_no_processes(tmp_path, 5.0) == [], "a process started by the plan is still running"
    finally:
        kill_processes_under(tmp_path)


@pytest.mark.parametrize("name", NEW_PLANS)
def test_new_plans_have_the_parts_of_the_format(name: str) -> None:
    """The parts the brief asks of each new plan, read off the text (not via Director)."""
    text = (EXAMPLES / name).read_text(encoding="utf-8")
    assert text.startswith("# ") and "\n> **Provides / Requires**" in text
    for part in (
        "## 🤖 Director prompt",
        "Legend  🟢 create",
        "## Provisioning Inputs",
        "## 0. Variables",
        "## Live State",
    ):
        assert part in text, part
    assert "\n## Teardown (" in text and "resumable)  💥" in text
    # a knob value that makes a section 🔴, as the seed's §3
    assert any(ln.startswith("## ") and "🔴 *(`" in ln and ")*  /  " in ln for ln in text.splitlines())
    bs = blocks(text)
    numbered_verifies = [b for b in bs if b.kind == "numbered" and b.role == "verify"]
    assert len(numbered_verifies) >= 4
    templates = [b for b in bs if b.role == "template"]
    assert templates and all(t.lang not in ("json", "jsonc") for t in templates)
    assert any(b.kind == "teardown" and b.role == "act" for b in bs)
    assert any(b.kind == "teardown" and b.role == "verify" for b in bs)
    live = text[text.index("## Live State") :]
    for key in ("status:", "last_action:", "last_verified:", "resolved_inputs:", "| ✔ check"):
        assert key in live, key

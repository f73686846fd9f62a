"""`director approve`: a receipt for a gate's content as it stands, made from another terminal or CI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from director.commands.paths import load_plan, open_journal, paths_for
from director.errors import ExitCode, UsageError


def approve_command(
    plan_path: Path,
    selector: str,
    *,
    operator: str | None,
    state_dir: Path | None,
    state_url: str | None = None,
) -> ExitCode:
    """Record a receipt for a gate's content as it stands (the waiting run's session and inputs)."""
    from director.plan import knobs
    from director.run.gates import make_receipt, matches, operator_name
    from director.ui.prompts import gate_panel
    from director.ui.render import make_console

    plan = load_plan(plan_path)
    section = next((s for s in plan.sections if matches(selector, s.key, s.slug, s.title)), None)
    if section is None:
        raise UsageError(f"SECTION: the plan has no section {selector!r}")
    journal = open_journal(plan_path, state_dir, state_url)
    if journal is None:
        raise UsageError(f"{plan_path}: no run yet; run `director apply` first (it stops at the gate)")
    console = make_console(False)
    try:
        run = journal.latest_run("teardown" if section.kind.value == "teardown" else "apply")
        if run is None:
            raise UsageError(f"{plan_path}: no run has reached {selector!r} yet; run `director apply` first")
        kn = dict(run.inputs or {})
        if knobs.gate_of(section, kn) is None:
            raise UsageError(f"SECTION: {selector!r} is not gated for inputs {kn}")
        content = _content_as_it_stands(plan, section, run, journal, kn)
        gate_panel(console, content)
        who = operator_name(operator)
        r = make_receipt(content, who, "approve-command")
        journal.record_approval(
            None, r.section_key, r.sha256, r.operator, "approve-command", content.to_json()
        )
        console.print(f"approved §{section.key} for {who}@{r.host} at {r.at}: sha256 {r.sha256}")
    finally:
        journal.close()
    return ExitCode.OK


def _content_as_it_stands(plan: Any, section: Any, run: Any, journal: Any, kn: dict[str, str]) -> Any:
    """The gate content from the current plan text with the run's session, inputs and realized values."""
    from director.exec.shell import SessionState
    from director.plan import knobs
    from director.run.approval import gate_content
    from director.run.sections import render_templates

    session = SessionState(cwd=str(paths_for(Path(run.plan_path), None, None).workspace))
    for step in journal.steps(run.id):
        if step.state == "succeeded" and step.session is not None and step.role != "section":
            session = SessionState.from_json(step.session)
    realized: dict[str, str] = {}
    for ev in journal.events(kind="realized"):
        realized.update(ev.data.get("values", {}))
    texts = {b.index: knobs.block_text(section, b, kn, realized) for b in section.executable_blocks}
    templates = render_templates(section, session, kn) if section.template_blocks else {}
    return gate_content(plan, section, kn, texts, templates, session.variables)

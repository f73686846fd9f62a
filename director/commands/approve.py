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
    yes: bool = False,
) -> ExitCode:
    """Record a receipt for a gate's content as it stands (the waiting run's session and inputs).

    The gate is shown first; the receipt is recorded once the operator types its confirmation (`go`, or
    for 💥 what the panel asks), or at once with `--yes`. Without a terminal `--yes` is required.
    """
    import sys

    from director.plan import knobs
    from director.run.gates import make_receipt, matches, operator_name
    from director.ui.prompts import confirm, gate_panel
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
            given = ", ".join(f"{k}={v}" for k, v in kn.items()) or "none"
            raise UsageError(f"SECTION: {selector!r} is not gated for the inputs of the last run ({given})")
        content = _content_as_it_stands(plan, section, run, journal, kn)
        gate_panel(console, content)
        who = operator_name(operator)
        if not yes:
            if not (sys.stdin.isatty() and sys.stdout.isatty()):
                raise UsageError(
                    "--yes: no terminal to confirm at; pass --yes to record the approval without asking"
                )
            if not confirm(console, content, f"to record this approval as {who}", "no receipt is recorded"):
                console.print("not approved: no receipt recorded", markup=False, highlight=False)
                return ExitCode.AWAITING_APPROVAL
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
    from director.exec.secrets import is_secret_name
    from director.exec.shell import SessionState
    from director.plan import knobs
    from director.run import reasons
    from director.run.approval import gate_content, review
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
    content = gate_content(plan, section, kn, texts, templates, session.variables)
    if content is None:
        return None
    last = reasons.last_basis(journal, section.key)
    now = reasons.basis(section, texts, kn, session.variables, templates, is_secret_name, lambda s: s)
    why = reasons.changes(last, now, section) if last is not None else ["never applied"]
    templates_kv = next((dict(e.data.get("cells", {})) for e in journal.events(kind="kv-templates")), {})
    return review(
        plan,
        section,
        content,
        kind="teardown" if section.kind.value == "teardown" else "apply",
        env=session.variables,
        knob_values=kn,
        realized=realized,
        templates=templates,
        reasons=reasons.why_waiting(journal, run.id, section.key) or why,
        journal=journal,
        kv_templates=templates_kv,
        acted_before=last is not None,
    )

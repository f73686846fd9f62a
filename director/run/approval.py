"""Gates: a 🔴/💥 section acts only on an approval made for exactly its content, or the run waits.

An approval is a receipt (operator, host, time, how, sha256 of what it covers). It comes from a receipt
made by `director approve` (from any terminal), an `--approve` flag, `--auto-approve` (never 💥) or the
operator's `go` at the prompt; it covers one application of the section. Without one, the run stops in
`awaiting-approval` (a wait for a human event, resumed by the next apply).
"""

from __future__ import annotations

from director.exec.secrets import is_secret_name
from director.plan import bash, knobs, markers
from director.plan.model import Plan, Section, SectionKind
from director.run.config import Stop
from director.run.context import Run
from director.run.fingerprint import Templates
from director.run.gates import GateContent, make_receipt, matches
from director.state.lifecycle import RunState
from director.state.records import ApprovalRecord
from director.state.store import ApprovalHow, StateStore


def gate_content(
    plan: Plan,
    section: Section,
    knob_values: dict[str, str],
    texts: dict[int, str],
    templates: Templates,
    session_vars: dict[str, str],
) -> GateContent | None:
    """What a gate's approval covers: the exact commands, the variables they read, the inputs."""
    gate = knobs.gate_of(section, knob_values)
    if gate is None:
        return None
    commands = [texts[b.index] for b in section.act_blocks]
    variables: dict[str, str] = {}
    for c in commands:
        for name in bash.reads(c):
            if name in session_vars and not is_secret_name(name):
                variables[name] = session_vars[name]
    # A regenerated file is part of what is approved: its content (values already expanded) is covered.
    commands += [f"# write {path}\n{content}" for path, content in templates.values()]
    context: dict[str, str] = {}
    if section.kind is SectionKind.TEARDOWN and plan.live_state is not None:
        context = {row.key: row.value for row in plan.live_state.kv_rows}
    return GateContent(
        section.key,
        section.title,
        gate.marker.value,
        gate.note,
        section.quotes,
        tuple(commands),
        variables,
        dict(knob_values),
        context,
    )


def _emit_gate(run: Run, section: Section, content: GateContent, approved: bool | None, how: str) -> None:
    run.bus.emit(
        "gate",
        section=section.key,
        title=section.title,
        marker=content.marker,
        note=content.note,
        sha256=content.sha256,
        approved=approved,
        how=how,
        content=content.to_json(),
    )


def consumed(journal: StateStore, approval_id: int) -> bool:
    """Whether a receipt was spent: it let its section act once, which succeeded."""
    return any(e.data.get("approval_id") == approval_id for e in journal.events(kind="approval-used"))


def _wait(run: Run, section: Section, content: GateContent, why: str) -> None:
    """No approval: the run stops awaiting one (exit 4); the message says how to give it."""
    run.journal.record_event(
        run.run_id,
        "gate-waiting",
        {"section": section.key, "sha256": content.sha256, "content": content.to_json()},
    )
    _emit_gate(run, section, content, False, why)
    run.report(section, "awaiting-approval", why, emit=False)  # the `gate` event says it
    msg = f"{run.label(section)} {content.marker} {section.title}: {why}"
    result = run.finish(RunState.AWAITING_APPROVAL, section.key, msg)
    result.approve_hint = f"director approve {run.pf.path} {section.key}"
    raise Stop(result)


def gate(run: Run, section: Section, texts: dict[int, str], templates: Templates) -> None:
    """Obtain an approval for this section's content as it stands, or stop the run awaiting one."""
    content = gate_content(run.plan, section, run.knobs, texts, templates, run.session.variables)
    if content is None:
        return
    rule = markers.by_glyph(content.marker)
    method: ApprovalHow | None = None
    receipt = run.journal.find_approval(section.key, content.sha256)
    if receipt is not None and consumed(run.journal, receipt.id):
        receipt = None  # an approval is for one application of the section, not for every later one
    if receipt is not None:
        pass
    elif any(matches(sel, section.key, section.slug, section.title) for sel in run.cfg.approve):
        method = "flag"
    elif run.cfg.auto_approve and rule is not None and rule.auto_approvable:
        method = "auto"
    elif run.prompter is not None:
        _emit_gate(run, section, content, None, "prompt")
        if not run.prompter.ask_go(content):
            _wait(run, section, content, "declined at the prompt")
        method = "prompt"
    else:
        receipt = _await_receipt(run, section, content)  # None unless `--wait-for-approval`
        if receipt is None:
            _wait(run, section, content, "needs a human go")
    if receipt is not None:
        run.gate_receipts[section.key] = receipt.id
        at = f"{receipt.at:%Y-%m-%dT%H:%M:%S}"
        how = f"receipt ({receipt.how} by {receipt.operator}@{receipt.host} at {at})"
    else:
        assert method is not None  # every other branch either set it or stopped the run
        r = make_receipt(content, run.cfg.operator, method, run.clock())
        run.gate_receipts[section.key] = run.journal.record_approval(
            run.run_id, r.section_key, r.sha256, r.operator, method, content.to_json()
        )
        how = method
    run.bus.emit(
        "approval",
        section=section.key,
        sha256=content.sha256,
        operator=receipt.operator if receipt is not None else run.cfg.operator,
        how=how,
    )


# -- `apply --wait-for-approval [TIMEOUT]`: the gate waits for a receipt instead of stopping ---------------


def _await_receipt(run: Run, section: Section, content: GateContent) -> ApprovalRecord | None:
    """Wait, `awaiting-approval`, for a new receipt for exactly this content (`director approve` from any
    terminal or, with `--state-url`, any machine); None when the option is off or the time ran out (the
    run then stops as it would without the option). The store waits: LISTEN/NOTIFY on PostgreSQL,
    a read of the file every 0.25 s on SQLite."""
    timeout = run.cfg.wait_for_approval
    if timeout is None:
        return None
    known = run.journal.find_approval(section.key, content.sha256)
    hint = f"director approve {run.pf.path} {section.key}"
    run.journal.record_event(
        run.run_id,
        "gate-waiting",
        {"section": section.key, "sha256": content.sha256, "content": content.to_json(), "wait_s": timeout},
    )
    limit = "" if timeout == float("inf") else f" up to {timeout:g} s"
    why = f"{run.label(section)} waits{limit} for `{hint}`"
    run.journal.transition(run.run_id, RunState.AWAITING_APPROVAL, why)
    run.bus.emit("run.state", run_id=run.run_id, to=RunState.AWAITING_APPROVAL.value, reason=why)
    _emit_gate(run, section, content, None, "waiting for a receipt")
    receipt = run.journal.wait_for_approval(section.key, content.sha256, known.id if known else 0, timeout)
    back = f"receipt {receipt.id} by {receipt.operator}@{receipt.host}" if receipt else "no receipt in time"
    run.journal.transition(run.run_id, RunState.RUNNING, back)
    run.bus.emit("run.state", run_id=run.run_id, to=RunState.RUNNING.value, reason=back)
    return receipt


def approval_used(run: Run, section: Section) -> None:
    """The section this approval let act succeeded: the receipt is spent."""
    used = run.gate_receipts.pop(section.key, None)
    if used is not None:
        run.journal.record_event(run.run_id, "approval-used", {"approval_id": used, "section": section.key})

"""`director approve`: a receipt for a gate's content as it stands, made from another terminal or CI."""

from __future__ import annotations

import dataclasses
import hashlib
from datetime import datetime
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
    sign_with: Path | None = None,
    allowed_signers: Path | None = None,
) -> ExitCode:
    """Record a receipt for a gate's content as it stands (the waiting run's session and inputs).

    The gate is shown first; the receipt is recorded once the operator types its confirmation (`go`, or
    for 💥 what the panel asks), or at once with `--yes`. Without a terminal `--yes` is required.
    With `--sign-with` the receipt is signed (docs/approvals.md); with an allowed-signers file in force
    the signature is checked at once, and a receipt a run would refuse is said so.
    """
    import sys

    from director.commands import trust
    from director.plan import knobs
    from director.run.gates import make_receipt, matches, operator_name
    from director.ui.prompts import confirm, gate_panel
    from director.ui.render import make_console

    key = trust.signing_key(sign_with)
    signers = trust.allowed_signers(plan_path, allowed_signers)
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
        signed = None
        if key is not None:
            from director.run.signatures import plan_identity, sign

            at = datetime.fromisoformat(r.at)
            signed = sign(key, content, plan=plan_identity(plan_path, plan), operator=who, host=journal.host,
                          how="approve-command", at=at, allowed=signers)  # fmt: skip
        aid = journal.record_approval(
            None, r.section_key, r.sha256, r.operator, "approve-command", content.to_json(), signed=signed
        )
        console.print(f"approved §{section.key} for {who}@{r.host} at {r.at}: sha256 {r.sha256}")
        if signers is not None:
            receipt = next(a for a in journal.approvals() if a.id == aid)
            console.print(_checked(receipt, signers, plan_path, plan, journal), markup=False, highlight=False)
    finally:
        journal.close()
    return ExitCode.OK


def _checked(receipt: Any, signers: Path, plan_path: Path, plan: Any, journal: Any) -> str:
    """What a run checking `signers` will say of this receipt."""
    from director.run.signatures import check_receipt, plan_identity, spent_nonces

    c = receipt.content
    v = check_receipt(
        receipt, allowed=signers, plan=plan_identity(plan_path, plan), marker=c.get("marker", ""),
        section=receipt.section_key, sha256=receipt.sha256, inputs=c.get("inputs", {}),
        nonces=spent_nonces(journal),
    )  # fmt: skip
    if v.ok:
        return f"signed by {v.principal} with {v.fingerprint}: verified against {signers}"
    hint = "; pass --sign-with KEYFILE" if v.code == "unsigned" else ""
    return f"warning: a run checking {signers} will refuse this receipt: {v.reason}{hint}"


def verify_command(
    plan_path: Path, *, state_dir: Path | None, state_url: str | None, allowed_signers: Path | None
) -> ExitCode:
    """`approve --verify`: every stored receipt checked against the allowed signers now -- its signature,
    its row against what was signed, its content against its sha256, its nonce -- and the journal's hash
    chain. A receipt refused (unsigned, unknown or expired key, replayed) is history: exit 0. A journal
    edited by hand (a chain break, a row that differs from its signed claim) is the alarm: exit 13, with
    the same breaks `director audit` shows."""
    from director.commands import trust
    from director.run.gates import canonical
    from director.run.signatures import check_receipt, describe, plan_identity, spent_nonces
    from director.state import chain
    from director.ui.render import clean

    signers = trust.allowed_signers(plan_path, allowed_signers)
    if signers is None:
        raise UsageError(
            "--allowed-signers: no allowed-signers file to verify with (pass one, set "
            "DIRECTOR_ALLOWED_SIGNERS, or add .director-allowed-signers beside the plan)"
        )
    plan = load_plan(plan_path)
    journal = open_journal(plan_path, state_dir, state_url)
    if journal is None:
        print(f"{plan_path}: no receipt recorded yet")
        return ExitCode.OK
    ok = tampered = 0
    try:
        receipts, nonces, breaks = journal.approvals(), spent_nonces(journal), journal.chain_breaks()
        on_receipt = chain.on(breaks, "approvals")
        used = {e.data.get("approval_id") for e in journal.events(kind="approval-used")}
        identity = plan_identity(plan_path, plan)
        for b in breaks:
            print(clean(f"tampered: {b}"))
        for r in receipts:
            c = r.content
            v = check_receipt(
                r, allowed=signers, plan=identity, marker=c.get("marker", ""), section=r.section_key,
                sha256=r.sha256, inputs=c.get("inputs", {}), nonces=nonces,
            )  # fmt: skip
            if v.ok and hashlib.sha256(canonical(c)).hexdigest() != r.sha256:
                why = "edited: its content does not hash to its sha256"
                v = dataclasses.replace(v, ok=False, code="edited", reason=why)
            broken = on_receipt.get(str(r.id))
            if broken is not None or v.code == "edited":
                verdict = f"✗ tampered: {broken.detail if broken is not None else v.reason}"
                tampered += 1
            else:
                verdict = f"✓ {v.principal} {v.fingerprint}" if v.ok else f"✗ {v.reason}"
                ok += v.ok
            spent = " (spent)" if r.id in used else ""
            print(clean(f"{describe(r)} §{r.section_key} at {r.at:%Y-%m-%dT%H:%M:%S}{spent}: {verdict}"))
    finally:
        journal.close()
    refused = len(receipts) - ok - tampered
    history = f"; {refused} refused (history, not an alarm)" if refused else ""
    print(f"{ok} of {len(receipts)} receipts verified against {signers}{history}")
    if breaks or tampered:
        print(f"the journal was tampered with: {len(breaks)} break(s) in its chain, {tampered} receipt(s)")
        return ExitCode.JOURNAL_TAMPERED
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

"""`director approve`: a receipt for a gate's content as it stands, made from another terminal or CI."""

from __future__ import annotations

import dataclasses
import hashlib
from datetime import datetime
from pathlib import Path

from director.commands.paths import load_plan, open_journal
from director.errors import ExitCode, UsageError
from director.plan.model import Plan, Section
from director.run import signatures
from director.run.approval import GateContent
from director.state.records import ApprovalRecord
from director.state.store import StateStore


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
    """Record a receipt for a gate's content as it stands (what the waiting run recorded at the gate, with
    the plan's text as it is now).

    The gate is shown first; the receipt is recorded once the operator types its confirmation (`go`, or
    for 💥 what the panel asks), or at once with `--yes`. Without a terminal `--yes` is required.
    With `--sign-with` the receipt is signed (docs/approvals.md); with an allowed-signers file in force
    the signature is checked at once, and a receipt a run would refuse is said so.
    """
    import sys

    from director.commands import trust
    from director.plan import knobs
    from director.run import approval, history
    from director.ui.prompts import confirm, gate_panel
    from director.ui.render import make_console

    key = trust.signing_key(sign_with)
    signers = trust.allowed_signers(plan_path, allowed_signers)
    plan = load_plan(plan_path)
    section = next((s for s in plan.sections if approval.matches(selector, s.key, s.slug, s.title)), None)
    if section is None:
        raise UsageError(f"SECTION: the plan has no section {selector!r}")
    journal = open_journal(plan_path, state_dir, state_url)
    if journal is None:
        raise UsageError(f"{plan_path}: no run yet; run `director apply` first (it stops at the gate)")
    console = make_console(False)
    try:
        trust.require_signers(journal, signers, plan_path)
        run = history.latest_run(journal, "teardown" if section.kind.value == "teardown" else "apply")
        if run is None:
            raise UsageError(f"{plan_path}: no run has reached {selector!r} yet; run `director apply` first")
        # the inputs its gate was computed with (a teardown's pass over an earlier identity: that one's)
        kn = history.inputs_at_gate(journal, run.id, {str(k): str(v) for k, v in (run.inputs or {}).items()})
        if knobs.gate_of(section, kn) is None:
            given = ", ".join(f"{k}={v}" for k, v in kn.items()) or "none"
            raise UsageError(f"SECTION: {selector!r} is not gated for the inputs of the last run ({given})")
        content = _as_it_stands(plan_path, plan, section, journal, kn)
        gate_panel(console, content)
        who = approval.operator_name(operator)
        if not yes:
            if not (sys.stdin.isatty() and sys.stdout.isatty()):
                raise UsageError(
                    "--yes: no terminal to confirm at; pass --yes to record the approval without asking"
                )
            if not confirm(console, content, f"to record this approval as {who}", "no receipt is recorded"):
                console.print("not approved: no receipt recorded", markup=False, highlight=False)
                return ExitCode.AWAITING_APPROVAL
        r = approval.make_receipt(content, who, "approve-command")
        signed = None
        if key is not None:
            at = datetime.fromisoformat(r.at)
            identity = signatures.plan_identity(plan_path, plan)
            signed = signatures.sign(key, content, plan=identity, operator=who, host=journal.host,
                                     how="approve-command", at=at, allowed=signers)  # fmt: skip
        stored = dataclasses.replace(content, review=approval.Review())  # what is approved, not the display
        aid = journal.record_approval(
            None, r.section_key, r.sha256, r.operator, "approve-command", stored.to_json(), signed=signed
        )
        console.print(f"approved §{section.key} for {who}@{r.host} at {r.at}: sha256 {r.sha256}")
        if signers is not None:
            receipt = next(a for a in journal.approvals() if a.id == aid)
            console.print(_checked(receipt, signers, plan_path, plan, journal), markup=False, highlight=False)
    finally:
        journal.close()
    return ExitCode.OK


def _checked(receipt: ApprovalRecord, signers: Path, plan_path: Path, plan: Plan, journal: StateStore) -> str:
    """What a run checking `signers` will say of this receipt."""
    c = receipt.content
    v = signatures.check_receipt(
        receipt, allowed=signers, plan=signatures.plan_identity(plan_path, plan),
        marker=str(c.get("marker", "")), section=receipt.section_key, sha256=receipt.sha256,
        inputs=dict(c.get("inputs", {})), nonces=signatures.spent_nonces(journal),
    )  # fmt: skip
    if v.ok:
        return f"signed by {v.principal} with {v.fingerprint}: verified against {signers}"
    hint = "; pass --sign-with KEYFILE" if v.code == "unsigned" else ""
    return f"warning: a run checking {signers} will refuse this receipt: {v.reason}{hint}"


def verify_command(
    plan_path: Path, *, state_dir: Path | None, state_url: str | None, allowed_signers: Path | None
) -> ExitCode:
    """`approve --verify`: every stored receipt checked against the allowed signers now -- its signature,
    its row against what was signed, its content against its sha256, its nonce; exit 1 if one fails."""
    from director.commands import trust
    from director.run import approval, history
    from director.ui.render import clean

    signers = trust.allowed_signers(plan_path, allowed_signers)
    if signers is None:
        raise UsageError(
            "--allowed-signers: no allowed-signers file to verify with (pass one, set "
            "DIRECTOR_ALLOWED_SIGNERS, or add .director-allowed-signers at the repository's root)"
        )
    plan = load_plan(plan_path)
    journal = open_journal(plan_path, state_dir, state_url)
    if journal is None:
        print(f"{plan_path}: no receipt recorded yet")
        return ExitCode.OK
    bad = 0
    try:
        found = history.receipts(journal)
        identity = signatures.plan_identity(plan_path, plan)
        for r in found.all:
            c = r.content
            v = signatures.check_receipt(
                r, allowed=signers, plan=identity, marker=str(c.get("marker", "")), section=r.section_key,
                sha256=r.sha256, inputs=dict(c.get("inputs", {})), nonces=found.nonces,
            )  # fmt: skip
            if v.ok and hashlib.sha256(approval.canonical(c)).hexdigest() != r.sha256:
                v = dataclasses.replace(v, ok=False, reason="edited: its content does not hash to its sha256")
            bad += not v.ok
            verdict = f"✓ {v.principal} {v.fingerprint}" if v.ok else f"✗ {v.reason}"
            spent = " (spent)" if r.id in found.spent else ""
            at = f"{r.at:%Y-%m-%dT%H:%M:%S}"
            print(clean(f"{signatures.describe(r)} §{r.section_key} at {at}{spent}: {verdict}"))
    finally:
        journal.close()
    print(f"{len(found.all) - bad} of {len(found.all)} receipts verified against {signers}")
    return ExitCode.FINDINGS if bad else ExitCode.OK


def _as_it_stands(
    plan_path: Path, plan: Plan, section: Section, journal: StateStore, kn: dict[str, str]
) -> GateContent:
    """The gate's content as the apply will compute it: the plan's text now, and what the act can read as
    the last run that reached this gate recorded it there (its session and environment, secrets sealed).
    The same function as the engine's gate (`approval.content_for`)."""
    from director.plan import knobs
    from director.run import approval, history

    waiting = history.gate(journal, section.key)
    if waiting is None:
        raise UsageError(
            f"{plan_path}: no run has reached §{section.key}'s gate yet; run `director apply` first "
            "(it stops at the gate and records what the act can read)"
        )
    # the values this gate's identity realized since the last teardown, as the engine reads them
    realized = history.realized_at(journal, plan, kn, approval.recorded_reach(waiting).display())
    texts = {b.index: knobs.block_text(section, b, kn, realized) for b in section.executable_blocks}
    where = approval.recorded_reach(waiting)
    content = approval.content_for(plan, section, kn, texts, where)
    if content is None:
        raise UsageError(f"SECTION: §{section.key} is not gated for the inputs of the last run")
    recorded = dict(waiting.content.get("review") or {})
    return approval.review(
        plan,
        section,
        dataclasses.replace(content, reach=where.to_json()),
        kind="teardown" if section.kind.value == "teardown" else "apply",
        env=where.display(),
        knob_values=kn,
        realized=realized,
        templates=approval.recorded_templates(where),
        reasons=[str(r) for r in recorded.get("reasons") or ()] or ["never applied"],
        journal=journal,
        kv_templates=history.kv_templates(journal) or {},
        acted_before=journal.last_success(f"{section.key}/section") is not None,
    )

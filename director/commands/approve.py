"""`director approve`: a receipt for a gate's content as it stands, made from another terminal or CI."""

from __future__ import annotations

import dataclasses
import hashlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

from director.commands.paths import load_plan, open_journal
from director.errors import ExitCode, UsageError
from director.plan.model import Plan, Section
from director.run import signatures
from director.run.approval import GateContent
from director.run.signatures import Rule
from director.state.store import StateStore


def approve_dispatch(
    plan_path: Path, section: str | None, *, verify: bool, revoke: int | None, reason: str | None,
    operator: str | None, state_dir: Path | None, state_url: str | None, yes: bool, sign_with: Path | None,
    allowed_signers: Path | None, valid_for: str | None, allow_dirty_signers: bool,
) -> ExitCode:  # fmt: skip
    """`director approve`: one of SECTION (a receipt), `--revoke RECEIPT` or `--verify`."""
    if sum((verify, revoke is not None, section is not None)) > 1:
        raise UsageError("SECTION, --revoke and --verify: give one of them")
    if valid_for is not None and section is None:
        raise UsageError("--valid-for: only with a SECTION to approve")
    if reason is not None and revoke is None:
        raise UsageError("--reason: only with --revoke")
    if verify:
        return verify_command(plan_path, state_dir=state_dir, state_url=state_url,
                              allowed_signers=allowed_signers)  # fmt: skip
    if revoke is not None:
        return revoke_command(plan_path, revoke, reason=reason, operator=operator, state_dir=state_dir,
                              state_url=state_url)  # fmt: skip
    if section is None:
        raise UsageError("SECTION: name the gated section to approve (or pass --verify or --revoke)")
    return approve_command(
        plan_path, section, operator=operator, state_dir=state_dir, yes=yes, state_url=state_url,
        sign_with=sign_with, allowed_signers=allowed_signers, valid_for=valid_for,
        allow_dirty_signers=allow_dirty_signers,
    )


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
    valid_for: str | None = None,
    allow_dirty_signers: bool = False,
) -> ExitCode:
    """Record a receipt for a gate's content as it stands (what the waiting run recorded at the gate, with
    the plan's text as it is now), counting for `--valid-for` (default 24 h).

    The gate is shown first; the receipt is recorded once the operator types its confirmation (`go`, or
    for 💥 what the panel asks), or at once with `--yes`. Without a terminal `--yes` is required.
    With `--sign-with` the receipt is signed (docs/approvals.md). It is then judged as a run will judge it
    at release (the allowed signers and the gate's approval policy in force): one a run would refuse, or
    one that adds nothing to a gate needing several people's approvals, exits 14 (the gate stays shut).
    """
    import sys

    from director.commands import trust
    from director.plan import knobs
    from director.run import approval, history
    from director.ui.prompts import confirm, gate_panel
    from director.ui.render import make_console

    plan = load_plan(plan_path)
    section = next((s for s in plan.sections if approval.matches(selector, s.key, s.slug, s.title)), None)
    if section is None:
        raise UsageError(f"SECTION: the plan has no section {selector!r}")
    trusted = trust.gather(plan, plan_path, sign_with=sign_with, allowed=allowed_signers,
                           allow_dirty=allow_dirty_signers)  # fmt: skip
    key, signers, policy = trusted.key, trusted.signers, trusted.policy
    journal = open_journal(plan_path, state_dir, state_url)
    if journal is None:
        raise UsageError(f"{plan_path}: no run yet; run `director apply` first (it stops at the gate)")
    console = make_console(False)
    try:
        trust.hold(journal, trusted, plan_path, record=False)  # the warnings are journaled below
        run = history.latest_run(journal, "teardown" if section.kind.value == "teardown" else "apply")
        if run is None:
            raise UsageError(f"{plan_path}: no run has reached {selector!r} yet; run `director apply` first")
        # the inputs its gate was computed with (a teardown's pass over an earlier identity: that one's)
        kn = history.inputs_at_gate(journal, run.id, {str(k): str(v) for k, v in (run.inputs or {}).items()})
        marker = knobs.gate_of(section, kn)
        if marker is None:
            given = ", ".join(f"{k}={v}" for k, v in kn.items()) or "none"
            raise UsageError(f"SECTION: {selector!r} is not gated for the inputs of the last run ({given})")
        rule = policy.for_gate(marker.marker.value, section)
        seconds = signatures.validity(valid_for, rule)
        for said in trusted.dirty:  # never honoured silently: said, and journaled
            console.print(said, markup=False, highlight=False)
            journal.record_event(None, "trust-uncommitted", {"warning": said})
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
        at = datetime.fromisoformat(r.at)
        expires = at + timedelta(seconds=seconds)
        signed = None
        if key is not None:
            identity = signatures.plan_identity(plan_path, plan)
            signed = signatures.sign(
                key, content, plan=identity, operator=who, host=journal.host, how="approve-command", at=at,
                allowed=signers, expires=expires,
            )  # fmt: skip
        # what is approved (not the display), and until when (signed into the claim, when signed)
        stored = {**dataclasses.replace(content, review=approval.Review()).to_json(),
                  "expires": expires.isoformat(timespec="seconds")}  # fmt: skip
        aid = journal.record_approval(
            None, r.section_key, r.sha256, r.operator, "approve-command", stored, signed=signed
        )
        until = expires.isoformat(timespec="seconds")
        console.print(f"approved §{section.key} for {who}@{r.host} at {r.at} (valid until {until}): "
                      f"sha256 {r.sha256}")  # fmt: skip
        said, code = _judged(aid, plan_path, plan, journal, content, rule, signers)
        if said:
            console.print(said, markup=False, highlight=False)
    finally:
        journal.close()
    return code


def _judged(
    aid: int, plan_path: Path, plan: Plan, journal: StateStore, content: GateContent, rule: Rule,
    signers: Path | None,
) -> tuple[str, ExitCode]:  # fmt: skip
    """What a run at the gate will make of receipt `aid` (judged as at release: signature, revocation,
    expiry, self-approval against the waiting run's operator, one per person), and the exit code."""
    from director.run import history

    waiting = history.gate(journal, content.section_key)
    now = signatures.standing(
        journal, allowed=signers, plan=signatures.plan_identity(plan_path, plan), content=content, rule=rule,
        operator=frozenset(waiting.operator if waiting is not None else ()), now=datetime.now(UTC),
    )  # fmt: skip
    v = now.verdicts[aid]
    if not v.ok:
        hint = "; pass --sign-with KEYFILE" if v.code == "unsigned" else ""
        where = f"a run checking {signers}" if signers is not None else "a run"
        said = f"refused: {where} will not release §{content.section_key} on this receipt: {v.reason}{hint}"
        return said, ExitCode.APPROVAL_REFUSED
    signed = f"signed by {v.principal} with {v.fingerprint}: verified against {signers}" if signers else ""
    same = now.same_person(aid)
    if rule.approvals > 1 and same is not None:
        return (
            f"{signed}; refused: it does not count again: receipt {same} is by the same person, and "
            f"§{content.section_key} needs {rule.describe()} ({'; '.join(rule.source)})",
            ExitCode.APPROVAL_REFUSED,
        )
    progress = now.progress()
    return "; ".join(p for p in (signed, progress) if p), ExitCode.OK


def verify_command(
    plan_path: Path, *, state_dir: Path | None, state_url: str | None, allowed_signers: Path | None
) -> ExitCode:
    """`approve --verify`: every stored receipt checked against the allowed signers now -- its signature,
    its row against what was signed, its content against its sha256, its nonce -- and the journal's hash
    chain. A receipt refused (unsigned, unknown or expired key, replayed) is history: exit 0. A journal
    edited by hand (a chain break, a row that differs from its signed claim) is the alarm: exit 13, with
    the same breaks `director audit` shows."""
    from director.commands import trust
    from director.run import approval, history
    from director.state import chain
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
    ok = tampered = 0
    try:
        found, breaks = history.receipts(journal), journal.chain_breaks()
        on_receipt = chain.on(breaks, "approvals")
        identity = signatures.plan_identity(plan_path, plan)
        for b in breaks:
            print(clean(f"tampered: {b}"))
        for r in found.all:
            c = r.content
            v = signatures.check_receipt(
                r, allowed=signers, plan=identity, marker=str(c.get("marker", "")), section=r.section_key,
                sha256=r.sha256, inputs=dict(c.get("inputs", {})), nonces=found.nonces,
            )  # fmt: skip
            if v.ok and hashlib.sha256(approval.canonical(c)).hexdigest() != r.sha256:
                why = "edited: its content does not hash to its sha256"
                v = dataclasses.replace(v, ok=False, code="edited", reason=why)
            broken = on_receipt.get(str(r.id))
            if broken is not None or v.code == "edited":
                verdict = f"✗ tampered: {broken.detail if broken is not None else v.reason}"
                tampered += 1
            else:
                verdict = f"✓ {v.principal} {v.fingerprint}" if v.ok else f"✗ {v.reason}"
                ok += v.ok
            spent = " (spent)" if r.id in found.spent else ""
            spent += " (revoked)" if r.id in found.revoked else ""
            at = f"{r.at:%Y-%m-%dT%H:%M:%S}"
            print(clean(f"{signatures.describe(r)} §{r.section_key} at {at}{spent}: {verdict}"))
    finally:
        journal.close()
    refused = len(found.all) - ok - tampered
    said = f"; {refused} refused (history, not an alarm)" if refused else ""
    print(f"{ok} of {len(found.all)} receipts verified against {signers}{said}")
    if breaks or tampered:
        print(f"the journal was tampered with: {len(breaks)} break(s) in its chain, {tampered} receipt(s)")
        return ExitCode.JOURNAL_TAMPERED
    return ExitCode.OK


def revoke_command(
    plan_path: Path, receipt_id: int, *, reason: str | None, operator: str | None, state_dir: Path | None,
    state_url: str | None,
) -> ExitCode:  # fmt: skip
    """`approve --revoke RECEIPT`: the receipt never releases a gate from now on, whoever signed it
    (journaled as `approval-revoked`: who, where, when, why). A revocation only takes an approval away,
    so it needs no signature; `director audit` shows it."""
    from director.commands.paths import require_plan
    from director.run import approval, history
    from director.ui.render import clean

    require_plan(plan_path)
    journal = open_journal(plan_path, state_dir, state_url)
    if journal is None:
        raise UsageError(f"--revoke: {plan_path} has no journal yet, so no receipt {receipt_id}")
    try:
        found = history.receipts(journal)
        receipt = next((r for r in found.all if r.id == receipt_id), None)
        if receipt is None:
            raise UsageError(f"--revoke: {plan_path}'s journal has no receipt {receipt_id} (`director audit` "
                             "lists them)")  # fmt: skip
        was = found.revoked.get(receipt_id)
        if was is not None:
            by = f"{was.get('operator')}@{was.get('host')} at {was.get('at')}"
            print(clean(f"receipt {receipt_id} was already revoked by {by}"))
            return ExitCode.OK
        who = approval.operator_name(operator)
        journal.record_event(None, history.REVOKED, {
            "approval_id": receipt_id, "section": receipt.section_key, "operator": who, "host": journal.host,
            "reason": reason or "",
        })  # fmt: skip
        spent = " (it was already spent: an application started on it)" if receipt_id in found.spent else ""
        print(clean(f"revoked {signatures.describe(receipt)} for §{receipt.section_key}: it releases no gate "
                    f"from now on{spent}"))  # fmt: skip
    finally:
        journal.close()
    return ExitCode.OK


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

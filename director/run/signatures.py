"""Signed approvals at a gate: this run's own approvals (a typed go, `--approve`, `--auto-approve`) are
signed with `--sign-with`, and, while an allowed-signers file is in force, a gate is released only by a
receipt whose signature verifies for a principal in it -- checked when the gate is released, never when
the receipt was stored (what is stored may be edited; what is signed cannot be).

A receipt is refused when it is unsigned, when its row differs from what its signature states (edited),
when it was signed for other content, another section or another plan (replayed), when its nonce was
already carried by an earlier receipt or spent by an application (replayed), or when `ssh-keygen -Y
verify` refuses it (unknown or removed key, expired key, a key listed for someone else, a namespace the
key may not sign). Each refusal is audited (`approval-refused`) and said once per run; each accepted
signature is audited (`approval-verified`: principal and key fingerprint).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from director.exec import sshsig
from director.plan.model import Plan, Section
from director.run import history
from director.run.gates import GateContent
from director.state.identity import plan_key
from director.state.records import ApprovalRecord
from director.state.signing import (
    Claim,
    Signed,
    content_mismatch,
    load_allowed_signers,
    namespace,
    new_nonce,
    principal_for,
    row_mismatch,
)
from director.state.store import ApprovalHow, StateStore

if TYPE_CHECKING:
    from director.run.context import Run


@dataclass(frozen=True)
class Verdict:
    """Whether a receipt may release a gate: by whom and which key, or why not."""

    ok: bool
    principal: str = ""
    fingerprint: str = ""
    reason: str = ""
    code: str = ""  # unsigned | edited | other-content | replayed | an `sshsig.Check` code


def plan_identity(plan_path: Path, plan: Plan) -> str:
    """The plan's identity a signature names (`director.state.identity.plan_key`: the same on every clone)."""
    plan_id = plan.live_state.data.get("plan_id") if plan.live_state is not None else None
    return plan_key(plan_path, plan_id).key


def signer_principal(key: Path, allowed: Path | None, operator: str) -> str:
    """Who signs with `key`: the principal the allowed-signers file lists for it (the operator's name if
    listed), else the operator's name (a key not in the file: its receipts will be refused)."""
    if allowed is not None and allowed.is_file():
        pub = sshsig.public_key(key)
        if pub is not None:
            found = principal_for(load_allowed_signers(allowed), pub[0], pub[1], operator)
            if found is not None:
                return found
    return operator


def sign(
    key: Path,
    content: GateContent,
    *,
    plan: str,
    operator: str,
    host: str,
    how: ApprovalHow,
    at: datetime,
    allowed: Path | None,
) -> Signed:
    """A signed claim for an approval of exactly `content` (`ssh-keygen -Y sign`, the gate's namespace)."""
    claim = Claim(
        plan=plan,
        section=content.section_key,
        sha256=content.sha256,
        inputs=dict(content.inputs),
        at=at.isoformat(timespec="seconds"),
        nonce=new_nonce(),
        principal=signer_principal(key, allowed, operator),
        operator=operator,
        host=host,
        how=how,
    )
    return Signed(claim, sshsig.sign(key, namespace(content.marker), claim.payload().encode()))


def spent_nonces(journal: StateStore) -> dict[str, int]:
    """Each signature nonce the journal holds, with the first receipt that carried it (or spent it)."""
    return history.receipts(journal).nonces


def check_receipt(
    receipt: ApprovalRecord,
    *,
    allowed: Path,
    plan: str,
    marker: str,
    section: str,
    sha256: str,
    inputs: Mapping[str, str],
    nonces: Mapping[str, int],
) -> Verdict:
    """Whether `receipt` releases the gate of `section` for content `sha256` and `inputs` of `plan`, now,
    by the allowed-signers file `allowed`; `nonces`: `spent_nonces` of the journal."""
    if receipt.signature is None or receipt.signed_payload is None:
        return Verdict(False, reason="unsigned", code="unsigned")
    try:
        claim = Claim.parse(receipt.signed_payload)
    except ValueError as e:
        return Verdict(False, reason=f"edited: {e}", code="edited")
    edited = row_mismatch(claim, receipt.row)
    if edited is not None:
        return Verdict(False, claim.principal, reason=f"edited: {edited}", code="edited")
    other = content_mismatch(claim, plan=plan, section=section, sha256=sha256, inputs=inputs)
    if other is not None:
        return Verdict(False, claim.principal, reason=f"replayed: {other}", code="other-content")
    first = nonces.get(claim.nonce, receipt.id)
    if first != receipt.id:
        why = f"replayed: its signature's nonce was already carried or spent by receipt {first}"
        return Verdict(False, claim.principal, reason=why, code="replayed")
    payload = receipt.signed_payload.encode()
    c = sshsig.verify(allowed, claim.principal, namespace(marker), receipt.signature, payload)
    return Verdict(c.ok, claim.principal, c.fingerprint, c.reason, c.code)


def describe(receipt: ApprovalRecord) -> str:
    """`receipt 7 by bob@machine-b (approve-command)`."""
    return f"receipt {receipt.id} by {receipt.operator}@{receipt.host} ({receipt.how})"


# ------------------------------------------------------------------------------------ in a run


def judge(run: Run, section: Section, content: GateContent, receipt: ApprovalRecord) -> bool:
    """Whether this receipt may release the gate now: always, unless an allowed-signers file is in force;
    then only a verified signature (audited either way; a refusal is said and audited once per run)."""
    allowed = run.cfg.allowed_signers
    if allowed is None:
        return True
    if receipt.id in run.refused:
        return False
    if receipt.id in run.signers:
        return True
    v = check_receipt(
        receipt,
        allowed=allowed,
        plan=plan_identity(run.pf.path, run.plan),
        marker=content.marker,
        section=section.key,
        sha256=content.sha256,
        inputs=content.inputs,
        nonces=spent_nonces(run.journal),
    )
    about = {"approval_id": receipt.id, "section": section.key, "principal": v.principal,
             "fingerprint": v.fingerprint, "allowed_signers": str(allowed)}  # fmt: skip
    if v.ok:
        nonce = Claim.parse(receipt.signed_payload or "").nonce
        run.signers[receipt.id] = {"principal": v.principal, "fingerprint": v.fingerprint, "nonce": nonce}
        run.journal.record_event(run.run_id, "approval-verified", about)
        return True
    said = f"{describe(receipt)} refused: {v.reason}"
    run.refused[receipt.id] = (section.key, said)
    run.journal.record_event(run.run_id, "approval-refused", {**about, "code": v.code, "reason": v.reason})
    run.bus.emit("approval.refused", section=section.key, approval_id=receipt.id, code=v.code, reason=said)
    return False


def own_receipt(run: Run, section: Section, content: GateContent, how: ApprovalHow) -> ApprovalRecord:
    """Record this run's own approval of `content` (a typed go, a flag, auto), signed with `--sign-with`."""
    now = run.clock()
    signed = None
    if run.cfg.signing_key is not None:
        signed = sign(
            run.cfg.signing_key,
            content,
            plan=plan_identity(run.pf.path, run.plan),
            operator=run.cfg.operator,
            host=run.journal.host,
            how=how,
            at=now,
            allowed=run.cfg.allowed_signers,
        )
    data = content.to_json()
    rid = run.journal.record_approval(
        run.run_id, section.key, content.sha256, run.cfg.operator, how, data, signed=signed
    )
    return ApprovalRecord(
        rid, run.run_id, section.key, content.sha256, run.cfg.operator, run.journal.host, now, how, data,
        principal=signed.claim.principal if signed else None,
        signed_payload=signed.claim.payload() if signed else None,
        signature=signed.signature if signed else None,
    )  # fmt: skip


def usable(run: Run, section: Section, content: GateContent, after_id: int = -1) -> ApprovalRecord | None:
    """The newest receipt for exactly this content that may release the gate: made by `director approve`
    (a typed go or an approval flag belongs to the run that gave it), recorded after the last one an
    application spent (an approval covers one application) and after `after_id`, and verified when an
    allowed-signers file is in force (the newer ones refused on the way are said and audited)."""
    found = history.receipts(run.journal)
    mine = [a for a in found.for_section(section.key) if a.sha256 == content.sha256]
    spent = found.last_spent(section.key, content.sha256)
    for receipt in reversed(mine):
        if receipt.id <= max(spent, after_id):
            break
        if not found.usable_from_journal(receipt):
            if receipt.id not in found.spent and _signed_elsewhere(receipt):
                judge(run, section, content, receipt)  # its row was edited: refused, said and audited
            continue
        if judge(run, section, content, receipt):
            return receipt
    return None


def _signed_elsewhere(receipt: ApprovalRecord) -> bool:
    """Whether a receipt whose row says a run made it was signed as made by `director approve`."""
    try:
        payload = receipt.signed_payload
        return payload is not None and Claim.parse(payload).how not in history.OWN_HOWS
    except ValueError:
        return True

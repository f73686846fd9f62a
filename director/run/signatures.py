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

The gate's policy (`director.run.policy`) is checked too, at release, every time: a receipt revoked
(`director approve --revoke`), past its expiry (`--valid-for`, inside the signed claim) or older than the
policy allows, or given by the run's own operator where the policy refuses self-approval, is refused the
same way; and the receipts that count toward a gate's approvals are one per person (`tally`).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from director.errors import UsageError
from director.exec import sshsig
from director.plan.model import Plan, Section
from director.run import history, policy
from director.run.gates import GateContent
from director.run.policy import Rule as Rule  # re-exported: `director approve` names it through here
from director.state.identity import plan_key
from director.state.records import ApprovalRecord
from director.state.signing import (
    AllowedSigner,
    Claim,
    Signed,
    content_mismatch,
    key_fingerprint,
    listed_principals,
    load_allowed_signers,
    namespace,
    new_nonce,
    principal_for,
    refusal_code,
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
    return plan_key(plan_path, plan.plan_id).key


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
    expires: datetime | None = None,
) -> Signed:
    """A signed claim for an approval of exactly `content` (`ssh-keygen -Y sign`, the gate's namespace),
    counting until `expires` (None: the claim names no end)."""
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
        expires=expires.isoformat(timespec="seconds") if expires is not None else None,
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
    c = verify(allowed, claim.principal, namespace(marker), receipt.signature, payload)
    return Verdict(c.ok, claim.principal, c.fingerprint, c.reason, c.code)


def verify(allowed: Path, principal: str, ns: str, signature: str, data: bytes) -> sshsig.Check:
    """`ssh-keygen -Y verify` (`sshsig.verify`), and when the file refused a well-formed signature, which
    refusal it is, read from the file's line for the key (`signing.refusal_code`), never from words."""
    c = sshsig.verify(allowed, principal, ns, signature, data)
    if c.ok or c.code != "refused":
        return c
    code, names = refusal_code(load_allowed_signers(allowed), c.fingerprint, principal, ns, c.listed,
                               datetime.now(UTC))  # fmt: skip
    key = f"key {c.fingerprint}" if c.fingerprint else "the key"
    reason = {
        "unknown-key": f"{key} is not in {allowed} (an unknown key, or one removed from the file)",
        "principal": f"{key} is listed for {', '.join(names)}, not {principal}",
        "namespace": f"{key} may not sign this gate: {c.said}",
        "expired": f"{key} is out of its validity: {c.said}",
    }.get(code, c.reason)
    return dataclasses.replace(c, code=code, reason=reason)


def describe(receipt: ApprovalRecord) -> str:
    """`receipt 7 by bob@machine-b (approve-command)`: what its row says (nothing verified yet)."""
    return f"receipt {receipt.id} by {receipt.operator}@{receipt.host} ({receipt.how})"


def receipt_words(receipt: ApprovalRecord, signer: Mapping[str, str] | None, at: bool = False) -> str:
    """`receipt 5 by alice@example.com (signature verified, key SHA256:…; recorded by root@vm,
    approve-command)`: who approved, by the verified signature; unverified (no allowed-signers file in
    force), what the row says: `receipt 5 by root@vm (approve-command)`, and a signer it claims unchecked."""
    when = f" at {receipt.at.isoformat(timespec='seconds')}" if at else ""
    recorded = f"{receipt.operator}@{receipt.host}"
    if signer:
        key = signer["fingerprint"]
        return (
            f"receipt {receipt.id} by {signer['principal']} (signature verified, key {key}; "
            f"recorded by {recorded}, {receipt.how}{when})"
        )
    if receipt.principal:
        claims = f"claims to be signed by {receipt.principal}, not checked"
        return f"receipt {receipt.id} by {recorded} ({receipt.how}{when}; {claims})"
    return f"{describe(receipt)}{when}"


def summary_words(receipt: ApprovalRecord, signer: Mapping[str, str] | None) -> str:
    """A receipt in a run's summary: `receipt_words` when verified; else `the receipt root@vm recorded by
    `director approve` at …`."""
    if signer:
        return receipt_words(receipt, signer, at=True)
    made = "`director approve`" if receipt.how == "approve-command" else receipt.how
    at = receipt.at.isoformat(timespec="seconds")
    return f"the receipt {receipt.operator}@{receipt.host} recorded by {made} at {at}"


def released(receipts: Sequence[ApprovalRecord], signers: Mapping[int, Mapping[str, str]]) -> str:
    """Whose approvals released a gate (`receipt_words` of each)."""
    return " and ".join(receipt_words(r, signers.get(r.id)) for r in receipts)


def expiry(receipt: ApprovalRecord) -> datetime | None:
    """When a receipt stops counting: its signed claim's `expires` (`--valid-for`), else its row's (an
    unsigned receipt: as editable as the rest of its row); None: never."""
    text: Any = receipt.content.get("expires")
    if receipt.signed_payload is not None:
        try:
            text = Claim.parse(receipt.signed_payload).expires
        except ValueError:
            return receipt.at  # an unreadable claim is refused anyway: never valid
    try:
        return datetime.fromisoformat(str(text)) if text else None
    except ValueError:
        return receipt.at


def signed_at(receipt: ApprovalRecord) -> datetime:
    """When the approval was given: its signed claim's `at`, else its row's."""
    try:
        return datetime.fromisoformat(Claim.parse(receipt.signed_payload or "").at)
    except ValueError:
        return receipt.at


def refusal(
    receipt: ApprovalRecord,
    rule: Rule,
    *,
    now: datetime,
    revoked: Mapping[int, Mapping[str, Any]],
    own: bool,
    operator: frozenset[str],
    approver: frozenset[str],
) -> tuple[str, str] | None:
    """Why the gate's policy refuses this receipt now (code, reason), or None: revoked, expired, older
    than the policy allows, or the run's own operator's where the policy refuses self-approval. `own`:
    the run made it (a typed go, a flag); `operator` and `approver`: `policy.identities` of both."""
    if receipt.id in revoked:
        r = revoked[receipt.id]
        why = f": {r['reason']}" if r.get("reason") else ""
        return "revoked", f"revoked by {r.get('operator')}@{r.get('host')} at {r.get('at')}{why}"
    ends = expiry(receipt)
    if ends is not None and now >= ends:
        return "receipt-expired", f"it expired at {ends.isoformat(timespec='seconds')} (its --valid-for)"
    limit = rule.max_valid_for_s
    if limit is not None and now - signed_at(receipt) > timedelta(seconds=limit):
        given = signed_at(receipt).isoformat(timespec="seconds")
        return "receipt-expired", (
            f"given at {given}, longer ago than the policy allows ({policy.shown_duration(limit)}: "
            f"{'; '.join(rule.source)})"
        )
    if not rule.self_approval and (own or operator & approver):
        who = "the run's own approval" if own else "its approver is the run's own operator"
        return "self-approval", f"{who}, and the gate needs {rule.describe()} ({'; '.join(rule.source)})"
    return None


# ------------------------------------------------------------------------------------ in a run


def judge(
    run: Run, section: Section, content: GateContent, receipt: ApprovalRecord, rule: Rule | None = None,
    found: history.Receipts | None = None,
) -> bool:  # fmt: skip
    """Whether this receipt may release the gate now: its signature verifies (while an allowed-signers
    file is in force; audited either way), and the gate's `rule` does not refuse it (revoked, expired,
    self-approval). A refusal is said and audited once per run."""
    if receipt.id in run.refused:
        return False
    allowed = run.cfg.allowed_signers
    rule = rule or Rule()
    own = receipt.how in history.OWN_HOWS
    revoked = {} if own else (found or history.receipts(run.journal)).revoked
    nobody: frozenset[str] = frozenset()
    lapsed = refusal(receipt, rule, now=run.clock(), revoked=revoked, own=False, operator=nobody,
                     approver=nobody)  # fmt: skip
    if lapsed is not None:  # revoked or expired: refused before its signature is checked
        about = {"approval_id": receipt.id, "section": section.key}
        _refuse(run, section, receipt, lapsed[0], lapsed[1], about)
        return False
    if allowed is not None and receipt.id not in run.signers:
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
        if not v.ok:
            _refuse(run, section, receipt, v.code, v.reason, about)
            return False
        nonce = Claim.parse(receipt.signed_payload or "").nonce
        run.signers[receipt.id] = {"principal": v.principal, "fingerprint": v.fingerprint, "nonce": nonce}
        run.journal.record_event(run.run_id, "approval-verified", about)
    why = refusal(receipt, rule, now=run.clock(), revoked=revoked, own=own, operator=run_identities(run),
                  approver=approver_identities(run, receipt))  # fmt: skip
    if why is not None:
        signer = run.signers.get(receipt.id, {})
        about = {"approval_id": receipt.id, "section": section.key, "principal": signer.get("principal"),
                 "fingerprint": signer.get("fingerprint"), "allowed_signers": str(allowed or "")}  # fmt: skip
        _refuse(run, section, receipt, why[0], why[1], about)
        return False
    return True


def _refuse(run: Run, section: Section, receipt: ApprovalRecord, code: str, reason: str,
            about: Mapping[str, Any]) -> None:  # fmt: skip
    said = f"{describe(receipt)} refused: {reason}"
    run.refused[receipt.id] = (section.key, said)
    run.journal.record_event(run.run_id, "approval-refused", {**about, "code": code, "reason": reason})
    run.bus.emit("approval.refused", section=section.key, approval_id=receipt.id, code=code, reason=said)


def _signers_file(run: Run) -> list[AllowedSigner]:
    allowed = run.cfg.allowed_signers
    return load_allowed_signers(allowed) if allowed is not None else []


def approver_identities(run: Run, receipt: ApprovalRecord) -> frozenset[str]:
    """Who gave a receipt: its verified key and every principal the file lists for it; unverified (no
    allowed-signers file in force), the name its row gives."""
    v = run.signers.get(receipt.id)
    if v is None:
        return policy.identities(receipt.operator, "")
    listed = listed_principals(_signers_file(run), v["fingerprint"])
    return policy.identities(v["principal"], v["fingerprint"], listed)


def run_identities(run: Run) -> frozenset[str]:
    """Who runs this run: its operator's name, and with `--sign-with` its key and the principals the
    allowed-signers file lists for that key."""
    return _operator(run.cfg.operator, run.cfg.signing_key, run.cfg.allowed_signers)


@functools.lru_cache(maxsize=16)
def _operator(operator: str, key: Path | None, allowed: Path | None) -> frozenset[str]:
    pub = sshsig.public_key(key) if key is not None else None
    if pub is None:
        return policy.operator_identities(operator)
    fp = key_fingerprint(pub[1])
    listed = listed_principals(load_allowed_signers(allowed), fp) if allowed is not None else ()
    return policy.operator_identities(operator, "", fp, listed)


def typed_cannot(run: Run, section: Section, rule: Rule) -> str:
    """Why a confirmation typed at this run's prompt cannot approve the gate ("" when it can): the policy
    refuses the run's own operator, or approvals must be signed and the run has no key."""
    where = f"this prompt cannot approve {run.label(section)}"
    if not rule.self_approval:
        return f"{where}: the gate needs {rule.describe()} ({'; '.join(rule.source)})"
    if run.cfg.allowed_signers is not None and run.cfg.signing_key is None:
        return (
            f"{where}: approvals must be signed by a key in {run.cfg.allowed_signers}, and this run has no "
            "key to sign with (it was started without --sign-with KEYFILE)"
        )
    return ""


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


@dataclass(frozen=True)
class Tally:
    """The receipts that count toward a gate's approvals now (one per person), and what else was seen."""

    rule: Rule
    counted: tuple[ApprovalRecord, ...] = ()
    notes: tuple[str, ...] = ()  # receipts that do not count: the same person as one counted

    @property
    def complete(self) -> bool:
        return len(self.counted) >= self.rule.approvals

    def progress(self, signers: Mapping[int, Mapping[str, str]]) -> str:
        """`1 of 2 approvals (alice@example.com (key SHA256:…), receipt 5); 1 more needed from someone
        else` -- "" for a rule of one approval with none counted."""
        if self.rule.approvals == 1 and not self.counted:
            return ""
        whose = ", ".join(f"{signers.get(r.id, {}).get('principal') or r.operator} (receipt {r.id})"
                          for r in self.counted)  # fmt: skip
        have = f"{len(self.counted)} of {self.rule.approvals} approvals" + (f" ({whose})" if whose else "")
        left = self.rule.approvals - len(self.counted)
        more = "someone else" if self.counted else "different people"
        return f"{have}; {left} more needed from {more}" if left > 0 else have


def tally(
    run: Run, section: Section, content: GateContent, rule: Rule, own: Sequence[ApprovalRecord] = ()
) -> Tally:
    """The receipts that release the gate of `content` now, up to `rule.approvals` from different people:
    `own` (this run's, already judged) first, then receipts made by `director approve` for exactly this
    content, newest first, recorded after the last one an application spent (an approval covers one
    application), each judged (signature, revocation, expiry, self-approval; refusals said and audited)."""
    found = history.receipts(run.journal)
    mine = [a for a in found.for_section(section.key) if a.sha256 == content.sha256]
    spent = found.last_spent(section.key, content.sha256)
    offered = list(own)
    counted = policy.count([(r.id, approver_identities(run, r)) for r in offered], rule)
    for receipt in reversed(mine):
        if receipt.id <= spent or counted.complete(rule):
            break
        if not found.usable_from_journal(receipt):
            if receipt.id not in found.spent and receipt.how not in history.OWN_HOWS:
                judge(run, section, content, receipt, rule, found)  # revoked: refused, said and audited
            elif receipt.id not in found.spent and _signed_elsewhere(receipt):
                judge(run, section, content, receipt, rule, found)  # its row was edited: refused
            continue
        if judge(run, section, content, receipt, rule, found):
            offered.append(receipt)
            counted = policy.count([(r.id, approver_identities(run, r)) for r in offered], rule)
    by_id = {r.id: r for r in offered}
    notes = tuple(
        f"{describe(by_id[r])} does not count again: the same person as receipt {same} "
        f"({run.signers.get(same, {}).get('principal') or by_id[same].operator})"
        for r, same in counted.same_as.items()
    )
    return Tally(rule, tuple(by_id[i] for i in counted.counted), notes)


def _signed_elsewhere(receipt: ApprovalRecord) -> bool:
    """Whether a receipt whose row says a run made it was signed as made by `director approve`."""
    try:
        payload = receipt.signed_payload
        return payload is not None and Claim.parse(payload).how not in history.OWN_HOWS
    except ValueError:
        return True


# ------------------------------------------------------------------------------ outside a run


@dataclass(frozen=True)
class Standing:
    """How the receipts for a gate's content stand now, judged as a run would judge them at release
    (`director approve` says it of the receipt it just recorded)."""

    verdicts: dict[int, Verdict]  # each unspent receipt from `director approve` for this content
    counted: policy.Counted
    rule: Rule
    who: dict[int, frozenset[str]]  # the approver of each receipt accepted (`policy.identities`)

    def same_person(self, receipt_id: int) -> int | None:
        """Another accepted receipt by the approver of `receipt_id` (it does not count twice)."""
        mine = self.who.get(receipt_id, frozenset())
        return next((o for o, w in self.who.items() if o != receipt_id and w & mine), None)

    def progress(self) -> str:
        n, need = len(self.counted.counted), self.rule.approvals
        if need == 1:
            return ""
        more = f"; {need - n} more needed from someone else" if n < need else ""
        return f"{n} of {need} approvals{more}"


def standing(
    journal: StateStore, *, allowed: Path | None, plan: str, content: GateContent, rule: Rule,
    operator: frozenset[str], now: datetime,
) -> Standing:  # fmt: skip
    """Every unspent receipt made by `director approve` for exactly `content`, recorded after the last one
    an application spent, judged now (signature against `allowed`, revocation, expiry, self-approval
    against the waiting run's `operator`), and which of them count together (one per person)."""
    found = history.receipts(journal)
    lines = load_allowed_signers(allowed) if allowed is not None else []
    spent = found.last_spent(content.section_key, content.sha256)
    verdicts: dict[int, Verdict] = {}
    offered: list[tuple[int, frozenset[str]]] = []
    for r in reversed(found.for_section(content.section_key)):
        if r.id <= spent:
            break
        if r.sha256 != content.sha256 or r.how in history.OWN_HOWS or r.id in found.spent:
            continue
        v = Verdict(True, r.principal or r.operator)
        if allowed is not None:
            v = check_receipt(
                r, allowed=allowed, plan=plan, marker=content.marker, section=content.section_key,
                sha256=content.sha256, inputs=content.inputs, nonces=found.nonces,
            )  # fmt: skip
        who = (policy.identities(v.principal, v.fingerprint, listed_principals(lines, v.fingerprint))
               if allowed is not None else policy.identities(r.operator, ""))  # fmt: skip
        why = refusal(r, rule, now=now, revoked=found.revoked, own=False, operator=operator, approver=who)
        if v.ok and why is not None:
            v = Verdict(False, v.principal, v.fingerprint, why[1], why[0])
        verdicts[r.id] = v
        if v.ok:
            offered.append((r.id, who))
    return Standing(verdicts, policy.count(offered, rule), rule, dict(offered))


def validity(given: str | None, rule: Rule) -> float:
    """Seconds a new receipt counts: `--valid-for` (UsageError when it is not a duration, or longer than
    the gate's policy allows), else the policy's default (24 h, or its `max_valid_for` if shorter)."""
    if given is None:
        return rule.valid_for_s
    try:
        seconds = policy.parse_duration(given)
    except ValueError as e:
        raise UsageError(f"--valid-for: {e}") from None
    limit = rule.max_valid_for_s
    if limit is not None and seconds > limit:
        raise UsageError(
            f"--valid-for {given}: the approval policy allows at most {policy.shown_duration(limit)} "
            f"({'; '.join(rule.source)})"
        )
    return seconds

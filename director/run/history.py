"""One reading of a plan's history: what the journal says happened, read the same way by the engine and
by `director approve` (and `plan`).

- the inputs last resolved, the values realized, the author's key/value cells (`kv-templates`);
- the receipts: which were spent (an application started on them) and the signature nonces they carried;
- the gate as it stands: what the last run that reached a section's gate recorded there (the act's
  closure with its secrets sealed, `director.run.closure.Reach`);
- whether the plan's runs have required signed approvals (an allowed-signers file was in force).

Nothing here writes; every reading is of journal rows as data (never run as code).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from director.plan.model import Plan
from director.run import identities
from director.state.records import ApprovalRecord, RunRecord
from director.state.signing import Claim
from director.state.store import RunKind, StateStore

GATE_WAITING = "gate-waiting"
SPENT = "approval-used"
SIGNED = "signatures-required"
POLICY = "approval-policy"  # the policy files a plan's gates were held to (docs/approvals.md)
REVOKED = "approval-revoked"  # `director approve --revoke RECEIPT`: it never releases a gate
# Receipts a run makes for itself (a typed go, `--approve`, `--auto-approve`) belong to that run only.
OWN_HOWS = frozenset({"prompt", "flag", "auto"})


def previous_inputs(journal: StateStore) -> dict[str, str] | None:
    """The most recent resolution of the inputs (a later run reuses it unless a knob is set)."""
    evs = journal.events(kind="inputs-resolved")
    return {str(k): str(v) for k, v in evs[-1].data.get("values", {}).items()} if evs else None


TEARDOWN_ACTED = "teardown-acting"  # journaled before a teardown's first destructive block runs


def forgotten_before(journal: StateStore) -> int:
    """The run in which a teardown last acted (0: none): what earlier runs succeeded at or realized is no
    longer known to hold -- memory of a success never survives a teardown (docs/promises.md)."""
    return max((ev.run_id or 0 for ev in journal.events(kind=TEARDOWN_ACTED)), default=0)


def realized_values(journal: StateStore, since: int = 0, identity: str | None = None) -> dict[str, str]:
    """The values the runs since run `since` realized, latest last; with `identity` (`run.identities`:
    `WORKER=orders-dev`), only that identity's (a value journaled without one counts for every identity)."""
    out: dict[str, str] = {}
    for ev in journal.events(kind="realized"):
        if (ev.run_id or 0) < since:
            continue
        of = ev.data.get("identity")
        if identity is None or of is None or of == identity:
            out.update({str(k): str(v) for k, v in ev.data.get("values", {}).items()})
    return out


def realized_at(
    journal: StateStore, plan: Plan, inputs: Mapping[str, str], variables: Mapping[str, str]
) -> dict[str, str]:
    """The realized values a run whose session holds `variables` substitutes into its blocks: those of the
    identity they name (`run.identities`) since the last teardown that acted -- as the engine reads them."""
    mine = identities.of(plan, kv_templates(journal) or {}, variables, inputs)
    return realized_values(journal, forgotten_before(journal), identities.name_of(mine))


def inputs_at_gate(journal: StateStore, run_id: int, resolved: Mapping[str, str]) -> dict[str, str]:
    """The inputs a run's gate is computed with: those it resolved, or, in a teardown's pass over an
    identity an earlier input named (`run.teardown`), that identity's."""
    evs = journal.events(run_id, identities.PASS)
    if not evs:
        return dict(resolved)
    return {**resolved, **{str(k): str(v) for k, v in dict(evs[-1].data.get("inputs", {})).items()}}


def kv_templates(journal: StateStore) -> dict[str, str] | None:
    """The key/value cells as the author wrote them (journaled the first time Director realized them)."""
    evs = journal.events(kind="kv-templates")
    return {str(k): str(v) for k, v in evs[0].data.get("cells", {}).items()} if evs else None


@dataclass(frozen=True)
class Receipts:
    """The receipts of a plan and which were spent (an application started on them)."""

    all: tuple[ApprovalRecord, ...]
    spent: frozenset[int]
    nonces: dict[str, int]  # each signature nonce, with the first receipt that carried (or spent) it
    revoked: dict[int, dict[str, Any]]  # receipt id -> who revoked it, when, why (`approval-revoked`)

    def for_section(self, section_key: str) -> list[ApprovalRecord]:
        return [a for a in self.all if a.section_key == section_key]

    def last_spent(self, section_key: str, sha256: str) -> int:
        """The newest spent receipt for this content (0: none)."""
        mine = [a.id for a in self.for_section(section_key) if a.sha256 == sha256 and a.id in self.spent]
        return max(mine, default=0)

    def usable_from_journal(self, receipt: ApprovalRecord) -> bool:
        """A receipt another process may act on: made by `director approve`, never spent. A typed go or
        an approval flag belongs to the run that made it (Ctrl-C or a crash voids it)."""
        return receipt.how not in OWN_HOWS and receipt.id not in self.spent and receipt.id not in self.revoked


def receipts(journal: StateStore) -> Receipts:
    revoked: dict[int, dict[str, Any]] = {}
    for e in journal.events(kind=REVOKED):
        rid = e.data.get("approval_id")
        if isinstance(rid, int):
            revoked.setdefault(rid, {**e.data, "at": e.at.isoformat(timespec="seconds")})
    spent_events = journal.events(kind=SPENT)
    spent = frozenset(int(e.data.get("approval_id") or 0) for e in spent_events)
    nonces: dict[str, int] = {}
    for e in spent_events:
        if e.data.get("nonce"):
            nonces.setdefault(str(e.data["nonce"]), int(e.data.get("approval_id") or 0))
    approvals = journal.approvals()
    for a in approvals:
        if a.signed_payload is not None:
            try:
                nonces.setdefault(Claim.parse(a.signed_payload).nonce, a.id)
            except ValueError:
                continue
    return Receipts(tuple(approvals), spent, nonces, revoked)


@dataclass(frozen=True)
class Waiting:
    """What the last run that reached a section's gate recorded there."""

    run_id: int | None
    content: dict[str, Any]  # the gate content (`GateContent.to_json`), secrets sealed
    reach: dict[str, Any]  # what the act can read (`director.run.closure.Reach.to_json`), secrets sealed
    # who ran that run (`director.run.policy.operator_identities`): whom a policy refusing self-approval
    # refuses; () from a run before gates recorded it
    operator: tuple[str, ...] = ()


def gate(journal: StateStore, section_key: str, run_id: int | None = None) -> Waiting | None:
    """The gate of `section_key` as the last run that reached it recorded it (of run `run_id` if given)."""
    for e in reversed(journal.events(run_id, GATE_WAITING)):
        content = e.data.get("content")
        if e.data.get("section") == section_key and isinstance(content, dict) and content.get("reach"):
            who = tuple(str(i) for i in e.data.get("operator") or ())
            return Waiting(e.run_id, dict(content), dict(content["reach"]), who)
    return None


def latest_run(journal: StateStore, kind: RunKind) -> RunRecord | None:
    return journal.latest_run(kind)


@dataclass(frozen=True)
class Held:
    """What the plan's journal holds its approvals to, read once: the allowed-signers file its runs were
    last checked against (None: never), and the approval policy files its gates were last held to."""

    signers: str | None
    policy_files: list[str]


def held_to(journal: StateStore) -> Held:
    """`signatures_required` and `policy_files`, read together: what a run or `approve` holds its trust to."""
    return Held(signatures_required(journal), policy_files(journal))


def signatures_required(journal: StateStore) -> str | None:
    """The allowed-signers file the plan's runs were held to, if any run was (the last one named)."""
    evs = journal.events(kind=SIGNED)
    return str(evs[-1].data.get("file") or "") or "an allowed-signers file" if evs else None


def policy_files(journal: StateStore) -> list[str]:
    """The approval policy files the plan's gates were last held to (none: no run was held to one)."""
    evs = journal.events(kind=POLICY)
    return [str(f) for f in evs[-1].data.get("files") or ()] if evs else []

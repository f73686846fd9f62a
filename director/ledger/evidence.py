"""What a plan's Live State is evidence of on this machine: the one rule `plan`, `check` and `apply` read
the ledger through (`read_evidence`).

A published plan ships with its author's Live State: a status, ✅ rows with their dates, `last_verified`.
Those say what the author saw, not what exists here. So:

- **Nothing recorded here** (no run of the plan in its journal): the plan is `not-created` here and no check
  row has been seen passing, whatever the template says (`pristine`). `check` says so (exit 12), and
  neither its observations nor the gate read the template's rows as drift.
- **Runs recorded here**: the status is as written (Director writes it after every section). A check row
  still holding the result it had when the first run here began (recorded once, as the `ledger-template`
  event, by `record_template`) is the template's, read as not seen (`—`); a row a run here wrote is
  evidence. A journal made before that event existed has none: its rows are read as written.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from director.plan.model import Plan

if TYPE_CHECKING:
    from director.state.store import StateStore

TEMPLATE_EVENT = "ledger-template"  # the Live State's status and check rows as the first run here found them
PRISTINE = "not-created"
NOT_SEEN = "—"


@dataclass(frozen=True)
class LedgerEvidence:
    """The ledger as evidence of what exists here."""

    status: str  # what exists, as the ledger says it here (`not-created` when nothing ran here)
    check_results: Mapping[str, str]  # check row name → its result as seen here (`—`: never seen here)
    pristine: bool  # no run of the plan is recorded here: its Live State is the published template's


def ledger_evidence(plan: Plan, *, ran_here: bool, template: Mapping[str, Any] | None) -> LedgerEvidence:
    """The rule (pure): `ran_here` whether a run of the plan is recorded here, `template` the
    `ledger-template` event's data (None: not recorded)."""
    ls = plan.live_state
    if ls is None:
        return LedgerEvidence("", {}, not ran_here)
    if not ran_here:
        return LedgerEvidence(PRISTINE, {r.name: NOT_SEEN for r in ls.check_rows}, True)
    first: Mapping[str, str] = (template or {}).get("checks") or {}
    results = {r.name: NOT_SEEN if first.get(r.name) == r.result else r.result for r in ls.check_rows}
    return LedgerEvidence(str(ls.data.get("status", "")).strip(), results, False)


def read_evidence(plan: Plan, journal: StateStore) -> LedgerEvidence:
    """`ledger_evidence` with what the plan's journal records."""
    ran_here = journal.latest_run() is not None
    events = journal.events(kind=TEMPLATE_EVENT) if ran_here else []
    return ledger_evidence(plan, ran_here=ran_here, template=events[0].data if events else None)


def record_template(plan: Plan, journal: StateStore) -> None:
    """Before the first run of the plan here: what its Live State said then (the template's rows)."""
    ls = plan.live_state
    if ls is None or journal.latest_run() is not None or journal.events(kind=TEMPLATE_EVENT):
        return
    checks = {r.name: r.result for r in ls.check_rows}
    journal.record_event(None, TEMPLATE_EVENT, {"status": str(ls.data.get("status", "")), "checks": checks})

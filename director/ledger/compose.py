"""What a run writes into Live State, composed from what it knows (pure: facts in, an update out)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from director.ledger import cells
from director.ledger.splice import LedgerUpdate
from director.plan.model import Plan
from director.plan.verify import CheckResult, Verdict
from director.state.lifecycle import RunState


@dataclass(frozen=True)
class Facts:
    """Everything the ledger's cells are made of at one moment of a run."""

    kind: str  # apply | teardown
    run_id: int
    target: str
    operator: str
    now: datetime
    final: RunState | None  # set when the run ends
    status: str | None  # an interim status (`applying`)
    summary: str  # what the run did (`applied §1, §2; verified §3`)
    failed_at: str
    unconfirmed: tuple[str, ...]
    knobs: Mapping[str, str]
    resolved_at: str
    session: Mapping[str, str]
    realized: Mapping[str, str]
    realized_rows: frozenset[str]
    by_ref: Mapping[str, CheckResult]
    kv_templates: Mapping[str, str]


def _status(f: Facts) -> str | None:
    if f.final is RunState.COMPLETED:
        done = "gone" if f.kind == "teardown" else "live"
        return done + " (unconfirmed)" if f.unconfirmed else done  # a check after the act was inconclusive
    if f.final is RunState.FAILED:
        return f"failed at {f.failed_at or '?'}"
    if f.final is RunState.AWAITING_APPROVAL:
        return "awaiting-approval"
    if f.final is RunState.INTERRUPTED:
        return "interrupted"
    if f.status:
        return "tearing-down" if f.kind == "teardown" else f.status
    return None


def ledger_update(
    plan: Plan, f: Facts, *, is_secret: Callable[[str], bool], redact: Callable[[str], str]
) -> LedgerUpdate:
    """The Live State update for these facts: YAML keys, realized key/value cells, check-table cells."""
    ls = plan.live_state
    assert ls is not None
    today = f.now.strftime("%Y-%m-%d")
    stamp = f.now.isoformat(timespec="seconds")
    yaml: dict[str, Any] = {}
    status = _status(f)
    if status is not None:
        yaml["status"] = status
    if f.final is not None:
        yaml["last_action"] = (
            f"{stamp} {f.kind} run {f.run_id} on target {f.target}: "
            + (f.summary or f.final.value)
            + ("" if f.final is RunState.COMPLETED else f" — {f.final.value}")
        )
        if f.unconfirmed and f.kind == "apply":
            yaml["last_action"] += " (unconfirmed: " + "; ".join(dict.fromkeys(f.unconfirmed)) + ")"
    passed = [
        r.name
        for r in ls.check_rows
        if any(ref in f.by_ref for ref in r.fed_by)
        and all(f.by_ref[ref].verdict is Verdict.PASSED for ref in r.fed_by if ref in f.by_ref)
    ]
    if passed and f.kind == "apply":
        yaml["last_verified"] = f"{today} — " + " · ".join(passed)
    if f.knobs:
        ri: dict[str, Any] = {k.lower(): v for k, v in f.knobs.items()}
        ri["resolved_by"] = f.operator
        ri["resolved_at"] = f.resolved_at or stamp
        yaml["resolved_inputs"] = ri
    yaml["target"] = f.target
    env = dict(f.session)
    discovered = {v: env.get(v, "") for v in cells.discovered_vars(plan)}
    kv: dict[str, str] = {}
    for row in ls.kv_rows:
        tmpl = f.kv_templates.get(row.key, row.value)
        if f.kind == "teardown" and f.final is RunState.COMPLETED:
            new = tmpl  # realized ids go back to their templates
        elif f.kind == "apply" and (row.key in f.realized_rows or f.final is RunState.COMPLETED):
            if is_secret(row.key):
                continue  # a secret-named row is never realized
            new = redact(cells.realize_cell(tmpl, row.key, env, f.knobs, f.realized, discovered))
        else:
            continue
        if new.strip() != row.value.strip():
            kv[row.key] = new
    if f.kind == "apply":
        checks = cells.row_updates(ls.check_rows, f.by_ref, today)
    elif f.final is RunState.COMPLETED:
        # What was verified is gone: the rows say so instead of keeping yesterday's ✅.
        checks = {r.name: ("—", f"— torn down {today}") for r in ls.check_rows}
    else:
        checks = {}
    return LedgerUpdate(yaml=yaml, kv=kv, checks=checks)

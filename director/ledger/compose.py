"""What a run writes into Live State, composed from what it knows (pure: facts in, an update out)."""

from __future__ import annotations

import re
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
    acted: bool = True  # whether a section (not §0) acted in this run; False: an in-sync run


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
    elif f.kind == "teardown" and f.final is RunState.COMPLETED and ls.data.get("last_verified"):
        yaml["last_verified"] = f"— (torn down {today})"  # never the names of checks that are gone
    if f.knobs:
        ri: dict[str, Any] = {k.lower(): v for k, v in f.knobs.items()}
        current = ls.data.get("resolved_inputs")
        if isinstance(current, dict) and _same_resolution(current, ri):
            ri.update({k: current[k] for k in ("resolved_by", "resolved_at")})  # the same resolution
        else:
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
    # Director owns these lines: a comment at their end described the value it replaces (the published
    # template's `# published template - run it to realize state`), so it goes with that value.
    update = LedgerUpdate(yaml=yaml, kv=kv, checks=checks, drop_comments=frozenset(yaml))
    if f.kind == "apply" and f.final is RunState.COMPLETED and not f.acted and _nothing_new(plan, update):
        return LedgerUpdate()  # in sync and verified as before: the plan file stays byte-identical
    return update


def _same_resolution(current: Mapping[str, Any], ri: Mapping[str, Any]) -> bool:
    """The ledger already records these input values, with who resolved them and when."""
    who, at = str(current.get("resolved_by", "")), str(current.get("resolved_at", ""))
    if not who or not at or "<" in who + at:
        return False  # the template's placeholders (`<human who confirmed>`)
    return all(str(current.get(k)) == str(v) for k, v in ri.items())


def _mark(result: str) -> str:
    """A check cell's verdict without its date: `✅ 2026-07-03` → `✅`."""
    return re.sub(r"\s*\d{4}-\d{2}-\d{2}.*$", "", result.strip())


def _verified_names(value: Any) -> str:
    """`2026-07-03 — a · b` → `a · b`."""
    return str(value or "").split(" — ", 1)[-1].strip()


def _nothing_new(plan: Plan, update: LedgerUpdate) -> bool:
    """Whether an in-sync run's update says only what the ledger says, apart from dates and `last_action`."""
    ls = plan.live_state
    assert ls is not None
    if update.kv or update.kv_add:
        return False
    rows = {r.name: r for r in ls.check_rows}
    for name, (_observed, result) in update.checks.items():
        row = rows.get(name)
        if row is None or _mark(row.result) != _mark(result):
            return False
    for key, value in update.yaml.items():
        if key == "last_action":
            continue
        if key == "last_verified":
            if _verified_names(value) != _verified_names(ls.data.get(key)):
                return False
        elif _plain(ls.data.get(key)) != _plain(value):
            return False
    return True


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    return None if value is None else str(value)


def outputs(plan: Plan) -> dict[str, str]:
    """The values the ledger holds as realized (like terraform's outputs): key → the first backticked value
    of its cell, for the cells no longer a template (`${…}`), a placeholder (`<…>`) or empty (`—`)."""
    ls = plan.live_state
    out: dict[str, str] = {}
    for row in ls.kv_rows if ls is not None else ():
        m = re.search(r"`([^`]*)`", row.value)
        value = (m.group(1) if m else "").strip()
        if value and "$" not in value and "<" not in value and value not in ("—", "-"):
            out[row.key] = value
    return out

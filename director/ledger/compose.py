"""What a run writes into Live State, composed from what it knows (pure: facts in, an update out)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from director.ledger import cells
from director.ledger.splice import LedgerUpdate
from director.plan.model import CheckRow, Plan
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
    failed_at: str  # where the run stopped (failed, waiting at a gate, interrupted)
    unconfirmed: tuple[str, ...]
    knobs: Mapping[str, str]
    resolved_at: str
    session: Mapping[str, str]
    realized: Mapping[str, str]
    realized_rows: frozenset[str]
    by_ref: Mapping[str, CheckResult]
    kv_templates: Mapping[str, str]
    acted: bool = True  # whether a section (not §0) acted in this run; False: an in-sync run
    results_before: Mapping[str, str] = field(default_factory=dict)  # check row -> its result at the start
    # identities the journal says exist besides the one this run's inputs name (left by a replacement):
    # `WORKER=orders-dev (env=dev)` -- `director teardown` removes them (run.identities)
    also_exists: tuple[str, ...] = ()


NO_TARGET = "none"  # the target of a run whose plan uses none (`commands.run`)


def _failing(f: Facts, row: CheckRow) -> bool:
    """Whether this run saw a check feeding the row fail or stay inconclusive (its last word on it)."""
    bad = (Verdict.FAILED, Verdict.INCONCLUSIVE)
    return any(f.by_ref[ref].verdict in bad for ref in row.fed_by if ref in f.by_ref)


def _status(plan: Plan, f: Facts) -> str | None:
    """What exists, never the run's state (that is `last_action`'s and `director status`'s); None: as it was.

    `live` / `gone` once a run completed (`(unconfirmed)` when a check after its act was inconclusive);
    `drifted` when a check the ledger recorded passing was seen failing and the run did not make it hold
    again; `partially applied` / `partially torn down` when a run changed something and did not complete.
    A run that changed nothing (a declined or awaited gate, an interrupted observation) leaves it as it was.
    """
    if f.final is RunState.COMPLETED:
        done = "gone" if f.kind == "teardown" else "live"
        return done + " (unconfirmed)" if f.unconfirmed else done  # a check after the act was inconclusive
    if f.kind == "teardown":
        return "partially torn down" if f.acted else None
    ls = plan.live_state
    assert ls is not None
    held = [r for r in ls.check_rows if f.results_before.get(r.name, "").strip().startswith("✅")]
    if any(_failing(f, r) for r in held):
        return "drifted"
    return "partially applied" if f.acted else None


def _target_words(target: str) -> str:
    """` on target local`, or nothing for a plan that uses no target."""
    return f" on target {target}" if target and target != NO_TARGET else ""


def _verified(f: Facts, ls: Any, passed: list[str], today: str) -> str | None:
    """`last_verified`: what this run verified; never a row this run saw failing (None: leave it)."""
    if passed:
        return f"{today} — " + " · ".join(passed)
    failing = {r.name for r in ls.check_rows if _failing(f, r)}
    old = str(ls.data.get("last_verified") or "")
    if not failing or " — " not in old:
        return None
    date, _, names = old.partition(" — ")
    kept = [n.strip() for n in names.split(" · ") if n.strip() and n.strip() not in failing]
    if len(kept) == len([n for n in names.split(" · ") if n.strip()]):
        return None
    return f"{date} — " + " · ".join(kept) if kept else "—"


def ledger_update(
    plan: Plan, f: Facts, *, is_secret: Callable[[str], bool], redact: Callable[[str], str]
) -> LedgerUpdate:
    """The Live State update for these facts: YAML keys, realized key/value cells, check-table cells."""
    ls = plan.live_state
    assert ls is not None
    today = f.now.strftime("%Y-%m-%d")
    stamp = f.now.isoformat(timespec="seconds")
    yaml: dict[str, Any] = {}
    status = _status(plan, f)
    if status is not None:
        yaml["status"] = status
    if f.final is not None:
        yaml["last_action"] = (
            f"{stamp} {f.kind} run {f.run_id}{_target_words(f.target)}: "
            + (f.summary or ("nothing changed" if not f.acted else "some changes made"))
            + ("" if f.final is RunState.COMPLETED else f" — {f.final.value}")
            + (f" at {f.failed_at}" if f.failed_at and f.final is not RunState.COMPLETED else "")
        )
        if f.unconfirmed and f.kind == "apply":
            yaml["last_action"] += " (unconfirmed: " + "; ".join(dict.fromkeys(f.unconfirmed)) + ")"
    passed = [
        r.name
        for r in ls.check_rows
        if any(ref in f.by_ref for ref in r.fed_by)
        and all(f.by_ref[ref].verdict is Verdict.PASSED for ref in r.fed_by if ref in f.by_ref)
    ]
    verified = _verified(f, ls, passed, today) if f.kind == "apply" else None
    if verified is not None:
        yaml["last_verified"] = verified
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
    if f.target != NO_TARGET:
        yaml["target"] = f.target  # a plan that uses no target has no `target:` line
    if f.also_exists:
        yaml["also_exists"] = [f"{what} — left by a replacement; `director teardown` removes it"
                               for what in f.also_exists]  # fmt: skip
    elif "also_exists" in ls.data:
        yaml["also_exists"] = "none"
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


def doubts(plan: Plan) -> dict[str, str]:
    """Realized keys the ledger itself doubts: key → why, when a check row fed by the section that realizes
    the key says it failed (`❌`) or was inconclusive (`⚠`): its value was seen not to hold."""
    ls = plan.live_state
    out: dict[str, str] = {}
    if ls is None:
        return out
    realized = outputs(plan)
    for s in plan.sections:
        hints = list(s.hints) + [h for b in s.blocks for h in b.hints]
        rows = [r for r in ls.check_rows if f"section:{s.key}" in r.fed_by]
        bad = [r for r in rows if r.result.strip().startswith(("❌", "⚠"))]
        if not bad:
            continue
        why = "; ".join(
            f"check `{r.name}` {r.result.strip()}"
            + (f", observed: {r.observed.strip()}" if r.observed.strip() not in ("", "—") else "")
            for r in bad
        )
        for key in cells.keys_named(hints, ls.kv_rows):
            if key in realized:
                out.setdefault(key, why)
    return out

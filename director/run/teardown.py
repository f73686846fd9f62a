"""Teardown: observe first, the 💥 gate, the destructive blocks (upstream guarded), verify; resumable.

Only a passing observation says "already gone" (nothing runs); a skipped or inconclusive one is no
evidence of absence, so the teardown runs behind its gate. It is one section, journaled step by step like
any other, so a SIGKILLed teardown resumes where it stopped. It acts on every identity the journal says
exists (`run.identities`: what earlier inputs named too), one pass each, not on today's inputs.
"""

from __future__ import annotations

import dataclasses
import re
import time

from director.errors import UpstreamGuard, UsageError
from director.exec.shell import SessionState
from director.plan.model import Section, SectionKind
from director.run import (
    approval,
    decision,
    fingerprint,
    history,
    identities,
    processes,
    resume,
    sections,
    steps,
    upstream,
)
from director.run.config import RunResult
from director.run.context import Run
from director.state.lifecycle import RunState


def _first_tick(cell: str) -> str:
    """The first backticked value of a table cell (the realized value), or the cell."""
    m = re.search(r"`([^`]*)`", cell)
    return (m.group(1) if m else cell).strip()


def teardown(run: Run) -> RunResult:
    """Run the plan's Teardown section once per identity the journal says exists (§0 first, with that
    identity's inputs; `run.identities`), until each is gone; with none recorded, once, with the inputs
    resolved now."""
    td = run.plan.teardown
    if td is None:
        raise UsageError(f"{run.pf.path}: the plan has no `## Teardown` section")
    resolved = dict(run.knobs)
    exist = identities.existing(run.journal)
    said: list[str] = []
    passes: list[identities.Identity | None] = list(exist) or [None]
    for ident in passes:
        if ident is not None:
            _enter(run, ident, resolved, several=len(exist) > 1)
        said.append(_one(run, td))
        if ident is not None:
            gone = {"keys": ident.keys, "inputs": ident.inputs}
            run.journal.record_event(run.run_id, identities.GONE, gone)
    run.also_exists = tuple(i.describe() for i in identities.existing(run.journal))
    run.teardown_message = "; ".join(said)
    return _end(run, td)


def _enter(run: Run, ident: identities.Identity, resolved: dict[str, str], *, several: bool) -> None:
    """The next teardown pass acts on `ident`: its inputs (the plan's own knobs only), the values it
    realized, and a session that starts afresh, as a run of its own would."""
    run.knobs = {**resolved, **{k: v for k, v in ident.inputs.items() if k in resolved}}
    run.realized = history.realized_values(run.journal, run.forgotten_before, ident.name)
    run.session = SessionState(cwd=str(run.workdir))
    run.zero_scratch = None
    run.withheld, run.withheld_arrays, run.withheld_functions = set(), set(), set()
    run.completed_sections.pop(run.plan.teardown.key if run.plan.teardown else "", None)
    run.journal.record_event(run.run_id, identities.PASS, {"keys": ident.keys, "inputs": run.knobs})
    if several or run.knobs != resolved:
        how = {k: ("previous" if k in ident.inputs else "flag") for k in run.knobs}
        run.bus.emit("inputs", values=run.knobs, how=how, operator=run.cfg.operator)


def _one(run: Run, td: Section) -> str:
    """One teardown pass: §0, then observe first, the 💥 gate, the destructive blocks, verify; what it did,
    in words (raises `Stop` when the run must end here)."""
    plan = run.plan
    for section in plan.executable_sections:
        if section.kind is SectionKind.VARIABLES:
            sections.apply_section(run, section)
    texts = fingerprint.block_texts(td, run.knobs, run.realized)
    try:
        upstream.refuse_destroying_commands(run, td, texts)
    except UpstreamGuard as exc:
        # Refused before anything ran: the run ends `failed`, the ledger is left as it was.
        run.finish(RunState.FAILED, td.key, str(exc), ledger=False)
        raise
    variables = fingerprint.seen(run.session.variables, run.shell.family_values())
    fp = fingerprint.section(texts, {}, run.knobs, variables, run.is_secret)
    started = time.monotonic()
    run.bus.emit("section.start", section=td.key, title=td.title, label="teardown")
    known = decision.Facts(
        kind=decision.Kind.TEARDOWN,
        fingerprint=fp,
        act_interrupted=sections.act_interrupted(run, td),
        acts_done_here=sections.in_progress(run, td, texts),
        gated=True,
    )
    if decision.must_observe(known) and td.verify_blocks:
        seen = sections.observe(run, td, texts)
        known = dataclasses.replace(known, observed=seen, observed_reason=run.observed_reason)
    d = decision.decide(known)
    which = identities.name_of(run.identity)
    if d.action is decision.Action.IN_SYNC:
        sections.done(run, td, fp, None)
        run.report(td, "in-sync", d.detail + (f" ({which})" if which else ""), started)
        return "observed already gone" + (f" ({which})" if which else "") + "; no destructive command ran"
    run.why[td.key] = list(d.reasons) + ([f"tears down {which}"] if which else [])
    approval.gate(run, td, texts, {})
    run.acted = True  # (the ledger is written when the teardown ends: a refused one leaves it as it was)
    # From here what the plan made may be gone: no apply trusts a success or a value realized before it.
    run.journal.record_event(run.run_id, resume.TEARDOWN_ACTED, {"inputs": run.knobs})
    present = upstream.observe(run)
    for b in td.act_blocks:
        steps.step(run, td, b, texts[b.index], "act")
        if present:
            upstream.recheck(run, td, b, present)
    notes, _ = sections.verify(run, td, texts, memo=False, after_act=True)
    sections.done(run, td, fp, None)
    verdict, detail = ("applied", "torn down") if not notes else ("unconfirmed", "; ".join(notes))
    if which:
        detail += f" ({which})"
    whose = run.approved_with.pop(td.key, "")
    run.report(td, verdict, f"{detail}; {whose}" if whose else detail, started)
    bound = {r.key for r in upstream.upstream_rows(plan)}
    rows = plan.live_state.kv_rows if plan.live_state else ()
    values = {r.key: _first_tick(r.value) for r in rows if r.key not in bound}
    values = {k: v for k, v in values.items() if v not in ("", "—") and "$" not in v}
    if any(values.get(k) != v for k, v in run.identity.items()):
        # an identity the ledger no longer shows (a replacement left it): its own values
        values = {k: v for k, v in run.identity.items() if k not in bound}
    existed = [f"{k}={v}" for k, v in values.items()]
    message = "torn down " + (", ".join(existed) if existed else "what the plan created")
    if notes:
        message += " (unconfirmed: " + "; ".join(notes) + ")"
    return message


def _end(run: Run, td: Section) -> RunResult:
    """The teardown completes, unless a process the plan started still runs: then it is not gone."""
    left = processes.still_running(run, td)
    if left is not None:
        return run.fail(td, left)
    return run.finish(RunState.COMPLETED, None, run.teardown_message)

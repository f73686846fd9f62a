"""Teardown: observe first, the 💥 gate, the destructive blocks (upstream guarded), verify; resumable.

Only a passing observation says "already gone" (nothing runs); a skipped or inconclusive one is no
evidence of absence, so the teardown runs behind its gate. It is one section, journaled step by step like
any other, so a SIGKILLed teardown resumes where it stopped.
"""

from __future__ import annotations

import re
import time

from director.errors import UpstreamGuard, UsageError
from director.plan.model import Section, SectionKind
from director.plan.verify import Verdict
from director.run import approval, fingerprint, processes, sections, steps, upstream
from director.run.config import RunResult
from director.run.context import Run
from director.state.lifecycle import RunState


def _first_tick(cell: str) -> str:
    """The first backticked value of a table cell (the realized value), or the cell."""
    m = re.search(r"`([^`]*)`", cell)
    return (m.group(1) if m else cell).strip()


def teardown(run: Run) -> RunResult:
    """Run the plan's Teardown section (§0 first, for its variables)."""
    plan = run.plan
    td = plan.teardown
    if td is None:
        raise UsageError(f"{run.pf.path}: the plan has no `## Teardown` section")
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
    seen: Verdict | None = None
    if not sections.in_progress(run, td, texts):
        seen = sections.observe(run, td, texts) if td.verify_blocks else None
        if seen is Verdict.PASSED:
            sections.done(run, td, fp, None)
            run.report(td, "in-sync", "already gone: nothing to delete", started)
            run.teardown_message = "observed already gone; no destructive command ran"
            return _end(run, td)
    if seen is not None and seen is not Verdict.PASSED:
        run.why[td.key] = [f"observed: its verify {seen.value} ({run.observed_reason or 'not gone'})"]
    approval.gate(run, td, texts, {})
    run.acted = True  # (the ledger is written when the teardown ends: a refused one leaves it as it was)
    present = upstream.observe(run)
    for b in td.act_blocks:
        steps.step(run, td, b, texts[b.index], "act")
        if present:
            upstream.recheck(run, td, b, present)
    notes = sections.verify(run, td, texts, memo=False, after_act=True)
    sections.done(run, td, fp, None)
    verdict, detail = ("applied", "torn down") if not notes else ("unconfirmed", "; ".join(notes))
    whose = run.approved_with.pop(td.key, "")
    run.report(td, verdict, f"{detail}; {whose}" if whose else detail, started)
    bound = {r.key for r in upstream.upstream_rows(plan)}
    existed = [
        f"{r.key}={_first_tick(r.value)}"
        for r in (plan.live_state.kv_rows if plan.live_state else ())
        if _first_tick(r.value) not in ("", "—") and "$" not in _first_tick(r.value) and r.key not in bound
    ]
    run.teardown_message = "torn down " + (", ".join(existed) if existed else "what the plan created")
    if notes:
        run.teardown_message += " (unconfirmed: " + "; ".join(notes) + ")"
    return _end(run, td)


def _end(run: Run, td: Section) -> RunResult:
    """The teardown completes, unless a process the plan started still runs: then it is not gone."""
    left = processes.still_running(run, td)
    if left is not None:
        return run.fail(td, left)
    return run.finish(RunState.COMPLETED, None, run.teardown_message)

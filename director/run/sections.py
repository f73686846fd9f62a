"""One section, observe before act: in sync, or gate → act → verify; and what the section realizes.

The rules (DESIGN: "Observe before act"; docs/verify-semantics.md for what an observation says):
a section whose verify passes and whose fingerprint equals its last success is in sync; a skipped
observation is no evidence, so only the journal can say it is unchanged; otherwise the gate, the act, the
verify. ✔ sections always run; a section without a verify block is memoized by its fingerprint.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections.abc import Mapping
from pathlib import Path

from director.errors import PlanError
from director.exec.shell import SessionState
from director.files import remove_stale_temps, write_atomic
from director.ledger import cells
from director.plan import knobs, templates
from director.plan.contrast import Phase
from director.plan.model import Section
from director.plan.verify import CheckResult, Judgement, Verdict
from director.run import (
    acceptance,
    approval,
    decision,
    fingerprint,
    history,
    identities,
    reasons,
    session,
    steps,
)
from director.run.config import Stop
from director.run.context import Run
from director.run.fingerprint import Templates


def render_templates(section: Section, state: SessionState, knob_values: dict[str, str]) -> Templates:
    """Template block index -> (target path, regenerated content) in this session (TemplateError if not)."""
    out: Templates = {}
    env = dict(state.variables)
    for b in section.template_blocks:
        if not b.template_target:
            continue
        path = templates.resolve_target(b.template_target, env, state.cwd)
        content = templates.render_template(b, env, knob_values)
        out[b.index] = (path, content if content.endswith("\n") else content + "\n")
    return out


def _templates(run: Run, section: Section) -> Templates:
    try:
        return render_templates(section, run.session, run.knobs)
    except knobs.TemplateError as exc:
        raise Stop(run.fail(section, f"file template: {exc}")) from exc


def write_templates(run: Run, section: Section, regenerated: Templates) -> None:
    """Write the regenerated files that differ from what is on disk (journaled, announced)."""
    for idx, (path, content) in regenerated.items():
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temps(p)  # a killed earlier run's (we hold the lease: no other writer runs)
        if not write_atomic(p, content):
            continue  # already so on disk
        run.journal.record_event(
            run.run_id,
            "template-written",
            {
                "section": section.key,
                "block": idx,
                "path": path,
                "sha256": hashlib.sha256(content.encode()).hexdigest(),
            },
        )
        run.bus.emit("target", op="template-written", detail=path)


def _seen(run: Run) -> Mapping[str, str]:
    return fingerprint.seen(run.session.variables, run.shell.family_values())


def in_progress(run: Run, section: Section, texts: dict[int, str]) -> bool:
    """A section whose act steps already ran in this run (a crash between act and verify)."""
    if section.key in run.completed_sections:
        return False
    for b in section.act_blocks:
        done = run.done_steps.get(f"{section.key}/{b.index}")
        fp = fingerprint.step(texts[b.index], run.knobs, _seen(run), run.is_secret)
        if done is not None and done.fingerprint == fp:
            return True
    return False


def act_interrupted(run: Run, section: Section) -> bool:
    """An attempt of the section's act was running when Director died or was interrupted (it runs again)."""
    return any(f"{section.key}/{b.index}" in run.interrupted_acts for b in section.act_blocks)


def record(run: Run, section: Section, j: Judgement, observation: bool = False) -> None:
    """What the rows fed by this section will say: what the run saw last, a failed observation too (a row
    it saw failing is never left ✅; the verify after an act overwrites it). A skipped observation is no
    evidence either way: the row keeps what it said."""
    if observation and j.verdict is Verdict.SKIPPED:
        return
    ls = run.plan.live_state  # only what a check row is fed by is kept: a long plan with few rows keeps few
    fed = ls.fed_refs if ls is not None else frozenset()
    for label, r in j.labels.items():
        if f"label:{label}" in fed:
            run.by_ref[f"label:{label}"] = r
    if f"section:{section.key}" in fed:
        run.by_ref[f"section:{section.key}"] = CheckResult(j.verdict, j.observed)


def observe(run: Run, section: Section, texts: dict[int, str]) -> Verdict:
    """The section's verify blocks as an observation: the first verdict that is not a pass, or pass.

    A check's extra run: it runs in the session as document order has it before the section (`run.session`,
    the state the blocks before it left) and leaves no trace there (DESIGN: "A check leaves the session as
    plain bash would"); its verify blocks see each other's changes, as they would after the act.
    """
    seen = Verdict.PASSED
    run.observed_reason = ""
    state = run.session
    for b in section.verify_blocks:
        res, j = steps.step(run, section, b, texts[b.index], "observe", memo=False, start=state)
        state = res.state if b.cwd is None else state
        assert j is not None
        if res.signal is not None and not (res.timed_out or res.waited_for_input or res.interrupted):
            # Killed from outside (OOM killer, an operator): no evidence either way. Re-applying on it
            # would re-run acts that may well have finished; stop, and let the next apply look again.
            raise Stop(
                run.fail(
                    section,
                    f"{run.label(section)} observation was killed (signal {res.signal}) before it could "
                    "tell; nothing was re-applied on it. Apply again to observe anew",
                )
            )
        record(run, section, j, observation=True)
        if j.verdict is Verdict.SKIPPED and seen is Verdict.PASSED:
            seen, run.observed_reason = Verdict.SKIPPED, j.reason
        elif j.verdict is not Verdict.PASSED:
            run.observed_reason = j.reason
            return j.verdict
    return seen


def verify(
    run: Run, section: Section, texts: dict[int, str], *, memo: bool, after_act: bool
) -> tuple[list[str], bool]:
    """The verify blocks (after the act, or a ✔ section's checks): a failure stops the run; returns what is
    unconfirmed or skipped, and whether a check was inconclusive. `after_act`: contrast each check with what
    it showed before the act."""
    notes: list[str] = []
    inconclusive = False
    for b in section.verify_blocks:
        phase: Phase = "after-act" if after_act else "observe"
        res, j = steps.step(run, section, b, texts[b.index], "verify", memo=memo, phase=phase)
        assert j is not None
        record(run, section, j)
        if j.verdict is Verdict.FAILED:
            what = f"{run.label(section)} verify failed"
            raise Stop(run.fail(section, steps.failure(what, b, res, j.reason)))
        if j.verdict is Verdict.INCONCLUSIVE:
            note = f"{run.label(section)} inconclusive: {j.reason}"
            run.unconfirmed.append(note)
            run.bus.emit("check.warning", section=section.key, text=note)
            run.journal.record_event(
                run.run_id, "check-inconclusive", {"section": section.key, "why": j.reason}
            )
            notes.append(j.reason)
            inconclusive = True
        elif j.verdict is Verdict.SKIPPED:
            notes.append(j.reason)
    return notes, inconclusive


def _hints(section: Section) -> list[str]:
    return list(section.hints) + [h for b in section.blocks for h in b.hints]


def realize_observed(run: Run, section: Section) -> None:
    """Keys this section realizes (its `→ Live State` hints) that the session holds after its verify.

    Taken after the section verified (applied or observed in sync), never from the observation before
    its act, and taken again each time it verifies, so a realized value follows what is really there.
    """
    ls = run.plan.live_state
    if ls is None:
        return
    found = {
        key: run.session.variables[key]
        for key in cells.keys_named(_hints(section), ls.kv_rows)
        if key in run.session.variables
        and not run.is_secret(key)
        and run.realized.get(key) != run.session.variables[key]
        # a value holding a secret, or a fragment of one, is never journaled (Live State shows it masked)
        and run.shell.redactor.redact(run.session.variables[key]) == run.session.variables[key]
    }
    if found:
        run.realized.update(found)
        data = {"section": section.key, "values": found, "identity": identities.name_of(run.identity)}
        run.journal.record_event(run.run_id, "realized", data)


def realize_from_output(run: Run, section: Section, output: str) -> None:
    """Keys this section realizes that no variable holds: a URL its act printed (a deploy's address)."""
    ls = run.plan.live_state
    if ls is None:
        return
    found: dict[str, str] = {}
    for key in cells.keys_named(_hints(section), ls.kv_rows):
        if key in run.session.variables or "URL" not in key.upper():
            continue  # a variable is realized from the session once the section verified
        cond = knobs.kv_condition(next(r.value for r in ls.kv_rows if r.key == key))
        if cond is not None and run.knobs.get(cond[0]) not in (None, cond[1]):
            continue
        url = cells.first_url(output)
        if url:
            found[key] = url
    if found:
        run.realized.update(found)
        data = {"section": section.key, "values": found, "identity": identities.name_of(run.identity)}
        run.journal.record_event(run.run_id, "realized", data)


def done(
    run: Run,
    section: Section,
    fp: str,
    change: SessionState | None,
    *,
    journal: bool = True,
    basis: dict[str, object] | None = None,
    unconfirmed: bool = False,
) -> None:
    """The section succeeded: its rows are realized, its approval spent, its session change journaled
    (`change`: what its act then its verify, run once, changed in the session -- adopted instead of
    re-running them when it is later in sync -- or None when nothing is known of it); with `basis`, what
    this success rested on, so that the next change can be named (`reasons`); `unconfirmed`: a check after
    its act was inconclusive, so this success is no evidence that it holds (`decision`)."""
    run.completed_sections[section.key] = fp
    # Never consulted again in this invocation (a completed section is in sync from here on): a long plan
    # does not keep every step's output and session change in memory (the journal has them).
    for b in section.blocks:
        run.done_steps.pop(f"{section.key}/{b.index}", None)
    run.why.pop(section.key, None)
    if run.plan.live_state is not None:
        run.realized_rows.update(cells.keys_named(_hints(section), run.plan.live_state.kv_rows))
    approval.approval_used(run, section)
    if journal:
        # One commit for the section row, the recovery reset and the basis.
        run.journal.section_succeeded(
            run.run_id,
            f"{section.key}/section",
            section.key,
            fp,
            None if change is None else session.as_journaled(run, change),
            None if basis is None else (reasons.KIND, basis),
            unconfirmed=unconfirmed,
        )
        run.successes.recorded(f"{section.key}/section")
        if basis is not None:
            run.bases.recorded(basis)


def facts(
    run: Run, section: Section, texts: dict[int, str], regenerated: Templates, fp: str
) -> decision.Facts:
    """What the run knows of a section when it reaches it (before any observation)."""
    last = run.last_success(section.key)
    completed_here = run.completed_sections.get(section.key) == fp
    unchanged = completed_here or (last is not None and last.fingerprint == fp)
    changes: tuple[str, ...] = ()
    replaces: tuple[str, ...] = ()
    if last is not None and not unchanged:
        vars_now, redact = run.session.variables, run.shell.redactor.redact
        now = reasons.basis(section, texts, run.knobs, vars_now, regenerated, run.is_secret, redact)
        before = run.bases.last(section.key)
        if before is not None:
            changes = tuple(reasons.changes(before, now, section))
            old = dict(before.get("identity") or {})
            replaces = identities.replaced(old, run.identity, run.existing)
    return decision.Facts(
        kind=decision.kind_of(section, run.knobs),
        fingerprint=fp,
        completed_here=completed_here,
        last_fingerprint=None if last is None else last.fingerprint,
        last_confirmed=last is None or last.confirmed,
        torn_down=last is None and run.torn_down(section.key),
        act_interrupted=act_interrupted(run, section),
        acts_done_here=in_progress(run, section, texts),
        template_drift=tuple(reasons.file_reason(p) for p in reasons.template_drift(regenerated)),
        changes=changes,
        replaces=replaces,
        gated=knobs.gate_of(section, run.knobs) is not None,
    )


def adopt_last(run: Run, section: Section) -> SessionState | None:
    """In sync: the session change its last success journaled (its act then its verify, run once) is
    applied instead of re-running them; returns that change (journaled again with this success)."""
    last = run.last_success(section.key)
    if last is None or last.session is None:
        return None
    change = SessionState.from_json(last.session)
    session.adopt(run, last.session)
    return change


def apply_section(run: Run, section: Section) -> None:
    """Observe before act for one section (raises `Stop` when the run must end here). Its journal writes
    are one batch: committed with each block's intent, and once at its end (docs/durability.md)."""
    with run.journal.batch():
        _apply_section(run, section)


def _apply_section(run: Run, section: Section) -> None:
    label = run.label(section)
    started = time.monotonic()
    run.bus.emit("section.start", section=section.key, title=section.title, label=label)
    texts = fingerprint.block_texts(section, run.knobs, run.realized)
    regenerated = _templates(run, section)
    fp = fingerprint.section(texts, regenerated, run.knobs, _seen(run), run.is_secret)
    vars_now, redact = run.session.variables, run.shell.redactor.redact
    now_basis = reasons.basis(
        section, texts, run.knobs, vars_now, regenerated, run.is_secret, redact, run.identity
    )
    known = facts(run, section, texts, regenerated, fp)
    if decision.must_observe(known):
        seen = observe(run, section, texts)
        known = dataclasses.replace(known, observed=seen, observed_reason=run.observed_reason)
    d = decision.decide(known)

    if d.action is decision.Action.IN_SYNC:
        change = adopt_last(run, section)
        if known.kind is decision.Kind.VARIABLES:
            settle_variables(run)
        if known.kind is decision.Kind.PLAIN and not known.completed_here:
            # its success in this run carries the change it adopted (a resumed run adopts it in turn)
            done(run, section, fp, change)
        if known.kind is decision.Kind.OBSERVED:
            done(run, section, fp, change, journal=not known.completed_here)
            realize_observed(run, section)
            run.write_ledger(status="applying")
        run.report(section, "in-sync", d.detail, started)
        return

    pre = run.session  # the session document order has before the section
    if d.action is decision.Action.VERIFY_ONLY:
        write_templates(run, section, regenerated)
        after = acceptance.seen_before(run, section, texts)
        notes, inconclusive = verify(run, section, texts, memo=True, after_act=after)
        done(run, section, fp, session.delta(pre, run.session), unconfirmed=inconclusive)
        realize_observed(run, section)
        run.verified.append(label)
        run.write_ledger(status="applying")
        verdict = "verified" if not notes else "unconfirmed" if inconclusive else "skipped"
        run.report(section, verdict, "; ".join(notes), started)
        return

    # act (behind its gate, if one applies), then the verify
    if known.kind is not decision.Kind.VARIABLES:
        run.why[section.key] = list(d.reasons)
        approval.gate(run, section, texts, regenerated)
        acceptance.before_first_act(run)
        record_identity(run)
        run.begin_acting()
    write_templates(run, section, regenerated)
    memo = not known.completed_here
    outputs = [steps.step(run, section, b, texts[b.index], "act", memo=memo, rerun=d.rerun)[0].output
               for b in section.act_blocks]  # fmt: skip
    if known.kind is decision.Kind.VARIABLES:
        done(run, section, fp, session.delta(pre, run.session), basis=None if d.quiet else now_basis)
        settle_variables(run)
        if d.quiet:
            # §0 runs in every run (its values feed the others); it changes nothing outside the session
            run.report(section, "in-sync", d.detail, started)
            return
        run.applied.append(label)
        run.report(section, "applied", "", started)
        return
    if known.kind is decision.Kind.PLAIN:
        done(run, section, fp, session.delta(pre, run.session), basis=now_basis)
        run.applied.append(label)
        run.report(section, "applied", _applied_detail(run, section, d, known), started)
        return
    realize_from_output(run, section, "\n".join(outputs))
    notes, inconclusive = verify(run, section, texts, memo=False, after_act=True)
    done(run, section, fp, session.delta(pre, run.session), basis=now_basis, unconfirmed=inconclusive)
    realize_observed(run, section)
    run.applied.append(label)
    run.write_ledger(status="applying")
    verdict = "applied" if not notes else "unconfirmed"
    said = "; ".join(x for x in (_applied_detail(run, section, d, known), *notes) if x)
    run.report(section, verdict, said, started)


def _applied_detail(run: Run, section: Section, d: decision.Decision, known: decision.Facts) -> str:
    """Why it (re-)applied -- said only when it had succeeded before, or its act was interrupted --, and
    whose receipt let it act."""
    parts = [w for w in d.reasons if known.ever_succeeded or w == decision.INTERRUPTED]
    if section.key in run.approved_with:
        parts.append(run.approved_with.pop(section.key))
    return "; ".join(parts)


def settle_variables(run: Run) -> None:
    """After §0: every knob reaches the blocks as resolved, or the run is refused (`knobs.unresolved`);
    then what this run's inputs name (its identity), what it replaces, and the values it realized."""
    bad = knobs.unresolved(run.plan, run.knobs, run.session.variables, run.shell.inherited)
    if bad:
        raise PlanError("; ".join(bad) + " (nothing past §0 was run)", path=str(run.pf.path))
    kv = run.kv_templates() if run.plan.live_state is not None else {}
    run.identity = identities.of(run.plan, kv, run.session.variables, run.knobs)
    run.existing = tuple(identities.existing(run.journal))
    mine = identities.name_of(run.identity)
    run.also_exists = tuple(i.describe() for i in run.existing if i.name != mine)
    if run.cfg.kind == "apply":
        mine = identities.name_of(run.identity)
        run.realized = history.realized_values(run.journal, run.forgotten_before, mine)


def record_identity(run: Run) -> None:
    """Before an apply's first act: its identity exists from here (maybe partly), with its inputs."""
    if run.identity_recorded or run.cfg.kind != "apply":
        return
    run.identity_recorded = True
    run.journal.record_event(run.run_id, identities.EXISTS, {"keys": run.identity, "inputs": run.knobs})

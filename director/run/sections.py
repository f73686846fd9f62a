"""One section, observe before act: in sync, or gate → act → verify; and what the section realizes.

The rules (DESIGN: "Observe before act"; docs/verify-semantics.md for what an observation says):
a section whose verify passes and whose fingerprint equals its last success is in sync; a skipped
observation is no evidence, so only the journal can say it is unchanged; otherwise the gate, the act, the
verify. ✔ sections always run; a section without a verify block is memoized by its fingerprint.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from pathlib import Path

from director.exec.shell import SessionState
from director.files import remove_stale_temps, write_atomic
from director.ledger import cells
from director.plan import knobs, templates
from director.plan.contrast import Phase
from director.plan.model import Section, SectionKind
from director.plan.verify import CheckResult, Judgement, Verdict
from director.run import acceptance, approval, fingerprint, reasons, session, steps
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


def record(run: Run, section: Section, j: Judgement, observation: bool = False) -> None:
    """What the rows fed by this section will say: what the run saw last, a failed observation too (a row
    it saw failing is never left ✅; the verify after an act overwrites it). A skipped observation is no
    evidence either way: the row keeps what it said."""
    if observation and j.verdict is Verdict.SKIPPED:
        return
    for label, r in j.labels.items():
        run.by_ref[f"label:{label}"] = r
    run.by_ref[f"section:{section.key}"] = CheckResult(j.verdict, j.observed)


def observe(run: Run, section: Section, texts: dict[int, str]) -> Verdict:
    """The section's verify blocks as an observation: the first verdict that is not a pass, or pass."""
    seen = Verdict.PASSED
    run.observed_reason = ""
    for b in section.verify_blocks:
        res, j = steps.step(run, section, b, texts[b.index], "observe", memo=False)
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
            seen = Verdict.SKIPPED
        elif j.verdict is not Verdict.PASSED:
            run.observed_reason = j.reason
            return j.verdict
    return seen


def verify(run: Run, section: Section, texts: dict[int, str], *, memo: bool, after_act: bool) -> list[str]:
    """The verify blocks (after the act, or a ✔ section's checks): a failure stops the run; returns what is
    unconfirmed or skipped. `after_act`: contrast each check with what it showed before the act."""
    notes: list[str] = []
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
        elif j.verdict is Verdict.SKIPPED:
            notes.append(j.reason)
    return notes


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
        run.journal.record_event(run.run_id, "realized", {"section": section.key, "values": found})


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
        run.journal.record_event(run.run_id, "realized", {"section": section.key, "values": found})


def done(
    run: Run,
    section: Section,
    fp: str,
    before: SessionState | None,
    *,
    journal: bool = True,
    basis: dict[str, object] | None = None,
) -> None:
    """The section succeeded: its rows are realized, its approval spent, its session change journaled
    (with `basis`, what this success rested on, so that the next change can be named: `reasons`)."""
    run.completed_sections[section.key] = fp
    if run.plan.live_state is not None:
        run.realized_rows.update(cells.keys_named(_hints(section), run.plan.live_state.kv_rows))
    approval.approval_used(run, section)
    if journal:
        change = session.delta(before, run.session)
        # One commit for the section row, the recovery reset and the basis.
        run.journal.section_succeeded(
            run.run_id,
            f"{section.key}/section",
            section.key,
            fp,
            session.as_journaled(run, change),
            None if basis is None else (reasons.KIND, basis),
        )
        run.successes.recorded(f"{section.key}/section")
        if basis is not None:
            run.bases.recorded(basis)


def _observed_words(verdict: Verdict, reason: str) -> str:
    return f"its verify {verdict.value}" + (f" ({reason})" if reason else "")


def apply_section(run: Run, section: Section) -> None:
    """Observe before act for one section (raises `Stop` when the run must end here)."""
    label = run.label(section)
    started = time.monotonic()
    run.bus.emit("section.start", section=section.key, title=section.title, label=label)
    texts = fingerprint.block_texts(section, run.knobs, run.realized)
    regenerated = _templates(run, section)
    fp = fingerprint.section(texts, regenerated, run.knobs, _seen(run), run.is_secret)
    completed_here = run.completed_sections.get(section.key) == fp
    last = run.successes.last(f"{section.key}/section")
    unchanged = completed_here or (last is not None and last.fingerprint == fp)
    vars_now, redact = run.session.variables, run.shell.redactor.redact
    now_basis = reasons.basis(section, texts, run.knobs, vars_now, regenerated, run.is_secret, redact)

    def adopt_last() -> None:
        """In sync from an earlier run: apply the session change it journaled instead of re-running."""
        if not completed_here and last is not None and last.session is not None:
            session.adopt(run, last.session)

    def why(drift: list[str], observed: str = "") -> list[str]:
        found = reasons.why_not_in_sync(
            # the earlier basis names what changed; read only then (the first read loads every section's)
            last=run.bases.last(section.key) if last is not None and not unchanged else None,
            ever_succeeded=last is not None,
            unchanged=unchanged,
            now=now_basis,
            section=section,
            drift=drift,
            observed=observed,
        )
        run.why[section.key] = found
        return found

    def applied_detail(notes: list[str]) -> str:
        """Why it (re-)applied -- said only when it had succeeded before --, whose receipt, its notes."""
        parts = [w for w in run.why.get(section.key, []) if last is not None]
        if section.key in run.approved_with:
            parts.append(run.approved_with.pop(section.key))
        return "; ".join([*parts, *notes])

    if section.kind is SectionKind.VARIABLES or not section.verify_blocks:
        # Nothing to observe: memoized by fingerprint (within the run; §0 re-runs in a new run).
        drift = reasons.template_drift(regenerated)
        if completed_here or (section.kind is not SectionKind.VARIABLES and unchanged and not drift):
            adopt_last()
            run.report(section, "in-sync", "unchanged since its last success", started)
            return
        before = run.session
        if section.kind is not SectionKind.VARIABLES:
            why(drift)
            approval.gate(run, section, texts, regenerated)
            acceptance.before_first_act(run)
            run.begin_acting()
        write_templates(run, section, regenerated)
        for b in section.act_blocks:
            steps.step(run, section, b, texts[b.index], "act")
        variables_unchanged = section.kind is SectionKind.VARIABLES and unchanged
        done(run, section, fp, before, basis=None if variables_unchanged else now_basis)
        if variables_unchanged:
            # §0 runs in every run (its values feed the others); it changes nothing outside the session
            run.report(section, "in-sync", "variables set; unchanged since its last success", started)
            return
        run.applied.append(label)
        run.report(section, "applied", applied_detail([]), started)
        return

    if knobs.is_check_section(section, run.knobs):
        if completed_here:
            run.report(section, "in-sync", "verified earlier in this run", started)
            return
        write_templates(run, section, regenerated)
        notes = verify(run, section, texts, memo=True, after_act=acceptance.seen_before(run, section, texts))
        done(run, section, fp, None)
        realize_observed(run, section)
        run.verified.append(label)
        run.write_ledger(status="applying")
        inconclusive = any(n.startswith(f"{label} inconclusive") for n in run.unconfirmed)
        verdict = "verified" if not notes else "unconfirmed" if inconclusive else "skipped"
        run.report(section, verdict, "; ".join(notes), started)
        return

    rerun: str | None = None  # why a section that succeeded before runs its act again
    drift = reasons.template_drift(regenerated)
    if not in_progress(run, section, texts):
        seen = observe(run, section, texts)
        # A pass is evidence; a skipped observation is none, so only the journal can say the section is
        # unchanged since it last succeeded (as for a section without a verify block). A file template
        # that differs on disk is a change whatever the observation says.
        if unchanged and seen in (Verdict.PASSED, Verdict.SKIPPED) and not drift:
            adopt_last()
            done(run, section, fp, None, journal=not completed_here)
            realize_observed(run, section)
            run.write_ledger(status="applying")
            detail = (
                "observed; unchanged since its last success"
                if seen is Verdict.PASSED
                else "its verify was skipped (precondition false); unchanged since its last success"
            )
            run.report(section, "in-sync", detail, started)
            return
        if completed_here or last is not None:
            rerun = "observed-missing" if unchanged else "changed"
        observed = (
            "" if seen in (Verdict.PASSED, Verdict.SKIPPED) else _observed_words(seen, run.observed_reason)
        )
        why(drift, observed)
    else:
        why(drift, "its act steps already ran in this run (resumed)")
    before = run.session
    approval.gate(run, section, texts, regenerated)
    acceptance.before_first_act(run)
    run.begin_acting()
    write_templates(run, section, regenerated)
    memo = not completed_here
    outputs = [steps.step(run, section, b, texts[b.index], "act", memo=memo, rerun=rerun)[0].output
               for b in section.act_blocks]  # fmt: skip
    realize_from_output(run, section, "\n".join(outputs))
    notes = verify(run, section, texts, memo=False, after_act=True)
    done(run, section, fp, before, basis=now_basis)
    realize_observed(run, section)
    run.applied.append(label)
    run.write_ledger(status="applying")
    run.report(section, "applied" if not notes else "unconfirmed", applied_detail(notes), started)

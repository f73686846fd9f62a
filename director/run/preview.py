"""`director plan` and `director check`: §0 and the observations, never an act, never a write.

Each section gets the verdict `apply` would reach: in sync, will apply, needs approval (exactly when apply
would stop at its gate), blocked (behind a section that will change), or, for `check`, drift against what
the ledger says.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from director.exec.shell import SessionState, Shell
from director.plan import knobs, markers
from director.plan.model import Plan, Section, SectionKind, section_label
from director.plan.verify import CheckResult, Verdict
from director.run import approval, fingerprint, reasons, sections, session, steps
from director.run.config import RunConfig, RunResult, SectionReport
from director.run.events import Bus
from director.run.gates import matches
from director.run.worlds import Worlds, family_of
from director.state.store import SectionSuccesses, StateStore


@dataclass
class Preview:
    """One `plan`/`check` invocation: what it has observed so far."""

    plan: Plan
    journal: StateStore
    shell: Shell
    bus: Bus
    cfg: RunConfig
    is_secret: Callable[[str], bool]
    knobs: dict[str, str]
    realized: dict[str, str]
    session: SessionState
    by_ref: dict[str, CheckResult] = field(default_factory=dict)
    reports: list[SectionReport] = field(default_factory=list)
    worlds: Worlds = field(init=False)  # read-only here: a preview learns nothing

    def __post_init__(self) -> None:
        self.worlds = Worlds(self.journal)

    def _verdict(self, section: Section, verdict: str, detail: str) -> None:
        label = section_label(section)
        self.reports.append(SectionReport(section.key, section.title, verdict, detail))
        self.bus.emit("section.verdict", section=section.key, label=label, verdict=verdict, detail=detail)

    def _gate_sha(self, section: Section, texts: dict[int, str], templates: fingerprint.Templates) -> str:
        c = approval.gate_content(self.plan, section, self.knobs, texts, templates, self.session.variables)
        return c.sha256 if c is not None else ""

    def _needs_approval(
        self, section: Section, texts: dict[int, str], templates: fingerprint.Templates
    ) -> bool:
        """Exactly when apply would stop at this section's gate (no receipt, no flag, not auto-approved)."""
        gate = knobs.gate_of(section, self.knobs)
        if gate is None:
            return False
        receipt = self.journal.find_approval(section.key, self._gate_sha(section, texts, templates))
        if receipt is not None and not approval.consumed(self.journal, receipt.id):
            return False  # an unspent receipt for exactly this content
        if any(matches(s, section.key, section.slug, section.title) for s in self.cfg.approve):
            return False
        rule = markers.by_glyph(gate.marker.value)
        return not (self.cfg.auto_approve and rule is not None and rule.auto_approvable)

    def _observe(self, section: Section, texts: dict[int, str]) -> tuple[Verdict, str]:
        seen, reason = Verdict.PASSED, ""
        for b in section.verify_blocks:
            start = steps.block_session(self.session, b, self.session.cwd)
            r = self.shell.run(
                texts[b.index], start, timeout_s=self.cfg.step_timeout_s, on_output=None, trace=True,
                keeps_session=session.kept_by(start, texts[b.index]),
            )  # fmt: skip
            self.session = r.state if b.cwd is None else replace(r.state, cwd=self.session.cwd)
            j, _ = steps.judge_block(
                b, texts[b.index], r, self.worlds, family=family_of(section), phase="observe"
            )
            for label, lr in j.labels.items():
                self.by_ref[f"label:{label}"] = lr
            self.by_ref[f"section:{section.key}"] = CheckResult(j.verdict, j.observed)
            if j.verdict is Verdict.SKIPPED and seen is Verdict.PASSED:
                seen, reason = Verdict.SKIPPED, j.reason
            elif j.verdict is not Verdict.PASSED:
                return j.verdict, j.reason
        return seen, reason

    def run(self) -> RunResult:
        """Observe every section the run would visit and say what apply (or teardown) would do."""
        plan = self.plan
        result = RunResult("check" if self.cfg.mode == "check" else "preview", None)
        blocked_by: str | None = None  # the first section that will apply
        stop_at: str | None = None  # the first gate apply would stop at
        ls = plan.live_state
        status = str(ls.data.get("status", "")) if ls else ""
        todo = list(plan.executable_sections)
        bases = reasons.Bases(self.journal)
        successes = SectionSuccesses(self.journal)
        if self.cfg.kind == "teardown" and plan.teardown is not None:
            todo = [s for s in todo if s.kind is SectionKind.VARIABLES] + [plan.teardown]
        for section in todo:
            label = section_label(section)
            texts = fingerprint.block_texts(section, self.knobs, self.realized)
            if section.kind is SectionKind.VARIABLES:
                for b in section.act_blocks:
                    r = self.shell.run(
                        texts[b.index], self.session, timeout_s=self.cfg.step_timeout_s, on_output=None
                    )
                    self.session = r.state
                self._verdict(section, "observed", "variables")
                continue
            if knobs.is_check_section(section, self.knobs) and section.kind is not SectionKind.DISCOVERY:
                self._verdict(section, "will-verify", "acceptance checks run on apply (they act), not here")
                continue
            try:
                templates = (
                    {} if section.kind is SectionKind.TEARDOWN
                    else sections.render_templates(section, self.session, self.knobs)
                )  # fmt: skip
            except knobs.TemplateError as exc:
                result.changes = True
                self._verdict(section, "failed", f"file template: {exc}")
                blocked_by = blocked_by or label
                continue
            fp = fingerprint.section(texts, templates, self.knobs, self.session.variables, self.is_secret)
            seen, reason = self._observe(section, texts)
            holds, unobservable = seen is Verdict.PASSED, seen is Verdict.SKIPPED
            template_drift = reasons.template_drift(templates)
            last = successes.last(f"{section.key}/section")
            in_sync = (
                (holds or unobservable) and not template_drift and last is not None and last.fingerprint == fp
            )
            if section.kind is SectionKind.TEARDOWN:
                verdict = (
                    "in-sync"
                    if holds
                    else "needs-approval"
                    if self._needs_approval(section, texts, {})
                    else "will-apply"
                )
                detail = "already gone" if holds else f"would tear down ({reason or 'no verify block'})"
                result.changes = result.changes or not holds
            elif section.kind is SectionKind.DISCOVERY:
                verdict = "in-sync" if holds or unobservable else "failed"
                detail = (
                    "upstream resources present" if holds
                    else reason if unobservable
                    else f"an upstream resource is missing ({reason})"
                )  # fmt: skip
                if not (holds or unobservable):
                    result.drift.append(f"{label}: {detail}")
                    result.changes = True
            elif in_sync:
                verdict = "in-sync"
                detail = (
                    "observed; unchanged since its last success" if holds
                    else f"unchanged since its last success; not observable ({reason})"
                )  # fmt: skip
            else:
                result.changes = True
                why = reasons.why_not_in_sync(
                    last=bases.last(section.key),
                    ever_succeeded=last is not None,
                    unchanged=last is not None and last.fingerprint == fp,
                    now=reasons.basis(
                        section, texts, self.knobs, self.session.variables, templates, self.is_secret,
                        lambda s: s,
                    ),
                    section=section,
                    drift=template_drift,
                    observed="" if holds or unobservable else f"its verify {seen.value} ({reason})",
                )  # fmt: skip
                detail = "; ".join(why)
                # apply stops at the first gate without an approval: what lies behind it is blocked; a gate
                # behind sections that will apply is reached once they did, so it needs approval all the same
                gated = stop_at is None and self._needs_approval(section, texts, templates)
                if stop_at is not None or (blocked_by is not None and not holds and not gated):
                    verdict = "blocked"
                    detail = f"behind {stop_at or blocked_by}; " + detail
                elif gated:
                    verdict, stop_at = "needs-approval", label
                    if blocked_by is not None:
                        detail = f"after {blocked_by} applies; " + detail
                else:
                    verdict = "will-apply"
                    blocked_by = blocked_by or label
                if status.startswith("live") and ((not holds and not unobservable) or template_drift):
                    result.drift.append(f"{label} {section.title}: {detail}")
            self._verdict(section, verdict, detail)
            if last is not None and last.session is not None and section.kind is not SectionKind.TEARDOWN:
                # as apply would: the values an earlier section exported feed the later ones (and their gates)
                self.session = session.apply_delta(self.session, SessionState.from_json(last.session))
        if ls is not None and self.cfg.mode == "check":
            for row in ls.check_rows:
                for ref in row.fed_by:
                    o = self.by_ref.get(ref)
                    if (
                        o is not None
                        and row.result.startswith("✅")
                        and o.verdict
                        in (
                            Verdict.FAILED,
                            Verdict.INCONCLUSIVE,
                        )
                    ):
                        result.drift.append(
                            f"check row {row.name!r}: ledger says {row.result}, observed: "
                            f"{o.verdict.value}: {o.observed or 'fails'}"
                        )
        result.sections = self.reports
        if self.cfg.mode == "check":
            result.changes = bool(result.drift)
        return result

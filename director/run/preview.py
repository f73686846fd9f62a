"""`director plan` and `director check`: §0 and the observations, never an act, never a write.

Each section gets the verdict `apply` would reach: in sync, will apply, needs approval (exactly when apply
would stop at its gate), blocked (behind a section that will change), or, for `check`, drift against what
the ledger says.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

from director.errors import PlanError
from director.exec.shell import SessionState, Shell
from director.ledger.evidence import read_evidence
from director.plan import knobs, markers
from director.plan.model import Plan, Section, SectionKind, label_list, section_label
from director.plan.verify import CheckResult, Verdict
from director.run import (
    approval,
    decision,
    fingerprint,
    identities,
    reasons,
    resume,
    sections,
    session,
    steps,
)
from director.run.config import RunConfig, RunResult, SectionReport
from director.run.events import Bus
from director.run.gates import matches
from director.run.worlds import Worlds, family_of
from director.state.store import SectionSuccesses, StateStore

# Ledger statuses: those that say the plan's resources exist (drift is judged against them), and those that
# say nothing exists (`check` reads an absent section as recorded).
LEDGER_LIVE = ("live", "drifted")
LEDGER_ABSENT = {"gone": "gone", "not-created": "not created"}


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
    forgotten_before: int = 0  # successes of runs before it are void (a teardown acted in it)
    identity: dict[str, str] = field(default_factory=dict)  # what the inputs name (`run.identities`)
    existing: tuple[identities.Identity, ...] = ()  # the identities the journal says exist
    by_ref: dict[str, CheckResult] = field(default_factory=dict)
    reports: list[SectionReport] = field(default_factory=list)
    worlds: Worlds = field(init=False)  # read-only here: a preview learns nothing

    def __post_init__(self) -> None:
        self.worlds = Worlds(self.journal)

    def _verdict(self, section: Section, verdict: str, detail: str) -> None:
        label = section_label(section)
        self.reports.append(SectionReport(section.key, section.title, verdict, detail))
        self.bus.emit("section.verdict", section=section.key, label=label, title=section.title,
                      verdict=verdict, detail=detail)  # fmt: skip

    def _content(
        self, section: Section, texts: dict[int, str], templates: fingerprint.Templates
    ) -> approval.GateContent | None:
        """The gate's content as apply would compute it: the act's closure in this session."""
        seal = approval.preview_sealer(self.cfg.closure_key, self.shell.redactor.redact, self.is_secret)
        where = approval.reach(self.shell, self.session, section, texts, templates, seal, self.shell.workdir)
        c = approval.content_for(self.plan, section, self.knobs, texts, where)
        return None if c is None else dataclasses.replace(c, reach=where.to_json())

    def _gate_sha(self, section: Section, texts: dict[int, str], templates: fingerprint.Templates) -> str:
        c = self._content(section, texts, templates)
        return c.sha256 if c is not None else ""

    def _needs_approval(
        self, section: Section, texts: dict[int, str], templates: fingerprint.Templates
    ) -> bool:
        """Exactly when apply would stop at this section's gate (no receipt, no flag, not auto-approved)."""
        gate = knobs.gate_of(section, self.knobs)
        if gate is None:
            return False
        if approval.has_receipt(self.journal, section.key, self._gate_sha(section, texts, templates)):
            return False  # an unspent receipt for exactly this content
        if any(matches(s, section.key, section.slug, section.title) for s in self.cfg.approve):
            return False
        rule = markers.by_glyph(gate.marker.value)
        return not (self.cfg.auto_approve and rule is not None and rule.auto_approvable)

    def _observe(self, section: Section, texts: dict[int, str]) -> tuple[Verdict, str]:
        """The section's verify blocks as an observation, in the session document order has before the
        section; it leaves no trace there (as apply's)."""
        seen, reason = Verdict.PASSED, ""
        state = self.session
        for b in section.verify_blocks:
            start = steps.block_session(state, b, state.cwd)
            r = self.shell.run(
                texts[b.index], start, timeout_s=self.cfg.step_timeout_s, on_output=None, trace=True,
                keeps_session=session.kept_by(start, texts[b.index]),
            )  # fmt: skip
            state = r.state if b.cwd is None else state
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

    def _acceptance(
        self, result: RunResult, status: str, label: str, section: Section, texts: dict[int, str]
    ) -> None:
        """`check --acceptance`: a ✔ section's checks, judged by the worlds seen (drift when the ledger says
        the plan is live and they do not pass; on a plan the ledger says is gone, read as `_as_recorded`)."""
        seen, reason = self._observe(section, texts)
        verdict, detail = ("in-sync", "acceptance checks pass") if seen is Verdict.PASSED else (
            "drift", f"acceptance checks {seen.value}: {reason}"
        )  # fmt: skip
        if seen is not Verdict.PASSED and status.startswith(LEDGER_LIVE):
            result.drift.append(f"{label} {section.title}: {detail}")
        verdict, detail = self._as_recorded(result, status, label, section, verdict, detail, seen, reason)
        self._verdict(section, verdict, detail)

    def _detail(
        self,
        result: RunResult,
        section: Section,
        texts: dict[int, str],
        templates: fingerprint.Templates,
        verdict: str,
        why: str,
        *,
        acted_before: bool,
    ) -> None:
        """`plan --section N`: the section's gate as apply would show it, in full (`result.detail`)."""
        wanted = self.cfg.detail_section
        if wanted is None or not matches(wanted, section.key, section.slug, section.title):
            return
        content = self._content(section, texts, templates)
        if content is None:
            result.detail = f"{section_label(section)} {section.title}: not gated for these inputs"
            return
        kv = next((dict(e.data.get("cells", {})) for e in self.journal.events(kind="kv-templates")), {})
        acts = verdict not in ("in-sync", "observed")
        reasons = [w for w in why.split("; ") if w] if acts else [f"it does not: {verdict} ({why})"]
        result.detail = approval.review(
            self.plan, section, content, kind=self.cfg.kind, env=approval.display_env(content),
            knob_values=self.knobs, realized=self.realized, templates=templates, reasons=reasons,
            journal=self.journal, kv_templates=kv, acted_before=acted_before and acts,
            redact=self.shell.redactor.redact,
        )  # fmt: skip

    def _as_recorded(
        self,
        result: RunResult,
        status: str,
        label: str,
        section: Section,
        verdict: str,
        detail: str,
        seen: Verdict,
        reason: str,
        pristine: bool = False,
    ) -> tuple[str, str]:
        """`check` against a ledger that says nothing exists (`gone`, `not-created`): a section observed
        absent is as recorded (`absent`, exit 0); one observed present is drift. What apply would do next
        (will apply, needs approval, blocked) is `plan`'s to say, not `check`'s."""
        word = status.split(" ", 1)[0]
        if word not in LEDGER_ABSENT:
            return verdict, detail
        if seen is Verdict.PASSED and pristine:  # nothing recorded here to drift from
            return "present", "observed present, though never applied here"
        if seen is Verdict.PASSED:
            drift = f"present, though the ledger says {status}"
            result.drift.append(f"{label} {section.title}: {drift}")
            return "drift", drift
        if seen is Verdict.SKIPPED:
            return "skipped", f"not observable ({reason}); the ledger says {status}"
        why = f"its verify {seen.value}: {reason or 'not there'}"
        if pristine:
            return "absent", f"not created here ({why})"
        return "absent", f"{LEDGER_ABSENT[word]}, as recorded ({why})"

    def _settle(self) -> None:
        """After §0, as apply: the knobs reach the blocks as resolved (or the run is refused), and what this
        run's inputs name replaces an identity that exists (`run.identities`)."""
        bad = knobs.unresolved(self.plan, self.knobs, self.session.variables, self.shell.inherited)
        if bad:
            raise PlanError("; ".join(bad) + " (apply would refuse to run)", path=self.plan.path)
        if self.cfg.kind == "apply":
            kv = next((dict(e.data.get("cells", {})) for e in self.journal.events(kind="kv-templates")), {})
            self.identity = identities.of(self.plan, kv, self.session.variables, self.knobs)
            self.existing = tuple(identities.existing(self.journal))

    def run(self) -> RunResult:
        """Observe every section the run would visit and say what apply (or teardown) would do: the same
        decision (`decision.decide`) on the same facts, read from the journal instead of a run's memory."""
        plan = self.plan
        result = RunResult("check" if self.cfg.mode == "check" else "preview", None)
        blocked_by: str | None = None  # the first section that will apply
        stop_at: str | None = None  # the first gate apply would stop at
        ahead: list[str] = []  # the sections that apply (or wait on one that does) before that gate
        ls = plan.live_state
        evidence = read_evidence(plan, self.journal)  # a published template's rows are not evidence here
        status = evidence.status
        result.pristine = evidence.pristine
        todo = list(plan.executable_sections)
        bases = reasons.Bases(self.journal, since=self.forgotten_before)
        successes = SectionSuccesses(self.journal)
        interrupted = resume.interrupted_in(self.journal, self.cfg.kind)
        if self.cfg.kind == "teardown" and plan.teardown is not None:
            todo = [s for s in todo if s.kind is SectionKind.VARIABLES] + [plan.teardown]
        for section in todo:
            label = section_label(section)
            texts = fingerprint.block_texts(section, self.knobs, self.realized)
            kind = decision.kind_of(section, self.knobs)
            if kind is decision.Kind.VARIABLES:
                for b in section.act_blocks:
                    r = self.shell.run(
                        texts[b.index], self.session, timeout_s=self.cfg.step_timeout_s, on_output=None
                    )
                    self.session = r.state
                self._settle()
                self._verdict(section, "observed", "variables")
                continue
            if kind is decision.Kind.CHECK and section.kind is not SectionKind.DISCOVERY:
                if self.cfg.mode == "check" and self.cfg.acceptance:
                    self._acceptance(result, status, label, section, texts)  # `check --acceptance`
                else:
                    note = "acceptance checks run on apply (they act), not here: see `check --acceptance`"
                    self._verdict(section, "will-verify", note)
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
            variables = fingerprint.seen(self.session.variables, self.shell.family_values())
            fp = fingerprint.section(texts, templates, self.knobs, variables, self.is_secret)
            record = successes.last(f"{section.key}/section")
            last = record if record is not None and record.run_id >= self.forgotten_before else None
            unchanged = last is not None and last.fingerprint == fp
            changes: tuple[str, ...] = ()
            replaces: tuple[str, ...] = ()
            if last is not None and not unchanged:
                # redacted before `changes` shortens a value: a cut secret no longer matches the redactor
                now = reasons.basis(section, texts, self.knobs, self.session.variables, templates,
                                    self.is_secret, self.shell.redactor.redact)  # fmt: skip
                before = bases.last(section.key)
                if before is not None:
                    changes = tuple(reasons.changes(before, now, section))
                    old = dict(before.get("identity") or {})
                    replaces = identities.replaced(old, self.identity, self.existing)
            facts = decision.Facts(
                kind=kind,
                fingerprint=fp,
                last_fingerprint=None if last is None else last.fingerprint,
                last_confirmed=last is None or last.confirmed,
                torn_down=last is None and record is not None,
                act_interrupted=any(f"{section.key}/{b.index}" in interrupted for b in section.act_blocks),
                template_drift=tuple(reasons.file_reason(p) for p in reasons.template_drift(templates)),
                changes=changes,
                replaces=replaces,
                gated=knobs.gate_of(section, self.knobs) is not None,
                behind=blocked_by,
                stopped_at=stop_at,
            )
            seen, reason = Verdict.PASSED, ""
            if decision.must_observe(facts) or kind is decision.Kind.CHECK:
                seen, reason = self._observe(section, texts)
                facts = dataclasses.replace(facts, observed=seen, observed_reason=reason)
            unblocked = decision.decide(dataclasses.replace(facts, behind=None))
            if stop_at is None and facts.gated and unblocked.acts:
                # apply reaches this gate once the sections before it applied: would it wait there?
                facts = dataclasses.replace(facts, waits=self._needs_approval(section, texts, templates))
            d = decision.decide(facts)
            holds = seen is Verdict.PASSED
            if section.kind is SectionKind.TEARDOWN:
                verdict = "in-sync" if not d.acts else "needs-approval" if d.waits else "will-apply"
                detail = (
                    d.detail if not d.acts
                    else f"would tear down (its verify does not find it gone: {reason or 'no verify block'})"
                )  # fmt: skip
                result.changes = result.changes or d.acts
            elif section.kind is SectionKind.DISCOVERY:
                unobservable = seen is Verdict.SKIPPED
                verdict = "in-sync" if holds else "skipped" if unobservable else "failed"  # as apply says
                detail = (
                    "upstream resources present" if holds
                    else reason if unobservable
                    else f"an upstream resource is missing ({reason})"
                )  # fmt: skip
                if not (holds or unobservable):
                    result.drift.append(f"{label}: {detail}")
                    result.changes = True
            elif d.action is decision.Action.IN_SYNC:
                verdict, detail = "in-sync", d.detail
            else:
                result.changes = True
                detail = "; ".join(d.reasons)
                if d.action is decision.Action.BLOCKED:
                    verdict = "blocked"
                    detail = f"{d.detail}; " + detail
                    ahead += [] if stop_at is not None else [label]
                elif d.waits:
                    verdict, stop_at = "needs-approval", label
                    if ahead:
                        verb = "apply" if len(ahead) > 1 else "applies"
                        detail = f"after {label_list(ahead)} {verb}; " + detail
                else:
                    verdict = "will-apply"
                    blocked_by = blocked_by or label
                    ahead.append(label)
                observed_bad = seen not in (Verdict.PASSED, Verdict.SKIPPED)
                if status.startswith(LEDGER_LIVE) and (observed_bad or facts.template_drift):
                    result.drift.append(f"{label} {section.title}: {detail}")
            if self.cfg.mode == "check" and section.kind is SectionKind.NUMBERED:
                verdict, detail = self._as_recorded(
                    result, status, label, section, verdict, detail, seen, reason, evidence.pristine
                )
            self._verdict(section, verdict, detail)
            self._detail(result, section, texts, templates, verdict, detail, acted_before=last is not None)
            if last is not None and last.session is not None and section.kind is not SectionKind.TEARDOWN:
                # as apply would: the values an earlier section exported feed the later ones (and their gates)
                self.session = session.apply_delta(self.session, SessionState.from_json(last.session))
        if ls is not None and self.cfg.mode == "check":
            for row in ls.check_rows:
                recorded = evidence.check_results.get(row.name, row.result)
                for ref in row.fed_by:
                    o = self.by_ref.get(ref)
                    if (
                        o is not None
                        and recorded.startswith("✅")
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
                    elif o is not None and recorded.startswith("— torn down") and o.verdict.holds:
                        result.drift.append(
                            f"check row {row.name!r}: ledger says {row.result}, observed: passed: "
                            f"{o.observed or 'holds'}"
                        )
        result.sections = self.reports
        if self.cfg.mode == "check":
            result.changes = bool(result.drift)
        return result

"""The observe-before-act loop: a plan executed as a durable workflow of blocks.

For each section in order: observe (verify first); if it holds and the section is unchanged since its last
success it is in sync; otherwise obtain the gate's approval, act, and verify again; advance only on a
verified frontier; write Live State after the section. Every block is a durable step journaled before it
runs and after; a resumed run replays the journal and skips the steps it already finished.
The journal, shell, target, ledger file and prompts are passed in: this module holds the rules.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from director.errors import DirectorError
from director.exec.secrets import is_secret_name, secret_name_predicate
from director.exec.shell import BlockResult, SessionState, Shell
from director.ledger import cells as writeback
from director.ledger.planfile import PlanFile
from director.ledger.splice import LedgerUpdate
from director.plan import bash
from director.plan import knobs as knobs_mod
from director.plan.model import Block, Marker, Plan, Section, SectionKind
from director.plan.verify import CheckResult, Evidence, Judgement, Verdict, judge
from director.run.events import Bus
from director.run.gates import GateContent, Prompter, make_receipt, matches
from director.state.journal import Journal
from director.state.lifecycle import RunState, StepState
from director.targets.base import Target

RESUMABLE = {RunState.FAILED.value, RunState.INTERRUPTED.value, RunState.AWAITING_APPROVAL.value}


class CrashLoop(DirectorError):
    """A run keeps dying without progress; Director stops recovering it."""

    exit_code = 8


class UpstreamGuard(DirectorError):
    """A teardown command names a bound (upstream) resource the plan only discovered."""

    exit_code = 9


@dataclass(frozen=True)
class RunConfig:
    """What the operator asked for."""

    kind: str = "apply"  # apply | teardown
    mode: str = "run"  # run | preview (director plan) | check (drift)
    interactive: bool = False
    restart: bool = False
    approve: tuple[str, ...] = ()
    auto_approve: bool = False
    operator: str = "unknown"
    step_timeout_s: float = 1800.0
    max_recoveries: int = 5
    target: str = "cloudflare"
    sets: dict[str, str] = field(default_factory=dict)
    secret_names: tuple[str, ...] = ()


@dataclass
class SectionReport:
    """One section's outcome in this invocation (for the summary, `plan` and `check`)."""

    key: str
    title: str
    verdict: str
    detail: str = ""
    duration_s: float = 0.0
    attempts: int = 0


@dataclass
class RunResult:
    """How an invocation ended."""

    outcome: str  # completed | awaiting-approval | failed | interrupted | preview | check
    run_id: int | None
    section: str | None = None
    message: str = ""
    sections: list[SectionReport] = field(default_factory=list)
    approve_hint: str = ""
    changes: bool = False  # preview: something would change; check: drift found
    drift: list[str] = field(default_factory=list)
    unconfirmed: list[str] = field(default_factory=list)  # completed, but a check was inconclusive


class _Stop(Exception):
    """Internal: ends the section loop with a result."""

    def __init__(self, result: RunResult) -> None:
        super().__init__(result.outcome)
        self.result = result


def _sha(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def _today(now: datetime) -> str:
    return now.strftime("%Y-%m-%d")


class Engine:
    """Runs one `apply` / `teardown` / `plan` / `check` invocation of a plan."""

    def __init__(
        self,
        *,
        plan_file: PlanFile,
        journal: Journal,
        shell: Shell,
        target: Target,
        bus: Bus,
        prompter: Prompter | None,
        config: RunConfig,
        workdir: Path,
        clock: Callable[[], datetime] | None = None,
        sleeper: Callable[[float], None] = time.sleep,
    ) -> None:
        self.pf = plan_file
        self.journal = journal
        self.shell = shell
        self.target = target
        self.bus = bus
        self.prompter = prompter
        self.cfg = config
        self.workdir = workdir
        self.clock = clock or (lambda: datetime.now(UTC))
        self.sleeper = sleeper
        self.is_secret = secret_name_predicate(config.secret_names)
        self.session = SessionState(variables={}, exported=frozenset(), functions="", cwd=str(workdir))
        self.knobs: dict[str, str] = {}
        self.realized: dict[str, str] = {}
        self.by_ref: dict[str, CheckResult] = {}
        self.run_id: int | None = None
        self.interrupted = False
        self.reports: list[SectionReport] = []
        self._done_steps: dict[str, _Done] = {}
        self._completed_sections: dict[str, str] = {}
        self._rerun_keys: set[str] = set()
        self._recovering = False
        self._known_secrets: set[str] = set()
        self._last_update: LedgerUpdate | None = None
        self._resolved_at = ""
        self._failed_at = ""
        self._teardown_msg = ""
        self._done_before_resume: set[str] = set()
        self._gate_receipts: dict[str, int] = {}  # section -> approval that let it act (used on success)
        # Names the journal could not keep (secret-named, or holding a secret value): a restored session lacks
        # them, so a block that reads one must get it recomputed or not run at all.
        self._withheld: set[str] = set()
        self._realized_rows: set[str] = set()  # key/value rows realized so far in this invocation
        self._applied: list[str] = []
        self._verified: list[str] = []
        self._unconfirmed: list[str] = []  # inconclusive checks after an act: the run ends exit 10

    # ------------------------------------------------------------------ public

    @property
    def plan(self) -> Plan:
        return self.pf.plan

    def interrupt(self) -> bool:
        """Ctrl-C: stop the running block (True) or say that none runs (False); the run ends `interrupted`."""
        self.interrupted = True
        running = self.shell.busy
        self.shell.interrupt()
        return running

    def execute(self, resolve_inputs: Callable[[dict[str, str] | None], knobs_mod.Resolution]) -> RunResult:
        """Run (or resume) the plan; `resolve_inputs(previous)` does the interview."""
        if self.cfg.mode != "run":
            return self._observe_only(resolve_inputs)
        resume_id = self._open_run()
        resumed = resume_id is not None
        res = resolve_inputs(self._previous_inputs())
        self.knobs = dict(res.values)
        self._resolved_at = self.clock().isoformat(timespec="seconds")
        if resume_id is None:
            run_id = self.journal.create_run(
                self.cfg.kind,  # type: ignore[arg-type]
                str(self.pf.path),
                self.cfg.target,
                self.cfg.operator,
                res.values,
            )
        else:
            run_id = resume_id
        self.run_id = run_id
        self.bus.emit(
            "run.start",
            run_id=run_id,
            kind=self.cfg.kind,
            resumed=resumed,
            target=self.cfg.target,
            plan=str(self.pf.path),
        )
        self.journal.record_event(
            run_id, "inputs-resolved", {"values": res.values, "how": res.how, "operator": self.cfg.operator}
        )
        self.bus.emit("inputs", values=res.values, how=res.how, operator=self.cfg.operator)
        self.journal.transition(run_id, RunState.RUNNING, "resumed" if resumed else "started")
        self.bus.emit(
            "run.state", run_id=run_id, to=RunState.RUNNING.value, reason="resumed" if resumed else "started"
        )
        self._load_realized()
        if resumed:
            self._restore_from_journal(run_id)
        try:
            result = self._teardown() if self.cfg.kind == "teardown" else self._apply()
        except _Stop as stop:
            result = stop.result
        except KeyboardInterrupt:
            self.interrupted = True
            result = self._finish(RunState.INTERRUPTED, None, "interrupted by the operator (Ctrl-C)")
        except Exception as exc:
            # Never leave a run `running` behind an error: the next apply would take it for a crash.
            if self.journal.run(run_id).state == RunState.RUNNING.value:
                self._finish(RunState.FAILED, None, f"stopped by an error: {exc}", ledger=False)
            raise
        result.sections = self.reports
        result.unconfirmed = list(self._unconfirmed) if result.outcome == "completed" else []
        return result

    # ------------------------------------------------------------------ runs

    def _open_run(self) -> int | None:
        """The latest stopped run of this kind to resume, or None for a new run."""
        kind = self.cfg.kind
        latest = self.journal.latest_run(kind)  # type: ignore[arg-type]
        if latest is not None and latest.state == RunState.RUNNING.value:
            self._mark_dead(latest.id)
            self.journal.bump_recoveries(latest.id)
            latest = self.journal.run(latest.id)
        # A stopped run of the other kind is superseded: a teardown cancels a stopped apply (and an apply
        # a stopped teardown), so that only one story is ever resumable.
        other = self.journal.latest_run("apply" if kind == "teardown" else "teardown")
        if other is not None and other.state == RunState.RUNNING.value:
            self._mark_dead(other.id)
            other = self.journal.run(other.id)
        if other is not None and other.state in RESUMABLE:
            self.journal.transition(other.id, RunState.CANCELLED, f"cancelled by {kind}")
            self.bus.emit("run.state", run_id=other.id, to="cancelled", reason=f"cancelled by {kind}")
        if latest is not None and latest.state in RESUMABLE and not self.cfg.restart:
            if latest.recoveries > self.cfg.max_recoveries:
                raise CrashLoop(
                    f"run {latest.id} died {latest.recoveries} times without progress; "
                    "inspect it with `director audit`, then start over with --restart"
                )
            self._recovering = latest.recoveries > 0
            return latest.id
        if latest is not None and latest.state in RESUMABLE:
            self.journal.transition(latest.id, RunState.CANCELLED, "superseded by --restart")
        return None

    def _mark_dead(self, run_id: int) -> None:
        """We hold the lease, so the process that was running this run is gone: its outcome is unknown."""
        for step in self.journal.unfinished_steps(run_id):
            self.journal.step_finished(step.id, StepState.INTERRUPTED, None, 0.0, step.output or "", None)
        self.journal.transition(run_id, RunState.INTERRUPTED, "the process running it died")

    def _previous_inputs(self) -> dict[str, str] | None:
        """The most recent resolution of the inputs (a later run reuses it unless a knob is set)."""
        evs = self.journal.events(kind="inputs-resolved")
        return {str(k): str(v) for k, v in evs[-1].data.get("values", {}).items()} if evs else None

    def _restore_from_journal(self, run_id: int) -> None:
        """Replay this run's journal: finished steps, completed sections, the session they left."""
        last_session: dict[str, Any] | None = None
        for step in self.journal.steps(run_id):
            if step.state == StepState.SUCCEEDED.value:
                if step.role == "section":
                    self._completed_sections[step.section_key] = step.fingerprint
                else:
                    self._done_steps[step.step_key] = _Done(step.fingerprint, step.output or "")
                if step.session is not None and step.role != "section":
                    last_session = step.session
            elif step.state == StepState.INTERRUPTED.value:
                self._rerun_keys.add(step.step_key)
        if last_session is not None:
            self.session = SessionState.from_json(last_session)
            self._withhold(last_session)
        self._done_before_resume = set(self._completed_sections)
        self._recompute_withheld()

    def _load_realized(self) -> None:
        for ev in self.journal.events(kind="realized"):
            self.realized.update(ev.data.get("values", {}))

    def _finish(self, state: RunState, section: str | None, message: str, ledger: bool = True) -> RunResult:
        assert self.run_id is not None
        self.journal.transition(self.run_id, state, message)
        outcome = state.value
        self.bus.emit("run.state", run_id=self.run_id, to=outcome, reason=message)
        if ledger:
            self._write_ledger(final=state)
        return RunResult(outcome, self.run_id, section, message)

    # ------------------------------------------------------------------ apply

    def _apply(self) -> RunResult:
        plan = self.plan
        self._write_ledger(status="applying")
        for section in plan.executable_sections:
            self._section(section)
        self.journal.reset_recoveries(self.run_id or 0)
        msg = self._summary_line()
        result = self._finish(RunState.COMPLETED, None, msg)
        return result

    def _summary_line(self) -> str:
        parts = []
        if self._applied:
            parts.append("applied " + ", ".join(self._applied))

        def name(key: str) -> str:
            return f"§{key}" if key[:1].isdigit() else key

        insync = [r.key for r in self.reports if r.verdict == "in-sync"]
        earlier = [name(k) for k in insync if k in self._done_before_resume]
        insync = [name(k) for k in insync if k not in self._done_before_resume]
        if earlier:
            parts.insert(0, "finished before the run was resumed " + ", ".join(earlier))
        if insync:
            parts.append("in sync " + ", ".join(insync))
        if self._verified:
            parts.append("verified " + ", ".join(self._verified))
        return "; ".join(parts) or "nothing to do"

    def _label(self, section: Section) -> str:
        return f"§{section.key}" if section.number is not None else section.key

    def _texts(self, section: Section) -> dict[int, str]:
        return {
            b.index: knobs_mod.block_text(section, b, self.knobs, self.realized)
            for b in section.executable_blocks
        }

    def _vars_for(self, text: str) -> dict[str, str]:
        """Values of the variables a block reads (not those it assigns itself): part of its fingerprint."""
        out = {}
        for name in bash.inputs(text):
            if name in self.session.variables and not self.is_secret(name):
                out[name] = self.session.variables[name]
        return out

    def _step_fp(self, text: str) -> str:
        return _sha({"text": text, "inputs": self.knobs, "vars": self._vars_for(text)})

    def _render_templates(self, section: Section) -> dict[int, tuple[str, str]]:
        """Template block index -> (target path, content) for this session."""
        try:
            return render_templates(section, self.session, self.knobs)
        except knobs_mod.TemplateError as exc:
            raise _Stop(self._fail_now(section, f"file template: {exc}")) from exc

    def _section_fp(
        self, section: Section, texts: dict[int, str], templates: dict[int, tuple[str, str]]
    ) -> str:
        return _sha(
            {
                "steps": [self._step_fp(texts[i]) for i in sorted(texts)],
                "templates": {str(i): list(v) for i, v in sorted(templates.items())},
            }
        )

    def _section(self, section: Section) -> None:
        label = self._label(section)
        started = time.monotonic()
        self.bus.emit("section.start", section=section.key, title=section.title, label=label)
        texts = self._texts(section)
        templates = self._render_templates(section)
        fp = self._section_fp(section, texts, templates)
        report = SectionReport(section.key, section.title, "")

        def done(verdict: str, detail: str = "") -> None:
            report.verdict, report.detail = verdict, detail
            report.duration_s = time.monotonic() - started
            self.reports.append(report)
            self.bus.emit("section.verdict", section=section.key, label=label, verdict=verdict, detail=detail)

        completed_here = self._completed_sections.get(section.key) == fp
        is_check = knobs_mod.is_check_section(section, self.knobs)

        if section.kind is SectionKind.VARIABLES or not section.verify_blocks:
            # Nothing to observe: memoized by fingerprint (within the run; §0 re-runs in a new run).
            last = self.journal.last_success(f"{section.key}/section")
            if completed_here or (
                section.kind is not SectionKind.VARIABLES and last is not None and last.fingerprint == fp
            ):
                if not completed_here and last is not None and last.session is not None:
                    self.session = _apply_delta(self.session, SessionState.from_json(last.session))
                    self._withhold(last.session)
                done("in-sync", "unchanged since its last success")
                return
            before = self.session
            self._gate(section, texts, templates)
            self._write_templates(section, templates)
            for b in section.act_blocks:
                self._step(section, b, texts[b.index], "act")
            self._section_done(section, fp, before=before)
            self._applied.append(label)
            done("applied")
            return

        if is_check:
            if completed_here:
                done("in-sync", "verified earlier in this run")
                return
            self._write_templates(section, templates)
            notes = self._verify(section, texts, memo=True)
            self._section_done(section, fp, before=None)
            self._realize_observed(section)
            self._verified.append(label)
            self._write_ledger(status="applying")
            done("verified" if not notes else "unconfirmed", "; ".join(notes))
            return

        # Observe before act.
        if not self._section_in_progress(section, texts):
            if section.template_blocks and not knobs_mod.gate_of(section, self.knobs):
                self._write_templates(section, templates)
            seen = self._observe(section, texts)
            last = self.journal.last_success(f"{section.key}/section")
            unchanged = completed_here or (last is not None and last.fingerprint == fp)
            # A pass is evidence; a skipped observation is none, so only the journal can say the section is
            # unchanged since it last succeeded (as for a section without a verify block).
            if unchanged and seen in (Verdict.PASSED, Verdict.SKIPPED):
                if not completed_here and last is not None and last.session is not None:
                    self.session = _apply_delta(self.session, SessionState.from_json(last.session))
                    self._withhold(last.session)
                self._section_done(section, fp, before=None, record=not completed_here)
                self._realize_observed(section)
                self._write_ledger(status="applying")
                why = (
                    "observed; unchanged since its last success"
                    if seen is Verdict.PASSED
                    else "its verify was skipped (precondition false); unchanged since its last success"
                )
                done("in-sync", why)
                return
        before = self.session
        self._gate(section, texts, templates)
        self._write_templates(section, templates)
        outputs = []
        for b in section.act_blocks:
            res, _ = self._step(section, b, texts[b.index], "act", memo=not completed_here)
            outputs.append(res.output)
        self._realize_from(section, "\n".join(outputs))
        notes = self._verify(section, texts, memo=False)
        self._section_done(section, fp, before=before)
        self._realize_observed(section)
        self._applied.append(label)
        self._write_ledger(status="applying")
        done("applied" if not notes else "unconfirmed", "; ".join(notes))

    def _section_in_progress(self, section: Section, texts: dict[int, str]) -> bool:
        """A section whose act steps already ran in this run (a crash between act and verify)."""
        if section.key in self._completed_sections:
            return False
        return any(
            f"{section.key}/{b.index}" in self._done_steps
            and self._done_steps[f"{section.key}/{b.index}"].fingerprint == self._step_fp(texts[b.index])
            for b in section.act_blocks
        )

    def _observe(self, section: Section, texts: dict[int, str]) -> Verdict:
        """The section's verify blocks as an observation: the first verdict that is not a pass, or pass."""
        seen = Verdict.PASSED
        for b in section.verify_blocks:
            _, j = self._step(section, b, texts[b.index], "observe", memo=False)
            assert j is not None
            self._record(section, j, observation=True)
            if j.verdict is not Verdict.PASSED:
                if j.verdict is Verdict.SKIPPED and seen is Verdict.PASSED:
                    seen = Verdict.SKIPPED
                    continue
                return j.verdict
        return seen

    def _verify(self, section: Section, texts: dict[int, str], *, memo: bool) -> list[str]:
        """The verify blocks after the act: a failure stops the run; returns what is unconfirmed."""
        notes: list[str] = []
        for b in section.verify_blocks:
            res, j = self._step(section, b, texts[b.index], "verify", memo=memo)
            assert j is not None
            self._record(section, j)
            if j.verdict is Verdict.FAILED:
                self._check_failed(section, b, res, j)
            elif j.verdict is Verdict.INCONCLUSIVE:
                note = f"{self._label(section)} inconclusive: {j.reason}"
                self._unconfirmed.append(note)
                self.bus.emit("check.warning", section=section.key, text=note)
                if self.run_id:
                    self.journal.record_event(
                        self.run_id, "check-inconclusive", {"section": section.key, "why": j.reason}
                    )
                notes.append(j.reason)
            elif j.verdict is Verdict.SKIPPED:
                notes.append(j.reason)
        return notes

    def _judge(self, block: Block, text: str, res: BlockResult) -> Judgement:
        """A verify block's run read by its structure (docs/verify-semantics.md)."""
        model = bash.verify_model(text, block.body_start)
        lines = [writeback.strip_ansi(ln).rstrip("\r") for ln in res.output.split("\n")]
        ran = bash.executed(model, list(res.trace)) if res.trace is not None else None
        stopped = (
            "timeout"
            if res.timed_out
            else "input"
            if res.waited_for_input
            else "interrupted"
            if res.interrupted
            else None
        )
        return judge(model, Evidence(res.exit_code, lines, ran, stopped))

    def _record(self, section: Section, j: Judgement, observation: bool = False) -> None:
        """What the rows fed by this section will say (a failed observation before an act is not news)."""
        if observation and j.verdict is not Verdict.PASSED:
            return  # before the act: the act may still make it hold
        for label, r in j.labels.items():
            self.by_ref[f"label:{label}"] = r
        self.by_ref[f"section:{section.key}"] = CheckResult(j.verdict, j.observed)

    def _check_failed(self, section: Section, block: Block, res: BlockResult, j: Judgement) -> None:
        what = f"{self._label(section)} verify failed"
        raise _Stop(self._fail_now(section, _failure(what, block, res, j.reason)))

    def _fail_now(self, section: Section, message: str) -> RunResult:
        self.reports.append(SectionReport(section.key, section.title, "failed", message))
        self.bus.emit(
            "section.verdict",
            section=section.key,
            label=self._label(section),
            verdict="failed",
            detail=message,
        )
        self._failed_at = self._label(section)
        return self._finish(RunState.FAILED, section.key, message)

    def _section_done(
        self, section: Section, fp: str, before: SessionState | None, record: bool = True
    ) -> None:
        assert self.run_id is not None
        self._completed_sections[section.key] = fp
        if self.plan.live_state is not None:
            hints = list(section.hints) + [h for b in section.blocks for h in b.hints]
            self._realized_rows.update(writeback.keys_named(hints, self.plan.live_state.kv_rows))
        used = self._gate_receipts.pop(section.key, None)
        if used is not None:
            self.journal.record_event(
                self.run_id, "approval-used", {"approval_id": used, "section": section.key}
            )
        if not record:
            return
        delta = _delta(before, self.session) if before is not None else _delta(None, self.session)
        # One commit for the section row and the recovery reset.
        self.journal.section_succeeded(
            self.run_id, f"{section.key}/section", section.key, fp, self._session_json(delta)
        )

    def _session_json(self, state: SessionState) -> dict[str, Any]:
        """The session as journaled: what may be stored, and the names of the variables it had to withhold."""
        kept = self._persistable(state)
        withheld = {k for k in state.variables if self.is_secret(k)}
        withheld |= {k for k, v in kept.variables.items() if v != state.variables.get(k)}
        data = kept.to_json()
        if withheld:
            data["variables"] = {k: v for k, v in data["variables"].items() if k not in withheld}
            data["exported"] = [k for k in data["exported"] if k not in withheld]
            data["withheld"] = sorted(withheld)
        return data

    def _withhold(self, session_json: dict[str, Any]) -> None:
        for name in session_json.get("withheld") or ():
            if name not in self.session.variables and not self.shell.inherits(name):
                self._withheld.add(str(name))

    def _recompute_withheld(self) -> None:
        """§0 is pure: run it again in a scratch session and take back the withheld values it defines."""
        if not self._withheld:
            return
        scratch = SessionState(variables={}, exported=frozenset(), functions="", cwd=str(self.workdir))
        for section in self.plan.executable_sections:
            if section.kind is SectionKind.VARIABLES:
                texts = self._texts(section)
                for b in section.act_blocks:
                    r = self.shell.run(
                        texts[b.index], scratch, timeout_s=self.cfg.step_timeout_s, on_output=None
                    )
                    if not r.ok:
                        return
                    scratch = r.state
        back = {n: scratch.variables[n] for n in self._withheld if n in scratch.variables}
        if back:
            s = self.session
            self.session = SessionState(
                {**s.variables, **back},
                s.exported | {n for n in back if n in scratch.exported},
                s.functions,
                s.cwd,
                s.attributes,
                s.arrays,
            )
            self._withheld -= set(back)

    def _persistable(self, state: SessionState) -> SessionState:
        """What may be journaled: no secret-named variables, and secret values masked inside the others."""
        kept = state.persistable(self.is_secret)
        red = self.shell.redactor
        if not red:
            return kept
        return SessionState(
            {k: red.redact(v) for k, v in kept.variables.items()},
            kept.exported,
            red.redact(kept.functions),
            kept.cwd,
            kept.attributes,
            {k: red.redact(v) for k, v in kept.arrays.items()},
        )

    def _write_templates(self, section: Section, templates: dict[int, tuple[str, str]]) -> None:
        for idx, (path, content) in templates.items():
            p = Path(path)
            old = p.read_text(encoding="utf-8") if p.exists() else None
            if old == content:
                continue
            p.parent.mkdir(parents=True, exist_ok=True)
            tmp = p.with_name(p.name + ".director-tmp")
            tmp.write_text(content, encoding="utf-8")
            tmp.replace(p)
            assert self.run_id is not None
            self.journal.record_event(
                self.run_id,
                "template-written",
                {
                    "section": section.key,
                    "block": idx,
                    "path": path,
                    "sha256": hashlib.sha256(content.encode()).hexdigest(),
                },
            )
            self.bus.emit("target", op="template-written", detail=path)

    # ------------------------------------------------------------------ steps

    def _step(
        self, section: Section, block: Block, text: str, role: str, *, memo: bool = True
    ) -> tuple[BlockResult, Judgement | None]:
        """Run one block as a durable step (journaled before and after), with its retry policy.

        Verify and observe blocks are traced and judged by their structure: the step succeeded unless the
        judgement is a failure (a false precondition's exit 1 is not one).
        """
        judged = role in ("verify", "observe")
        assert self.run_id is not None
        key = f"{section.key}/{block.index}"
        fp = self._step_fp(text)
        prior = self._done_steps.get(key)
        if memo and role in ("act", "verify") and prior is not None and prior.fingerprint == fp:
            self.bus.emit(
                "step.skip", section=section.key, block=block.index, role=role, reason="finished earlier"
            )
            memo_res = BlockResult(
                exit_code=0,
                output=prior.output or "",
                duration_s=0.0,
                state=self.session,
                timed_out=False,
                waited_for_input=False,
                signal=None,
            )
            return memo_res, (self._judge(block, text, memo_res) if judged else None)
        missing = [n for n in bash.reads(text) if n in self._withheld]
        if missing:
            names = ", ".join(missing)
            raise _Stop(
                self._fail_now(
                    section,
                    (
                        f"{self._label(section)} block at plan line {block.span.first_line} reads {names}: "
                        "a secret an earlier block set in a previous process; Director never stores secrets, "
                        f"so it cannot restore it. Export {names} in Director's environment and run again "
                        "(the block was not run with an empty or masked value)"
                    ),
                )
            )
        policy = block.retry
        attempts = 1 + (policy.retries if policy else 0)
        timeout = policy.timeout_s if policy and policy.timeout_s else self.cfg.step_timeout_s
        flags = {"rerun_after_crash": True} if key in self._rerun_keys else None
        self._rerun_keys.discard(key)
        res: BlockResult | None = None
        j: Judgement | None = None
        for attempt in range(1, attempts + 1):
            if self.interrupted:
                break
            sid = self.journal.step_started(
                self.run_id, key, section.key, block.index, role, fp, attempt, flags
            )
            self.bus.emit(
                "step.start",
                section=section.key,
                block=block.index,
                role=role,
                attempt=attempt,
                line=block.span.first_line,
                rerun=bool(flags),
            )

            def on_output(chunk: str, _s: str = section.key, _b: int = block.index) -> None:
                self.bus.emit("step.output", section=_s, block=_b, text=chunk)

            res = self.shell.run(text, self.session, timeout_s=timeout, on_output=on_output, trace=judged)
            if judged:
                j = self._judge(block, text, res)
                ok = j.verdict is not Verdict.FAILED and not (res.interrupted or self.interrupted)
            else:
                ok = res.ok
            state = (
                StepState.SUCCEEDED
                if ok
                else (StepState.INTERRUPTED if self.interrupted else StepState.FAILED)
            )
            self.session = res.state
            self._withheld -= set(self.session.variables)
            self._learn_secrets()
            self.journal.step_finished(
                sid,
                state,
                res.exit_code,
                res.duration_s,
                # a secret the block itself minted is known only now: mask it in what is stored
                self.shell.redactor.redact(res.output),
                self._session_json(self.session),
            )
            self.bus.emit(
                "step.end",
                section=section.key,
                block=block.index,
                role=role,
                exit_code=res.exit_code,
                duration_s=round(res.duration_s, 3),
                ok=ok,
                timed_out=res.timed_out,
                waited_for_input=res.waited_for_input,
            )
            self._drain_target()
            if ok:
                self._done_steps[key] = _Done(fp, res.output)
                if self._recovering and role == "act":
                    # Real progress since the last recovery: the crash-loop count restarts.
                    self.journal.reset_recoveries(self.run_id)
                    self._recovering = False
                return res, j
            if self.interrupted or role == "observe" or attempt == attempts:
                break
            delay = _backoff(
                policy.delay_s if policy else 1.0, policy.backoff if policy else "constant", attempt
            )
            self.bus.emit(
                "step.retry", section=section.key, block=block.index, attempt=attempt, delay_s=delay
            )
            self.sleeper(delay)
        assert res is not None or self.interrupted
        if self.interrupted:
            self.reports.append(SectionReport(section.key, section.title, "interrupted", "Ctrl-C"))
            self.bus.emit(
                "section.verdict",
                section=section.key,
                label=self._label(section),
                verdict="interrupted",
                detail="Ctrl-C",
            )
            raise _Stop(
                self._finish(RunState.INTERRUPTED, section.key, "interrupted by the operator (Ctrl-C)")
            )
        assert res is not None
        if role == "act":
            raise _Stop(self._fail_now(section, _failure(f"{self._label(section)} block failed", block, res)))
        return res, j

    def _learn_secrets(self) -> None:
        """Values a block put in secret-named variables are redacted from then on (screen, journal, file)."""
        new = [v for v in self.session.secret_values(self.is_secret) if v not in self._known_secrets]
        if new:
            self._known_secrets.update(new)
            self.shell.redactor = self.shell.redactor.extended(new)
            self.pf.secret_values = [*self.pf.secret_values, *new]

    def _drain_target(self) -> None:
        assert self.run_id is not None
        for ev in self.target.drain_events():
            self.journal.record_event(self.run_id, "target", ev)
            what = str(ev.get("kind") or ev.get("op") or "change")
            name = ev.get("worker") or ev.get("name")
            self.bus.emit("target", op=f"{what} {name}" if name else what, detail=ev)

    def _realize_observed(self, section: Section) -> None:
        """Keys this section realizes (its `→ Live State` hints) that the session holds after its verify.

        Taken after the section verified (applied or observed in sync), never from the observation before
        its act, and taken again each time it verifies, so a realized value follows what is really there.
        """
        plan = self.plan
        if plan.live_state is None:
            return
        hints = list(section.hints) + [h for b in section.blocks for h in b.hints]
        found = {
            key: self.session.variables[key]
            for key in writeback.keys_named(hints, plan.live_state.kv_rows)
            if key in self.session.variables
            and not self.is_secret(key)
            and self.realized.get(key) != self.session.variables[key]
        }
        if found:
            self.realized.update(found)
            assert self.run_id is not None
            self.journal.record_event(self.run_id, "realized", {"section": section.key, "values": found})

    def _realize_from(self, section: Section, output: str) -> None:
        """Keys this section realizes that no variable holds: a URL its act printed (a deploy's address)."""
        plan = self.plan
        if plan.live_state is None:
            return
        hints = list(section.hints) + [h for b in section.blocks for h in b.hints]
        found: dict[str, str] = {}
        for key in writeback.keys_named(hints, plan.live_state.kv_rows):
            if key in self.session.variables:
                continue  # realized from the session once the section verified
            if "URL" in key.upper():
                cond = knobs_mod.kv_condition(next(r.value for r in plan.live_state.kv_rows if r.key == key))
                if cond is not None and self.knobs.get(cond[0]) not in (None, cond[1]):
                    continue
                url = writeback.first_url(output)
                if url:
                    found[key] = url
        if found:
            self.realized.update(found)
            assert self.run_id is not None
            self.journal.record_event(self.run_id, "realized", {"section": section.key, "values": found})

    # ------------------------------------------------------------------ gates

    def gate_content(
        self, section: Section, texts: dict[int, str], templates: dict[int, tuple[str, str]]
    ) -> GateContent | None:
        return gate_content(self.plan, section, self.knobs, texts, templates, self.session.variables)

    def _gate(self, section: Section, texts: dict[int, str], templates: dict[int, tuple[str, str]]) -> None:
        content = self.gate_content(section, texts, templates)
        if content is None:
            return
        assert self.run_id is not None
        destructive = content.marker == Marker.DESTRUCTIVE.value
        how = None
        receipt = self.journal.find_approval(section.key, content.sha256)
        if receipt is not None and self._consumed(receipt.id):
            receipt = None  # an approval is for one application of the section, not for every later one
        if receipt is not None:
            at = f"{receipt.at:%Y-%m-%dT%H:%M:%S}"
            how = f"receipt ({receipt.how} by {receipt.operator}@{receipt.host} at {at})"
        elif any(matches(sel, section.key, section.slug, section.title) for sel in self.cfg.approve):
            how = "flag"
        elif self.cfg.auto_approve and not destructive:
            how = "auto"
        elif self.prompter is not None:
            self._emit_gate(section, content, None, "prompt")
            if self.prompter.ask_go(content):
                how = "prompt"
            else:
                self._await(section, content, "declined at the prompt")
        else:
            self._await(section, content, "needs a human go")
        if receipt is not None:
            self._gate_receipts[section.key] = receipt.id
        else:
            r = make_receipt(content, self.cfg.operator, how or "flag", self.clock())
            self._gate_receipts[section.key] = self.journal.record_approval(
                self.run_id,
                r.section_key,
                r.sha256,
                r.operator,
                r.how,  # type: ignore[arg-type]
                content.to_json(),
            )
        self.bus.emit(
            "approval",
            section=section.key,
            sha256=content.sha256,
            operator=receipt.operator if receipt is not None else self.cfg.operator,
            how=how,
        )

    def _emit_gate(self, section: Section, content: GateContent, approved: bool | None, how: str) -> None:
        self.bus.emit(
            "gate",
            section=section.key,
            title=section.title,
            marker=content.marker,
            note=content.note,
            sha256=content.sha256,
            approved=approved,
            how=how,
            content=content.to_json(),
        )

    def _consumed(self, approval_id: int) -> bool:
        return any(
            e.data.get("approval_id") == approval_id for e in self.journal.events(kind="approval-used")
        )

    def _await(self, section: Section, content: GateContent, why: str) -> None:
        assert self.run_id is not None
        hint = f"director approve {self.pf.path} {section.key}"
        self.journal.record_event(
            self.run_id,
            "gate-waiting",
            {"section": section.key, "sha256": content.sha256, "content": content.to_json()},
        )
        self._emit_gate(section, content, False, why)
        self.reports.append(SectionReport(section.key, section.title, "awaiting-approval", why))
        msg = f"{self._label(section)} {content.marker} {section.title}: {why}"
        result = self._finish(RunState.AWAITING_APPROVAL, section.key, msg)
        result.approve_hint = hint
        raise _Stop(result)

    # ------------------------------------------------------------------ teardown

    def _teardown(self) -> RunResult:
        plan = self.plan
        td = plan.teardown
        if td is None:
            raise DirectorError(f"{self.pf.path}: the plan has no `## Teardown` section")
        for section in plan.executable_sections:
            if section.kind is SectionKind.VARIABLES:
                self._section(section)
        texts = self._texts(td)
        try:
            self._guard_upstream(td, texts)
        except UpstreamGuard as exc:
            # Refused before anything ran: the run ends `failed`, the ledger is left as it was.
            self._finish(RunState.FAILED, td.key, str(exc), ledger=False)
            raise
        fp = self._section_fp(td, texts, {})
        label = "teardown"
        self.bus.emit("section.start", section=td.key, title=td.title, label=label)
        if not self._section_in_progress(td, texts):
            # Observe first. Only a pass says "already gone": a skipped or inconclusive observation is no
            # evidence of absence, so the teardown runs (behind its 💥 gate).
            seen = self._observe(td, texts) if td.verify_blocks else None
            if seen is Verdict.PASSED:
                self._section_done(td, fp, before=None)
                self.reports.append(
                    SectionReport(td.key, td.title, "in-sync", "already gone: nothing to delete")
                )
                self.bus.emit(
                    "section.verdict", section=td.key, label=label, verdict="in-sync", detail="already gone"
                )
                self._teardown_msg = "observed already gone; no destructive command ran"
                return self._finish(RunState.COMPLETED, None, self._teardown_msg)
        self._gate(td, texts, {})
        upstream = self._observe_upstream()
        for b in td.act_blocks:
            self._step(td, b, texts[b.index], "act")
            if upstream:
                self._recheck_upstream(td, b, upstream)
        notes = self._verify(td, texts, memo=False)
        self._section_done(td, fp, before=None)
        verdict, detail = ("applied", "torn down") if not notes else ("unconfirmed", "; ".join(notes))
        self.reports.append(SectionReport(td.key, td.title, verdict, detail))
        self.bus.emit("section.verdict", section=td.key, label=label, verdict=verdict, detail=detail)
        upstream_rows = {r.key for r in self._upstream_rows()}
        existed = [
            f"{r.key}={_first_tick(r.value)}"
            for r in (plan.live_state.kv_rows if plan.live_state else ())
            if _first_tick(r.value) not in ("", "—")
            and "$" not in _first_tick(r.value)
            and r.key not in upstream_rows
        ]
        self._teardown_msg = "torn down " + (", ".join(existed) if existed else "what the plan created")
        if notes:
            self._teardown_msg += " (unconfirmed: " + "; ".join(notes) + ")"
        return self._finish(RunState.COMPLETED, None, self._teardown_msg)

    def _upstream_rows(self) -> list[Any]:
        """Key/value rows the format marks as discovered upstream resources (bound, not created here)."""
        ls = self.plan.live_state
        return [r for r in (ls.kv_rows if ls else ()) if "discovered" in r.value.lower()]

    def _upstream_names(self) -> dict[str, str]:
        """Upstream resources by variable (`bound:VALUE` for ledger rows): what teardown must not touch."""
        names: dict[str, str] = {}
        for var in writeback.discovered_vars(self.plan):
            val = self.session.variables.get(var, "")
            if val:
                names[var] = val
        for row in self._upstream_rows():
            for lit in re.findall(r"`([^`]+)`", row.value):
                for part in re.split(r"[,\s]+", lit):
                    val = part.split("=", 1)[-1]
                    if val and val not in {"—", "-"}:
                        names.setdefault(f"bound:{val}", val)
        return names

    def _guard_upstream(self, td: Section, texts: dict[int, str]) -> None:
        """Refuse, before anything runs, a teardown command that destroys a bound upstream resource.

        Read by the bash analyser: only commands that delete, drop, truncate or overwrite count (a read-only
        mention such as `sqlite3 -readonly "$DB"` does not), and their targets are compared after expansion
        with the session's values -- so a glob (`rm -f /data/ledger-*.sqlite3`) or a directory holding the
        resource (`rm -rf "$DIR"`) is caught too.
        """
        names = self._upstream_names()
        if not names:
            return
        env = self.session.variables
        functions = frozenset(n for s in self.plan.sections for b in s.executable_blocks
                              for n in bash.function_names(b.text))  # fmt: skip
        for b in td.act_blocks:
            for d in bash.destructions(texts[b.index], plan_functions=functions):
                for w in d.targets:
                    for var, val in names.items():
                        if not _names_resource(w, var, val, env):
                            continue
                        raise UpstreamGuard(
                            f"{self.pf.path}:{b.body_start + d.row + 1}: teardown command `{d.what}` would "
                            f"destroy the bound upstream resource {val!r} ({var.removeprefix('bound:')}, "
                            "discovered in Requires-discovery, not created by this plan); Director will not "
                            "run it"
                        )

    def _observe_upstream(self) -> list[tuple[Section, Block, str]]:
        """Requires-discovery's probes, run read-only: those that pass name upstream resources that exist."""
        present: list[tuple[Section, Block, str]] = []
        for section in self.plan.sections:
            if section.kind is not SectionKind.DISCOVERY:
                continue
            texts = self._texts(section)
            for b in section.executable_blocks:
                j = self._probe(b, texts[b.index])
                if j.verdict is Verdict.PASSED:
                    present.append((section, b, texts[b.index]))
        if present and self.run_id:
            self.journal.record_event(
                self.run_id,
                "upstream-observed",
                {"probes": [f"{s.key}@{b.span.first_line}" for s, b, _ in present]},
            )
        return present

    def _recheck_upstream(
        self, td: Section, after: Block, present: list[tuple[Section, Block, str]]
    ) -> None:
        """After a teardown block: an upstream probe that passed and fails now stops the run (exit 9)."""
        for section, b, text in present:
            j = self._probe(b, text)
            if j.verdict is Verdict.PASSED:
                continue
            msg = (
                f"{self.pf.path}:{after.span.first_line}: after this teardown block, the upstream resource "
                f"probed by {section.title} (plan line {b.span.first_line}) is no longer there "
                f"({j.observed or j.reason}); Director stopped the teardown at once"
            )
            if self.run_id:
                self.journal.record_event(self.run_id, "upstream-lost", {"probe": b.span.first_line})
            self._finish(RunState.FAILED, td.key, msg, ledger=False)
            raise UpstreamGuard(msg)

    def _probe(self, block: Block, text: str) -> Judgement:
        """Run a read-only probe in a copy of the session (its state is not kept) and judge it."""
        r = self.shell.run(text, self.session, timeout_s=self.cfg.step_timeout_s, on_output=None, trace=True)
        return self._judge(block, text, r)

    # ------------------------------------------------------------------ ledger

    def _write_ledger(self, status: str | None = None, final: RunState | None = None) -> None:
        plan = self.plan
        ls = plan.live_state
        if ls is None or self.cfg.mode != "run":
            return
        now = self.clock()
        today = _today(now)
        yaml: dict[str, Any] = {}
        kind = self.cfg.kind
        if final is RunState.COMPLETED:
            yaml["status"] = "gone" if kind == "teardown" else "live"
            if self._unconfirmed:
                yaml["status"] += " (unconfirmed)"  # a check after the act was inconclusive
        elif final is RunState.FAILED:
            yaml["status"] = f"failed at {self._failed_at or '?'}"
        elif final is RunState.AWAITING_APPROVAL:
            yaml["status"] = "awaiting-approval"
        elif final is RunState.INTERRUPTED:
            yaml["status"] = "interrupted"
        elif status:
            yaml["status"] = "tearing-down" if kind == "teardown" else status
        stamp = now.isoformat(timespec="seconds")
        if final is not None:
            what = self._teardown_msg if kind == "teardown" else self._summary_line()
            yaml["last_action"] = (
                f"{stamp} {kind} run {self.run_id} on target {self.cfg.target}: "
                + (what or final.value)
                + ("" if final is RunState.COMPLETED else f" — {final.value}")
            )
            if self._unconfirmed and kind == "apply":
                yaml["last_action"] += " (unconfirmed: " + "; ".join(dict.fromkeys(self._unconfirmed)) + ")"
        passed = [
            r.name
            for r in ls.check_rows
            if any(ref in self.by_ref for ref in r.fed_by)
            and all(self.by_ref[ref].verdict is Verdict.PASSED for ref in r.fed_by if ref in self.by_ref)
        ]
        if passed and kind == "apply":
            yaml["last_verified"] = f"{today} — " + " · ".join(passed)
        ri: dict[str, Any] = {k.lower(): v for k, v in self.knobs.items()}
        ri["resolved_by"] = self.cfg.operator
        ri["resolved_at"] = self._resolved_at or stamp
        if self.knobs:
            yaml["resolved_inputs"] = ri
        yaml["target"] = self.cfg.target
        kv: dict[str, str] = {}
        templates = self._kv_templates()
        env = dict(self.session.variables)
        discovered = {v: env.get(v, "") for v in writeback.discovered_vars(plan)}
        for row in ls.kv_rows:
            tmpl = templates.get(row.key, row.value)
            if kind == "teardown" and final is RunState.COMPLETED:
                new = tmpl
            elif kind == "apply" and (row.key in self._realized_rows or final is RunState.COMPLETED):
                if self.is_secret(row.key):
                    continue  # a secret-named row is never realized
                new = self.shell.redactor.redact(
                    writeback.realize_cell(tmpl, row.key, env, self.knobs, self.realized, discovered)
                )
            else:
                continue
            if new.strip() != row.value.strip():
                kv[row.key] = new
        if kind == "apply":
            checks = writeback.row_updates(ls.check_rows, self.by_ref, today)
        elif final is RunState.COMPLETED:
            # What was verified is gone: the rows say so instead of keeping yesterday's ✅.
            checks = {r.name: ("—", f"— torn down {today}") for r in ls.check_rows}
        else:
            checks = {}
        update = LedgerUpdate(yaml=yaml, kv=kv, checks=checks)
        if update == self._last_update and final is None:
            return  # nothing new since the last write: skip the re-read/splice/re-parse (~15 ms)
        self._last_update = update
        self.pf.save(update)
        self.bus.emit("ledger.write", path=str(self.pf.path), changed=self.pf.last_save_wrote)

    def _kv_templates(self) -> dict[str, str]:
        """The key/value cells as the author wrote them (journaled the first time Director realizes them)."""
        ls = self.plan.live_state
        assert ls is not None
        evs = self.journal.events(kind="kv-templates")
        if evs:
            return dict(evs[0].data.get("cells", {}))
        cells = {r.key: r.value for r in ls.kv_rows}
        self.journal.record_event(self.run_id, "kv-templates", {"cells": cells})
        return cells

    # ------------------------------------------------------------------ plan / check

    def _observe_only(
        self, resolve_inputs: Callable[[dict[str, str] | None], knobs_mod.Resolution]
    ) -> RunResult:
        """`director plan` / `director check`: run §0 and the observation blocks; never act, never write."""
        res = resolve_inputs(self._previous_inputs())
        self.knobs = dict(res.values)
        self._load_realized()
        self.run_id = 0
        plan = self.plan
        result = RunResult(self.cfg.mode, None)
        blocked_by: str | None = None
        ls = plan.live_state
        status = str(ls.data.get("status", "")) if ls else ""
        sections = list(plan.executable_sections)
        if self.cfg.kind == "teardown" and plan.teardown is not None:
            sections = [s for s in sections if s.kind is SectionKind.VARIABLES] + [plan.teardown]
        for section in sections:
            label = self._label(section)
            texts = self._texts(section)
            if section.kind is SectionKind.VARIABLES:
                for b in section.act_blocks:
                    r = self.shell.run(
                        texts[b.index], self.session, timeout_s=self.cfg.step_timeout_s, on_output=None
                    )
                    self.session = r.state
                self._preview_verdict(section, "observed", "variables")
                continue
            if knobs_mod.is_check_section(section, self.knobs) and section.kind is not SectionKind.DISCOVERY:
                self._preview_verdict(
                    section, "will-verify", "acceptance checks run on apply (they act), not here"
                )
                continue
            templates = {} if section.kind is SectionKind.TEARDOWN else self._render_templates(section)
            fp = self._section_fp(section, texts, templates)
            seen = Verdict.PASSED
            reason = ""
            for b in section.verify_blocks:
                r = self.shell.run(
                    texts[b.index],
                    self.session,
                    timeout_s=self.cfg.step_timeout_s,
                    on_output=None,
                    trace=True,
                )
                self.session = r.state
                j = self._judge(b, texts[b.index], r)
                for label, lr in j.labels.items():
                    self.by_ref[f"label:{label}"] = lr
                self.by_ref[f"section:{section.key}"] = CheckResult(j.verdict, j.observed)
                if j.verdict is Verdict.SKIPPED and seen is Verdict.PASSED:
                    seen, reason = Verdict.SKIPPED, j.reason
                elif j.verdict is not Verdict.PASSED:
                    seen, reason = j.verdict, j.reason
                    break
            holds = seen is Verdict.PASSED
            template_drift = [
                p
                for p, c in templates.values()
                if not Path(p).exists() or Path(p).read_text(encoding="utf-8") != c
            ]
            last = self.journal.last_success(f"{section.key}/section")
            unobservable = seen is Verdict.SKIPPED
            in_sync = (
                (holds or unobservable) and not template_drift and last is not None and last.fingerprint == fp
            )
            if section.kind is SectionKind.TEARDOWN:
                verdict = (
                    "in-sync"
                    if holds
                    else (
                        "needs-approval"
                        if self.journal.find_approval(section.key, self._gate_sha(section, texts)) is None
                        else "will-apply"
                    )
                )
                detail = "already gone" if holds else f"would tear down ({reason or 'no verify block'})"
                result.changes = result.changes or not holds
            elif section.kind is SectionKind.DISCOVERY:
                verdict = "in-sync" if holds or unobservable else "failed"
                detail = (
                    "upstream resources present"
                    if holds
                    else reason
                    if unobservable
                    else f"an upstream resource is missing ({reason})"
                )
                if not (holds or unobservable):
                    result.drift.append(f"{label}: {detail}")
                    result.changes = True
            elif in_sync:
                verdict = "in-sync"
                detail = (
                    "observed; unchanged since its last success"
                    if holds
                    else f"unchanged since its last success; not observable ({reason})"
                )
            else:
                result.changes = True
                why = []
                if not holds and not unobservable:
                    why.append(f"verify: {seen.value} ({reason})")
                if template_drift:
                    why.append("file template differs: " + ", ".join(template_drift))
                if last is None:
                    why.append("never applied")
                elif last.fingerprint != fp:
                    why.append("changed since its last success")
                detail = "; ".join(why)
                if blocked_by is not None and not holds:
                    verdict = "blocked"
                    detail = f"behind {blocked_by}; " + detail
                else:
                    gate = knobs_mod.gate_of(section, self.knobs)
                    needs = (
                        gate is not None
                        and self.journal.find_approval(section.key, self._gate_sha(section, texts, templates))
                        is None
                        and not any(
                            matches(s, section.key, section.slug, section.title) for s in self.cfg.approve
                        )
                    )
                    verdict = "needs-approval" if needs else "will-apply"
                    blocked_by = blocked_by or label
                if status.startswith("live") and ((not holds and not unobservable) or template_drift):
                    result.drift.append(f"{label} {section.title}: {detail}")
            self.reports.append(SectionReport(section.key, section.title, verdict, detail))
            self.bus.emit("section.verdict", section=section.key, label=label, verdict=verdict, detail=detail)
        if ls is not None and self.cfg.mode == "check":
            for row in ls.check_rows:
                for ref in row.fed_by:
                    o = self.by_ref.get(ref)
                    if o is not None and row.result.startswith("✅") and o.verdict in (
                        Verdict.FAILED,
                        Verdict.INCONCLUSIVE,
                    ):
                        result.drift.append(
                            f"check row {row.name!r}: ledger says {row.result}, observed: "
                            f"{o.verdict.value}: {o.observed or 'fails'}"
                        )
        result.sections = self.reports
        if self.cfg.mode == "check":
            result.changes = bool(result.drift)
        return result

    def _preview_verdict(self, section: Section, verdict: str, detail: str) -> None:
        self.reports.append(SectionReport(section.key, section.title, verdict, detail))
        self.bus.emit(
            "section.verdict", section=section.key, label=self._label(section), verdict=verdict, detail=detail
        )

    def _gate_sha(
        self, section: Section, texts: dict[int, str], templates: dict[int, tuple[str, str]] | None = None
    ) -> str:
        c = self.gate_content(section, texts, templates or {})
        return c.sha256 if c is not None else ""


def _failure(what: str, block: Block, res: BlockResult, reason: str = "") -> str:
    """`§3 verify failed (exit 1) at plan line 270: <the last lines it printed>`."""
    if reason and not reason.startswith("exit "):
        why = reason
    elif res.timed_out:
        why = "timed out"
    elif res.waited_for_input:
        why = "waited for keyboard input in a non-interactive run (stdin is not a terminal)"
    else:
        why = f"exit {res.exit_code}"
    tail = [writeback.strip_ansi(ln) for ln in res.output.splitlines() if ln.strip()][-3:]
    msg = f"{what} ({why}) at plan line {block.span.first_line}"
    return msg + (": " + " | ".join(tail) if tail else "")


@dataclass(frozen=True)
class _Done:
    """A step finished earlier in this run (the within-run memo)."""

    fingerprint: str
    output: str


def _delta(before: SessionState | None, after: SessionState) -> SessionState:
    """What a section changed in the session (applied again when the section is later in sync)."""
    if before is None:
        return after
    variables = {k: v for k, v in after.variables.items() if before.variables.get(k) != v}
    exported = frozenset(k for k in after.exported if k in variables or k not in before.exported)
    functions = after.functions if after.functions != before.functions else ""
    cwd = after.cwd if after.cwd != before.cwd else ""
    arrays = {k: v for k, v in after.arrays.items() if before.arrays.get(k) != v}
    return SessionState(variables, exported, functions, cwd, {}, arrays)


def _apply_delta(cur: SessionState, delta: SessionState) -> SessionState:
    """The current session with a section's recorded changes applied."""
    return SessionState(
        {**cur.variables, **delta.variables},
        cur.exported | delta.exported,
        delta.functions or cur.functions,
        delta.cwd or cur.cwd,
        cur.attributes,
        {**cur.arrays, **delta.arrays},
    )


def render_templates(
    section: Section, session: SessionState, knobs: dict[str, str]
) -> dict[int, tuple[str, str]]:
    """Template block index -> (target path, regenerated content) in this session (TemplateError if not)."""
    from director.plan import templates

    out: dict[int, tuple[str, str]] = {}
    env = dict(session.variables)
    for b in section.template_blocks:
        if not b.template_target:
            continue
        path = templates.resolve_target(b.template_target, env, session.cwd)
        content = templates.render_template(b, env, knobs)
        out[b.index] = (path, content if content.endswith("\n") else content + "\n")
    return out


def gate_content(
    plan: Plan,
    section: Section,
    knobs: dict[str, str],
    texts: dict[int, str],
    templates: dict[int, tuple[str, str]],
    session_vars: dict[str, str],
) -> GateContent | None:
    """What a gate's approval covers: the exact commands, the variables they read, the inputs."""
    gate = knobs_mod.gate_of(section, knobs)
    if gate is None:
        return None
    commands = [texts[b.index] for b in section.act_blocks]
    variables: dict[str, str] = {}
    for c in commands:
        for name in bash.reads(c):
            if name in session_vars and not is_secret_name(name):
                variables[name] = session_vars[name]
    # A regenerated file is part of what is approved: its content (values already expanded) is covered.
    commands += [f"# write {path}\n{content}" for path, content in templates.values()]
    context: dict[str, str] = {}
    if section.kind is SectionKind.TEARDOWN and plan.live_state is not None:
        context = {row.key: row.value for row in plan.live_state.kv_rows}
    return GateContent(
        section.key,
        section.title,
        gate.marker.value,
        gate.note,
        section.quotes,
        tuple(commands),
        variables,
        dict(knobs),
        context,
    )


def _names_resource(word: bash.Word, var: str, value: str, env: dict[str, str]) -> bool:
    """Whether a destroyed word names `value`: through its variable, its expansion, a glob or a parent dir."""
    if not var.startswith("bound:") and word.whole_var == var:
        return True
    expanded = re.sub(
        r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)",
        lambda m: env.get(m.group(1) or m.group(2), m.group(0)),
        word.pattern,
    )
    if "$" in expanded:
        return False
    if expanded == value:
        return True
    if word.glob and fnmatch.fnmatchcase(value, expanded):
        return True
    return value.startswith(expanded.rstrip("/") + "/") and len(expanded.rstrip("/")) > 1


def _first_tick(cell: str) -> str:
    """The first backticked value of a table cell (the realized value), or the cell."""
    m = re.search(r"`([^`]*)`", cell)
    return (m.group(1) if m else cell).strip()


def _backoff(delay_s: float, kind: str, attempt: int) -> float:
    """Delay before the next attempt: constant, or exponential (delay·2^(attempt-1))."""
    if kind == "exponential":
        return float(delay_s * (2 ** (attempt - 1)))
    return float(delay_s)

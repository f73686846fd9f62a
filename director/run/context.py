"""One run in progress: the effects it was handed and everything it has learned so far.

The engine creates a `Run` once the journal has given it a run id (so `run_id` is always a real run), and
every part of a run -- steps, sections, gates, teardown -- reads and updates it. Nothing here decides
what to do next; it only holds the state and the few effects every part shares (events, reports, the
ledger write, the run's end).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from director.exec.shell import SessionState, Shell
from director.ledger import compose
from director.ledger.evidence import read_evidence
from director.ledger.planfile import PlanFile
from director.ledger.splice import LedgerUpdate
from director.plan.model import LabelRanges, Plan, Section, key_label, label_list, section_label
from director.plan.verify import CheckResult
from director.run import history
from director.run.config import Outcome, RunConfig, RunResult, SectionReport
from director.run.events import Bus
from director.run.gates import Prompter
from director.run.identities import Identity
from director.run.reasons import Bases
from director.run.worlds import Worlds
from director.state.lifecycle import RunState
from director.state.records import StepRecord
from director.state.store import SectionSuccesses, StateStore
from director.targets.base import Target

# Live State writes between sections may take this long in a run, then at most this share of it.
LEDGER_FREE_S = 1.0
LEDGER_SHARE = 0.1

_OUTCOMES: dict[RunState, Outcome] = {
    RunState.COMPLETED: "completed",
    RunState.AWAITING_APPROVAL: "awaiting-approval",
    RunState.FAILED: "failed",
    RunState.INTERRUPTED: "interrupted",
}


@dataclass(frozen=True)
class Done:
    """A step finished earlier in this run (the within-run memo)."""

    fingerprint: str
    output: str
    session: dict[str, Any] | None = None  # the session it left, as journaled (taken back when skipped)


@dataclass
class _Tally:
    """What `Run.summary` says, read as far as the run's lists had grown at its last call: they only grow
    (what was applied, reported, verified), and a summary is written after every section, so reading them
    whole each time would make a run of N sections read N²/2 entries. Started over when the sections
    finished before a resume change (they decide which in-sync sections were finished earlier)."""

    resumed_from: int
    applied: LabelRanges = field(default_factory=LabelRanges)
    applied_n: int = 0
    reports_n: int = 0
    skipped: list[str] = field(default_factory=list)
    earlier: LabelRanges = field(default_factory=LabelRanges)
    insync: LabelRanges = field(default_factory=LabelRanges)
    verified: LabelRanges = field(default_factory=LabelRanges)
    verified_n: int = 0


@dataclass
class Run:
    """An apply or teardown run: its effects (passed in) and its state (learned as it goes)."""

    pf: PlanFile
    journal: StateStore
    shell: Shell
    target: Target
    bus: Bus
    prompter: Prompter | None
    cfg: RunConfig
    workdir: Path
    clock: Callable[[], datetime]
    sleeper: Callable[[float], None]
    is_secret: Callable[[str], bool]
    run_id: int
    knobs: dict[str, str]
    resolved_at: str
    session: SessionState
    realized: dict[str, str] = field(default_factory=dict)  # key -> value realized by a section
    by_ref: dict[str, CheckResult] = field(default_factory=dict)  # `label:2a` / `section:3` -> verdict
    reports: list[SectionReport] = field(default_factory=list)
    interrupted: bool = False
    done_steps: dict[str, Done] = field(default_factory=dict)
    completed_sections: dict[str, str] = field(default_factory=dict)  # key -> fingerprint
    done_before_resume: set[str] = field(default_factory=set)
    rerun_keys: set[str] = field(default_factory=set)  # steps that were running when the run died
    # Steps whose latest attempt in this run did not succeed (before a resume too): what it started may
    # still run, and is stopped before the step runs again (`run.processes`).
    unsettled: set[str] = field(default_factory=set)
    # Acts whose latest attempt was running when Director died or was interrupted: they run again.
    interrupted_acts: set[str] = field(default_factory=set)
    carried_from: dict[str, int] = field(default_factory=dict)  # such an act -> the cancelled run it was in
    # Successes, realized values and bases of runs before this one are void: a teardown acted in it (0: none).
    forgotten_before: int = 0
    existing: tuple[Identity, ...] = ()  # the identities the journal says exist (`run.identities`)
    identity: dict[str, str] = field(default_factory=dict)  # what its inputs name (`WORKER=orders-dev`)
    also_exists: tuple[str, ...] = ()  # the other identities the journal says exist (Live State lists them)
    identity_recorded: bool = False  # this run recorded its identity as existing (before its first act)
    zero_scratch: SessionState | None = None  # §0 run again in a scratch session (withheld values)
    recovering: bool = False
    known_secrets: set[str] = field(default_factory=set)
    # Names the journal could not keep (secret-named, or holding a secret value): a restored session lacks
    # them, so a block that reads one must get it recomputed or not run at all.
    withheld: set[str] = field(default_factory=set)
    withheld_arrays: set[str] = field(default_factory=set)  # those of `withheld` that are arrays
    withheld_functions: set[str] = field(default_factory=set)  # functions left out for holding a secret
    gate_receipts: dict[str, int] = field(default_factory=dict)  # section -> approval it acts on
    signers: dict[int, dict[str, str]] = field(default_factory=dict)  # receipt -> principal, key, nonce
    refused: dict[int, tuple[str, str]] = field(default_factory=dict)  # receipt -> section, why (said once)
    realized_rows: set[str] = field(default_factory=set)  # key/value rows realized in this invocation
    applied: list[str] = field(default_factory=list)
    verified: list[str] = field(default_factory=list)
    unconfirmed: list[str] = field(default_factory=list)  # inconclusive checks after an act: exit 10
    failed_at: str = ""
    teardown_message: str = ""
    last_update: LedgerUpdate | None = None
    ledger_s: float = 0.0  # seconds this run spent writing Live State
    started: float = field(default_factory=time.monotonic)
    kv_cells: dict[str, str] | None = None  # the author's key/value cells, once read or journaled
    why: dict[str, list[str]] = field(default_factory=dict)  # section -> why it is not in sync (gate panel)
    waited: dict[str, float] = field(default_factory=dict)  # section -> seconds a human took at its gate
    approved_with: dict[str, str] = field(default_factory=dict)  # section -> whose receipt let it act
    acted: bool = False  # a section other than §0 acted (or was about to) in this invocation
    observed_reason: str = ""  # why the last observation did not pass
    interrupted_by: str = "Ctrl-C"  # what interrupted the run: `Ctrl-C` (SIGINT) or `SIGTERM`
    bases: Bases = field(init=False)  # each section's latest basis (why it is not in sync), read once
    successes: SectionSuccesses = field(init=False)  # each section's latest success, read once
    worlds: Worlds = field(init=False)  # the worlds each check was seen in (verdicts by contrast)
    results_before: dict[str, str] = field(init=False)  # check row -> its result when the run started
    section_started: dict[str, float] = field(default_factory=dict)  # section -> when its first step began
    _tally: _Tally = field(init=False, repr=False)  # `summary`'s lists, read as far as they had grown

    def __post_init__(self) -> None:
        self.bases = Bases(self.journal, since=self.forgotten_before)
        self.successes = SectionSuccesses(self.journal)
        self.worlds = Worlds(self.journal, self.run_id)
        self._tally = _Tally(resumed_from=len(self.done_before_resume))
        # as seen here: a published template's ✅ rows are not this machine's (ledger.evidence)
        self.results_before = dict(read_evidence(self.plan, self.journal).check_results)

    def last_success(self, section_key: str) -> StepRecord | None:
        """The section's last success, unless a teardown acted since (that memory is void)."""
        rec = self.successes.last(f"{section_key}/section")
        return rec if rec is not None and rec.run_id >= self.forgotten_before else None

    def torn_down(self, section_key: str) -> bool:
        """The section succeeded before the last teardown that acted."""
        rec = self.successes.last(f"{section_key}/section")
        return rec is not None and rec.run_id < self.forgotten_before

    @property
    def interruption(self) -> str:
        """How an interrupted run ends, in words: who or what stopped it."""
        if self.interrupted_by == "Ctrl-C":
            return "interrupted by the operator (Ctrl-C)"
        return f"interrupted by {self.interrupted_by} (Director was asked to stop)"

    @property
    def plan(self) -> Plan:
        return self.pf.plan

    def label(self, section: Section) -> str:
        """`§3` for a numbered section, its key otherwise (`teardown`, `discovery`)."""
        return section_label(section)

    def report(
        self,
        section: Section,
        verdict: str,
        detail: str = "",
        started: float | None = None,
        *,
        emit: bool = True,
    ) -> None:
        """A section's outcome: in the summary and (unless a `gate` event said it already) as an event.

        Its time is the section's own: what a human took to answer its gate is not counted. A section that
        fails or is interrupted is reported without `started`: it is timed from its first step.
        """
        if started is None:
            started = self.section_started.get(section.key)
        duration = time.monotonic() - started if started is not None else 0.0
        duration = max(0.0, duration - self.waited.pop(section.key, 0.0))
        detail = self.shell.redactor.redact(detail)  # a secret a block minted is known only once it ended
        report = SectionReport(section.key, section.title, verdict, detail, duration)
        # one row a section: a later word on it (a teardown that then finds processes left) replaces the first
        at = next((i for i, r in enumerate(self.reports) if r.key == section.key), None)
        if at is None:
            self.reports.append(report)
        else:
            report.duration_s = max(report.duration_s, self.reports[at].duration_s)
            self.reports[at] = report
        if emit:
            self.bus.emit(
                "section.verdict",
                section=section.key,
                label=self.label(section),
                verdict=verdict,
                detail=detail,
                duration_s=round(duration, 3),
            )

    def summary(self) -> str:
        """What this run did, for `last_action` and the end of the run."""
        t = self._tally
        if t.resumed_from != len(self.done_before_resume):
            t = self._tally = _Tally(resumed_from=len(self.done_before_resume))
        for label in self.applied[t.applied_n :]:
            t.applied.add(label)
        t.applied_n = len(self.applied)
        for r in self.reports[t.reports_n :]:
            if r.verdict == "skipped":
                t.skipped.append(self.label_of(r.key))
            elif r.verdict == "in-sync":
                (t.earlier if r.key in self.done_before_resume else t.insync).add(key_label(r.key))
        t.reports_n = len(self.reports)
        for label in self.verified[t.verified_n :]:
            t.verified.add(label)
        t.verified_n = len(self.verified)
        parts = []
        if t.earlier:
            parts.append("finished before the run was resumed " + str(t.earlier))
        if t.applied:
            parts.append("applied " + str(t.applied))
        if t.insync:
            parts.append("in sync " + str(t.insync))
        if t.skipped:  # a section verified, then skipped, is said once: as skipped
            skipped = set(t.skipped)
            verified = label_list(v for v in self.verified if v not in skipped)
        else:
            verified = str(t.verified)
        if verified:
            parts.append("verified " + verified)
        if t.skipped:
            parts.append("verify skipped " + label_list(t.skipped))
        return "; ".join(parts) or "nothing to do"

    def label_of(self, key: str) -> str:
        """The label of a section by its key (`§3`, `discovery`)."""
        section = next((s for s in self.plan.sections if s.key == key), None)
        return self.label(section) if section is not None else key_label(key)

    def begin_acting(self) -> None:
        """A section is about to act: from now on Live State says the plan is being applied."""
        if not self.acted:
            self.acted = True
            self.write_ledger(status="applying")

    def write_ledger(self, status: str | None = None, final: RunState | None = None) -> None:
        """Write what this run knows into Live State (skipped when nothing changed since the last write).

        Until a section acts, nothing is written during the run: a run that finds everything in sync and
        verifies what it verified before leaves the plan file byte-identical (the journal says it ran).

        A write copies the plan's whole text and re-reads its Live State: on a huge plan, writing after every
        section would make a run quadratic in its size. So once writes have taken `LEDGER_FREE_S`, a write
        between sections is skipped while they have taken more than `LEDGER_SHARE` of the run (the next one
        catches up); the final write always happens, and the journal holds everything meanwhile.
        """
        ls = self.plan.live_state
        if ls is None:
            return
        if final is None and not self.acted:
            return
        busy = self.ledger_s > max(LEDGER_FREE_S, LEDGER_SHARE * (time.monotonic() - self.started))
        if final is None and busy:
            return
        t0 = time.monotonic()
        try:
            self._write_ledger(status, final)
        finally:
            self.ledger_s += time.monotonic() - t0

    def _write_ledger(self, status: str | None, final: RunState | None) -> None:
        facts = compose.Facts(
            kind=self.cfg.kind,
            run_id=self.run_id,
            target=self.cfg.target,
            operator=self.cfg.operator,
            now=self.clock(),
            final=final,
            status=status,
            summary=self.teardown_message if self.cfg.kind == "teardown" else self.summary(),
            failed_at=self.failed_at,
            unconfirmed=tuple(self.unconfirmed),
            knobs=self.knobs,
            resolved_at=self.resolved_at,
            session=self.session.variables,
            realized=self.realized,
            realized_rows=frozenset(self.realized_rows),
            by_ref=self.by_ref,
            kv_templates=self.kv_templates(),
            acted=self.acted,
            results_before=self.results_before,
            also_exists=self.also_exists,
        )
        update = compose.ledger_update(
            self.plan, facts, is_secret=self.is_secret, redact=self.shell.redactor.redact
        )
        if update == self.last_update and final is None:
            return  # nothing new since the last write: skip the re-read/splice/re-parse (~15 ms)
        self.last_update = update
        # The journal before Live State, on the disk: what the plan file says is durable first.
        self.journal.commit(durable=True)
        if update.is_empty and final is not None:
            self.journal.record_event(
                self.run_id, "ledger-unchanged", {"why": "in sync; the checks hold as the ledger says"}
            )
            self.bus.emit("ledger.write", path=str(self.pf.path), changed=False)
            return  # the plan file is not touched at all
        self.pf.save(update)
        self.bus.emit("ledger.write", path=str(self.pf.path), changed=self.pf.last_save_wrote)

    def kv_templates(self) -> dict[str, str]:
        """The key/value cells as the author wrote them (journaled the first time Director realizes them)."""
        if self.kv_cells is not None:
            return self.kv_cells
        ls = self.plan.live_state
        assert ls is not None
        recorded = history.kv_templates(self.journal)
        if recorded is not None:
            self.kv_cells = recorded
            return self.kv_cells
        cells = {r.key: r.value for r in ls.kv_rows}
        self.journal.record_event(self.run_id, "kv-templates", {"cells": cells})
        self.kv_cells = cells
        return cells

    def finish(self, state: RunState, section: str | None, message: str, ledger: bool = True) -> RunResult:
        """End the run in `state`: journaled, announced, written to Live State (no secret in the reason)."""
        message = self.shell.redactor.redact(message)
        self.journal.transition(self.run_id, state, message)
        self.bus.emit("run.state", run_id=self.run_id, to=state.value, reason=message)
        if section is not None and not self.failed_at:
            self.failed_at = self.label_of(section)  # where it stopped, for `last_action`
        if ledger:
            self.write_ledger(final=state)
        return RunResult(_OUTCOMES[state], self.run_id, section, message)

    def fail(self, section: Section, message: str) -> RunResult:
        """The run fails at this section (reported, journaled, Live State says where)."""
        self.report(section, "failed", message)
        self.failed_at = self.label(section)
        return self.finish(RunState.FAILED, section.key, message)

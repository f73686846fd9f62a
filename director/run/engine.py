"""The engine: a plan executed as a durable workflow of blocks -- the section loop.

For each section in order, observe before act (`sections.apply_section`); every block is a durable step
journaled before and after (`steps`); a gate waits for a human approval (`approval`); teardown observes
first and is guarded against upstream resources (`teardown`, `upstream`); `plan`/`check` only observe
(`preview`). A resumed run replays the journal and skips what finished (`resume`). The journal, shell,
target, ledger file and prompts are passed in: the engine holds the order, the parts hold the rules.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path

from director.exec.secrets import secret_name_predicate
from director.exec.shell import SessionState, Shell
from director.ledger.planfile import PlanFile
from director.plan import knobs
from director.run import resume, sections, teardown
from director.run.config import RunConfig, RunResult, Stop
from director.run.context import Run
from director.run.events import Bus
from director.run.gates import Prompter
from director.run.preview import Preview
from director.state.lifecycle import RunState
from director.state.store import StateStore
from director.targets.base import Target


class Engine:
    """Runs one `apply` / `teardown` / `plan` / `check` invocation of a plan."""

    def __init__(
        self,
        *,
        plan_file: PlanFile,
        journal: StateStore,
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
        self.run: Run | None = None  # the run in progress, once the journal gave it an id
        self._interrupted = False
        self._interrupted_by = "Ctrl-C"

    def interrupt(self, by: str = "Ctrl-C") -> bool:
        """Ctrl-C (or `by` another signal, `SIGTERM`): stop the running block (True) or say that none runs
        (False); the run ends `interrupted`, saying by what."""
        self._interrupted = True
        self._interrupted_by = by
        if self.run is not None:
            self.run.interrupted = True
            self.run.interrupted_by = by
        running = self.shell.busy
        self.shell.interrupt()
        return running

    def _interview(self, previous: dict[str, str] | None, ask_again: bool) -> knobs.Resolution:
        """The inputs: `--set` answers, then the previous run's, then the prompter's (if any); with
        `ask_again` (`--reinterview`, or the first apply after a completed teardown) asked again at a
        terminal, the previous answer as the default (`knobs.resolve`)."""
        ask = self.prompter.ask_input if self.prompter is not None else None
        return knobs.resolve(self.pf.plan, self.cfg.sets, previous, ask, ask_again=ask_again)

    def _fresh_session(self) -> SessionState:
        return SessionState(variables={}, exported=frozenset(), functions="", cwd=str(self.workdir))

    def execute(self) -> RunResult:
        """Run (or resume) the plan, its interview first (`_interview`)."""
        if self.cfg.mode != "run":
            return self._preview()
        latest = self.journal.latest_run() if self.cfg.kind == "apply" else None
        torn_down = latest is not None and (latest.kind, latest.state) == ("teardown", "completed")
        resume_id, recovering = resume.open_run(self.journal, self.bus, self.cfg)
        carried = resume.superseded(self.journal, self.cfg.kind) if resume_id is None else {}
        # the first apply after a teardown asks again
        res = self._interview(resume.previous_inputs(self.journal), self.cfg.reinterview or torn_down)
        resolved_at = self.clock().isoformat(timespec="seconds")
        forgotten = resume.forgotten_before(self.journal)
        if resume_id is None:
            run_id = self.journal.create_run(
                self.cfg.kind, str(self.pf.path), self.cfg.target, self.cfg.operator, res.values
            )
        else:
            run_id = resume_id
        run = self.run = Run(
            pf=self.pf,
            journal=self.journal,
            shell=self.shell,
            target=self.target,
            bus=self.bus,
            prompter=self.prompter,
            cfg=self.cfg,
            workdir=self.workdir,
            clock=self.clock,
            sleeper=self.sleeper,
            is_secret=self.is_secret,
            run_id=run_id,
            knobs=dict(res.values),
            resolved_at=resolved_at,
            session=self._fresh_session(),
            realized=resume.realized_values(self.journal, forgotten),
            forgotten_before=forgotten,
            recovering=recovering,
            interrupted=self._interrupted,
            interrupted_by=self._interrupted_by,
        )
        run.interrupted_acts.update(carried)
        run.carried_from = carried
        self._start(run, resumed=resume_id is not None, how=res.how)
        try:
            result = teardown.teardown(run) if self.cfg.kind == "teardown" else self._apply(run)
        except Stop as stop:
            result = stop.result
        except KeyboardInterrupt:
            run.interrupted = True
            result = run.finish(RunState.INTERRUPTED, None, run.interruption)
        except Exception as exc:
            # Never leave a run `running` behind an error: the next apply would take it for a crash.
            if self.journal.run(run_id).state == RunState.RUNNING.value:
                run.finish(RunState.FAILED, None, f"stopped by an error: {exc}", ledger=False)
            raise
        result.sections = run.reports
        result.unconfirmed = list(run.unconfirmed) if result.outcome == "completed" else []
        return result

    def _start(self, run: Run, *, resumed: bool, how: Mapping[str, str]) -> None:
        """Journal and announce the run's start and its inputs; replay a resumed run's journal."""
        cfg = self.cfg
        self.bus.emit(
            "run.start",
            run_id=run.run_id,
            kind=cfg.kind,
            resumed=resumed,
            target=cfg.target,
            plan=str(self.pf.path),
        )
        self.journal.record_event(
            run.run_id, "inputs-resolved", {"values": run.knobs, "how": how, "operator": cfg.operator}
        )
        self.bus.emit("inputs", values=run.knobs, how=how, operator=cfg.operator)
        why = "resumed" if resumed else "started"
        self.journal.transition(run.run_id, RunState.RUNNING, why)
        self.bus.emit("run.state", run_id=run.run_id, to=RunState.RUNNING.value, reason=why)
        if resumed:
            resume.replay(run)

    def _apply(self, run: Run) -> RunResult:
        """Every executable section in order; the run completes when the last one did."""
        run.write_ledger(status="applying")
        for section in run.plan.executable_sections:
            sections.apply_section(run, section)
        self.journal.reset_recoveries(run.run_id)
        return run.finish(RunState.COMPLETED, None, run.summary())

    def _preview(self) -> RunResult:
        """`director plan` / `director check`: observe only."""
        res = self._interview(resume.previous_inputs(self.journal), self.cfg.reinterview)
        forgotten = resume.forgotten_before(self.journal)
        return Preview(
            plan=self.pf.plan,
            journal=self.journal,
            shell=self.shell,
            bus=self.bus,
            cfg=self.cfg,
            is_secret=self.is_secret,
            knobs=dict(res.values),
            realized=resume.realized_values(self.journal, forgotten),
            session=self._fresh_session(),
            forgotten_before=forgotten,
        ).run()

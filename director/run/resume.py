"""Opening a run: resume the latest stopped one, or start fresh; replay what the journal says finished.

A run left `running` belongs to a process that died (we hold the lease): its unfinished steps are marked
interrupted, its recovery count rises, and after `--max-recoveries` recoveries without progress Director
stops (a crash loop). A stopped run of the other kind (a teardown's, when applying) is cancelled, so only
one story is ever resumable.
"""

from __future__ import annotations

from director.errors import CrashLoop
from director.run import history
from director.run.config import RunConfig
from director.run.context import Done, Run
from director.run.events import Bus
from director.state.lifecycle import RESUMABLE, RunState, StepState
from director.state.store import RunKind, StateStore


def _mark_dead(journal: StateStore, run_id: int) -> None:
    """We hold the lease, so the process that was running this run is gone: its outcome is unknown.

    The steps it was running are named in a `steps-died` event first (then marked interrupted), so that
    a resumed run flags exactly those re-runs `rerun_after_crash` (a Ctrl-C also ends a step
    `interrupted`, but nobody died).
    """
    unfinished = journal.unfinished_steps(run_id)
    if unfinished:
        journal.record_event(
            run_id,
            "steps-died",
            {"steps": [s.id for s in unfinished], "keys": [s.step_key for s in unfinished]},
        )
    for step in unfinished:
        journal.step_finished(step.id, StepState.INTERRUPTED, None, 0.0, step.output or "", None)
    journal.transition(run_id, RunState.INTERRUPTED, "the process running it died")


def open_run(journal: StateStore, bus: Bus, cfg: RunConfig) -> tuple[int | None, bool]:
    """(the stopped run to resume or None for a new one, whether it is recovering from a crash)."""
    kind = cfg.kind
    latest = journal.latest_run(kind)
    if latest is not None and latest.state == RunState.RUNNING.value:
        _mark_dead(journal, latest.id)
        journal.bump_recoveries(latest.id)
        latest = journal.run(latest.id)
    other = journal.latest_run("apply" if kind == "teardown" else "teardown")
    if other is not None and other.state == RunState.RUNNING.value:
        _mark_dead(journal, other.id)
        other = journal.run(other.id)
    resumable = {s.value for s in RESUMABLE}
    if other is not None and other.state in resumable:
        journal.transition(other.id, RunState.CANCELLED, f"cancelled by {kind}")
        bus.emit("run.state", run_id=other.id, to="cancelled", reason=f"cancelled by {kind}")
    if latest is not None and latest.state in resumable and not cfg.restart:
        if latest.recoveries > cfg.max_recoveries:
            raise CrashLoop(
                f"run {latest.id} died {latest.recoveries} times without progress; "
                "inspect it with `director audit`, then start over with --restart"
            )
        return latest.id, latest.recoveries > 0
    if latest is not None and latest.state in resumable:
        journal.transition(latest.id, RunState.CANCELLED, "superseded by --restart")
    return None, False


def superseded(journal: StateStore, kind: RunKind) -> dict[str, int]:
    """The acts interrupted in runs of this kind that were cancelled -- by `--restart`, or by a run of the
    other kind (a teardown cancels a stopped apply) -- each with the run of its interrupted attempt: they
    run again in the new run, what they started stopped first. Neither a restart nor a teardown that
    stopped at its gate is a way around an interrupted act.

    Read back from the latest run of this kind for as long as runs were cancelled (a run cancelled before it
    reached an act passes that act's interruption on); an act attempted again in a later cancelled run is
    judged by that later attempt."""
    carried: dict[str, int] = {}
    decided: set[str] = set()
    run = journal.latest_run(kind)
    while run is not None and run.state == RunState.CANCELLED.value:
        latest: dict[str, str] = {}
        for step in journal.steps(run.id):
            if step.role == "act":
                latest[step.step_key] = str(step.state)
        for key, state in latest.items():
            if key not in decided and state == StepState.INTERRUPTED.value:
                carried[key] = run.id
        decided.update(latest)
        run = journal.run_before(run.id, kind)
    return carried


def previous_inputs(journal: StateStore) -> dict[str, str] | None:
    """The most recent resolution of the inputs (a later run reuses it unless a knob is set)."""
    return history.previous_inputs(journal)


TEARDOWN_ACTED = history.TEARDOWN_ACTED


def forgotten_before(journal: StateStore) -> int:
    """The run in which a teardown last acted (0: none): `history.forgotten_before`."""
    return history.forgotten_before(journal)


def realized_values(journal: StateStore, since: int = 0) -> dict[str, str]:
    """The values the runs since run `since` realized, latest last."""
    return history.realized_values(journal, since)


def replay(run: Run) -> None:
    """A resumed run: its finished steps (with the session each left), its completed sections, and the
    acts that were running when it stopped.

    The session is not taken from where the run stopped: each section takes back, in document order, what
    it left (`sections.adopt_last`, a skipped step's `Done.session`), so a block never sees what a later
    section set. A step is re-run after a crash (flagged `rerun_after_crash`) only if its latest attempt is
    one a dead process was running: not one that finished since (a later re-run that succeeded), nor a
    Ctrl-C -- though an act stopped by a Ctrl-C runs again too (`interrupted_acts`).
    """
    died = {int(i) for ev in run.journal.events(run.run_id, "steps-died") for i in ev.data.get("steps", [])}
    latest: dict[str, tuple[int, str]] = {}
    acts: dict[str, tuple[int, str]] = {}  # the latest attempt of each act
    for step in run.journal.steps(run.run_id):
        if step.state == StepState.SUCCEEDED.value:
            if step.role == "section":
                run.completed_sections[step.section_key] = step.fingerprint
            elif step.role != "observe":
                run.done_steps[step.step_key] = Done(step.fingerprint, step.output or "", step.session)
        if step.role != "section":
            latest[step.step_key] = (step.id, step.state)
            if step.role == "act":
                acts[step.step_key] = (step.id, step.state)
    run.rerun_keys.update(
        key for key, (sid, state) in latest.items() if state == StepState.INTERRUPTED.value and sid in died
    )
    run.unsettled.update(k for k, (_sid, state) in acts.items() if state != StepState.SUCCEEDED.value)
    stopped = StepState.INTERRUPTED.value
    run.interrupted_acts.update(k for k, (_sid, state) in acts.items() if state == stopped)
    run.done_before_resume = set(run.completed_sections)


def interrupted_in(journal: StateStore, kind: RunKind) -> set[str]:
    """The acts the next run of `kind` will run again because they were interrupted (read only, for
    `plan`/`check`): those of the run it would resume whose latest attempt was interrupted or unfinished."""
    latest = journal.latest_run(kind)
    if latest is None:  # (with --restart too: the new run carries them: `superseded`)
        return set()
    if latest.state != RunState.RUNNING.value and latest.state not in {s.value for s in RESUMABLE}:
        return set()
    acts: dict[str, str] = {}
    for step in journal.steps(latest.id):
        if step.role == "act":
            acts[step.step_key] = str(step.state)
    unfinished = (StepState.INTERRUPTED.value, StepState.STARTED.value)
    return {k for k, state in acts.items() if state in unfinished}

"""Durable steps: a block journaled before it runs and after, retried by its policy, judged if it checks.

A step that finished earlier in the same run with the same fingerprint is not run again (the memo that
makes a resumed run continue where it stopped); one that was running when the run died is re-run and
flagged. Verify and observe blocks run with bash's trace and are judged by their structure
(`director.plan.verify`).
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Literal

from director.exec.session import split_functions
from director.exec.shell import BlockResult, SessionState
from director.ledger.cells import strip_ansi
from director.plan import bash, contrast
from director.plan.contrast import Family, Learned, Phase
from director.plan.fence import start_cwd
from director.plan.model import Block, Section
from director.plan.retry import MAX_DURATION_S
from director.plan.verify import Evidence, Judgement, Stopped, Verdict, judge
from director.run import fingerprint, processes, session
from director.run import worlds as worlds_mod
from director.run.config import Stop
from director.run.context import Done, Run
from director.run.worlds import Worlds
from director.state.lifecycle import RunState, StepState

Role = Literal["act", "verify", "observe"]


def judge_block(
    block: Block,
    text: str,
    res: BlockResult,
    worlds: Worlds | None = None,
    *,
    family: Family = "apply",
    phase: Phase = "observe",
) -> tuple[Judgement, list[Learned]]:
    """A verify block's run: by exit status and structure (docs/verify-semantics.md), then, for the checks
    that exit 0 whatever they find, by contrast with the worlds `worlds` has seen it in; what it taught."""
    model = bash.verify_model(text, block.body_start, block.context)
    lines = [strip_ansi(ln).rstrip("\r") for ln in res.output.split("\n")]
    entries = list(res.trace) if res.trace is not None else None
    ran = bash.executed(model, entries) if entries is not None else None
    stopped: Stopped | None = (
        "timeout"
        if res.timed_out
        else "input"
        if res.waited_for_input
        else "interrupted"
        if res.interrupted
        else None
    )
    j = judge(model, Evidence(res.exit_code, lines, ran, stopped))
    if entries is None or ran is None or not model.traceable:
        return contrast.untraced(model, j, lines, phase=phase, family=family), []
    paths = bash.unit_paths(model, entries)
    key = contrast.block_key(text)
    known = worlds.baselines(key, family) if worlds is not None else {}
    before = worlds.before(key, family) if worlds is not None and phase == "after-act" else None
    j, _, learned = contrast.judge(
        model, j, ran, paths, lines, known, phase=phase, family=family, before=before
    )
    if worlds is not None and phase == "observe":
        worlds.saw(key, family, paths)
    return j, learned


def failure(what: str, block: Block, res: BlockResult, reason: str = "") -> str:
    """`§3 verify failed (exit 1) at plan line 270: <the last lines it printed>`."""
    if reason and not reason.startswith("exit "):
        why = reason
    elif res.timed_out:
        why = "timed out"
    elif res.waited_for_input:
        why = "waited for keyboard input in a non-interactive run (stdin is not a terminal)"
    else:
        why = f"exit {res.exit_code}"
    tail = [strip_ansi(ln) for ln in res.output.splitlines() if ln.strip()][-3:]
    msg = f"{what} ({why}) at plan line {block.span.first_line}"
    return msg + (": " + " | ".join(tail) if tail else "")


def backoff(delay_s: float, kind: str, attempt: int) -> float:
    """Delay before the next attempt: constant, or exponential (delay·2^(attempt-1))."""
    if kind == "exponential":
        # doubling stops at a week (docs/limits.md): 2^1000 seconds is no wait a clock can make
        return min(MAX_DURATION_S, delay_s * 2.0 ** min(attempt - 1, 64))
    return float(delay_s)


class _Waits:
    """A running block's output and input waits as events (`step.input` says when it waits, and no longer)."""

    def __init__(self, run: Run, section: str, block: int) -> None:
        self.bus, self.section, self.block = run.bus, section, block
        self.waiting = False

    def output(self, chunk: str) -> None:
        self.done()
        self.bus.emit("step.output", section=self.section, block=self.block, text=chunk)

    def wait(self, prompt: str) -> None:
        self.waiting = True
        self.bus.emit("step.input", section=self.section, block=self.block, prompt=prompt)

    def done(self) -> None:
        if self.waiting:
            self.waiting = False
            self.bus.emit("step.input", section=self.section, block=self.block, prompt=None)


def drain_target(run: Run) -> None:
    """Journal and announce what the target did during the block (a deploy, a session started)."""
    for ev in run.target.drain_events():
        run.journal.record_event(run.run_id, "target", ev)
        run.bus.emit("target", op=run.target.describe_event(ev), detail=ev)


def _memo(
    run: Run, block: Block, text: str, prior: Done, judged: bool
) -> tuple[BlockResult, Judgement | None]:
    """A step that finished earlier in this run is not run again: the session takes back what it left."""
    if prior.session is not None:
        session.adopt(run, prior.session)
    res = BlockResult(0, prior.output or "", 0.0, run.session)
    return res, (judge_block(block, text, res)[0] if judged else None)


def _refuse_withheld(run: Run, section: Section, block: Block, text: str) -> None:
    """Never run a block with an empty or masked secret a previous process had (it was never stored):
    a scalar, an array, or a function whose text held one."""
    if not (run.withheld or run.withheld_functions):
        return
    read = bash.inputs(text)  # a name the block sets itself is not one it needs from before
    missing = [n for n in read if n in run.withheld and n not in run.withheld_arrays]
    arrays = [n for n in read if n in run.withheld_arrays]
    functions = sorted(f for f in run.withheld_functions if bash.calls(text, f))
    if not (missing or arrays or functions):
        return
    where = f"{run.label(section)} block at plan line {block.span.first_line}"
    why = []
    if missing:
        names = ", ".join(missing)
        why.append(
            f"reads {names}: a secret an earlier block set in a previous process; Director never stores "
            f"secrets, so it cannot restore it. Export {names} in Director's environment and run again"
        )
    if arrays:
        names = ", ".join(arrays)
        why.append(
            f"reads the array {names}, which an earlier block filled with a secret in a previous process; "
            "Director never stores secrets, so it cannot restore it. Fill it in §0 (run again on every "
            "resume) from a variable exported in Director's environment"
        )
    if functions:
        names = ", ".join(functions)
        why.append(
            f"calls {names}, a function an earlier block defined with a secret in its text in a previous "
            "process; Director never stores secrets, so it cannot restore it. Define it in §0 from a "
            "variable exported in Director's environment"
        )
    message = f"{where} " + "; it ".join(why) + " (the block was not run with an empty or masked value)"
    raise Stop(run.fail(section, message))


def block_session(state: SessionState, block: Block, workdir: Path | str) -> SessionState:
    """The session a block starts in: its fence's `cwd=` (Runme's attribute) applied, if any."""
    if block.cwd is None:
        return state
    return replace(state, cwd=start_cwd(state.cwd or str(workdir), block.cwd))


def step(
    run: Run,
    section: Section,
    block: Block,
    text: str,
    role: Role,
    *,
    memo: bool = True,
    rerun: str | None = None,
    phase: Phase = "observe",
    start: SessionState | None = None,
) -> tuple[BlockResult, Judgement | None]:
    """Run one block as a durable step (journaled before and after), with its retry policy.

    Every attempt starts in the session document order has at this point (`run.session`), and the session
    is what the last attempt left. `start`: a check's extra run (the observation before an act) runs in
    that session instead and leaves no trace: `run.session` is untouched and the result's `state` is what
    it would have left.

    Verify and observe blocks are traced and judged by their structure: the step succeeded unless the
    judgement is a failure (a false precondition's exit 1 is not one). `rerun` says why a section that
    succeeded before runs its act again (journaled in the step's flags). `phase` says whether a verify
    runs right after its section's act (its paths are contrasted with the observation before it).
    """
    judged = role in ("verify", "observe")
    key = f"{section.key}/{block.index}"
    counted = start is None  # its effect on the session is kept
    begin = run.session if start is None else start
    fp = fingerprint.step(
        text, run.knobs, fingerprint.seen(begin.variables, run.shell.family_values()), run.is_secret
    )
    prior = run.done_steps.get(key)
    if memo and role in ("act", "verify") and prior is not None and prior.fingerprint == fp:
        run.bus.emit(
            "step.skip", section=section.key, block=block.index, role=role, reason="finished earlier"
        )
        return _memo(run, block, text, prior, judged)
    _refuse_withheld(run, section, block, text)
    run.section_started.setdefault(section.key, time.monotonic())  # a failed section's time starts here
    policy = block.retry
    attempts = 1 + (policy.retries if policy else 0)
    timeout = policy.timeout_s if policy and policy.timeout_s else run.cfg.step_timeout_s
    crashed = key in run.rerun_keys
    flags: dict[str, object] = {"rerun_after_crash": True} if crashed else {}
    if rerun is not None:
        flags["rerun"] = rerun
    if role == "act" and (seen := run.worlds.take_pending()):
        flags[worlds_mod.OBSERVED] = seen  # the world before it, for a resumed run's verify (run/worlds.py)
    run.rerun_keys.discard(key)
    # An earlier attempt of this act in this run (resumed after a crash, a Ctrl-C or a failure) may have
    # left processes running: they are stopped before it runs again (docs/processes.md).
    again = role == "act" and (crashed or key in run.unsettled)
    res: BlockResult | None = None
    j: Judgement | None = None
    for attempt in range(1, attempts + 1):
        if run.interrupted:
            break
        if again or (role == "act" and attempt > 1):
            run.journal.commit()  # nothing held open while it waits for what is left to stop
            processes.stop_left(run, section, block)
        if role == "act" and attempt == 1 and key in run.carried_from:
            processes.stop_left(run, section, block, run.carried_from.pop(key))
        sid = run.journal.step_started(
            run.run_id, key, section.key, block.index, role, fp, attempt, flags, lazy=judged
        )
        if role == "act":
            run.unsettled.add(key)
        run.bus.emit(
            "step.start",
            section=section.key,
            block=block.index,
            role=role,
            attempt=attempt,
            line=block.span.first_line,
            rerun=crashed,
        )

        waits = _Waits(run, section.key, block.index)
        res = run.shell.run(
            text,
            block_session(begin, block, run.workdir),
            timeout_s=timeout,
            trace=judged,
            on_output=waits.output,
            on_waiting=waits.wait,
            keeps_session=session.kept_by(begin, text),
            marks=processes.step_marks(run, section, block, sid),
        )
        waits.done()
        processes.record_started(run, section, block, sid)  # what it left running (docs/processes.md)
        if judged:
            family = worlds_mod.family_of(section)
            j, learned = judge_block(block, text, res, run.worlds, family=family, phase=phase)
            ok = j.verdict is not Verdict.FAILED and not (res.interrupted or run.interrupted)
            if ok:
                run.worlds.learn(run.run_id, contrast.block_key(text), family, learned)
        else:
            ok = res.ok
        res = session.unless_unlearned(run, text, res, begin)  # what is stored and said from here on
        state = (
            StepState.SUCCEEDED if ok else (StepState.INTERRUPTED if run.interrupted else StepState.FAILED)
        )
        after = res.state if block.cwd is None else replace(res.state, cwd=begin.cwd)
        if counted:
            run.session = after
            run.withheld -= set(after.variables) | set(after.arrays)
            run.withheld_arrays &= run.withheld
            if run.withheld_functions:
                run.withheld_functions -= set(split_functions(after.functions))
        else:
            res = replace(res, state=after)
        session.learn_secrets(run, after)
        # What the step changed in the session, not the whole session it ended in: skipped on a resume, it
        # gives back only that, over what the blocks before it left this time (a section before it that
        # ran again keeps its new values). An observation: the session it ran in, which it left as it was.
        kept = session.as_journaled(run, session.delta(begin, after) if counted else begin)
        run.journal.step_finished(
            sid,
            state,
            res.exit_code,
            res.duration_s,
            # a secret the block itself minted is known only now: mask it in what is stored
            run.shell.redactor.redact(res.output),
            kept,
            lazy=judged,  # a check's outcome: lost to a power cut, the check runs again (docs/durability.md)
        )
        run.bus.emit(
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
        drain_target(run)
        if ok:
            run.unsettled.discard(key)
            run.interrupted_acts.discard(key)
            if counted:
                run.done_steps[key] = Done(fp, res.output, kept)
            if run.recovering and role == "act":
                # Real progress since the last recovery: the crash-loop count restarts.
                run.journal.reset_recoveries(run.run_id)
                run.recovering = False
            return res, j
        if run.interrupted or role == "observe" or attempt == attempts:
            break
        delay = backoff(policy.delay_s if policy else 1.0, policy.backoff if policy else "constant", attempt)
        run.bus.emit("step.retry", section=section.key, block=block.index, attempt=attempt, delay_s=delay)
        run.journal.commit()  # the failed attempt is durable before the wait
        run.sleeper(delay)
    if run.interrupted:
        run.report(section, "interrupted", run.interrupted_by)
        raise Stop(run.finish(RunState.INTERRUPTED, section.key, run.interruption))
    assert res is not None
    if role == "act":
        raise Stop(run.fail(section, failure(f"{run.label(section)} block failed", block, res)))
    return res, j

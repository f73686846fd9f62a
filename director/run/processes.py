"""What a plan's blocks leave running: each step's mark, stopping what an earlier attempt left, what a
teardown leaves (docs/processes.md).

A step is at-least-once; its effects on the process table must not be. Every block exports its step's
identity (`director.exec.marks`), so that before a step runs again in the same run -- resumed after a
crash, a Ctrl-C or a failure, or retried -- what its earlier attempts left running is found in /proc,
stopped (SIGTERM, then SIGKILL after the shell's grace period) and audited (`processes-stopped`), unless
the block's fence says `processes=keep`. A teardown ends by listing the plan's processes still running:
it is not `gone` while one runs (`still_running`).

A mark lives in a process's environment, which a daemon may clear (`env -i`) or write over (a process
title rewritten over `argv` and `environ`). So the session's bash is a child subreaper
(`director.exec.processes.child_subreaper`): whatever a step leaves running stays its descendant while the
run lasts, and at the step's end each one is recorded -- pid and start time, which no process can change --
in the journal (`record_started`, event `processes-started`). Every later look (this run, a resumed one,
`status`, a teardown) finds the plan's processes by their mark *or* by that record.
"""

from __future__ import annotations

import time

from director.exec import marks
from director.exec.marks import Marked, Recorded
from director.exec.processes import descendants
from director.plan.model import Block, Section
from director.run.context import Run

# How long a teardown waits for the plan's processes to end after its last block (a block's `kill PID`
# returns before the process has gone); it waits on /proc and ends as soon as none is left.
EXIT_WAIT_S = 5.0


def _plan(run: Run) -> str | None:
    return run.shell.marks.get(marks.PLAN_VAR)


def step_marks(run: Run, section: Section, block: Block, attempt: int) -> dict[str, str]:
    """The marks one attempt of a block carries (`attempt`: its journal row); {} without a plan identity."""
    plan = _plan(run)
    if plan is None:
        return {}
    return marks.step_marks(
        plan, run.run_id, section.key, block.index, attempt, keep=block.fence.keeps_processes
    )


def _described(procs: list[Marked], how: dict[Marked, str] | None = None) -> list[dict[str, object]]:
    out = []
    for p in procs:
        d = p.to_json()
        if how is not None:
            d["signal"] = how.get(p, "survived")
        out.append(d)
    return out


def _names(procs: list[Marked]) -> str:
    return ", ".join(f"pid {p.pid} ({p.command})" for p in procs)


def record_started(run: Run, section: Section, block: Block, attempt: int) -> None:
    """At a step's end: record what the session's bash now holds (the step's orphans, its background jobs,
    a daemon that double-forked) that no earlier step of this run recorded -- pid, start time, command
    name (audited: `processes-started`). Cheap when nothing is left: the bash's children list is empty."""
    plan, server = _plan(run), run.shell.server_pid
    if plan is None or server is None:
        return
    found = descendants(server)
    if not found:
        return
    known = {(r.pid, r.start) for r in recorded(run, run_id=run.run_id)}
    new = [d for d in found if (d.pid, d.start) not in known]
    if not new:
        return
    keep = block.fence.keeps_processes
    step = marks.step_marks(plan, run.run_id, section.key, block.index, attempt, keep=keep)[marks.STEP_VAR]
    run.journal.record_event(
        run.run_id,
        marks.STARTED,
        {
            "section": section.key,
            "block": block.index,
            "step": step,
            "kept": keep,
            "processes": [{"pid": d.pid, "start": d.start, "command": d.command} for d in new],
        },
    )


def recorded(run: Run, run_id: int | None = None) -> list[Recorded]:
    """The processes the journal recorded as this plan's (of one run, or of every run)."""
    return marks.recorded_in(e.data for e in run.journal.events(run_id=run_id, kind=marks.STARTED))


def stop_left(run: Run, section: Section, block: Block, run_id: int | None = None) -> None:
    """Before a step runs again: stop what its earlier attempts in this run (or in the run `run_id`, which
    `--restart` cancelled while it ran) left running (audited)."""
    plan = _plan(run)
    if plan is None or block.fence.keeps_processes:
        return
    rid = run.run_id if run_id is None else run_id
    prefix = marks.step_prefix(plan, rid, section.key, block.index)
    left = marks.marked(plan, step_prefix=prefix, exclude=_own(run), recorded=recorded(run, rid))
    if not left:
        return
    how = dict(marks.stop(left, grace_s=run.shell.kill_grace_s, clock=time.monotonic, sleeper=run.sleeper))
    data = {"section": section.key, "block": block.index, "processes": _described(left, how)}
    run.journal.record_event(run.run_id, "processes-stopped", data)
    run.bus.emit("processes", action="stopped", **data)


def _own(run: Run) -> set[int]:
    server = run.shell.server_pid
    return {server} if server is not None else set()


def still_running(run: Run, section: Section) -> str | None:
    """At the end of a teardown: why the plan is not gone (processes it started still run), or None.

    Waits up to `EXIT_WAIT_S` for them to end on their own. Processes of blocks that keep theirs
    (`processes=keep`) are listed (audited, announced) but do not hold the teardown back.
    """
    plan = _plan(run)
    if plan is None:
        return None
    deadline = time.monotonic() + EXIT_WAIT_S
    known = recorded(run)
    left = marks.marked(plan, exclude=_own(run), recorded=known)
    while any(not p.kept for p in left) and time.monotonic() < deadline:
        run.sleeper(0.05)
        left = marks.marked(plan, exclude=_own(run), recorded=known)
    if not left:
        return None
    data = {"section": section.key, "block": None, "processes": _described(left)}
    run.journal.record_event(run.run_id, "processes-left", data)
    run.bus.emit("processes", action="left", **data)
    held = [p for p in left if not p.kept]
    if not held:
        return None
    return (
        f"{len(held)} process{'es' if len(held) > 1 else ''} the plan started still "
        f"{'run' if len(held) > 1 else 'runs'}: {_names(held)}; "
        "the plan is not gone while they do (`director status` lists them; stop them, run teardown again)"
    )

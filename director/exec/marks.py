"""The identity every process a block starts carries, read back from /proc; stopping what a step left.

Each block exports, for itself and everything it starts, the plan's identity and the step's:

    DIRECTOR_PLAN=<plan file name>@<16 hex digits>
    DIRECTOR_STEP=<DIRECTOR_PLAN>/<run id>/<section key>/<block index>/<attempt>
    DIRECTOR_PROCESSES=keep                        (only when the block's fence says `processes=keep`)

The environment is inherited through `fork`/`exec`, so a `setsid`, `nohup`, `disown` or double-forked
child still carries it, and Director finds it again in `/proc/<pid>/environ` (which reads the environment
a process was started with) from any later process, after a crash too. What escapes the mark: a process
started with a cleaned environment (`env -i`, `sudo` without `-E`, a service started through `systemctl`)
and its descendants, unless one of its ancestors is still a marked process (descendants of a marked
process are counted too). Director uses no cgroup: see docs/processes.md.

Pure `os` (nothing of Director's besides `processes`): the shell exports the marks, the run layer stops
what an interrupted attempt left and lists what a teardown left, `status` lists what runs.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import signal
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from director.exec.processes import pid_alive, proc_stat
from director.plan.source import whole_number

__all__ = [
    "KEEP_VAR",
    "NAMES",
    "PLAN_VAR",
    "STARTED",
    "STEP_VAR",
    "Marked",
    "Recorded",
    "marked",
    "plan_identity",
    "recorded_in",
    "state_identity",
    "step_marks",
    "stop",
]

PLAN_VAR = "DIRECTOR_PLAN"
STEP_VAR = "DIRECTOR_STEP"
KEEP_VAR = "DIRECTOR_PROCESSES"
NAMES: frozenset[str] = frozenset({PLAN_VAR, STEP_VAR, KEEP_VAR})  # never part of the session
_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]")


def plan_identity(name: str, where: str) -> str:
    """`<plan file name>@<digest of where its state lives>`: one plan's state on this machine.

    `name` is for humans reading /proc (made of letters, digits and `._+-` only); `where` (the journal's
    file, or the database and plan key) makes it unique.
    """
    digest = hashlib.sha256(where.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return f"{_UNSAFE.sub('_', name)[:60] or 'plan'}@{digest}"


def state_identity(name: str, state: Mapping[str, object]) -> str:
    """`plan_identity` of the plan file `name` whose state a backend describes (`StateBackend.describe`:
    the backend, where, and the plan's key there): one plan's state on this machine."""
    return plan_identity(name, f"{state['backend']} {state['where']} {state['key']}")


def step_marks(
    plan: str, run_id: int, section: str, block: int, attempt: int, *, keep: bool
) -> dict[str, str]:
    """The marks one attempt of a step exports (`DIRECTOR_PROCESSES` only when the block keeps them)."""
    marks = {STEP_VAR: f"{plan}/{run_id}/{_UNSAFE.sub('_', section)}/{block}/{attempt}"}
    if keep:
        marks[KEEP_VAR] = "keep"
    return marks


def step_prefix(plan: str, run_id: int, section: str, block: int) -> str:
    """What every attempt's `DIRECTOR_STEP` of one step starts with."""
    return f"{plan}/{run_id}/{_UNSAFE.sub('_', section)}/{block}/"


@dataclass(frozen=True)
class Marked:
    """A live process carrying a plan's mark (or descending from one that does)."""

    pid: int
    start: str  # the kernel's start time: a recycled pid is not this process
    command: str  # its executable's name (`comm`): argv may hold a secret, so it is never read
    step: str  # its DIRECTOR_STEP ("" for a descendant that lost the mark, or a process of no step)
    kept: bool  # started by a block whose fence says `processes=keep`

    @property
    def where(self) -> tuple[str, str, str, str]:
        """(run id, section key, block index, attempt) of its step; empty strings if unknown."""
        parts = self.step.rsplit("/", 4)
        return (parts[1], parts[2], parts[3], parts[4]) if len(parts) == 5 else ("", "", "", "")

    def to_json(self) -> dict[str, object]:
        """Plain data (status, audit events)."""
        run, section, block, attempt = self.where
        return {
            "pid": self.pid,
            "command": self.command,
            "run_id": whole_number(run),
            "section": section or None,
            "block": whole_number(block),
            "attempt": whole_number(attempt),
            "kept": self.kept,
        }


# The audit event a step's end records its processes in (`director.run.processes.record_started`).
STARTED = "processes-started"


@dataclass(frozen=True)
class Recorded:
    """A process the journal says a step left running: found again by pid *and* start time, whatever it
    did to its environment or title since."""

    pid: int
    start: str
    step: str
    kept: bool


def recorded_in(events: Iterable[Mapping[str, Any]]) -> list[Recorded]:
    """The processes `STARTED` events recorded (their `data`), oldest first."""
    out: list[Recorded] = []
    for data in events:
        step, kept = str(data.get("step", "")), bool(data.get("kept", False))
        for p in data.get("processes", ()):
            with contextlib.suppress(KeyError, TypeError, ValueError):
                out.append(Recorded(int(p["pid"]), str(p["start"]), step, kept))
    return out


def _environ(pid: int) -> dict[bytes, bytes] | None:
    """The marks among a process's starting environment (None if it cannot be read: gone, not ours)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            data = f.read()
    except OSError:
        return None
    if b"DIRECTOR_" not in data:
        return {}
    out: dict[bytes, bytes] = {}
    for item in data.split(b"\0"):
        if item.startswith(b"DIRECTOR_"):
            k, _, v = item.partition(b"=")
            out[k] = v
    return out


def _comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm", "rb") as f:
            return f.read().strip().decode("utf-8", "replace")
    except OSError:
        return "?"


def marked(
    plan: str,
    *,
    step_prefix: str | None = None,
    exclude: Collection[int] = (),
    recorded: Iterable[Recorded] = (),
) -> list[Marked]:
    """Live processes (zombies aside) carrying `plan`'s mark, those the journal recorded as the plan's
    (`recorded`: the same pid with the same start time, whatever their environment says now), and their
    descendants; [] without /proc.

    With `step_prefix`, only those of one step (`DIRECTOR_STEP` starts with it) and their descendants.
    `exclude`: pids never listed (Director itself, its session's bash).
    """
    try:
        entries = [int(e) for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return []
    me = os.getpid()
    want_plan = plan.encode("utf-8", "surrogateescape")
    want_step = step_prefix.encode("utf-8", "surrogateescape") if step_prefix is not None else None
    parent: dict[int, int] = {}
    start: dict[int, str] = {}
    found: dict[int, tuple[str, bool]] = {}
    for pid in entries:
        fields = proc_stat(pid)
        if not fields or len(fields) <= 19 or fields[0] in ("Z", "X"):
            continue
        parent[pid], start[pid] = int(fields[1]), fields[19]
        if pid == me or pid in exclude:
            continue
        env = _environ(pid)
        if not env or env.get(PLAN_VAR.encode()) != want_plan:
            continue
        step = env.get(STEP_VAR.encode(), b"")
        if want_step is not None and not step.startswith(want_step):
            continue
        found[pid] = (step.decode("utf-8", "replace"), env.get(KEEP_VAR.encode()) == b"keep")
    for r in recorded:
        if r.pid in found or r.pid == me or r.pid in exclude or start.get(r.pid) != r.start:
            continue  # gone, or the pid is another process now
        if step_prefix is None or r.step.startswith(step_prefix):
            found[r.pid] = (r.step, r.kept)
    # Descendants of a marked process belong to its step even if they dropped the mark (`env -i`).
    grew = True
    while grew:
        grew = False
        for pid, pp in parent.items():
            if pid in found or pp not in found or pid == me or pid in exclude:
                continue
            env = _environ(pid)
            if env is None or env.get(PLAN_VAR.encode()) == want_plan:
                continue  # unreadable, or marked as ours (then counted above if it is of this step)
            found[pid] = found[pp]
            grew = True
    return [Marked(pid, start[pid], _comm(pid), step, kept) for pid, (step, kept) in sorted(found.items())]


def _send(proc: Marked, sig: int) -> None:
    """Signal `proc` if it is still that process (its pid not recycled): through a pidfd where possible."""
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        if pid_alive(proc.pid, proc.start):
            with contextlib.suppress(OSError):
                os.kill(proc.pid, sig)
        return
    try:
        # The pidfd pins the process: if it is still the one listed now, the signal cannot reach another.
        if pid_alive(proc.pid, proc.start):
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(fd, sig)
    finally:
        os.close(fd)


def stop(
    procs: Iterable[Marked],
    *,
    grace_s: float,
    clock: Callable[[], float],
    sleeper: Callable[[float], None],
) -> Mapping[Marked, str]:
    """SIGTERM (and SIGCONT) each process, SIGKILL those left after `grace_s`, wait on /proc until none is
    left (giving up 5 s after SIGKILL: a process in uninterruptible sleep must not hang Director), then
    until its parent reaped it (`REAP_WAIT_S`: a zombie's pid still answers `kill -0`).

    Returns how each ended: `SIGTERM`, `SIGKILL`, or `survived`.
    """
    left = list(procs)
    how: dict[Marked, str] = {}
    for p in left:
        _send(p, signal.SIGTERM)
        _send(p, signal.SIGCONT)  # a stopped process acts on SIGTERM only once continued
    term_at = clock()
    sent_kill = False
    while left:
        still = [p for p in left if pid_alive(p.pid, p.start)]
        for p in left:
            if p not in still:
                how[p] = "SIGKILL" if sent_kill else "SIGTERM"
        left = still
        if not left:
            break
        now = clock()
        if not sent_kill and now - term_at >= grace_s:
            for p in left:
                _send(p, signal.SIGKILL)
            sent_kill = True
        elif sent_kill and now - term_at >= grace_s + 5.0:
            for p in left:
                how[p] = "survived"
            break
        sleeper(0.01)
    _wait_reaped([p for p, h in how.items() if h != "survived"], clock=clock, sleeper=sleeper)
    return how


# How long `stop` waits for an ended process's parent to reap it. A process orphaned by a crashed Director
# is init's child, and an init that reaps on a timer (some container inits poll every 2 s) leaves the
# zombie's pid in place: the act that runs next and asks `kill -0 "$(cat app.pid)"` (the usual guard)
# would take it for a live server and not start one.
REAP_WAIT_S = 5.0


def _wait_reaped(
    procs: list[Marked], *, clock: Callable[[], float], sleeper: Callable[[float], None]
) -> None:
    """Wait (up to `REAP_WAIT_S`) until no ended process of `procs` is still a zombie in the process table."""
    deadline = clock() + REAP_WAIT_S
    while any(_zombie(p) for p in procs) and clock() < deadline:
        sleeper(0.01)


def _zombie(proc: Marked) -> bool:
    fields = proc_stat(proc.pid)
    if fields is None or len(fields) <= 19 or fields[19] != proc.start:
        return False
    if fields[1] == str(os.getpid()):  # our own child: reaped here, nobody else will
        with contextlib.suppress(ChildProcessError):
            os.waitpid(proc.pid, os.WNOHANG)
        return proc_stat(proc.pid) is not None
    return True

"""Processes seen through /proc: a block's session members, the waiting-reader probe, killing (liveness,
`pid_alive`, is the leaf `director.proc`, re-exported here).

Pure `os`: the local target and the shell share it.
Without /proc (not Linux) liveness falls back on `kill(pid, 0)`, membership on the process group
alone, and the waiting-reader probe is off.

A block's processes (`job_members`) are its process group, everything descending from it, and the
groups those descendants made: a job-control group started inside a block is the block's too, while a
job an earlier block left running (another group, its parent gone) is not.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import signal
from collections.abc import Callable
from dataclasses import dataclass

from director.proc import DEAD_STATES, pid_alive, proc_start_time, proc_stat

__all__ = [
    "READ_SYSCALLS",
    "Descendant",
    "child_subreaper",
    "descendants",
    "group_members",
    "job_members",
    "kill_job",
    "kill_session",
    "pid_alive",
    "proc_start_time",
    "proc_stat",
    "session_members",
    "signal_session",
    "waiting_reader",
    "waiting_reader_among",
]

_PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h


def _prctl() -> Callable[..., int] | None:
    """libc's `prctl`, resolved once in the parent (a forked child must not load libraries)."""
    try:
        fn: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return fn


_PRCTL = _prctl() if platform.system() == "Linux" else None


def child_subreaper() -> bool:
    """Make this process a child subreaper (`prctl(PR_SET_CHILD_SUBREAPER)`, as tini and systemd do): an
    orphan among its descendants -- a daemon that double-forked, a job whose shell ended -- becomes its
    child instead of init's, whatever it did to its environment or title. Kept across `execve`. Safe in
    a forked child before exec (the function was resolved in the parent). False where it is not available."""
    return _PRCTL is not None and _PRCTL(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


@dataclass(frozen=True)
class Descendant:
    """A live process under another: its pid, the kernel's start time (a recycled pid is not it), `comm`."""

    pid: int
    start: str
    command: str


def _children(pid: int) -> list[int]:
    """Direct children of `pid` (`/proc/PID/task/TID/children`, every thread's), [] if unknown."""
    out: list[int] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                out += [int(x) for x in f.read().split()]
        except (OSError, ValueError):
            continue
    return out


def descendants(root: int) -> list[Descendant]:
    """The live processes under `root` (zombies aside), through the kernel's children lists: cheap when
    `root` has none, which is what a session's bash has between blocks unless a block left something."""
    found: list[Descendant] = []
    todo, seen = _children(root), {root}
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        fields = proc_stat(pid)
        if not fields or len(fields) <= 19 or fields[0] in DEAD_STATES:
            continue
        try:
            with open(f"/proc/{pid}/comm", "rb") as f:
                comm = f.read().strip().decode("utf-8", "replace")
        except OSError:
            comm = "?"
        found.append(Descendant(pid, fields[19], comm))
        todo += _children(pid)
    return sorted(found, key=lambda d: d.pid)


# Syscall numbers of read, pread64, readv (what a process blocked on input shows in /proc/PID/syscall).
READ_SYSCALLS: frozenset[str] = frozenset(
    {"x86_64": {"0", "17", "19"}, "aarch64": {"63", "65", "67"}}.get(platform.machine(), set())
)


def _members(match: Callable[[list[str]], bool]) -> list[int]:
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        fields = proc_stat(int(entry))
        # After ")": state, ppid, pgrp, session, …
        if fields and len(fields) > 3 and fields[0] not in DEAD_STATES and match(fields):
            found.append(int(entry))
    return found


def session_members(leader: int) -> list[int]:
    """Live processes whose session or process group is `leader`'s (a block's processes); [] without /proc."""
    lead = str(leader)
    return _members(lambda f: lead in (f[2], f[3]))


def carries(pid: int, name: str, value: str) -> bool:
    """Whether the process `pid` was started with `name=value` in its environment (False if it is gone)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            env = f.read()
    except OSError:
        return False
    needle = f"{name}={value}".encode("utf-8", "surrogateescape")
    return env.startswith(needle + b"\0") or b"\0" + needle + b"\0" in env


def signal_if_carries(pid: int, name: str, value: str, sig: int) -> bool:
    """Send `sig` to `pid` only if it still carries `name=value` (`carries`): pinned by a pidfd before its
    environment is read, so that a pid recycled meanwhile never gets the signal. True if sent."""
    try:
        fd = os.pidfd_open(pid)
    except OSError:
        return False
    try:
        if not carries(pid, name, value):
            return False
        signal.pidfd_send_signal(fd, sig)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def group_members(pgid: int) -> list[int]:
    """Live processes in a process group; without /proc, `[pgid]` if the group exists."""
    if not os.path.isdir("/proc"):
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return []
        except PermissionError:
            pass
        return [pgid]
    group = str(pgid)
    return _members(lambda f: f[2] == group)


def job_members(pgid: int) -> list[int]:
    """Live processes of the job whose group is `pgid`: the group, its descendants, and their groups.

    Without /proc: `[pgid]` if the group exists.
    """
    if not os.path.isdir("/proc"):
        return group_members(pgid)
    table: dict[int, tuple[int, int]] = {}  # pid -> (ppid, pgrp)
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if entry.isdigit():
            fields = proc_stat(int(entry))
            if fields and len(fields) > 3 and fields[0] not in DEAD_STATES:
                table[int(entry)] = (int(fields[1]), int(fields[2]))
    found = {pid for pid, (_pp, pg) in table.items() if pg == pgid}
    groups = {pgid}
    grew = True
    while grew:
        grew = False
        for pid, (pp, pg) in table.items():
            if pid not in found and (pp in found or pg in groups):
                found.add(pid)
                groups.add(pg)
                grew = True
    return sorted(found)


def waiting_reader(leader: int, targets: set[str]) -> tuple[int, str, str] | None:
    """(pid, command, what) of a process of `leader`'s session blocked reading one of `targets`, if any.

    `targets` are `readlink /proc/PID/fd/N` forms (`pipe:[inode]`, `/dev/pts/3`, `/dev/tty`).
    """
    return waiting_reader_among(session_members(leader), targets)


def waiting_reader_among(pids: list[int], targets: set[str]) -> tuple[int, str, str] | None:
    """(pid, command, what) of one of `pids` blocked reading one of `targets`, if any."""
    if not READ_SYSCALLS:
        return None
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/syscall") as f:
                    parts = f.read().split()
                if len(parts) < 2 or parts[0] not in READ_SYSCALLS:
                    continue
                target = os.readlink(f"/proc/{pid}/fd/{int(parts[1], 16)}")
            except (OSError, ValueError):
                continue
            if target in targets:
                try:
                    with open(f"/proc/{pid}/comm") as f:
                        comm = f.read().strip()
                except OSError:
                    comm = "?"
                return pid, comm, target
    return None


def signal_session(leader: int, sig: int) -> None:
    """Send `sig` to `leader`'s process group and to every process of its session."""
    with contextlib.suppress(OSError):
        os.killpg(leader, sig)
    for p in session_members(leader):
        with contextlib.suppress(OSError):
            os.kill(p, sig)


def kill_session(
    leader: int,
    *,
    alive: Callable[[], bool],
    grace_s: float,
    clock: Callable[[], float],
    sleeper: Callable[[float], None],
    tick: Callable[[], None] = lambda: None,
) -> None:
    """SIGTERM `leader`'s processes, SIGKILL after `grace_s`, wait until none is left.

    `alive` says whether the leader itself still runs (its parent reaps it); `tick` runs on every poll
    (the shell drains the pty there, so that a process blocked writing to it can die). Gives up 5 s
    after SIGKILL: a process in uninterruptible sleep must not hang Director.
    """
    _terminate(
        lambda sig: signal_session(leader, sig),
        lambda: bool(session_members(leader)),
        alive=alive, grace_s=grace_s, clock=clock, sleeper=sleeper, tick=tick,
    )  # fmt: skip


def _terminate(
    send: Callable[[int], None],
    members_left: Callable[[], bool],
    *,
    alive: Callable[[], bool],
    grace_s: float,
    clock: Callable[[], float],
    sleeper: Callable[[float], None],
    tick: Callable[[], None],
    cont: bool = False,
) -> None:
    """SIGTERM (then SIGCONT if `cont`), SIGKILL after `grace_s`, poll until nothing is left; give up 5 s
    after SIGKILL."""
    send(signal.SIGTERM)
    if cont:
        send(signal.SIGCONT)  # a stopped process acts on SIGTERM only once continued
    term_at = clock()
    killed = False
    while True:
        tick()
        if not alive() and not members_left():
            return
        now = clock()
        if not killed and now - term_at >= grace_s:
            send(signal.SIGKILL)
            killed = True
        elif killed and now - term_at >= grace_s + 5.0:
            return
        sleeper(0.01)


def kill_job(
    pgid: int,
    *,
    alive: Callable[[], bool],
    grace_s: float,
    clock: Callable[[], float],
    sleeper: Callable[[float], None],
    tick: Callable[[], None] = lambda: None,
) -> None:
    """SIGTERM the job's processes (`job_members`), SIGKILL after `grace_s`, wait until none is left.

    `alive` says whether the job's leader still counts as running (its parent reaps it); `tick` runs on
    every poll. Gives up 5 s after SIGKILL (a process in uninterruptible sleep must not hang Director).
    """

    def send(sig: int) -> None:
        with contextlib.suppress(OSError):
            os.killpg(pgid, sig)
        for p in job_members(pgid):
            with contextlib.suppress(OSError):
                os.kill(p, sig)

    _terminate(
        send,
        lambda: bool(job_members(pgid)),
        alive=alive, grace_s=grace_s, clock=clock, sleeper=sleeper, tick=tick, cont=True,
    )  # fmt: skip

"""Process liveness on this host, read from /proc: a leaf below every effect package (the lease, the
temp-file sweep, the shell and the targets ask it; it imports nothing of Director's).

Without /proc (not Linux) liveness falls back on `kill(pid, 0)`.
"""

from __future__ import annotations

import os

__all__ = ["DEAD_STATES", "pid_alive", "proc_start_time", "proc_stat"]

DEAD_STATES = ("Z", "X")  # zombie, dead: the pid exists but the process no longer runs


def proc_stat(pid: int) -> list[str] | None:
    """Fields of /proc/<pid>/stat after the command name (index 0 is the state), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    # The command name may contain spaces and parentheses; everything after the last ')' is fixed.
    return raw.rsplit(b")", 1)[-1].decode("ascii", "replace").split()


def proc_start_time(pid: int) -> str | None:
    """The kernel's start time of a process (guards against a recycled pid), None if unknown."""
    fields = proc_stat(pid)
    return fields[19] if fields and len(fields) > 19 else None


def pid_alive(pid: int | None, start_time: str | None = None) -> bool:
    """Whether `pid` runs on this host (zombies count as dead) and, with `start_time`, is that process."""
    if not pid or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # OverflowError: no pid is that large
        return False
    except PermissionError:
        pass  # exists, owned by someone else
    fields = proc_stat(pid)
    if not fields:
        # Without procfs (macOS) trust kill(0); with it, the process just vanished.
        return not os.path.isdir("/proc")
    if fields[0] in DEAD_STATES:
        return False
    return start_time is None or (len(fields) > 19 and fields[19] == start_time)

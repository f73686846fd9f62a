"""The plan file's own lock: one writer per plan file, whatever name it is reached by.

The path lease (`director.state.lease`, `director.state.pglease`) is keyed by where the plan's state
lives: its path, or its key. Two names of one file -- hard links, `plan.md` and `copy.md` -- have two
state directories and two keys, so the path lease lets both run at once, on the same file and the same
world. So the lease also takes an `flock` on the plan file itself: the kernel keys it by the file
(device and inode), not by the name it was opened by, and drops it when the holder dies, however it dies.

The lock is on the file as it was when the run started: Director replaces the plan when it writes Live
State (a new inode), and every name the file had until then stays locked until the run ends.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from director.errors import LeaseHeld

Held = tuple[int, int]  # the plan file's (device, inode): this process's hold on its lock
_held: dict[Held, list[int]] = {}  # held lock -> [its descriptor, how many leases of this process share it]


def lock(plan: Path) -> Held | None:
    """This process's hold on the plan file's lock (None if the plan cannot be opened); `LeaseHeld` when
    another process holds it (a run of the same file under another name). Leases of one process share
    it (`state push` holds both backends' leases of one plan)."""
    try:
        fd = os.open(plan, os.O_RDONLY | os.O_CLOEXEC)  # never inherited by a block's processes
    except OSError:
        return None
    st = os.fstat(fd)
    key = (st.st_dev, st.st_ino)
    if key in _held:
        os.close(fd)
        _held[key][1] += 1
        return key
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise LeaseHeld(
            f"plan file {plan} (device {st.st_dev}, inode {st.st_ino}) is being applied by another Director "
            "under another name of the same file (a hard link); wait for that run to end"
        ) from None
    except BaseException:
        os.close(fd)
        raise
    _held[key] = [fd, 1]
    return key


def unlock(held: Held | None) -> None:
    """Let go of the hold; the last one drops the lock (closing the descriptor drops it)."""
    if held is None or held not in _held:
        return
    _held[held][1] -= 1
    if _held[held][1] == 0:
        os.close(_held.pop(held)[0])

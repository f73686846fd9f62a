"""Durable file writes: the one atomic-write helper every Director writer uses.

`write_atomic` writes a temp file beside the target (same directory, so the rename cannot cross file
systems) named `.<target name>.<pid>.<random>.director-tmp`, so that its owner is known; fsyncs it,
gives it its final mode, `os.replace`s it over the target and fsyncs the directory (the rename is
durable only once the directory entry is). A reader sees the old file or the new one, never a torn one;
a crash leaves at worst a temp file, which `remove_stale_temps` clears later. Nothing is written when
the content is already there.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import time
from collections.abc import Callable

from director.exec.processes import pid_alive

__all__ = ["DEFAULT_MODE", "TEMP_SUFFIX", "fsync_dir", "remove_stale_temps", "write_atomic"]

TEMP_SUFFIX = ".director-tmp"
DEFAULT_MODE = 0o644  # a new file's mode unless told otherwise (an existing file keeps its own)

# Test hook: when set, called after the temp file is durable and before `os.replace` (crash tests kill
# the process there). An env var cannot carry a callable, so tests that run in a subprocess set this
# module attribute from their own script.
_before_replace: Callable[[], None] | None = None


def fsync_dir(directory: str | os.PathLike[str]) -> None:
    """Make a directory's entries (a rename, a new file) durable."""
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _temp_prefix(target: str) -> str:
    return f".{os.path.basename(target)}."


def _holds(target: str, data: bytes, st: os.stat_result) -> bool:
    """Whether the file at `target` (whose stat is `st`) already holds exactly `data`."""
    if st.st_size != len(data):
        return False
    with open(target, "rb") as fh:
        return fh.read() == data


def write_atomic(
    path: str | os.PathLike[str],
    data: str | bytes,
    *,
    mode: int | None = None,
    before_replace: Callable[[], None] | None = None,
) -> bool:
    """Write `data` (text as UTF-8, no newline translation) atomically and durably; True if it changed.

    `mode`: the file's permission bits; by default an existing file keeps its own and a new one gets
    0644. Through a symlink, the file it points to is replaced and the link stays. The directory must
    exist. `before_replace` runs once the temp file is durable, right before the rename; if it raises,
    nothing is replaced and the temp file is removed (a last check, such as "the target is still
    writable").
    """
    target = os.path.realpath(path)
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    try:
        st: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        st = None
    final_mode = mode if mode is not None else (stat.S_IMODE(st.st_mode) if st is not None else DEFAULT_MODE)
    if st is not None and _holds(target, raw, st):
        if stat.S_IMODE(st.st_mode) != final_mode:
            os.chmod(target, final_mode)
        return False
    directory = os.path.dirname(target) or "."
    prefix = f"{_temp_prefix(target)}{os.getpid()}."
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=prefix, suffix=TEMP_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            # chmod before the rename: the file never appears with mkstemp's 0600.
            os.fchmod(fh.fileno(), final_mode)
            os.fsync(fh.fileno())
        for hook in (before_replace, _before_replace):
            if hook is not None:
                hook()
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    fsync_dir(directory)
    return True


def _owner_alive(name: str, prefix: str) -> bool:
    """Whether the pid in a temp file's name (`<prefix><pid>.<random><suffix>`) runs on this host."""
    pid = name[len(prefix) :].split(".", 1)[0]
    # An older Director's name has no pid: the age guard alone decides.
    return pid.isdigit() and pid_alive(int(pid))


def remove_stale_temps(path: str | os.PathLike[str], *, older_than_s: float = 60.0) -> int:
    """Delete the temp files killed writers left beside `path`; returns how many.

    Stale: older than a write can take *and* not owned by a live process here (the pid in its name),
    so that a live writer's file is never taken from under it, however slow its disk.
    """
    target = os.path.realpath(path)
    directory = os.path.dirname(target) or "."
    prefix = _temp_prefix(target)
    now = time.time()
    removed = 0
    for name in os.listdir(directory):
        if not (name.startswith(prefix) and name.endswith(TEMP_SUFFIX)):
            continue
        full = os.path.join(directory, name)
        with contextlib.suppress(FileNotFoundError):
            if now - os.stat(full).st_mtime > older_than_s and not _owner_alive(name, prefix):
                os.unlink(full)
                removed += 1
    return removed

"""Durable file writes: the one atomic-write helper every Director writer uses.

`write_atomic` writes a temp file beside the target (same directory, so the rename cannot cross file
systems) named `.<target name>.<pid>.<random>.director-tmp`, so that its owner is known; fsyncs it,
gives it its final mode, `os.replace`s it over the target and fsyncs the directory (the rename is
durable only once the directory entry is). A reader sees the old file or the new one, never a torn one;
a crash leaves at worst a temp file. Nothing is written when the content is already there.

A temp file belongs to the process whose pid its name carries. The next run of the plan removes those of
dead owners (`remove_stale_temps`) once it holds the plan's lease: the lease proves that no other writer
of the plan (or of its state directory) is running, and its holder record names the process it took
over, so a dead owner's temp goes at once, whatever its age.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import tempfile
import time
from collections.abc import Callable, Collection, Iterator

from director.plan.source import whole_number
from director.proc import pid_alive

__all__ = [
    "DEFAULT_MODE",
    "TEMP_SUFFIX",
    "encoded_chunks",
    "fsync_dir",
    "remove_stale_temps",
    "sweep_stale_temps",
    "write_atomic",
]

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


_NAME_MAX = 255  # bytes in one file name (Linux, macOS)
_TEMP_ROOM = 40  # what a temp name adds to its prefix: pid, mkstemp's random part, TEMP_SUFFIX


def _temp_prefix(target: str) -> str:
    """`.NAME.` -- a long NAME (near the 255-byte limit of a file name) cut and told apart by a digest of
    itself, so that the temp name beside it still fits; the same for the same target (stale temps are
    found by it)."""
    name = os.path.basename(target)
    raw = os.fsencode(name)
    if len(raw) + 2 + _TEMP_ROOM > _NAME_MAX:
        digest = hashlib.sha256(raw).hexdigest()[:16]
        name = os.fsdecode(raw[: _NAME_MAX - _TEMP_ROOM - 2 - 17]) + "~" + digest  # the bytes as they are
    return f".{name}."


CHUNK = 1 << 20  # text is encoded and files are compared this much at a time


def encoded_chunks(data: str | bytes) -> Iterator[bytes]:
    """`data` as UTF-8 bytes, a megabyte of text at a time: a large text is never encoded whole (a 5 MB
    plan with one emoji is a 20 MB string; its bytes would be 5 MB more in memory at once)."""
    if isinstance(data, bytes):
        yield data
        return
    for start in range(0, len(data), CHUNK):
        yield data[start : start + CHUNK].encode("utf-8")


def _holds(target: str, data: str | bytes, size: int) -> bool:
    """Whether the file at `target` (`size` bytes) already holds exactly `data`, compared a chunk at a time
    once its size allows it (bytes: the same length; text: at least a byte a character)."""
    if (size != len(data)) if isinstance(data, bytes) else (size < len(data)):
        return False
    with open(target, "rb") as fh:
        for chunk in encoded_chunks(data):
            if fh.read(len(chunk)) != chunk:
                return False
        return fh.read(1) == b""


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
    try:
        st: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        st = None
    final_mode = mode if mode is not None else (stat.S_IMODE(st.st_mode) if st is not None else DEFAULT_MODE)
    if st is not None and _holds(target, data, st.st_size):
        if stat.S_IMODE(st.st_mode) != final_mode:
            os.chmod(target, final_mode)
        return False
    directory = os.path.dirname(target) or "."
    prefix = f"{_temp_prefix(target)}{os.getpid()}."
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=prefix, suffix=TEMP_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as fh:
            for chunk in encoded_chunks(data):
                fh.write(chunk)
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


def _owner(name: str, prefix: str) -> int | None:
    """The pid in a temp file's name (`<prefix><pid>.<random><suffix>`); None in an older Director's name."""
    pid = name[len(prefix) :].split(".", 1)[0]
    return whole_number(pid)


def _stale(full: str, owner: int | None, dead_pids: Collection[int], now: float, older_than_s: float) -> bool:
    if owner is not None:
        # A pid the lease proved dead (even if reused since), or one that no longer runs here.
        return owner in dead_pids or not pid_alive(owner)
    return now - os.stat(full).st_mtime > older_than_s  # no owner in the name: the age guard alone


def remove_stale_temps(
    path: str | os.PathLike[str], *, dead_pids: Collection[int] = (), older_than_s: float = 60.0
) -> int:
    """Delete the temp files dead writers left beside `path`; returns how many.

    Call it only while holding the lease of the plan `path` belongs to, so that no other writer of it
    runs: a temp whose owner (the pid in its name) is in `dead_pids` or no longer runs here is removed,
    whatever its age; a live owner's (another plan's writer, with its own lease) is never taken from it.
    A name without a pid (an older Director's) goes once older than `older_than_s`.
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
            if _stale(full, _owner(name, prefix), dead_pids, now, older_than_s):
                os.unlink(full)
                removed += 1
    return removed


def sweep_stale_temps(
    directory: str | os.PathLike[str],
    *,
    dead_pids: Collection[int] = (),
    skip: Collection[str] = (),
    older_than_s: float = 60.0,
) -> int:
    """`remove_stale_temps` for every file under `directory` (a plan's state directory, under its lease),
    not descending into the directories named in `skip`; returns how many were removed."""
    now = time.time()
    removed = 0
    for root, dirs, files in os.walk(directory):
        dirs[:] = [d for d in dirs if os.path.join(root, d) not in skip]
        for name in files:
            if not (name.startswith(".") and name.endswith(TEMP_SUFFIX)):
                continue
            # `.<target name>.<pid>.<random>.director-tmp`: the pid is the second field from the end.
            parts = name[: -len(TEMP_SUFFIX)].rsplit(".", 2)
            owner = whole_number(parts[1]) if len(parts) == 3 else None
            full = os.path.join(root, name)
            with contextlib.suppress(FileNotFoundError):
                if _stale(full, owner, dead_pids, now, older_than_s):
                    os.unlink(full)
                    removed += 1
    return removed

"""The resource limits (`ulimit`) that flow from block to block, in bash's own units (pure but for the
read of Director's own limits).

As in one script, a block's `ulimit -n 4096` holds for the blocks after it. The EXIT capture writes
`ulimit -a -S` and `ulimit -a -H` (`director.exec.wrappers`); `parse` reads their lines by option letter
(`open files   (-n) 1024`: the letter and the value, whatever language the description is in). Only the
limits a block changed are session state: the ones Director's own process has (`inherited`) are not,
as an inherited variable is not, so a section that did not touch them hands on none (a change replayed in
a later run would otherwise impose the limits of the run that recorded it). `restore` is the prelude's
text: the soft limit, the hard one, the soft one again, each quietly (a hard limit above the one Director
was started with cannot be raised again by a user that is not root: the block then runs under the lower).

A limit is `SOFT:HARD`, each a number in bash's unit for that letter or `unlimited`. In POSIX mode bash
counts `-c` and `-f` in 512-byte blocks instead of 1024-byte ones: a block that set POSIXLY_CORRECT may
then carry those two as changed although it did not touch them (their values restored are the same).
"""

from __future__ import annotations

import functools
import re
import resource
from collections.abc import Mapping

__all__ = ["INHERITED", "inherited", "parse", "restore", "valid"]

# In a section's change (`run.session.delta`): the section set this limit back to Director's own.
INHERITED = "inherited"

# option letter -> (resource number, bash's unit in bytes or 1): bash 5 on Linux; `-p` (pipe size) is
# read-only and not listed
_LIMITS: dict[str, tuple[int, int]] = {
    "c": (resource.RLIMIT_CORE, 1024), "d": (resource.RLIMIT_DATA, 1024), "e": (resource.RLIMIT_NICE, 1),
    "f": (resource.RLIMIT_FSIZE, 1024), "i": (resource.RLIMIT_SIGPENDING, 1),
    "l": (resource.RLIMIT_MEMLOCK, 1024), "m": (resource.RLIMIT_RSS, 1024), "n": (resource.RLIMIT_NOFILE, 1),
    "q": (resource.RLIMIT_MSGQUEUE, 1), "r": (resource.RLIMIT_RTPRIO, 1), "s": (resource.RLIMIT_STACK, 1024),
    "t": (resource.RLIMIT_CPU, 1), "u": (resource.RLIMIT_NPROC, 1), "v": (resource.RLIMIT_AS, 1024),
    "x": (10, 1),  # RLIMIT_LOCKS (Linux), which the resource module does not name
    "R": (resource.RLIMIT_RTTIME, 1),
}  # fmt: skip
_LINE = re.compile(r"-([A-Za-z])\)\s+(unlimited|[0-9]+)\s*$")
_VALUE = re.compile(r"(?:unlimited|[0-9]+):(?:unlimited|[0-9]+)")


def _shown(value: int, unit: int) -> str:
    return "unlimited" if value == resource.RLIM_INFINITY else str(value // unit)


def inherited() -> dict[str, str]:
    """Director's own limits as the session's bash shows them: letter -> `SOFT:HARD`."""
    out: dict[str, str] = {}
    for letter, (number, unit) in _LIMITS.items():
        try:
            soft, hard = resource.getrlimit(number)
        except (OSError, ValueError):
            continue  # a kernel without it: bash does not list it either
        out[letter] = f"{_shown(soft, unit)}:{_shown(hard, unit)}"
    return out


@functools.lru_cache(maxsize=4)  # the same text block after block: read once
def _values(text: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in text.splitlines():
        m = _LINE.search(line)
        if m and m[1] in _LIMITS:
            found[m[1]] = m[2]
    return found


def parse(soft: str, hard: str, base: Mapping[str, str]) -> dict[str, str]:
    """The limits `ulimit -a -S` and `ulimit -a -H` printed that differ from `base` (`inherited()`)."""
    s, h = _values(soft), _values(hard)
    limits = {k: f"{s[k]}:{h[k]}" for k in s.keys() & h.keys()}
    return {k: v for k, v in sorted(limits.items()) if base.get(k) != v}


def valid(data: object) -> dict[str, str]:
    """Journaled limits: those well-formed (a journal's text is not trusted as bash), the rest dropped."""
    if not isinstance(data, Mapping):
        return {}
    return {k: v for k, v in data.items() if k in _LIMITS and isinstance(v, str) and _valid(v)}


def _valid(value: str) -> bool:
    return value == INHERITED or _VALUE.fullmatch(value) is not None


def restore(limits: Mapping[str, str]) -> list[str]:
    """The prelude's lines that set `limits` (from `valid` or `parse`) in the block's shell."""
    lines = []
    for letter, value in limits.items():
        if letter not in _LIMITS or not _VALUE.fullmatch(value):
            continue
        soft, _, hard = value.partition(":")
        # soft first (lowering hard below the old soft fails), then hard, then soft again (raising soft
        # above the old hard failed the first time)
        set_soft = f"builtin ulimit -S -{letter} {soft} 2>/dev/null"
        lines.append(f"{set_soft}; builtin ulimit -H -{letter} {hard} 2>/dev/null; {set_soft}")
    return lines

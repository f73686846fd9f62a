"""How long the suite's sweeps run: a bounded, named part in every run of the suite, the whole length on
demand.

A sweep repeats one property over many cases (a check's whole life through the CLI for every mined idiom,
SIGKILLs at random moments over several episodes). In the suite each runs a bounded part chosen the same
way every time, never at random and never skipped without saying so: the cases left out are reported by
one skipped test naming how many and the command that runs them. `DIRECTOR_SWEEPS=long` runs every sweep
at its whole length; `bench/sweeps.py` sets it and runs them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypeVar

import pytest

T = TypeVar("T")

#: Every sweep at its whole length (`bench/sweeps.py` sets it).
LONG = os.environ.get("DIRECTOR_SWEEPS") == "long"
#: What the suite's skipped test names as the way to run the rest.
LONG_COMMAND = "bench/sweeps.py (DIRECTOR_SWEEPS=long)"


def length(suite: int, long: int) -> int:
    """A sweep's length: `long` under DIRECTOR_SWEEPS=long, else `suite`."""
    return long if LONG else suite


def representative(items: Sequence[T], classes: Callable[[T], Iterable[Hashable]]) -> tuple[T, ...]:
    """The first item of every class (`classes` gives an item's classes: it may have several), in the
    items' order: each class is represented, the choice is the same in every run, and an item added to
    the corpus joins when it opens a class of its own."""
    seen: set[Hashable] = set()
    out: list[T] = []
    for item in items:
        new = [c for c in classes(item) if c not in seen]
        if new:
            out.append(item)
            seen.update(new)
    return tuple(out)


def in_suite(items: Sequence[T], classes: Callable[[T], Iterable[Hashable]]) -> tuple[T, ...]:
    """The items a sweep runs: all under DIRECTOR_SWEEPS=long, else `representative`."""
    return tuple(items) if LONG else representative(items, classes)


def rest_marker(left_out: int, what: str) -> list[object]:
    """One `pytest.param` that skips, naming what the suite left out (nothing when nothing was): add it to
    a sweep's parameters so that a run says so rather than dropping those cases silently."""
    if not left_out:
        return []
    reason = f"{left_out} more {what} run at full length by {LONG_COMMAND}"
    return [pytest.param(None, id="the-rest", marks=pytest.mark.skip(reason=reason))]

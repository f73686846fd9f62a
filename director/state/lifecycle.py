"""The run lifecycle as a pure transition table (no I/O).

A run (an `apply` or a `teardown`) moves through `RunState`s; every move is checked against
`VALID_TRANSITIONS` before the journal records it, so an impossible move is an error, never a silent
overwrite. `StepState` is the outcome of one durable step (one block).

    pending ──> running ──> completed
       │          │ ├────> failed ────────┐
       │          │ ├────> interrupted ───┤──> running (resume)
       │          │ └────> awaiting-approval ──> running | interrupted
       └──────────┴──────> cancelled  (from any non-terminal state)
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from types import MappingProxyType

from director.errors import TransitionError


class RunState(enum.StrEnum):
    """Where a run stands."""

    PENDING = "pending"
    RUNNING = "running"
    AWAITING_APPROVAL = "awaiting-approval"
    FAILED = "failed"
    INTERRUPTED = "interrupted"
    COMPLETED = "completed"
    CANCELLED = "cancelled"


class StepState(enum.StrEnum):
    """The outcome of one durable step; `started` alone means "outcome unknown" after a crash."""

    STARTED = "started"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    INTERRUPTED = "interrupted"


_R = RunState

VALID_TRANSITIONS: Mapping[RunState, frozenset[RunState]] = MappingProxyType(
    {
        _R.PENDING: frozenset({_R.RUNNING, _R.CANCELLED}),
        _R.RUNNING: frozenset({_R.COMPLETED, _R.FAILED, _R.AWAITING_APPROVAL, _R.INTERRUPTED, _R.CANCELLED}),
        # A stopped gate can be interrupted too: Ctrl-C at the approval prompt.
        _R.AWAITING_APPROVAL: frozenset({_R.RUNNING, _R.CANCELLED, _R.INTERRUPTED}),
        _R.FAILED: frozenset({_R.RUNNING, _R.CANCELLED}),
        _R.INTERRUPTED: frozenset({_R.RUNNING, _R.CANCELLED}),
        _R.COMPLETED: frozenset(),
        _R.CANCELLED: frozenset(),
    }
)

TERMINAL: frozenset[RunState] = frozenset(s for s, nxt in VALID_TRANSITIONS.items() if not nxt)
RESUMABLE: frozenset[RunState] = frozenset({_R.FAILED, _R.INTERRUPTED, _R.AWAITING_APPROVAL})

# A step row is written `started` before the block runs and finished exactly once.
STEP_FINAL: frozenset[StepState] = frozenset(set(StepState) - {StepState.STARTED})


def _run_state(value: RunState | str) -> RunState:
    """The RunState named by `value`; TransitionError for an unknown name."""
    try:
        return RunState(value)
    except ValueError:
        raise TransitionError(f"unknown run state {value!r}") from None


def can_transition(frm: RunState | str, to: RunState | str) -> bool:
    """Whether the table allows `frm -> to`."""
    return _run_state(to) in VALID_TRANSITIONS[_run_state(frm)]


def check_transition(frm: RunState | str, to: RunState | str) -> None:
    """Raise TransitionError naming both states unless the table allows `frm -> to`."""
    a, b = _run_state(frm), _run_state(to)
    if b not in VALID_TRANSITIONS[a]:
        allowed = ", ".join(sorted(s.value for s in VALID_TRANSITIONS[a])) or "none: it is terminal"
        raise TransitionError(
            f"invalid run transition {a.value} -> {b.value} (allowed from {a.value}: {allowed})"
        )

"""The run lifecycle table."""

from __future__ import annotations

import itertools

import pytest

from director.errors import TransitionError
from director.state.lifecycle import (
    RESUMABLE,
    STEP_FINAL,
    TERMINAL,
    VALID_TRANSITIONS,
    RunState,
    StepState,
    can_transition,
    check_transition,
)

R = RunState

ALLOWED = {
    (R.PENDING, R.RUNNING),
    (R.PENDING, R.CANCELLED),
    (R.RUNNING, R.COMPLETED),
    (R.RUNNING, R.FAILED),
    (R.RUNNING, R.AWAITING_APPROVAL),
    (R.RUNNING, R.INTERRUPTED),
    (R.RUNNING, R.CANCELLED),
    (R.AWAITING_APPROVAL, R.RUNNING),
    (R.AWAITING_APPROVAL, R.CANCELLED),
    (R.AWAITING_APPROVAL, R.INTERRUPTED),
    (R.FAILED, R.RUNNING),
    (R.FAILED, R.CANCELLED),
    (R.INTERRUPTED, R.RUNNING),
    (R.INTERRUPTED, R.CANCELLED),
}


def test_table_is_exactly_the_documented_one() -> None:
    for a, b in itertools.product(RunState, RunState):
        assert can_transition(a, b) == ((a, b) in ALLOWED), (a, b)
    assert set(VALID_TRANSITIONS) == set(RunState)


def test_invalid_transition_names_both_states() -> None:
    with pytest.raises(TransitionError) as e:
        check_transition(R.COMPLETED, R.RUNNING)
    assert "completed -> running" in str(e.value)
    assert "terminal" in str(e.value)
    with pytest.raises(TransitionError, match="pending -> failed"):
        check_transition("pending", "failed")


def test_unknown_state_is_a_transition_error() -> None:
    with pytest.raises(TransitionError, match="unknown run state 'paused'"):
        check_transition("running", "paused")


def test_valid_transition_passes_with_strings() -> None:
    check_transition("failed", "running")
    check_transition(R.AWAITING_APPROVAL, "running")


def test_sets() -> None:
    assert {R.COMPLETED, R.CANCELLED} == TERMINAL
    assert {R.FAILED, R.INTERRUPTED, R.AWAITING_APPROVAL} == RESUMABLE
    assert all(can_transition(s, R.RUNNING) for s in RESUMABLE)
    assert StepState.STARTED not in STEP_FINAL and StepState.INTERRUPTED in STEP_FINAL
    awaiting: str = R.AWAITING_APPROVAL  # a StrEnum member is the very string the journal stores
    assert awaiting == "awaiting-approval" and StepState.INTERRUPTED.value == "interrupted"

"""Fuzzed plans (issue 14): a Plan or a one-line error with a documented code, never a traceback, the plan
file unchanged. A few hundred examples here; `bench/fuzz.py` runs ≥ 10,000 (tests/fuzzplans.py)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from tests.fuzzplans import check_apply, check_plan, ledger_mutated_plans, mutated_plans

pytestmark = pytest.mark.slow  # ~1.5 min: CI runs it (the README's test command runs everything)

EXAMPLES = int(os.environ.get("DIRECTOR_FUZZ_EXAMPLES", "300"))
APPLY_EXAMPLES = int(os.environ.get("DIRECTOR_FUZZ_APPLY_EXAMPLES", "40"))


@settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
@given(mutated_plans())
def test_a_fuzzed_plan_reads_as_a_plan_or_one_error_line_and_is_never_changed(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as d:
        check_plan(data, Path(d) / "fuzzed.md")


@settings(
    max_examples=APPLY_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
@given(ledger_mutated_plans())
def test_applying_a_plan_whose_ledger_is_fuzzed_keeps_the_rest_and_never_tracebacks(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as d:
        check_apply(data, Path(d) / "counter.md")

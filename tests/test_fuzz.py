"""Fuzzed plans (issue 14): a Plan or a one-line error with a documented code, never a traceback, the plan
file unchanged. A few hundred examples here; `bench/fuzz.py` runs ≥ 10,000 (tests/fuzzplans.py).

Fuzzed structure (issue 39, tests/fuzzstructure.py): nesting, fences, control characters, surrogates and
Live State YAML (aliases, bombs, depth) through every command, each answering within its bound; a few
dozen examples here (seconds), thousands in `bench/fuzz.py --structure`."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from tests.fuzzplans import check_apply, check_plan, ledger_mutated_plans, mutated_plans
from tests.fuzzstructure import check_read, check_run, structured_plans

pytestmark = pytest.mark.slow  # ~1.5 min: CI runs it (the README's test command runs everything)

EXAMPLES = int(os.environ.get("DIRECTOR_FUZZ_EXAMPLES", "300"))
APPLY_EXAMPLES = int(os.environ.get("DIRECTOR_FUZZ_APPLY_EXAMPLES", "40"))
STRUCTURE_EXAMPLES = int(os.environ.get("DIRECTOR_FUZZ_STRUCTURE_EXAMPLES", "60"))
STRUCTURE_RUN_EXAMPLES = int(os.environ.get("DIRECTOR_FUZZ_STRUCTURE_RUN_EXAMPLES", "8"))


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


@settings(
    max_examples=STRUCTURE_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)  # fmt: skip
@given(structured_plans())
def test_a_plan_with_fuzzed_structure_is_read_or_refused_in_one_line_by_every_reading_command(
    data: bytes,
) -> None:
    with tempfile.TemporaryDirectory() as d:
        check_read(data, Path(d) / "fuzzed.md")


@settings(
    max_examples=STRUCTURE_RUN_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)  # fmt: skip
@given(structured_plans())
def test_plan_check_apply_and_teardown_answer_a_plan_with_fuzzed_structure(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as d:
        check_run(data, Path(d) / "fuzzed.md")

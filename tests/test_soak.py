"""The randomized SIGKILL soak in CI (issue 14): 20 trials over two plans, invariants after every trial.

The engine and the invariants are in tests/faults.py; `bench/soak.py` runs the long version (≥ 200
trials) and prints the table. Each trial kills Director, or the bash running its current block, once or
twice at random moments, then applies once more; see tests/faults.py for what is checked.
"""

from __future__ import annotations

import os
from collections import Counter

import pytest

from tests import faults

pytestmark = pytest.mark.slow

TRIALS = int(os.environ.get("DIRECTOR_SOAK_TRIALS", "20"))
SEED = int(os.environ.get("DIRECTOR_SOAK_SEED", "20261201"))


@pytest.fixture(scope="module")
def soak(tmp_path_factory: pytest.TempPathFactory) -> list[faults.TrialResult]:
    return faults.soak(tmp_path_factory.mktemp("soak"), TRIALS, SEED)


def test_the_soak_kills_both_plans_director_and_bash_once_and_twice(soak: list[faults.TrialResult]) -> None:
    assert len(soak) >= 20
    assert {r.plan for r in soak} == set(faults.SOAK_PLANS)
    assert {len(r.kinds) for r in soak} == {1, 2}
    landed = Counter(k for r in soak for k in r.landed)
    # a kill misses only when the apply ended before it: most must land, of both kinds
    assert landed["director"] >= 5 and landed["bash"] >= 5, landed
    assert sum(landed.values()) >= 0.6 * sum(len(r.kinds) for r in soak), landed


def _violations(soak: list[faults.TrialResult], invariant: str) -> list[str]:
    return [f"{r.plan} {'+'.join(r.kinds)}: {v}" for r in soak for v in r.violations.get(invariant, [])]


@pytest.mark.parametrize("invariant", faults.INVARIANTS)
def test_invariant_holds_after_every_trial(soak: list[faults.TrialResult], invariant: str) -> None:
    # Shell invariants included: the session travels through pipes, so a SIGKILLed Director leaves no
    # file with the session's (secret) values behind.
    assert _violations(soak, invariant) == []


def test_the_soak_plans_lint_clean() -> None:
    from director.plan.lint import lint
    from director.plan.parse import parse

    for name, (text, _) in faults.PLANS.items():
        plan = parse(text, path=f"{name}.md")
        assert plan.live_state is not None and plan.teardown is not None
        assert lint(plan) == [], name

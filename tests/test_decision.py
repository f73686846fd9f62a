"""The one decision per section (`director.run.decision`, pure), and what identities a run replaces
(`director.run.identities.replaced`): every rule once, and properties over generated facts."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from director.plan.verify import Verdict
from director.run.decision import INTERRUPTED, Action, Facts, Kind, decide, must_observe
from director.run.identities import Identity, replaced

BASE = Facts(kind=Kind.OBSERVED, fingerprint="f", last_fingerprint="f", observed=Verdict.PASSED)


def test_observed_and_unchanged_is_in_sync() -> None:
    d = decide(BASE)
    assert d.action is Action.IN_SYNC and d.detail == "observed; unchanged since its last success"
    assert decide(replace(BASE, observed=Verdict.SKIPPED, observed_reason="no db")).action is Action.IN_SYNC


def test_an_unconfirmed_success_is_no_evidence_when_the_observation_cannot_tell() -> None:
    """A success whose check after the act was inconclusive, then an observation that cannot tell (skipped):
    nothing says the section holds, so its act runs again (behind its gate), as plain bash would run it."""
    f = replace(BASE, last_confirmed=False, observed=Verdict.SKIPPED, observed_reason="same path")
    d = decide(f)
    assert d.action is Action.ACT and d.rerun == "observed-missing"
    assert d.reasons == (
        "observed: its verify cannot tell (same path), and its last success was never confirmed (a check "
        "after its act was inconclusive)",
    )
    assert decide(replace(f, gated=True)).gated  # a gated act asks again
    assert decide(replace(f, observed=Verdict.PASSED)).action is Action.IN_SYNC  # a pass is evidence


def test_an_interrupted_act_runs_again_whatever_the_observation_says() -> None:
    f = replace(BASE, act_interrupted=True)
    assert must_observe(f)  # observed (the before its verify is contrasted with), deciding nothing: it acts
    assert not must_observe(replace(f, acts_done_here=True))  # resumed after its act: the world is after
    d = decide(f)
    assert d.action is Action.ACT and INTERRUPTED in d.reasons and d.rerun is None
    assert decide(replace(f, kind=Kind.PLAIN, observed=None)).action is Action.ACT


def test_a_success_before_a_teardown_is_no_memory() -> None:
    d = decide(replace(BASE, last_fingerprint=None, torn_down=True))
    assert d.action is Action.ACT and d.reasons == ("torn down since its last success",)


def test_a_failed_observation_or_a_change_or_a_file_on_disk_acts() -> None:
    failed = decide(replace(BASE, observed=Verdict.FAILED, observed_reason="exit 1"))
    assert failed.action is Action.ACT and failed.rerun == "observed-missing"
    assert failed.reasons == ("observed: its verify failed (exit 1)",)
    changed = decide(replace(BASE, fingerprint="g", changes=("input ENV changed: dev → stg",)))
    assert changed.rerun == "changed" and changed.reasons == ("input ENV changed: dev → stg",)
    drift = decide(replace(BASE, template_drift=("app.conf will be created",)))
    assert drift.action is Action.ACT and drift.reasons == ("app.conf will be created",)


def test_a_replacement_is_said_with_what_happens_to_the_old_one() -> None:
    d = decide(replace(BASE, fingerprint="g", replaces=("WORKER orders-dev → orders-stg",), gated=True))
    assert d.gated and any(r.startswith("replace: WORKER orders-dev → orders-stg (-/+)") for r in d.reasons)
    assert any("`director teardown` removes it" in r for r in d.reasons)


def test_variables_checks_and_teardowns() -> None:
    assert decide(Facts(kind=Kind.VARIABLES, fingerprint="f", last_fingerprint="f")).quiet
    assert decide(Facts(kind=Kind.VARIABLES, fingerprint="f", completed_here=True)).action is Action.IN_SYNC
    assert decide(Facts(kind=Kind.CHECK, fingerprint="f")).action is Action.VERIFY_ONLY
    td = Facts(kind=Kind.TEARDOWN, fingerprint="f", gated=True)
    assert decide(replace(td, observed=Verdict.PASSED)).action is Action.IN_SYNC
    gone = decide(replace(td, observed=Verdict.INCONCLUSIVE))
    assert gone.action is Action.ACT and gone.gated


def test_plan_blocks_what_waits_behind_a_gate_or_an_acting_section() -> None:
    f = replace(BASE, observed=Verdict.FAILED)
    assert decide(replace(f, stopped_at="§2")).action is Action.BLOCKED
    assert decide(replace(f, behind="§1")).action is Action.BLOCKED
    waits = decide(replace(f, behind="§1", gated=True, waits=True))
    assert waits.action is Action.ACT and waits.waits  # reached once §1 applied: it waits at its gate


facts = st.builds(
    Facts,
    kind=st.sampled_from(list(Kind)),
    fingerprint=st.sampled_from(["f", "g"]),
    completed_here=st.booleans(),
    last_fingerprint=st.sampled_from([None, "f", "g"]),
    last_confirmed=st.booleans(),
    act_interrupted=st.booleans(),
    acts_done_here=st.booleans(),
    observed=st.sampled_from([None, *Verdict]),
    template_drift=st.sampled_from([(), ("x differs",)]),
    gated=st.booleans(),
)


@given(facts)
def test_in_sync_only_on_evidence_and_never_over_an_interrupted_act(f: Facts) -> None:
    d = decide(f)
    if d.action is Action.IN_SYNC and f.kind in (Kind.OBSERVED, Kind.PLAIN):
        assert f.unchanged and not f.act_interrupted and not f.acts_done_here and not f.template_drift
        if f.kind is Kind.OBSERVED:
            assert f.observed is Verdict.PASSED or (f.observed is Verdict.SKIPPED and f.last_confirmed)
    if f.act_interrupted and f.kind in (Kind.OBSERVED, Kind.PLAIN):
        assert d.action is Action.ACT
    if d.action is Action.ACT and f.kind is not Kind.VARIABLES:
        assert d.gated == f.gated
    assert d.action is not Action.BLOCKED  # apply passes no `behind`/`stopped_at`: it never blocks


def test_replaced_only_while_the_old_identity_exists() -> None:
    dev, stg = {"WORKER": "orders-dev"}, {"WORKER": "orders-stg"}
    exist = [Identity(dev, {"ENV": "dev"}, 1)]
    assert replaced(dev, stg, exist) == ("WORKER orders-dev → orders-stg",)
    assert replaced(dev, dev, exist) == ()
    assert replaced(dev, stg, []) == ()  # torn down already: nothing is left behind
    assert replaced({}, stg, exist) == ()

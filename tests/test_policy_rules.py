"""The gate policy's pure half (`director.run.policy`): durations, the policy file, the stricter wins, and
which receipts count together (one per person). The CLI's end-to-end proofs are tests/test_gate_policy.py."""

from __future__ import annotations

import re

import pytest

from director.run.policy import Policy, PolicyError, Rule, count, identities, parse_duration, parse_policy


@pytest.mark.parametrize(("text", "seconds"), [("90s", 90), ("30m", 1800), ("24h", 86400), ("7d", 604800),
                                               ("1h30m", 5400), ("2D", 172800)])  # fmt: skip
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "5", "1x", "0s", "-1h", "1h 30m", "1.5h"])
def test_not_durations(text: str) -> None:
    with pytest.raises(ValueError, match="duration"):
        parse_duration(text)


def test_the_stricter_wins_on_every_point_whatever_the_order() -> None:
    a = Rule(2, True, 3600.0, ("a",))
    b = Rule(1, False, 7200.0, ("b",))
    for rule in (a.tighten(b), b.tighten(a)):
        assert (rule.approvals, rule.self_approval, rule.max_valid_for_s) == (2, False, 3600.0)
        assert set(rule.source) == {"a", "b"}
    assert Rule().tighten(Rule()) == Rule()


def test_a_destructive_gate_is_held_to_both_tables() -> None:
    policy = parse_policy("[gates]\napprovals = 2\n[destructive]\nself_approval = false\n", "P")
    assert (policy.for_gate("🔴").approvals, policy.for_gate("🔴").self_approval) == (2, True)
    assert (policy.for_gate("💥").approvals, policy.for_gate("💥").self_approval) == (2, False)
    assert Policy().for_gate("💥") == Rule() and not Rule().needs_identities


@pytest.mark.parametrize(("text", "line", "said"), [
    ("[gates]\napprovals = true\n", 2, "approvals: a number from 1 to 9"),
    ("[gates]\napprovals = 10\n", 2, "approvals: a number from 1 to 9"),
    ("\n[gates]\nself_approval = 'no'\n", 3, "self_approval: true or false"),
    ("[gates]\nmax_valid_for = 7\n", 2, 'a duration in quotes ("7d")'),
    ("[gates]\nmax_valid_for = \"forever\"\n", 2, "is not a duration"),
    ("approvals = 2\n", 1, "unknown 'approvals'"),
    ("[teardown]\napprovals = 2\n", 1, "unknown 'teardown'"),
    ("[gates]\n[gates.x]\n", 2, "unknown 'x'"),
    ("[gates\n", 0, "not TOML"),
])  # fmt: skip
def test_a_bad_policy_file_names_its_line(text: str, line: int, said: str) -> None:
    with pytest.raises(PolicyError, match=re.escape(said)) as e:
        parse_policy(text, "P")
    assert e.value.line == line


def test_one_person_counts_once_by_key_or_by_any_principal_listed_for_it() -> None:
    alice = identities("alice@example.com", "SHA256:A", ("alice@example.com", "alice"))
    alice_other_key = identities("alice", "SHA256:A2", ("alice",))
    bob = identities("bob@example.com", "SHA256:B")
    two = Rule(approvals=2)
    assert count([(1, alice), (2, alice_other_key)], two).counted == (1,)
    assert count([(1, alice), (2, alice_other_key)], two).same_as == {2: 1}
    assert count([(1, alice), (2, alice_other_key), (3, bob)], two).counted == (1, 3)
    assert count([(1, alice), (3, bob)], Rule()).counted == (1,)  # one is enough: the first offered
    assert not count([(1, alice)], two).complete(two) and count([(1, alice), (3, bob)], two).complete(two)

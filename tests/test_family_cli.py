"""Family runs through the real CLI: dependency order whatever the command line's, members that really
overlap (their events' timestamps), a failure that stops only its dependents, teardown in reverse with a
provider's teardown refused (and audited) while a consumer is live, errors before anything runs, and gates
asked one at a time at a terminal. What reached each member is read from the files its blocks wrote."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest

from tests.familyplans import audit_kinds, director, events, mark, of, received, write
from tests.terminal import Term

pytestmark = pytest.mark.slow  # many CLI runs with sleeps: a few seconds each


def _ts(ev: dict[str, object]) -> datetime:
    return datetime.fromisoformat(str(ev["ts"]))


def _span(evs: list[dict[str, object]], plan: str) -> tuple[datetime, datetime]:
    """When a member's run started and ended: its first and its last event."""
    mine = [e for e in evs if e.get("plan") == plan and not str(e["type"]).startswith("family.")]
    assert mine, f"no event of {plan}"
    return _ts(mine[0]), _ts(mine[-1])


def _act(evs: list[dict[str, object]], plan: str) -> tuple[datetime, datetime]:
    """When a member's §1 act block started and ended."""
    start = next(e for e in of(evs, plan, "step.start") if e["section"] == "1" and e["role"] == "act")
    end = next(e for e in of(evs, plan, "step.end") if e["section"] == "1" and e["role"] == "act")
    return _ts(start), _ts(end)


def _family(tmp_path: Path, sleep: float = 1.5) -> None:
    """base provides `base`; c1 names it, c2 discovers it by name; solo stands alone."""
    write(tmp_path, "base", provides="`base(MARK)`")
    write(tmp_path, "c1", requires="`base(MARK)` (`base.md`)", sleep=sleep)
    write(tmp_path, "c2", requires="`base(MARK)`", sleep=sleep)
    write(tmp_path, "solo", sleep=sleep)


def test_apply_runs_providers_first_whatever_the_order_and_overlaps_the_rest(tmp_path: Path) -> None:
    _family(tmp_path)
    ev = tmp_path / "ev.jsonl"
    r = director("apply", "c2.md", "solo.md", "c1.md", "base.md", "--events", str(ev), cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    evs = events(ev)
    assert evs[0]["type"] == "family.start" and evs[0]["plans"][0] == "base.md"
    # every event of a member names its plan
    assert all(e.get("plan") in ("c1.md", "c2.md", "solo.md", "base.md") for e in evs if not e["type"].startswith("family."))
    base_end = _span(evs, "base.md")[1]
    for consumer in ("c1.md", "c2.md"):
        assert _span(evs, consumer)[0] > base_end, f"{consumer} started before its provider ended"
    # the consumers' acts ran at the same time (each sleeps 1.5 s)
    (a0, a1), (b0, b1) = _act(evs, "c1.md"), _act(evs, "c2.md")
    assert a0 < b1 and b0 < a1, ((a0, a1), (b0, b1))
    # what each consumer's blocks received: the provider's realized MARK, under its declared name
    want = str(mark(tmp_path, "base").resolve())
    for consumer in ("c1", "c2"):
        got = received(tmp_path, consumer)
        assert got["DIRECTOR_PROVIDED_BASE_MARK"] == want and got["DIRECTOR_PROVIDED_BASE"] == want, got
    assert received(tmp_path, "solo") == {}
    # one summary for the family
    assert re.search(r"^family apply$", r.stdout, re.M), r.stdout
    assert all(re.search(rf"^  {p}\s+completed\s+exit 0", r.stdout, re.M) for p in ("base.md", "c1.md", "c2.md"))


def test_jobs_1_runs_one_member_at_a_time(tmp_path: Path) -> None:
    write(tmp_path, "a", sleep=0.5)
    write(tmp_path, "b", sleep=0.5)
    ev = tmp_path / "ev.jsonl"
    r = director("apply", str(tmp_path), "--jobs", "1", "--events", str(ev), cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    evs = events(ev)
    (a0, a1), (b0, b1) = _span(evs, f"{tmp_path}/a.md"), _span(evs, f"{tmp_path}/b.md")
    assert a1 <= b0 or b1 <= a0


def test_a_failed_member_stops_only_its_dependents(tmp_path: Path) -> None:
    write(tmp_path, "base", provides="`base(MARK)`", fail=True)
    write(tmp_path, "c1", requires="`base(MARK)` (`base.md`)")
    write(tmp_path, "solo")
    ev = tmp_path / "ev.jsonl"
    r = director("apply", ".", "--events", str(ev), cwd=tmp_path)
    assert r.returncode == 3, r.stdout + r.stderr
    assert mark(tmp_path, "solo").is_file()  # the independent member ran
    assert not mark(tmp_path, "c1").exists() and not (tmp_path / ".director" / "c1.md").exists()  # never started
    skips = [e for e in events(ev) if e["type"] == "family.skip"]
    assert [(e["plan"], "base.md did not succeed" in e["reason"]) for e in skips] == [("c1.md", True)]
    assert re.search(r"^  c1.md\s+skipped\s+not run: base.md did not succeed", r.stdout, re.M), r.stdout


def test_teardown_goes_in_reverse_and_refuses_a_provider_alone(tmp_path: Path) -> None:
    _family(tmp_path, sleep=0)
    assert director("apply", ".", cwd=tmp_path).returncode == 0
    # the provider alone: refused before anything runs, naming the live consumers, audited
    r = director("teardown", "base.md", "--approve", "teardown", cwd=tmp_path)
    assert r.returncode == 9, r.stdout + r.stderr
    assert re.fullmatch(r"error: base.md: teardown refused: c1.md \(base\), c2.md \(base\) still require .*\n", r.stderr), r.stderr
    assert mark(tmp_path, "base").is_file()
    assert audit_kinds(tmp_path, "base.md")[-1] == "teardown-refused"
    # the whole family: consumers first, then the provider; every mark gone
    ev = tmp_path / "ev.jsonl"
    r = director("teardown", "base.md", "c1.md", "c2.md", "solo.md", "--approve", "teardown", "--events", str(ev),
                 cwd=tmp_path)  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    evs = events(ev)
    base_start = _span(evs, "base.md")[0]
    assert all(_span(evs, c)[1] < base_start for c in ("c1.md", "c2.md"))
    assert not any(mark(tmp_path, n).exists() for n in ("base", "c1", "c2", "solo"))


def test_the_override_tears_a_provider_down_and_is_audited(tmp_path: Path) -> None:
    _family(tmp_path, sleep=0)
    assert director("apply", ".", cwd=tmp_path).returncode == 0
    # a consumer torn down alone is not guarded; the other still requires base
    assert director("teardown", "c1.md", "--approve", "teardown", cwd=tmp_path).returncode == 0
    r = director("teardown", "base.md", "--approve", "teardown", cwd=tmp_path)
    assert r.returncode == 9 and "c2.md (base) still requires" in r.stderr, r.stderr
    r = director("teardown", "base.md", "--approve", "teardown", "--orphan-consumers", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert not mark(tmp_path, "base").exists() and mark(tmp_path, "c2").is_file()
    kinds = audit_kinds(tmp_path, "base.md")
    assert "teardown-consumers-orphaned" in kinds and kinds.index("teardown-consumers-orphaned") > kinds.index(
        "teardown-refused"
    )


def test_a_consumer_alone_needs_its_named_provider_applied(tmp_path: Path) -> None:
    write(tmp_path, "base", provides="`base(MARK)`")
    write(tmp_path, "c1", requires="`base(MARK)` (`base.md`)")
    r = director("apply", "c1.md", cwd=tmp_path)
    assert r.returncode == 64 and "requires `base` from base.md, which is not applied here" in r.stderr, r.stderr
    assert not (tmp_path / ".director" / "c1.md").exists()
    assert director("apply", "base.md", cwd=tmp_path).returncode == 0
    assert director("apply", "c1.md", cwd=tmp_path).returncode == 0
    assert received(tmp_path, "c1")["DIRECTOR_PROVIDED_BASE_MARK"] == str(mark(tmp_path, "base").resolve())


@pytest.mark.parametrize(
    ("specs", "error"),
    [
        (
            {"a": {"provides": "`a(MARK)`", "requires": "`b(MARK)`"}, "b": {"provides": "`b(MARK)`", "requires": "`a(MARK)`"}},
            r"error: a.md:3: the family has a cycle: a.md:3 requires `b` from b.md, b.md:3 requires `a` from a.md; nothing was run",
        ),
        (
            {"a": {"requires": "`up(URL)` (`nowhere.md`)"}, "b": {}},
            r"error: a.md:3: requires `up` from nowhere.md, which does not exist \(.*\): a missing provider; nothing was run",
        ),
    ],
)
def test_a_cycle_or_a_missing_provider_stops_the_family_before_anything_runs(
    tmp_path: Path, specs: dict[str, dict[str, str]], error: str
) -> None:
    for name, kw in specs.items():
        write(tmp_path, name, **kw)
    for command in ("apply", "plan", "check"):
        r = director(command, "a.md", "b.md", cwd=tmp_path)
        assert r.returncode == 65, (command, r.stdout, r.stderr)
        assert re.fullmatch(error + "\n", r.stderr), r.stderr
        assert "Traceback" not in r.stderr and not (tmp_path / ".director").exists()


def test_check_of_a_family_observes_all_at_once(tmp_path: Path) -> None:
    for n in ("a", "b", "c"):
        write(tmp_path, n, observe_sleep=1.0)
    assert director("apply", ".", cwd=tmp_path).returncode == 0
    ev = tmp_path / "ev.jsonl"
    r = director("check", ".", "--events", str(ev), cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    evs = events(ev)
    spans = [_span(evs, f"{n}.md") for n in ("a", "b", "c")]
    assert max(s for s, _ in spans) < min(e for _, e in spans)  # all three observed at the same time
    mark(tmp_path, "b").unlink()
    r = director("check", ".", cwd=tmp_path)
    assert r.returncode == 2 and re.search(r"^  b.md\s+drift\s+exit 2", r.stdout, re.M), r.stdout


def test_gates_are_asked_one_at_a_time_at_a_terminal(tmp_path: Path, term: Callable[..., Term]) -> None:
    write(tmp_path, "g1", gate=True)
    write(tmp_path, "g2", gate=True)
    t = term("apply", "g1.md", "g2.md")

    def asked(n: int) -> Callable[[str], bool]:
        # what was written, not the 40-row screen: a gate panel is taller than what stays on it
        return lambda _screen: t.raw.count(b" asks:") >= n and t.raw.count(b"Type ") >= n

    t.wait(asked(1))
    t._pump(2.0)  # the other member reached its gate too by now: it must wait, unseen
    assert t.raw.count(b" asks:") == 1 and t.raw.count(b"Type ") == 1, t.text()
    t.send("go")
    t.wait(asked(2))
    first, second = re.findall(rb"(g\d)\.md asks:", t.raw)
    assert {first, second} == {b"g1", b"g2"}
    # between a question and its answer no member line came in
    for block in re.findall(rb"asks:(.*?)Type ", t.raw, re.S):
        assert not re.search(rb"g\d\.md \xe2\x94\x82", block), block
    t.send("go")
    assert t.finish() == 0
    assert mark(tmp_path, "g1").is_file() and mark(tmp_path, "g2").is_file()


def test_set_and_approve_reach_the_members_they_name(tmp_path: Path) -> None:
    from tests.planmaker import CounterPlan, Step, write_plan

    write_plan(tmp_path, CounterPlan([Step(marker="🔴")]), name="a.md")
    write_plan(tmp_path, CounterPlan([Step(marker="🔴")]), name="b.md")
    write(tmp_path, "plain")  # no input, no gate: a bare --set or --approve does not reach it
    r = director("apply", ".", "--set", "a.md:mode=b", "--approve", "b.md:1", cwd=tmp_path)
    # a: mode b, its gate not approved (exit 4); b: mode a, approved; plain: untouched by either
    assert r.returncode == 4, r.stdout + r.stderr
    assert "resolved_inputs: { mode: b," in (tmp_path / "a.md").read_text()
    assert "resolved_inputs: { mode: a," in (tmp_path / "b.md").read_text()
    assert re.search(r"^  b.md\s+completed\s+exit 0", r.stdout, re.M) and re.search(
        r"^  a.md\s+awaiting-approval\s+exit 4", r.stdout, re.M
    ), r.stdout
    r = director("apply", ".", "--set", "nope=1", cwd=tmp_path)
    assert r.returncode == 64 and r.stderr == "error: --set 'nope=1': no plan of the family has an input setting 'nope'\n"

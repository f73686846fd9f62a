"""Families, the pure parts: Provides/Requires read from a preamble, the graph and its errors, the values a
consumer receives, and the scheduler (order, parallelism, what a failure stops). The CLI is in
tests/test_family_cli.py."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from director.errors import PlanError
from director.plan.family import declarations, env_name
from director.plan.model import Plan
from director.plan.parse import parse as parse_text
from director.run.family import Member, Scheduler, Skipped, build_graph, provided_env
from tests.familyplans import member

ROOT = Path(__file__).resolve().parent.parent


def _plan(text: str, path: str = "p.md") -> Plan:
    return parse_text(text, path)


def _committed(rel: str) -> str:
    return (ROOT / rel).read_text(encoding="utf-8")


def test_the_seed_reads_as_a_family_member() -> None:
    d = declarations(_plan(_committed("plans/workflow.cloudflare.md")))
    assert [(p.name, p.keys) for p in d.provides] == [("workflow", ("WF_NAME", "WORKER_NAME"))]
    assert [(r.name, r.plan, r.optional, r.discovered) for r in d.requires] == [
        ("d1-db", "database.cloudflare.md", True, True),
        ("r2-bucket", "storage.cloudflare.md", True, True),
        ("kv-namespace", None, True, True),
        ("workers-ai", "inference.cloudflare.md", True, True),
    ]
    assert d.provides[0].line == 10  # the line the declaration is on, for messages


def test_the_consumer_plan_names_its_provider() -> None:
    d = declarations(_plan(_committed("plans/checkout.cloudflare.md")))
    assert [(p.name, p.keys) for p in d.provides] == [("checkout", ("URL",))]
    [r] = d.requires
    assert (r.name, r.keys, r.plan, r.optional, r.discovered) == (
        "workflow", ("WF_NAME", "WORKER_NAME"), "workflow.cloudflare.md", False, False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("plan", "provides"),
    [
        ("database.local.md", ["sqlite-db"]),
        ("git-deploy.local.md", ["git-remote", "checkout"]),
        ("kv-service.local.md", ["kv"]),
        ("sqlite-report.local.md", ["report-db", "csv"]),
        ("static-site.local.md", ["site-url"]),
        ("venv-worker.local.md", ["worker", "heartbeat"]),
    ],
)
def test_every_example_declares_what_it_provides(plan: str, provides: list[str]) -> None:
    d = declarations(_plan(_committed(f"plans/examples/{plan}")))
    assert [p.name for p in d.provides] == provides


def test_prose_and_tools_are_not_plan_requirements_between_known_plans() -> None:
    text = member("a", requires="nothing; discovers only that `python3` can import `sqlite3`")
    assert declarations(_plan(text)).requires == ()
    text = member("a", requires="`tar`, `gzip` and `sha256sum`")
    assert [r.name for r in declarations(_plan(text)).requires] == ["tar", "gzip", "sha256sum"]
    # a list ends at the first thing that is not a separator
    text = member("a", requires="`git` ≥ 2.28 (`init -b`) and `x`")
    assert [r.name for r in declarations(_plan(text)).requires] == ["git"]


def test_a_discovers_clause_skips_parenthesised_variables_and_reads_optionally() -> None:
    text = member("a", requires="nothing; optionally **discovers** a mirror (`NPM_MIRROR`), `up(URL)` (`up.md`)")
    [r] = declarations(_plan(text)).requires
    assert (r.name, r.keys, r.plan, r.optional, r.discovered) == ("up", ("URL",), "up.md", True, True)


def test_keys_are_the_upper_case_words_of_the_expression() -> None:
    d = declarations(_plan(member("a", provides="`kv(127.0.0.1:PORT)` and `pair(A @ B_NAME)`")))
    assert [(p.name, p.keys) for p in d.provides] == [("kv", ("PORT",)), ("pair", ("A", "B_NAME"))]


def _members(tmp_path: Path, specs: dict[str, dict[str, str]]) -> list[Member]:
    out = []
    for name, kw in specs.items():
        path = tmp_path / f"{name}.md"
        path.write_text(member(name, provides=kw.get("provides"), requires=kw.get("requires", "nothing")),
                        encoding="utf-8")  # fmt: skip
        out.append(Member(path.resolve(), path.name, declarations(_plan(path.read_text(), str(path)))))
    return out


def test_order_is_by_dependency_whatever_the_members_order(tmp_path: Path) -> None:
    ms = _members(
        tmp_path,
        {
            "z-consumer": {"requires": "`mid(MARK)`"},
            "mid": {"provides": "`mid(MARK)`", "requires": "`base(MARK)` (`a-base.md`)"},
            "a-base": {"provides": "`base(MARK)`"},
        },
    )
    for members in (ms, ms[::-1]):
        graph = build_graph(members)
        assert [m.label for m in graph.order()] == ["a-base.md", "mid.md", "z-consumer.md"]


def test_a_cycle_is_an_error_naming_each_requirement(tmp_path: Path) -> None:
    ms = _members(
        tmp_path,
        {"a": {"provides": "`a(MARK)`", "requires": "`b(MARK)`"}, "b": {"provides": "`b(MARK)`", "requires": "`a(MARK)`"}},
    )
    with pytest.raises(PlanError) as e:
        build_graph(ms)
    msg = str(e.value)
    assert msg.startswith("a.md:3: the family has a cycle: ")
    assert "a.md:3 requires `b` from b.md" in msg and "b.md:3 requires `a` from a.md" in msg


def test_missing_ambiguous_and_wrong_providers_are_errors(tmp_path: Path) -> None:
    ms = _members(tmp_path, {"c": {"requires": "`base(MARK)` (`gone.md`)"}})
    with pytest.raises(PlanError, match=r"c.md:3: requires `base` from gone.md, which does not exist"):
        build_graph(ms)
    ms = _members(tmp_path, {"c": {"requires": "optionally `base(MARK)` (`gone.md`)"}})
    assert build_graph(ms).edges == []  # optional: not an error
    ms = _members(tmp_path, {"p1": {"provides": "`x(A)`"}, "p2": {"provides": "`x(A)`"}, "c": {"requires": "`x(A)`"}})
    with pytest.raises(PlanError, match=r"which p1\.md and p2\.md both provide"):
        build_graph(ms)
    ms = _members(tmp_path, {"p": {"provides": "`y(A)`"}, "c": {"requires": "`x(A)` (`p.md`)"}})
    with pytest.raises(PlanError, match=r"requires `x` from p.md, which provides `y`"):
        build_graph(ms)


def test_a_consumer_receives_each_realized_key_and_the_whole_expression() -> None:
    seed = declarations(_plan(_committed("plans/workflow.cloudflare.md")))
    consumer = declarations(_plan(_committed("plans/checkout.cloudflare.md")))
    realized = {"WORKER": "orders-dev", "WF_NAME": "orders-wf-dev", "CLASS": "OrderWorkflow"}
    env = provided_env(consumer.requires[0], seed.provides[0], realized)
    assert env == {
        "DIRECTOR_PROVIDED_WORKFLOW_WF_NAME": "orders-wf-dev",
        "DIRECTOR_PROVIDED_WORKFLOW_WORKER_NAME": "orders-dev",  # the `WORKER` row: a name's key, `_NAME`
        "DIRECTOR_PROVIDED_WORKFLOW": "orders-wf-dev @ orders-dev",
    }
    partial = provided_env(consumer.requires[0], seed.provides[0], {"WF_NAME": "w"})
    assert partial == {"DIRECTOR_PROVIDED_WORKFLOW_WF_NAME": "w"}  # no whole value before every key is realized
    assert env_name("d1-db", "id") == "DIRECTOR_PROVIDED_D1_DB_ID"


def _graph_members(tmp_path: Path) -> list[Member]:
    return _members(
        tmp_path,
        {
            "base": {"provides": "`base(MARK)`"},
            "c1": {"requires": "`base(MARK)`"},
            "c2": {"requires": "`base(MARK)`"},
            "solo": {},
        },
    )


def test_the_scheduler_stops_only_the_dependents_of_a_failure(tmp_path: Path) -> None:
    graph = build_graph(_graph_members(tmp_path))
    ran: list[str] = []

    def one(m: Member) -> bool:
        ran.append(m.label)
        return m.label != "base.md"  # base fails

    results = Scheduler(graph.order(), graph.deps(), 4, one, lambda ok: ok).run()
    assert sorted(ran) == ["base.md", "solo.md"]
    by = {p.name: r for p, r in results.items()}
    assert isinstance(by["c1.md"], Skipped) and "base.md did not succeed" in by["c1.md"].reason
    assert by["solo.md"] is True


def test_the_scheduler_overlaps_independent_members_up_to_jobs(tmp_path: Path) -> None:
    graph = build_graph(_graph_members(tmp_path))
    free = {m.path: set[Path]() for m in graph.members}  # `plan`/`check`: nothing waits for anything
    everyone = threading.Barrier(4, timeout=20)

    def together(m: Member) -> bool:
        everyone.wait()  # passes only if all four members run at the same time
        return True

    results = Scheduler(graph.order(), free, 8, together, bool).run()
    assert all(r is True for r in results.values()), results
    now, peak = [0], [0]
    lock = threading.Lock()

    def one(m: Member) -> bool:
        with lock:
            now[0] += 1
            peak[0] = max(peak[0], now[0])
        time.sleep(0.05)
        with lock:
            now[0] -= 1
        return True

    Scheduler(graph.order(), free, 1, one, bool).run()
    assert peak[0] == 1


def test_questions_from_members_are_asked_on_the_main_thread(tmp_path: Path) -> None:
    graph = build_graph(_graph_members(tmp_path))
    asked_on: list[bool] = []
    sched: Scheduler[bool]

    def one(m: Member) -> bool:
        return bool(sched.in_main(lambda: asked_on.append(threading.current_thread() is threading.main_thread())))

    sched = Scheduler(graph.order(), {m.path: set() for m in graph.members}, 4, one, bool)
    sched.run()
    assert asked_on == [True] * 4

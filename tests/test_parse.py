"""Parser behaviour, convention by convention (the corpus goldens pin the whole model; these pin intent)."""

from __future__ import annotations

from pathlib import Path

import pytest

from director.errors import PlanError
from director.plan.bash import message_regex, verify_model
from director.plan.headings import slugify, split_markers
from director.plan.model import (
    BlockRole,
    CheckPolarity,
    Condition,
    Marker,
    MarkerSpec,
    Plan,
    SectionKind,
)
from director.plan.parse import parse, parse_file
from director.plan.retry import parse_duration
from director.plan.templates import parse_rules
from tests.pristine import SEED

ROOT = Path(__file__).resolve().parent.parent
OK = ROOT / "tests" / "plans" / "ok"


@pytest.fixture(scope="module")
def seed() -> Plan:
    return parse_file(SEED)


def test_seed_document_parts(seed: Plan) -> None:
    assert seed.title == "Ephemera — Durable execution on Cloudflare (Workflows + CLI)"
    assert seed.newline == "\n" and seed.source == SEED.read_text(encoding="utf-8")
    assert len(seed.preamble) == 2 and seed.preamble[1].startswith("**Provides / Requires**")
    assert seed.prompt_rules[1] == 'Stop at every 🔴 GATE and 💥 for human "go"'
    assert seed.legend.startswith("Legend  🟢 create")
    assert [i.knob for i in seed.inputs] == ["TRIGGER", "ENV"]
    assert seed.inputs[0].options == ("cli", "http", "binding") and seed.inputs[0].default == "http"
    assert seed.resolved_inputs_template["trigger"] == "http"
    assert [c.title for c in seed.contract] == ["Happy path", "Durable retry / memoization", "Wait-for-event"]
    assert [s.key for s in seed.executable_sections] == ["0", "discovery", "1", "2", "3", "4"]
    assert seed.teardown is not None and seed.teardown.key == "teardown"


def test_seed_conditional_markers(seed: Plan) -> None:
    deploy = seed.section("3")
    assert deploy.title == "Deploy"
    assert deploy.markers == (
        MarkerSpec(Marker.GATE, Condition("TRIGGER", ("http",)), "outward-facing"),
        MarkerSpec(Marker.CONFIG, Condition("TRIGGER", ("cli", "binding")), ""),
    )
    accept = seed.section("4")
    assert accept.markers == (
        MarkerSpec(Marker.VERIFY, None, "the shared durable-execution contract — ONE instance's journey"),
    )


def test_seed_blocks(seed: Plan) -> None:
    s2 = seed.section("2")
    tpl, verify = s2.blocks
    assert tpl.role is BlockRole.TEMPLATE and tpl.template_target == "${SVC}.jsonc"
    rules = {tl.offset: tl.rules for tl in tpl.template_lines}
    assert rules[2][0].expr == "${WORKER}" and rules[2][0].key is None
    assert rules[5][0].kind == "knob" and dict(rules[5][0].mapping) == {
        "http": "true",
        "cli": "false",
        "binding": "false",
    }
    assert [(r.key, r.expr) for r in rules[13]] == [("name", "${WF}"), ("class_name", "${CLASS}")]
    assert verify.role is BlockRole.VERIFY and verify.verify_title == "config valid (no deploy)"
    assert [b.role for b in seed.section("discovery").blocks] == [BlockRole.VERIFY]
    assert all(b.role is BlockRole.VERIFY for b in seed.section("4").blocks)
    (rz,) = seed.section("4").blocks[0].realizations
    assert (rz.var, rz.section, rz.line + 1) == ("URL", "3", 286)
    assert rz.placeholder == "https://${WORKER}.<subdomain>.workers.dev"
    assert seed.section("3").blocks[0].hints == ("URL (http only); WF registered; status: live",)
    assert seed.section("1").hints == ("class file written; class_name = `$CLASS`.",)


def test_seed_checks_and_feeding(seed: Plan) -> None:
    checks = [c for b in seed.section("4").blocks for c in b.checks]
    passes = {c.label for c in checks if c.polarity is CheckPolarity.PASS and c.label}
    assert passes == {"1", "2a", "2b", "3a", "3b"}
    two_a = next(c for c in checks if c.label == "2a" and c.polarity is CheckPolarity.PASS)
    assert two_a.message == "2a: reserve-inventory attempt 1 failed → retried"
    assert next(c for c in checks if c.message == "never parked").polarity is CheckPolarity.FAIL
    assert seed.teardown is not None
    td = list(seed.teardown.blocks[1].checks)
    # Read by position, never by wording: each `cond && echo A || echo B` exits 0 either way, so A is the
    # pass line and B a soft (exit-0) failure line -- the seed's first one is written the other way round.
    assert [(c.message.split()[0:2], c.polarity.value, c.soft) for c in td] == [
        (["workflow", "STILL"], "pass", False),
        (["workflow", "gone"], "fail", True),
        (["worker", "gone"], "pass", False),
        (["worker", "check"], "fail", True),
    ]
    ls = seed.live_state
    assert ls is not None and ls.data["status"] == "not-created"
    assert ls.data["resolved_inputs"] == {"trigger": "cli", "env": "dev"}
    assert [r.key for r in ls.kv_rows] == ["WORKER", "WF_NAME", "CLASS", "URL", "bound"]
    assert ls.kv_rows[0].value == "`${SVC}-${ENV}` (host Worker)"
    assert {r.name: r.fed_by for r in ls.check_rows} == {
        "workflow registered": ("section:3",),
        "happy path completes": ("label:1",),
        "durable retry / memoization": ("label:2a", "label:2b"),
        "wait-for-event resumes": ("label:3a", "label:3b"),
    }


def test_spans_are_source_lines(seed: Plan) -> None:
    lines = seed.source.split("\n")
    for s in seed.sections:
        assert lines[s.span.start].startswith("## ")
        for b in s.blocks:
            assert lines[b.span.start].startswith("```") and lines[b.span.end - 1] == "```"
            assert "\n".join(lines[b.body_start : b.span.end - 1]) + "\n" == b.text


def test_crlf_and_bom() -> None:
    lf = (OK / "crlf.md").read_text(encoding="utf-8")
    crlf = lf.replace("\n", "\r\n")
    a, b = parse(lf), parse(crlf)
    assert a.newline == "\n" and b.newline == "\r\n" and b.source == crlf
    assert [(s.key, s.span) for s in a.sections] == [(s.key, s.span) for s in b.sections]
    assert a.sections[0].blocks[1].checks == b.sections[0].blocks[1].checks
    bom = parse("\ufeff" + lf)
    assert bom.title == a.title and bom.source.startswith("\ufeff")


def test_parse_file_errors(tmp_path: Path) -> None:
    bad = tmp_path / "latin1.md"
    bad.write_bytes(b"# T\n\ncaf\xe9\n")
    with pytest.raises(PlanError) as info:
        parse_file(bad)
    assert info.value.line == 3 and "not UTF-8" in info.value.reason
    with pytest.raises(PlanError, match="cannot read"):
        parse_file(tmp_path / "absent.md")


@pytest.mark.parametrize(
    ("heading", "title", "tail"),
    [
        (
            "3. Deploy  🔴 *(`TRIGGER=http` — outward-facing)*  /  🟡 *(`cli`/`binding`)*",
            "3. Deploy",
            "🔴 *(`TRIGGER=http` — outward-facing)*  /  🟡 *(`cli`/`binding`)*",
        ),
        ("🤖 Director prompt", "🤖 Director prompt", ""),
        ("Launch 🚀 to production", "Launch 🚀 to production", ""),
        ("Teardown (observe-first, resumable)  💥", "Teardown (observe-first, resumable)", "💥"),
        ("Check ✔️", "Check", "✔️"),
        ("Plain", "Plain", ""),
        ("✔", "✔", ""),
    ],
)
def test_split_markers(heading: str, title: str, tail: str) -> None:
    assert split_markers(heading) == (title, tail)


def test_markers_corpus() -> None:
    plan = parse_file(OK / "markers.md")
    by = {s.key: s for s in plan.sections}
    assert by["launch-notes"].title == "🚀 Launch notes" and by["launch-notes"].markers == ()
    assert by["director-prompt"].kind is SectionKind.PROMPT
    assert by["3"].markers == (MarkerSpec(Marker.CONFIG, None, "a note without a condition"),)
    assert by["4"].markers[1].condition == Condition("MODE", ("safe",))
    assert by["6"].markers == (MarkerSpec(Marker.VERIFY, None, "read-only"),)
    assert [m.marker for m in by["7"].markers] == [Marker.CREATE, Marker.CONFIG]
    # bare values with no sibling condition: the one input whose options hold them owns them
    assert by["8"].markers[0].condition == Condition("EXPOSE", ("public",))
    assert by["9"].markers == () and "✔" in by["9"].title
    assert by["10"].markers == (
        MarkerSpec(Marker.GATE, Condition("EXPOSE", ("public", "internal")), "reachable"),
        MarkerSpec(Marker.CONFIG, Condition("EXPOSE", ("private",)), "note"),
    )


def test_unknown_marker_is_an_error_even_with_a_known_one() -> None:
    with pytest.raises(PlanError, match="known markers: 🟢 create"):
        parse("# T\n\n## 1. Step  🟢 🟠\n")


def test_template_rules() -> None:
    assert parse_rules(" = ${WORKER} (${SVC}-${ENV})")[0].expr == "${WORKER}"
    knob = parse_rules(" TRIGGER=http -> true; cli/binding -> false")[0]
    assert knob.knob == "TRIGGER" and knob.mapping == (
        ("http", "true"),
        ("cli", "false"),
        ("binding", "false"),
    )
    assert parse_rules(" retries = 3 per step") == ()
    assert parse_rules(" just a remark") == ()
    plan = parse_file(OK / "template.md")
    lines = {tl.offset: tl for tl in plan.section("1").blocks[0].template_lines}
    assert lines[3].rules[0].expr == "https://${HOST}/a//b"  # `//` inside a string is not a comment
    assert 8 not in lines and 9 not in lines  # commentary and commented-out lines carry no rules


def test_retry_and_durations() -> None:
    plan = parse_file(OK / "retry.md")
    r = [b.retry for b in plan.section("1").blocks]
    assert r[0] is not None and (r[0].retries, r[0].backoff, r[0].delay_s, r[0].timeout_s) == (
        3,
        "exponential",
        2.0,
        300.0,
    )
    assert r[1] is not None and (r[1].retries, r[1].backoff, r[1].delay_s) == (1, "constant", 0.5)
    assert r[2] is not None and r[2].timeout_s == 3600.0 and r[3] is None
    assert parse_duration("500ms") == 0.5 and parse_duration("2") is None


def test_realizations_and_hints() -> None:
    plan = parse_file(OK / "realized.md")
    rz = plan.section("2").blocks[0].realizations
    assert [(r.var, r.section, r.placeholder) for r in rz] == [
        ("URL", "1", "https://<subdomain>.example.dev"),
        ("ID", "1", "<id>"),
    ]
    assert plan.section("1").hints == ("URL (http only); status: live",)
    assert plan.section("1").blocks[0].hints == ("ID of the deployment",)


def test_block_roles() -> None:
    plan = parse_file(OK / "blocks.md")
    roles = {s.key: [b.role.value for b in s.blocks] for s in plan.sections}
    assert roles["notes"] == ["illustrative", "illustrative", "illustrative", "diagram"]
    assert roles["1"] == ["act", "verify", "illustrative"]
    assert roles["2"] == ["template", "verify"]
    assert roles["3"] == ["verify"] and roles["update"] == ["illustrative"]
    assert plan.section("1").blocks[1].verify_title == "verified with the variation selector"
    assert plan.section("2").blocks[1].verify_title == "config present"


def test_sections_kinds_and_keys() -> None:
    plan = parse_file(OK / "sections.md")
    assert plan.title == "Sections — setext title, keys and slugs"
    assert [s.key for s in plan.sections] == [
        "notes",
        "notes-2",
        "discovery",
        "0",
        "1",
        "3",
        "update",
        "teardown",
        "live-state",
        "unicode-punctuation-here",
    ]
    assert plan.section("0").kind is SectionKind.VARIABLES
    assert plan.section("live-state").kind is SectionKind.LIVE_STATE
    assert plan.live_state is not None and plan.live_state.yaml_span is None and plan.live_state.data == {}
    assert slugify("Bindings — `${SVC}.jsonc`") == "bindings-svc-jsonc"


def test_live_state_feeding_corpus() -> None:
    plan = parse_file(OK / "live-state.md")
    ls = plan.live_state
    assert ls is not None and ls.data["when"] == "2026-07-03"  # a YAML date stays JSON-able
    assert ls.kv_rows[0].key == "WIDGET"
    fed = {r.name: r.fed_by for r in ls.check_rows}
    assert fed["widget registered"] == ("section:1",)  # plural/-ed stems: widgets registered
    assert fed["wait-for-event resumes"] == ("label:3",)
    assert fed["nothing feeds this row"] == ()


CHECKS = (OK / "checks.md").read_text(encoding="utf-8")


def test_check_polarity_corpus() -> None:
    plan = parse(CHECKS)
    got = {c.message: (c.polarity.value, c.soft) for c in plan.section("1").blocks[0].checks}
    # By structure only: the wording of a message never changes its polarity.
    assert got == {
        "plain pass": ("pass", False),
        "1: and-echo pass": ("pass", False),
        "1: group fail": ("fail", False),
        "x missing": ("fail", False),
        "present and well": ("pass", False),
        "still broken — re-run": ("fail", True),
        "the check is suspect": ("pass", False),  # by position, whatever it says
        "all good": ("fail", True),
        "first reads pass": ("pass", False),
        "second reads fail": ("fail", True),
        "3a: parked": ("pass", False),
        "never parked": ("fail", False),
        "3b: resumed": ("pass", False),
        "did not resume": ("fail", False),
        "2b: dir present": ("pass", False),
        "dir absent": ("fail", False),
        "then branch": ("pass", False),  # if/else branches are alternatives, both pass lines
        "else branch": ("pass", False),
        "in a function": ("pass", False),  # a function's lines are checks when it is called
        "with a flag: $X ${Y}": ("pass", False),
        "bare failure without exit": ("fail", True),
        "out still present": ("fail", False),
        "out gone": ("pass", False),  # `A && { …; exit 1; } || echo C`: C runs when A is false — success
    }


def test_extract_checks_heredoc_and_labels() -> None:
    text = 'cat > f <<\'EOF\'\necho "not a check"\nEOF\ngrep -q x f && echo "12b: labelled"\n'
    (c,) = verify_model(text, 10).lines
    assert (c.label, c.row + 10) == ("12b", 13)


@pytest.mark.parametrize(
    ("message", "line", "ok"),
    [
        ("workflow $WF registered", "workflow orders-wf-dev registered", True),
        ("workflow $WF registered", "  workflow orders-wf-dev registered  ", True),
        ("workflow $WF registered", "workflow orders-wf-dev registered!", False),
        ("workflow ${WF} registered", "workflow x registered", True),
        ("mode $MODE applied (x.y)", "mode 600 applied (x.y)", True),
        ("mode $MODE applied (x.y)", "mode 600 applied (xzy)", False),
        ("1: ok", "1: ok", True),
        ("1: ok", "prefix 1: ok", False),
    ],
)
def test_match_check(message: str, line: str, ok: bool) -> None:
    assert (message_regex(message).fullmatch(line.strip()) is not None) is ok


def test_contract_in_preamble_and_not_after_numbered_sections() -> None:
    plan = parse("# T\n\n1. **Fast** — quick.\n2. **Safe** — careful.\n\n## 1. Go  🟢\n")
    assert [(c.number, c.title, c.line) for c in plan.contract] == [(1, "Fast", 2), (2, "Safe", 3)]
    late = parse("# T\n\n## 1. Go  🟢\n\n## Notes\n\n1. **Late** — not a contract.\n")
    assert late.contract == ()


def test_plain_yaml_data_default_and_exact() -> None:
    import datetime

    from ruamel.yaml import YAML

    from director.plan.source import plain

    data = YAML(typ="rt").load("a: 2024-01-02\nb: 2024-01-02 03:04:05\n1: [x, 2, 1.5, true, null]\nc: !tag v\n")
    assert plain(data) == {
        "a": "2024-01-02",
        "b": "2024-01-02T03:04:05",
        "1": ["x", 2, 1.5, True, None],
        "c": "v",
    }
    exact = plain(data, exact=True)
    assert exact["a"] == ("date", "2024-01-02") and exact["b"] == ("datetime", "2024-01-02T03:04:05")
    assert exact[1] == ["x", 2, 1.5, True, None] and 1 in exact and "1" not in exact
    aware = datetime.datetime(2024, 1, 2, 3, tzinfo=datetime.UTC)
    assert plain({"t": aware}, exact=True) == {"t": ("datetime", "2024-01-02T03:00:00")}
    assert plain({"t": aware}) == {"t": "2024-01-02T03:00:00+00:00"}

"""The marker table (`director.plan.markers`) and the decisions that read it: parse, gates, checks, lint, show."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from director.errors import PlanError
from director.plan import knobs, markers, scaffold
from director.plan.lint import lint
from director.plan.markers import MARKERS, Marker
from director.plan.model import (
    Block,
    BlockRole,
    Condition,
    MarkerSpec,
    Section,
    SectionKind,
    Span,
    key_label,
    label_list,
    section_label,
)
from director.plan.parse import parse
from director.plan.tojson import to_json
from director.run.gates import GateContent
from director.ui.prompts import gate_panel


def _section(*specs: MarkerSpec, kind: SectionKind = SectionKind.NUMBERED, key: str = "1") -> Section:
    return Section(
        key=key,
        number=int(key) if key.isdigit() else None,
        title="Step",
        heading="## 1. Step",
        kind=kind,
        markers=specs,
        blocks=(),
        quotes=(),
        hints=(),
        span=Span(0, 1),
    )


def test_one_row_per_marker_in_legend_order() -> None:
    assert [r.marker for r in MARKERS] == list(Marker)
    assert len({r.name for r in MARKERS}) == len(MARKERS)
    assert markers.glyphs() == "🟢 🟡 🔴 💥 ⏳ ✔"
    assert markers.known_list() == "🟢 create, 🟡 config, 🔴 gate, 💥 destructive, ⏳ wait, ✔ verify"


def test_what_each_marker_means_for_a_run() -> None:
    meaning = {
        r.marker: (r.gates, r.destructive, r.check, r.wait, r.needs_verify, r.auto_approvable) for r in MARKERS
    }
    assert meaning == {
        Marker.CREATE: (False, False, False, False, True, False),
        Marker.CONFIG: (False, False, False, False, True, False),
        Marker.GATE: (True, False, False, False, False, True),
        Marker.DESTRUCTIVE: (True, True, False, False, False, False),
        Marker.WAIT: (False, False, False, True, False, False),
        Marker.VERIFY: (False, False, True, False, False, False),
    }
    assert all(r.gate_title and r.gate_reason and r.gate_style for r in MARKERS if r.gates)


def test_glyphs_with_or_without_variation_selector() -> None:
    assert markers.by_glyph("✔") is markers.by_glyph("✔\ufe0f") is markers.rule(Marker.VERIFY)
    assert markers.by_glyph("💥\ufe0e") is markers.rule(Marker.DESTRUCTIVE)
    assert markers.by_glyph("🤖") is None
    assert markers.by_glyph("🔴\u200d🔥") is None  # a known glyph joined into another symbol
    assert markers.strip_variation("✔️ check") == "✔ check"


def test_destructive_gates_first_and_is_never_auto_approvable() -> None:
    assert [r.marker for r in markers.gating_order()] == [Marker.DESTRUCTIVE, Marker.GATE]
    both = _section(MarkerSpec(Marker.GATE), MarkerSpec(Marker.DESTRUCTIVE))
    gate = knobs.gate_of(both, {})
    assert gate is not None and gate.marker is Marker.DESTRUCTIVE and not gate.rule.auto_approvable


def test_gate_of_reads_conditions_and_the_teardown_default() -> None:
    cond = _section(
        MarkerSpec(Marker.GATE, Condition("TRIGGER", ("http",))),
        MarkerSpec(Marker.CONFIG, Condition("TRIGGER", ("cli",))),
    )
    http = knobs.gate_of(cond, {"TRIGGER": "http"})
    assert http is not None and http.marker is Marker.GATE and http.rule.auto_approvable
    assert knobs.gate_of(cond, {"TRIGGER": "cli"}) is None
    assert knobs.gate_of(_section(MarkerSpec(Marker.CREATE)), {}) is None
    teardown = knobs.gate_of(_section(kind=SectionKind.TEARDOWN, key="teardown"), {})
    assert teardown == MarkerSpec(markers.TEARDOWN_GATE, None, "teardown")
    assert teardown.rule.destructive


def test_check_section_by_marker_or_by_its_blocks() -> None:
    assert knobs.is_check_section(_section(MarkerSpec(Marker.VERIFY)), {})
    conditional = _section(MarkerSpec(Marker.VERIFY, Condition("MODE", ("ro",))))
    assert knobs.is_check_section(conditional, {"MODE": "ro"})
    assert not knobs.is_check_section(conditional, {"MODE": "rw"})
    verify = Block(0, "bash", "bash", BlockRole.VERIFY, "true\n", Span(1, 4), 2)
    only_verify = Section("2", 2, "S", "## 2. S", SectionKind.NUMBERED, (), (verify,), (), (), Span(0, 4))
    assert knobs.is_check_section(only_verify, {})
    assert not knobs.is_check_section(_section(MarkerSpec(Marker.WAIT)), {})


HEAD = "# T\n\n## 1. Step  {m}\n\n```bash\n{body}\n```\n"


def test_parse_recognises_markers_by_the_table() -> None:
    plan = parse(HEAD.format(m="🟢 / ✔️", body="echo hi"))
    s = plan.section("1")
    assert [m.marker for m in s.markers] == [Marker.CREATE, Marker.VERIFY]
    assert [b.role for b in s.blocks] == [BlockRole.VERIFY]  # every block of a check section is a check
    assert to_json(plan)["sections"][0]["markers"][1]["name"] == "verify"
    with pytest.raises(PlanError, match="known markers: 🟢 create, 🟡 config"):
        parse(HEAD.format(m="🟢 🚀", body="echo hi"))


def test_verify_block_mark_with_or_without_variation_selector() -> None:
    for mark in ("✔", "✔️"):
        plan = parse(HEAD.format(m="🟢", body=f"# {mark} the file is there\n[ -f f ] && echo ok"))
        b = plan.section("1").blocks[0]
        assert b.role is BlockRole.VERIFY and b.verify_title == "the file is there"


def test_lint_reads_meanings_from_the_table() -> None:
    codes = {f.code for f in lint(parse(HEAD.format(m="🟡", body="touch f")))}
    assert "missing-verify" in codes  # config needs a verify block
    codes = {f.code for f in lint(parse(HEAD.format(m="⏳", body="sleep 1")))}
    assert "missing-verify" not in codes and "unverified-act" in codes
    rm = {f.code for f in lint(parse(HEAD.format(m="🔴", body="rm -rf /srv/x")))}
    assert "destructive-outside-teardown" in rm
    rm = {f.code for f in lint(parse(HEAD.format(m="💥", body="rm -rf /srv/x")))}
    assert "destructive-outside-teardown" not in rm
    bare = [f for f in lint(parse(HEAD.format(m="", body="touch f"))) if f.code == "missing-marker"]
    assert bare and "(🟢 🟡 🔴 💥 ⏳ ✔)" in bare[0].message


def test_scaffold_legend_is_the_table() -> None:
    assert markers.legend() in scaffold.render("x")
    assert markers.legend() == (
        "Legend  🟢 create · 🟡 config · 🔴 GATE (human go) · 💥 destructive (human go) · ⏳ wait · ✔ verify"
    )


@pytest.mark.parametrize(("marker", "title", "why"), [("💥", "💥 DESTRUCTIVE", "💥 destructive"),
                                                       ("🔴", "🔴 GATE", "🔴 (a human go)")])  # fmt: skip
def test_gate_panel_prints_the_row_words(marker: str, title: str, why: str) -> None:
    buf = io.StringIO()
    content = GateContent("3", "Deploy", marker, "", (), ("wrangler deploy",), {}, {})
    gate_panel(Console(file=buf, width=120, color_system=None), content)
    out = buf.getvalue()
    assert f"{title} · §3 Deploy" in out and f"the plan marks this section {why}" in out


def test_section_label() -> None:
    assert section_label(_section()) == "§1"
    assert section_label(_section(kind=SectionKind.TEARDOWN, key="teardown")) == "teardown"
    prose = Section("2024", None, "2024", "## 2024", SectionKind.PROSE, (), (), (), (), Span(0, 1))
    assert section_label(prose) == "2024"  # a slug of digits is not a number
    assert key_label("3") == "§3" and key_label("discovery") == "discovery"


def test_label_lists_say_long_runs_as_ranges() -> None:
    labels = ["§0", "§1", "§2", "§4", "§5", "discovery", "§6", "§7", "§8", "§9", "teardown", "2024"]
    assert label_list(labels) == "§0–§2, §4, §5, discovery, §6–§9, teardown, 2024"
    assert label_list([f"§{n}" for n in range(1, 1001)]) == "§1–§1000"
    assert label_list(["§3", "§2", "§1"]) == "§3, §2, §1", "only ascending runs are ranges"
    assert label_list(["§1", "§01", "§2"]) == "§1, §01, §2"
    assert label_list([]) == ""

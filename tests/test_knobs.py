"""Knob resolution, marker conditions and substitution (pure); file templates: tests/test_templates.py."""

from __future__ import annotations

import pytest

from director.errors import UsageError
from director.plan import knobs
from director.plan.model import (
    Block,
    BlockRole,
    Condition,
    Input,
    Marker,
    MarkerSpec,
    Plan,
    Realization,
    Section,
    SectionKind,
    Span,
)


def _plan(*inputs: Input) -> Plan:
    return Plan(
        title="t",
        path=None,
        source="",
        newline="\n",
        preamble=(),
        prompt_rules=(),
        legend="",
        inputs=inputs,
        resolved_inputs_template={},
        sections=(),
        contract=(),
        live_state=None,
    )


TRIGGER = Input(1, "How?", ("cli", "http", "binding"), "http", "TRIGGER", "", 0)
ENV = Input(2, "Env", ("dev", "prod"), "dev", "ENV", "", 1)


def test_parse_sets_is_case_insensitive_and_refuses_values_outside_the_list() -> None:
    plan = _plan(TRIGGER, ENV)
    assert knobs.parse_sets(plan, ["trigger=cli", "Env=prod"]) == {"TRIGGER": "cli", "ENV": "prod"}
    with pytest.raises(UsageError, match="cli / http / binding"):
        knobs.parse_sets(plan, ["trigger=ftp"])
    with pytest.raises(UsageError, match="no input setting 'color'"):
        knobs.parse_sets(plan, ["color=red"])
    with pytest.raises(UsageError, match="KNOB=value"):
        knobs.parse_sets(plan, ["trigger"])


def test_resolve_order_flag_previous_prompt_default() -> None:
    plan = _plan(TRIGGER, ENV)
    r = knobs.resolve(plan, {"TRIGGER": "cli"}, {"ENV": "prod", "TRIGGER": "http"}, None)
    assert r.values == {"TRIGGER": "cli", "ENV": "prod"} and r.how == {"TRIGGER": "flag", "ENV": "previous"}
    r = knobs.resolve(plan, {}, None, lambda i: "binding" if i.knob == "TRIGGER" else "dev")
    assert r.values == {"TRIGGER": "binding", "ENV": "dev"} and r.how["TRIGGER"] == "prompt"
    asked: dict[str, str] = {}
    r = knobs.resolve(plan, {"TRIGGER": "cli"}, {"ENV": "prod"}, lambda i: asked.setdefault(i.knob, i.default),
                      ask_again=True)  # fmt: skip
    assert asked == {"ENV": "prod"} and r.how == {"TRIGGER": "flag", "ENV": "prompt"}  # its default: the answer
    r = knobs.resolve(plan, {}, {"ENV": "prod"}, None, ask_again=True)  # no prompt: the answers stand
    assert r.values["ENV"] == "prod" and r.how["ENV"] == "previous"
    r = knobs.resolve(plan, {}, None, None)
    assert r.values == {"TRIGGER": "http", "ENV": "dev"} and set(r.how.values()) == {"default"}


def _section(markers: tuple[MarkerSpec, ...], kind: SectionKind = SectionKind.NUMBERED) -> Section:
    return Section(
        key="3",
        number=3,
        title="Deploy",
        heading="",
        kind=kind,
        markers=markers,
        blocks=(),
        quotes=(),
        hints=(),
        span=Span(0, 1),
        slug="3-deploy",
    )


def test_conditional_gate() -> None:
    s = _section(
        (
            MarkerSpec(Marker.GATE, Condition("TRIGGER", ("http",)), "outward-facing"),
            MarkerSpec(Marker.CONFIG, Condition("TRIGGER", ("cli", "binding"))),
        )
    )
    gate = knobs.gate_of(s, {"TRIGGER": "http"})
    assert gate is not None and gate.marker is Marker.GATE and gate.note == "outward-facing"
    assert knobs.gate_of(s, {"TRIGGER": "cli"}) is None
    td = _section((), SectionKind.TEARDOWN)
    g = knobs.gate_of(td, {})
    assert g is not None and g.marker is Marker.DESTRUCTIVE


def test_substitute_knobs_only_touches_knob_assignments() -> None:
    text = (
        'export ENV="dev" TRIGGER="http"\nexport WORKER="${SVC}-${ENV}"   # ENV=x in a comment\nBIND_ENV=""'
    )
    out = knobs.substitute_knobs(text, {"ENV": "prod", "TRIGGER": "cli"})
    assert out.split("\n")[0] == 'export ENV="prod" TRIGGER="cli"'
    assert out.split("\n")[1] == 'export WORKER="${SVC}-${ENV}"   # ENV=x in a comment'
    assert out.split("\n")[2] == 'BIND_ENV=""'


def test_realization_replaces_the_placeholder() -> None:
    text = 'if true; then\n  URL="https://${WORKER}.<subdomain>.workers.dev"   # realized in §3\nfi'
    b = Block(
        0,
        "bash",
        "bash",
        BlockRole.VERIFY,
        text,
        Span(9, 14),
        10,
        realizations=(Realization("URL", "3", 11, "https://${WORKER}.<subdomain>.workers.dev"),),
    )
    out = knobs.substitute_realizations(b, {"URL": "http://127.0.0.1:8787"})
    assert out.split("\n")[1] == '  URL="http://127.0.0.1:8787"   # realized in §3'
    assert knobs.substitute_realizations(b, {}) == text


def test_kv_condition() -> None:
    assert knobs.kv_condition("`—` (`*.workers.dev`, `TRIGGER=http` only)") == ("TRIGGER", "http")
    assert knobs.kv_condition("`${SVC}-${ENV}` (host Worker)") is None

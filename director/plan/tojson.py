"""Plan model → JSON-able dict, shape `director.plan/1` (documented in docs/plan-json.md).

Lines are 1-based here (the model is 0-based): every `line` is the plan line a human would open, every span
is `{"line": first, "end_line": last}` inclusive. Enums become their values. Keys never disappear: absent
values are `null`, empty collections are `[]`/`{}`, so consumers need no existence checks.
"""

from __future__ import annotations

import re
from typing import Any

from director.plan.model import (
    Block,
    CheckLine,
    CheckRow,
    ContractItem,
    Input,
    KVRow,
    LiveState,
    MarkerSpec,
    Plan,
    Realization,
    RetryPolicy,
    Section,
    Span,
    Table,
    TemplateLine,
)
from director.plan.source import plan_lines

SCHEMA = "director.plan/1"


def span(s: Span) -> dict[str, int]:
    """A 0-based half-open span as 1-based inclusive lines."""
    return {"line": s.start + 1, "end_line": max(s.end, s.start + 1)}


def _marker(m: MarkerSpec) -> dict[str, Any]:
    cond = None if m.condition is None else {"knob": m.condition.knob, "values": list(m.condition.values)}
    return {"marker": m.marker.value, "name": m.rule.name, "condition": cond, "note": m.note}


def _retry(r: RetryPolicy | None) -> dict[str, Any] | None:
    if r is None:
        return None
    return {"retries": r.retries, "backoff": r.backoff, "delay_s": r.delay_s, "timeout_s": r.timeout_s}


def _check(c: CheckLine) -> dict[str, Any]:
    return {
        "message": c.message,
        "polarity": c.polarity.value,
        "line": c.line + 1,
        "label": c.label,
        "soft": c.soft,
    }


def _realization(r: Realization) -> dict[str, Any]:
    return {"var": r.var, "section": r.section, "line": r.line + 1, "placeholder": r.placeholder}


def _template_line(t: TemplateLine, body_start: int) -> dict[str, Any]:
    return {
        "offset": t.offset,
        "line": body_start + t.offset + 1,
        "rules": [
            {
                "kind": r.kind,
                "key": r.key,
                "expr": r.expr,
                "knob": r.knob,
                "mapping": [list(p) for p in r.mapping],
            }
            for r in t.rules
        ],
    }


def _block(b: Block) -> dict[str, Any]:
    return {
        "index": b.index,
        "lang": b.lang,
        "info": b.info,
        "role": b.role.value,
        "span": span(b.span),
        "body_line": b.body_start + 1,
        "verify_title": b.verify_title,
        "retry": _retry(b.retry),
        "name": b.name,
        "attributes": dict(b.attributes),
        "checks": [_check(c) for c in b.checks],
        "realizations": [_realization(r) for r in b.realizations],
        "hints": list(b.hints),
        "template_target": b.template_target,
        "template_lines": [_template_line(t, b.body_start) for t in b.template_lines],
        "text": b.text,
    }


def _section(s: Section) -> dict[str, Any]:
    return {
        "key": s.key,
        "number": s.number,
        "kind": s.kind.value,
        "title": s.title,
        "slug": s.slug,
        "heading": s.heading,
        "span": span(s.span),
        "markers": [_marker(m) for m in s.markers],
        "quotes": list(s.quotes),
        "hints": list(s.hints),
        "blocks": [_block(b) for b in s.blocks],
    }


def _input(i: Input) -> dict[str, Any]:
    return {
        "number": i.number,
        "question": i.question,
        "options": list(i.options),
        "default": i.default,
        "knob": i.knob,
        "gates": i.gates,
        "line": i.line + 1,
    }


def _contract(c: ContractItem) -> dict[str, Any]:
    return {"number": c.number, "title": c.title, "text": c.text, "line": c.line + 1}


def _table(t: Table | None) -> dict[str, Any] | None:
    if t is None:
        return None
    return {"header": list(t.header), "rows": [list(r) for r in t.rows], "span": span(t.span)}


_CELL = re.compile(r"^`([^`]*)`\s*(?:\((.*)\))?\s*$", re.DOTALL)


def clean_cell(cell: str) -> tuple[str | None, str | None]:
    """(value, remark) of a key/value cell: "`orders-dev` (host Worker)" → ("orders-dev", "host Worker").

    "`—`" (nothing yet) is None; a cell in another shape is its own value, whitespace trimmed.
    """
    m = _CELL.match(cell.strip())
    if m is None:
        return (cell.strip() or None), None
    value = m.group(1).strip()
    return (None if value in ("—", "-", "") else value), (m.group(2).strip() if m.group(2) else None)


def kv_json(r: KVRow) -> dict[str, Any]:
    """A key/value row: the clean value and its remark, and the cell as written (`cell`)."""
    value, remark = clean_cell(r.value)
    return {"key": r.key, "value": value, "remark": remark, "cell": r.value, "line": r.line + 1}


def check_row_json(r: CheckRow) -> dict[str, Any]:
    """A check-table row as written (its cells are prose: nothing to clean)."""
    return {
        "name": r.name,
        "expected": r.expected,
        "observed": r.observed,
        "result": r.result,
        "line": r.line + 1,
    }


def _check_row(r: CheckRow) -> dict[str, Any]:
    return {**check_row_json(r), "fed_by": list(r.fed_by)}


def _live_state(ls: LiveState | None) -> dict[str, Any] | None:
    if ls is None:
        return None
    return {
        "span": span(ls.span),
        "yaml_span": None if ls.yaml_span is None else span(ls.yaml_span),
        "yaml_text": ls.yaml_text,
        "data": ls.data,
        "kv_table": _table(ls.kv_table),
        "kv_rows": [kv_json(r) for r in ls.kv_rows],
        "check_table": _table(ls.check_table),
        "check_rows": [_check_row(r) for r in ls.check_rows],
    }


def _family(plan: Plan) -> dict[str, Any]:
    """`provides` and `requires`: the plan's family declarations (docs/plan-format.md)."""
    from director.plan.family import declarations

    d = declarations(plan)
    return {"provides": [p.to_json() for p in d.provides], "requires": [r.to_json() for r in d.requires]}


def to_json(plan: Plan) -> dict[str, Any]:
    """The plan as a stable, versioned JSON-able dict (`"schema": "director.plan/1"`)."""
    return {
        "schema": SCHEMA,
        "title": plan.title,
        "title_line": plan.title_line + 1,
        "path": plan.path,
        "newline": plan.newline,
        "line_count": len(plan_lines(plan.source)),
        "preamble": list(plan.preamble),
        **_family(plan),
        "prompt_rules": list(plan.prompt_rules),
        "legend": plan.legend,
        "inputs": [_input(i) for i in plan.inputs],
        "resolved_inputs_template": plan.resolved_inputs_template,
        "contract": [_contract(c) for c in plan.contract],
        "execution_order": [s.key for s in plan.executable_sections],
        "teardown": plan.teardown.key if plan.teardown is not None else None,
        "sections": [_section(s) for s in plan.sections],
        "live_state": _live_state(plan.live_state),
    }

"""Pipe tables: the Provisioning Inputs (the interview) and the Live State section (the ledger's tables)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from markdown_it.token import Token

from director.plan import markers
from director.plan.model import Block, CheckRow, Input, KVRow, LiveState, Span, Table
from director.plan.source import Source, load_yaml, whole_number


def read_table(tokens: Sequence[Token], start: int) -> tuple[Table, list[int], int]:
    """The table opening at tokens[start]: (table, 0-based row lines, index after table_close)."""
    header: list[str] = []
    rows: list[tuple[str, ...]] = []
    row_lines: list[int] = []
    current: list[str] = []
    in_head = False
    i = start
    open_tok = tokens[start]
    while i < len(tokens):
        t = tokens[i]
        if t.type == "thead_open":
            in_head = True
        elif t.type == "thead_close":
            in_head = False
        elif t.type == "tr_open":
            current = []
            if not in_head:
                row_lines.append(t.map[0] if t.map else 0)
        elif t.type == "inline":
            current.append(t.content.strip())
        elif t.type == "tr_close":
            if in_head:
                header = current
            else:
                rows.append(tuple(current))
        elif t.type == "table_close":
            i += 1
            break
        i += 1
    span = Span(*open_tok.map) if open_tok.map else Span(0, 0)
    return Table(tuple(header), tuple(rows), span), row_lines, i


def first_word(cell: str) -> str:
    """The first word of a header cell, lower case, markers and emphasis removed."""
    c = markers.strip_variation(cell)
    for row in markers.MARKERS:  # `✔ check`
        c = c.replace(row.glyph, " ")
    c = c.strip().strip("*_`").lower()
    m = re.match(r"[#\w-]+", c)
    return m.group(0) if m else c


def columns(table: Table, required: Sequence[str], ctx: Source, what: str) -> dict[str, int]:
    """Column index by first header word; a PlanError when a required column is missing."""
    cols: dict[str, int] = {}
    for idx, cell in enumerate(table.header):
        cols.setdefault(first_word(cell), idx)
    missing = [c for c in required if c not in cols]
    if missing:
        raise ctx.error(
            f"{what} table lacks column(s) {', '.join(missing)} (has: {' / '.join(table.header)})",
            table.span.start,
        )
    return cols


def cell(row: Sequence[str], idx: int | None) -> str:
    """The cell at `idx` of a row ("" when absent)."""
    return row[idx] if idx is not None and idx < len(row) else ""


def parse_inputs(table: Table, row_lines: Sequence[int], ctx: Source) -> tuple[Input, ...]:
    """Provisioning Inputs rows: closed options, a default among them, a knob."""
    cols = columns(table, ("question", "options", "default", "sets"), ctx, "Provisioning Inputs")
    out: list[Input] = []
    knobs: dict[str, int] = {}
    for n, (row, line0) in enumerate(zip(table.rows, row_lines, strict=True), start=1):
        number = whole_number(cell(row, cols.get("#")).strip())
        number = n if number is None else number
        options = tuple(o.strip() for o in re.findall(r"`([^`]*)`", cell(row, cols["options"])) if o.strip())
        if not options:
            raise ctx.error(f"input {number} has no options (write them as `a` / `b` / `c`)", line0)
        default = cell(row, cols["default"]).replace("`", "").strip()
        if default not in options:
            raise ctx.error(
                f"input {number}: default {default!r} is not one of its options ({' / '.join(options)})",
                line0,
            )
        knob = cell(row, cols["sets"]).replace("`", "").strip()
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", knob):
            raise ctx.error(
                f"input {number} sets no knob (the Sets cell must name one shell variable, got {knob!r})",
                line0,
            )
        if knob in knobs:
            raise ctx.error(
                f"input {number} sets knob {knob} already set by the input on line {knobs[knob]}", line0
            )
        knobs[knob] = line0 + 1
        out.append(
            Input(
                number,
                cell(row, cols["question"]),
                options,
                default,
                knob,
                cell(row, cols.get("gates")),
                line0,
            )
        )
    return tuple(out)


def parse_live_state(
    tokens: Sequence[Token], start: int, end: int, span: Span, yaml_block: Block | None, ctx: Source
) -> LiveState:
    """The `## Live State` section in tokens[start:end]: its YAML, key/value table and check table."""
    data: dict[str, Any] = {}
    if yaml_block is not None:
        loaded = load_yaml(yaml_block.text, ctx, yaml_block.body_start, "Live State")
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, dict):
            raise ctx.error(
                "the Live State YAML must be a mapping (status: …, last_action: …)", yaml_block.span.start
            )
        data = loaded
    kv_table: Table | None = None
    kv_rows: tuple[KVRow, ...] = ()
    check_table: Table | None = None
    check_rows: tuple[CheckRow, ...] = ()
    i = start
    while i < end:
        if tokens[i].type != "table_open":
            i += 1
            continue
        table, row_lines, i = read_table(tokens, i)
        first = first_word(table.header[0]) if table.header else ""
        if first == "key" and kv_table is None:
            kv_table = table
            kv_rows = tuple(
                KVRow(cell(row, 0).strip("` "), cell(row, 1), ln)
                for row, ln in zip(table.rows, row_lines, strict=True)
            )
        elif first == "check" and check_table is None:
            check_table = table
            cols = columns(table, ("check", "expected", "observed", "result"), ctx, "Live State check")
            check_rows = tuple(
                CheckRow(
                    cell(row, cols["check"]),
                    cell(row, cols["expected"]),
                    cell(row, cols["observed"]),
                    cell(row, cols["result"]),
                    ln,
                )
                for row, ln in zip(table.rows, row_lines, strict=True)
            )
    return LiveState(
        span=span,
        yaml_text=yaml_block.text if yaml_block else "",
        yaml_span=yaml_block.span if yaml_block else None,
        data=data,
        kv_table=kv_table,
        kv_rows=kv_rows,
        check_table=check_table,
        check_rows=check_rows,
    )

"""Live State write-back: text in, text out.

`apply_update` splices new values into the `## Live State` section of a plan and leaves every other
byte alone: the YAML block through `director.ledger.yamlsplice`, table rows cell by cell here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from director.errors import LedgerWriteError, PlanError
from director.ledger.tables import (
    Lines,
    UnknownLedgerKey,
    column_widths,
    find_column,
    new_row,
    norm,
    row_index,
    set_cells,
    split_cells,
)
from director.ledger.yamlsplice import update_yaml
from director.plan.model import Plan
from director.plan.source import span_offsets

__all__ = [
    "LedgerUpdate",
    "LedgerWriteError",
    "UnknownLedgerKey",
    "apply_update",
    "live_state_text",
    "split_cells",
]


@dataclass(frozen=True)
class LedgerUpdate:
    """What Director writes into Live State: YAML keys, kv value cells, check observed/result cells."""

    yaml: Mapping[str, Any] = field(default_factory=dict)
    kv: Mapping[str, str] = field(default_factory=dict)
    checks: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    kv_add: Sequence[tuple[str, str]] = ()
    # top-level YAML keys whose end-of-line comment goes when their value changes (it described the old one)
    drop_comments: frozenset[str] = frozenset()

    @property
    def is_empty(self) -> bool:
        """True when the update changes nothing."""
        return not (self.yaml or self.kv or self.checks or self.kv_add)


def live_state_text(plan: Plan) -> str:
    """The exact text of the plan's `## Live State` section ("" when it has none)."""
    if plan.live_state is None:
        return ""
    span = plan.live_state.span
    head, tail = span_offsets(plan.source, span.start, span.end)
    return plan.source[head:tail]


# ---------------------------------------------------------------------------------------------------
# Table cells


def apply_update(plan: Plan, update: LedgerUpdate) -> str:
    """The plan's new text with `update` written into Live State; every other byte is unchanged."""
    if update.is_empty:
        return plan.source
    where = plan.path or "<plan>"
    state = plan.live_state
    if state is None:
        raise PlanError("the plan has no `## Live State` section to record state in", path=plan.path)
    # Only the Live State section is split into lines (a huge plan is not copied line by line for each
    # write); the lines before it stand in as placeholders, so every line index stays the plan's own.
    start = state.span.start
    head, tail = span_offsets(plan.source, start, state.span.end)
    region = Lines.of(plan.source[head:tail])
    lines = Lines([""] * start + region.contents, [""] * start + region.endings)
    original = Lines(list(lines.contents), list(lines.endings))
    newline = plan.newline or "\n"
    inserts: list[tuple[int, list[str]]] = []  # (line index, new lines) performed after in-place edits

    # Table cells first: they edit lines in place, so the YAML splice below can change line counts.
    if update.kv or update.kv_add:
        table = state.kv_table
        if table is None:
            keys = ", ".join(sorted(update.kv))
            raise UnknownLedgerKey(f"{where}: Live State has no key/value table for {keys}")
        widths = column_widths(lines, table)
        rows = {r.key: r.line for r in state.kv_rows}
        value_col = find_column(table.header, "value", 1)
        for key, value in update.kv.items():
            set_cells(lines, row_index(rows, key, "key/value row", where), {value_col: value}, widths)
        added: list[str] = []
        for key, value in update.kv_add:
            # Upsert: a save repeated in the same run must not append the same binding twice.
            if key in rows or norm(key) in {norm(k) for k in rows}:
                set_cells(lines, row_index(rows, key, "key/value row", where), {value_col: value}, widths)
            else:
                added.append(new_row(lines, table, widths, {0: key, value_col: value}))
                rows[key] = -1
        if added:
            last = max((r.line for r in state.kv_rows), default=table.span.end - 1)
            inserts.append((last + 1, added))
    if update.checks:
        table = state.check_table
        if table is None:
            rows_named = ", ".join(sorted(update.checks))
            raise UnknownLedgerKey(f"{where}: Live State has no check table for {rows_named}")
        widths = column_widths(lines, table)
        rows = {r.name: r.line for r in state.check_rows}
        observed_col = find_column(table.header, "observed", 2)
        result_col = find_column(table.header, "result", 3)
        for name, (observed, result) in update.checks.items():
            index = row_index(rows, name, "check row", where)
            set_cells(lines, index, {observed_col: observed, result_col: result}, widths)

    if update.yaml:
        if state.yaml_span is None:
            raise PlanError(
                "Live State has no ```yaml block to record status in",
                path=plan.path,
                line=state.span.first_line,
            )
        span = state.yaml_span
        body_start = span.start + 1
        body_end = span.end - 1
        closing = lines.contents[body_end].strip() if body_end < len(lines.contents) else ""
        if body_end <= span.start or not (closing.startswith("```") or closing.startswith("~~~")):
            body_end = span.end  # an unclosed fence runs to the end of the section
        body_lines = lines.contents[body_start:body_end]
        body_endings = lines.endings[body_start:body_end]
        body = "".join(line + "\n" for line in body_lines)
        new_body = update_yaml(
            body, update.yaml, path=plan.path, line=span.first_line, drop_comments=update.drop_comments
        )
        if new_body and not new_body.endswith("\n"):
            raise LedgerWriteError("Live State YAML write-back lost the final line end")
        new_lines = new_body[:-1].split("\n") if new_body else []
        if len(new_lines) == len(body_lines):
            new_endings = list(body_endings)  # edits within lines: every line keeps its own ending
        elif len(set(body_endings)) == 1 and body_endings[0]:
            new_endings = [body_endings[0]] * len(new_lines)
        else:
            new_endings = [newline] * len(new_lines)
        lines.contents[body_start:body_end] = new_lines
        lines.endings[body_start:body_end] = new_endings
        shift = len(new_lines) - len(body_lines)
        inserts = [(i + shift if i >= body_end else i, rows_) for i, rows_ in inserts]

    for index, new_rows in sorted(inserts, reverse=True):
        if index > 0 and lines.endings[index - 1] == "":
            lines.endings[index - 1] = newline  # appending after a last line that had no line break
        lines.contents[index:index] = new_rows
        lines.endings[index:index] = [newline] * len(new_rows)
        if index + len(new_rows) == len(lines.contents) and original.endings and original.endings[-1] == "":
            lines.endings[-1] = ""

    _check_outside_unchanged(plan, original, lines)
    section = Lines(lines.contents[start:], lines.endings[start:]).text()
    # One new copy of the text, not three (a 5 MB plan with an emoji is 20 MB as a str): the old section
    # replaced where it stands, when that is its first occurrence (it always is, bar a verbatim copy).
    old_section = plan.source[head:tail]
    if plan.source.find(old_section) == head:
        return plan.source.replace(old_section, section, 1)
    return "".join((plan.source[:head], section, plan.source[tail:]))


def _check_outside_unchanged(plan: Plan, before: Lines, after: Lines) -> None:
    """Assert the lines before and after the Live State section are byte-identical."""
    assert plan.live_state is not None
    span = plan.live_state.span
    tail = len(before.contents) - span.end
    head_same = before.contents[: span.start] == after.contents[: span.start] and (
        before.endings[: span.start] == after.endings[: span.start]
    )
    tail_same = tail == 0 or (
        before.contents[-tail:] == after.contents[-tail:] and before.endings[-tail:] == after.endings[-tail:]
    )
    if not (head_same and tail_same):
        raise LedgerWriteError("write-back changed text outside the Live State section")

"""Live State write-back: text in, text out.

`apply_update` splices new values into the `## Live State` section of a plan and leaves every other
byte alone: the YAML block through `director.ledger.yamlsplice`, table rows cell by cell here.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from director.errors import PlanError
from director.ledger.yamlsplice import LedgerWriteError, update_yaml
from director.plan.model import Plan, Table

__all__ = [
    "LedgerUpdate",
    "LedgerWriteError",
    "UnknownLedgerKey",
    "apply_update",
    "live_state_text",
    "split_cells",
]


class UnknownLedgerKey(KeyError):
    """An update names a kv key or check row the plan's Live State does not have (a programming error)."""

    def __str__(self) -> str:
        # KeyError's str() is the repr of its argument; a sentence reads better in a traceback.
        return str(self.args[0]) if self.args else "unknown ledger key"


@dataclass(frozen=True)
class LedgerUpdate:
    """What Director writes into Live State: YAML keys, kv value cells, check observed/result cells."""

    yaml: Mapping[str, Any] = field(default_factory=dict)
    kv: Mapping[str, str] = field(default_factory=dict)
    checks: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    kv_add: Sequence[tuple[str, str]] = ()

    @property
    def is_empty(self) -> bool:
        """True when the update changes nothing."""
        return not (self.yaml or self.kv or self.checks or self.kv_add)


# ---------------------------------------------------------------------------------------------------
# Lines with their endings


@dataclass
class _Lines:
    """A text as line contents plus each line's own ending, so untouched lines stay byte-identical."""

    contents: list[str]
    endings: list[str]

    @classmethod
    def of(cls, text: str) -> _Lines:
        contents: list[str] = []
        endings: list[str] = []
        for raw in text.splitlines(keepends=True):
            # Only \n and \r\n end a Markdown line here; str.splitlines also splits on \x0b, \x1c,
            # U+2028 … which markdown-it does not, so re-join those pieces below.
            if raw.endswith("\r\n"):
                body, end = raw[:-2], "\r\n"
            elif raw.endswith("\n"):
                body, end = raw[:-1], "\n"
            else:
                body, end = raw, ""
            if contents and endings[-1] == "":
                contents[-1] += body
                endings[-1] = end
            else:
                contents.append(body)
                endings.append(end)
        return cls(contents, endings)

    def text(self) -> str:
        return "".join(c + e for c, e in zip(self.contents, self.endings, strict=True))


def live_state_text(plan: Plan) -> str:
    """The exact text of the plan's `## Live State` section ("" when it has none)."""
    if plan.live_state is None:
        return ""
    lines = _Lines.of(plan.source)
    span = plan.live_state.span
    return "".join(
        c + e
        for c, e in zip(
            lines.contents[span.start : span.end], lines.endings[span.start : span.end], strict=True
        )
    )


# ---------------------------------------------------------------------------------------------------
# Table cells


def split_cells(line: str) -> list[tuple[int, int]]:
    """[start, end) of each cell of a pipe-table row, padding included, between unescaped `|`."""
    pipes = [i for i, ch in enumerate(line) if ch == "|" and (i == 0 or line[i - 1] != "\\")]
    bounds: list[tuple[int, int]] = []
    stripped_start = len(line) - len(line.lstrip())
    stripped_end = len(line.rstrip())
    leading = bool(pipes) and pipes[0] == stripped_start
    trailing = bool(pipes) and pipes[-1] == stripped_end - 1 and (len(pipes) > 1 or not leading)
    edges = list(pipes)
    if not leading:
        edges.insert(0, stripped_start - 1)
    if not trailing:
        edges.append(stripped_end)
    for a, b in itertools.pairwise(edges):
        bounds.append((a + 1, b))
    return bounds


def _escape_cell(value: str) -> str:
    """The cell's Markdown: `|` escaped; edge whitespace dropped (Markdown would drop it anyway)."""
    if "\n" in value or "\r" in value:
        raise ValueError(f"a table cell cannot hold a line break: {value!r}")
    return value.strip().replace("|", "\\|")


def _cell_text(value: str, width: int) -> str:
    """` value ` padded to the column width when it fits (the rest of the table is not re-flowed)."""
    escaped = _escape_cell(value)
    return " " + escaped + " " * max(1, width - 1 - len(escaped))


def _column_widths(lines: _Lines, table: Table) -> list[int]:
    """Each column's width as the delimiter row (`|----|----|`) draws it, else as the header does."""
    for index in (table.span.start + 1, table.span.start):
        if index < len(lines.contents):
            row = lines.contents[index]
            cells = split_cells(row)
            if len(cells) >= len(table.header):
                return [b - a for a, b in cells]
    return [0] * len(table.header)


def _set_cells(lines: _Lines, index: int, values: Mapping[int, str], widths: Sequence[int]) -> None:
    row = lines.contents[index]
    cells = split_cells(row)
    for column in sorted(values, reverse=True):  # last to first: earlier bounds stay valid
        if column >= len(cells):
            raise LedgerWriteError(f"table row on line {index + 1} has no column {column + 1}")
        a, b = cells[column]
        width = widths[column] if column < len(widths) else 0
        row = row[:a] + _cell_text(values[column], width) + row[b:]
    lines.contents[index] = row
    # Check: the row splits into the same number of cells and the target cells read back as written.
    after = split_cells(row)
    if len(after) != len(cells) or any(
        row[after[c][0] : after[c][1]].strip() != _escape_cell(v) for c, v in values.items()
    ):
        raise LedgerWriteError(f"table write-back on line {index + 1} did not read back: {row!r}")


def _find_column(header: Sequence[str], name: str, fallback: int) -> int:
    for i, cell in enumerate(header):
        if cell.strip().strip("`*_ ").lower().startswith(name):
            return i
    return fallback


def _norm(name: str) -> str:
    return " ".join(name.strip().strip("`").split()).casefold()


def _row_index(rows: Mapping[str, int], name: str, what: str, where: str) -> int:
    if name in rows:
        return rows[name]
    loose = {_norm(k): v for k, v in rows.items()}
    if _norm(name) in loose:
        return loose[_norm(name)]
    known = ", ".join(repr(k) for k in rows) or "none"
    raise UnknownLedgerKey(f"{where}: Live State has no {what} {name!r} (known: {known})")


# ---------------------------------------------------------------------------------------------------
# The whole update


def apply_update(plan: Plan, update: LedgerUpdate) -> str:
    """The plan's new text with `update` written into Live State; every other byte is unchanged."""
    if update.is_empty:
        return plan.source
    where = plan.path or "<plan>"
    state = plan.live_state
    if state is None:
        raise PlanError("the plan has no `## Live State` section to record state in", path=plan.path)
    lines = _Lines.of(plan.source)
    original = _Lines(list(lines.contents), list(lines.endings))
    newline = plan.newline or "\n"
    inserts: list[tuple[int, list[str]]] = []  # (line index, new lines) performed after in-place edits

    # Table cells first: they edit lines in place, so the YAML splice below can change line counts.
    if update.kv or update.kv_add:
        table = state.kv_table
        if table is None:
            raise UnknownLedgerKey(f"{where}: Live State has no key/value table for {sorted(update.kv)!r}")
        widths = _column_widths(lines, table)
        rows = {r.key: r.line for r in state.kv_rows}
        value_col = _find_column(table.header, "value", 1)
        for key, value in update.kv.items():
            _set_cells(lines, _row_index(rows, key, "key/value row", where), {value_col: value}, widths)
        added: list[str] = []
        for key, value in update.kv_add:
            # Upsert: a save repeated in the same run must not append the same binding twice.
            if key in rows or _norm(key) in {_norm(k) for k in rows}:
                _set_cells(lines, _row_index(rows, key, "key/value row", where), {value_col: value}, widths)
            else:
                added.append(_new_row(lines, table, widths, {0: key, value_col: value}))
                rows[key] = -1
        if added:
            last = max((r.line for r in state.kv_rows), default=table.span.end - 1)
            inserts.append((last + 1, added))
    if update.checks:
        table = state.check_table
        if table is None:
            raise UnknownLedgerKey(f"{where}: Live State has no check table for {sorted(update.checks)!r}")
        widths = _column_widths(lines, table)
        rows = {r.name: r.line for r in state.check_rows}
        observed_col = _find_column(table.header, "observed", 2)
        result_col = _find_column(table.header, "result", 3)
        for name, (observed, result) in update.checks.items():
            index = _row_index(rows, name, "check row", where)
            _set_cells(lines, index, {observed_col: observed, result_col: result}, widths)

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
        new_body = update_yaml(body, update.yaml, path=plan.path, line=span.first_line)
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

    result = lines.text()
    _check_outside_unchanged(plan, original, lines)
    return result


def _new_row(lines: _Lines, table: Table, widths: Sequence[int], values: Mapping[int, str]) -> str:
    """A new row in the table's own style: same columns, same outer pipes, cells padded like the header."""
    header = lines.contents[table.span.start]
    indent = header[: len(header) - len(header.lstrip())]
    ncols = max(len(table.header), max(values) + 1)
    cells = [_cell_text(values.get(c, ""), widths[c] if c < len(widths) else 0) for c in range(ncols)]
    body = "|".join(cells)
    stripped = header.strip()
    if stripped.startswith("|"):
        body = "|" + body
    if stripped.endswith("|"):
        body = body + "|"
    return indent + body


def _check_outside_unchanged(plan: Plan, before: _Lines, after: _Lines) -> None:
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

"""Live State write-back: text in, text out.

`apply_update` splices new values into the `## Live State` section of a plan and leaves every other
byte alone. The YAML block is edited by splicing, not by re-dumping: ruamel's round-trip dump keeps
comments and key order but not the padding after `key:`, and that alignment is part of the ledger a
human reads. ruamel is used to parse (node marks locate each value exactly), to render new values as
YAML scalars, and to re-parse the result as a check. Table rows are edited cell by cell.
"""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from director.errors import PlanError
from director.ledger.tables import (
    LedgerWriteError,
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
from director.plan.model import Plan
from director.plan.source import plain

__all__ = [
    "LedgerUpdate",
    "LedgerWriteError",
    "UnknownLedgerKey",
    "apply_update",
    "live_state_text",
    "render_key",
    "render_scalar",
    "split_cells",
]


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


def _exact(value: Any) -> Any:
    """Round-trip data as compared: keys keep their type, dates are tagged (`plan.source.plain`)."""
    return plain(value, exact=True)


def live_state_text(plan: Plan) -> str:
    """The exact text of the plan's `## Live State` section ("" when it has none)."""
    if plan.live_state is None:
        return ""
    lines = Lines.of(plan.source)
    span = plan.live_state.span
    return "".join(
        c + e
        for c, e in zip(
            lines.contents[span.start : span.end], lines.endings[span.start : span.end], strict=True
        )
    )


# ---------------------------------------------------------------------------------------------------
# Rendering values


def _yaml(flow: bool) -> YAML:
    y = YAML(typ="rt")
    y.width = 1_000_000_000  # never fold: a ledger value stays on its line
    y.allow_unicode = True
    y.default_flow_style = flow
    return y


def _dump_scalar(value: Any, flow: bool) -> str:
    out = io.StringIO()
    if flow:
        _yaml(True).dump([value], out)
        text = out.getvalue().rstrip("\n")
        return text[1:-1] if text.startswith("[") and text.endswith("]") else "\n"
    _yaml(False).dump({"k": value}, out)
    text = out.getvalue().rstrip("\n")
    return text[3:] if text.startswith("k: ") else "\n"


def _reads_back(text: str, value: Any, flow: bool) -> bool:
    try:
        loaded = _yaml(False).load(f"k: [{text}]\n" if flow else f"k: {text}\n")
    except YAMLError:
        return False
    got = loaded["k"][0] if flow else loaded["k"]
    return "\n" not in text and bool(_exact(got) == _exact(value))


def render_scalar(value: Any, *, flow: bool = False) -> str:
    """A scalar as YAML text on one line, quoted only when needed (`flow`: valid inside `{…}`/`[…]`)."""
    if value is None:
        return "null"  # ruamel would leave a block value empty; `null` says it on purpose
    text = _dump_scalar(value, flow)
    if not _reads_back(text, value, flow) and isinstance(value, str):
        # ruamel writes some characters raw (NEL, U+2028) that then read back as line folds; a
        # double-quoted scalar escapes them.
        text = _dump_scalar(DoubleQuotedScalarString(value), flow)
    if not _reads_back(text, value, flow):
        raise LedgerWriteError(f"cannot render {value!r} as a one-line YAML scalar (got {text!r})")
    return text


def _key_reads_back(text: str, key: Any, flow: bool) -> bool:
    try:
        loaded = _yaml(False).load(f"{{{text}: 0}}\n" if flow else f"{text}: 0\n")
    except YAMLError:
        return False
    return "\n" not in text and isinstance(loaded, Mapping) and [_exact(k) for k in loaded] == [_exact(key)]


def render_key(key: Any, *, flow: bool = False) -> str:
    """A mapping key as YAML text (`flow`: inside `{…}`), quoted only when needed."""
    for candidate in (key, DoubleQuotedScalarString(key) if isinstance(key, str) else key):
        out = io.StringIO()
        _yaml(flow).dump({candidate: 0}, out)
        text = out.getvalue().rstrip("\n")
        if flow:
            text = text[1:-1] if text.startswith("{") and text.endswith("}") else "\n"
        text = text[: -len(": 0")] if text.endswith(": 0") else "\n"
        if _key_reads_back(text, key, flow):
            return text
    raise LedgerWriteError(f"cannot render {key!r} as a one-line YAML key")


def _render_inline(value: Any, *, flow: bool, spaced: bool = True, order: Sequence[Any] = ()) -> str:
    """A value on one line: mappings and sequences in flow style, scalars as `render_scalar`."""
    if isinstance(value, Mapping):
        keys = [k for k in order if k in value] + [k for k in value if k not in order]
        items = ", ".join(
            f"{render_key(k, flow=True)}: {_render_inline(value[k], flow=True, spaced=spaced)}" for k in keys
        )
        if not items:
            return "{}"
        return f"{{ {items} }}" if spaced else f"{{{items}}}"
    if isinstance(value, (list, tuple)):
        items = ", ".join(_render_inline(v, flow=True, spaced=spaced) for v in value)
        return f"[{items}]"
    return render_scalar(value, flow=flow)


# ---------------------------------------------------------------------------------------------------
# YAML splicing


@dataclass(frozen=True)
class _Edit:
    """Replace text[start:end] with `text` (indices into the YAML body joined with "\\n")."""

    start: int
    end: int
    text: str


def _line_end(text: str, index: int) -> int:
    """Index of the "\\n" ending the line that contains `index` (or len(text))."""
    nl = text.find("\n", index)
    return len(text) if nl < 0 else nl


def _line_start(text: str, index: int) -> int:
    return text.rfind("\n", 0, index) + 1


def _is_empty_null(node: Node) -> bool:
    """`key:` with nothing after it (ruamel gives an empty plain scalar whose marks point past it)."""
    return isinstance(node, ScalarNode) and node.value == "" and node.style is None


def _colon_after(text: str, key: Node) -> int:
    """Index just after the `:` that follows a block mapping key."""
    colon = text.find(":", key.end_mark.index)
    if colon < 0:
        raise LedgerWriteError(f"no ':' after YAML key {key.value!r}")
    return colon + 1


def _value_end(text: str, key: Node, value: Node) -> int:
    """Index just after the last character that belongs to `value` (comments and blank lines excluded)."""
    if _is_empty_null(value):
        return _colon_after(text, key)
    if isinstance(value, ScalarNode):
        if value.style in ("|", ">"):
            # A block scalar's end mark is the start of the next token: drop the trailing blank lines.
            region = text[value.start_mark.index : value.end_mark.index]
            return int(value.start_mark.index) + len(region.rstrip())
        return int(value.end_mark.index)
    if getattr(value, "flow_style", False):
        return int(value.end_mark.index)
    if isinstance(value, MappingNode) and value.value:
        last_key, last_value = value.value[-1]
        return _value_end(text, last_key, last_value)
    if isinstance(value, SequenceNode) and value.value:
        last = value.value[-1]
        return _value_end(text, last, last) if not _is_empty_null(last) else int(last.start_mark.index)
    return int(value.end_mark.index)


def _inline_edit(text: str, start: int, end: int, new: str) -> _Edit:
    """Replace [start, end) on one line, keeping a following comment's column when the new value fits."""
    eol = _line_end(text, end)
    rest = text[end:eol]
    stripped = rest.lstrip(" \t")
    if not stripped.startswith("#"):
        return _Edit(start, end, new)
    comment = end + (len(rest) - len(stripped))
    room = comment - start - len(new)
    # Keep the comment where it was; a longer value pushes it right by the minimum (one space).
    return _Edit(start, comment, new + " " * max(1, room))


def _aligned_column(text: str, mapping: MappingNode) -> int | None:
    """The value column most keys of this block mapping share (`status:        live` → 15)."""
    columns = [
        v.start_mark.column
        for k, v in mapping.value
        if not _is_empty_null(v) and v.start_mark.line == k.start_mark.line
    ]
    if not columns:
        return None
    return int(Counter(columns).most_common(1)[0][0])


class _YamlSplicer:
    """Collects non-overlapping edits to a YAML body text; `apply` performs them last to first."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.edits: list[_Edit] = []

    def set_key(
        self, mapping: MappingNode, key: str, value: Any, entries: Sequence[tuple[Node, Node]] | None = None
    ) -> None:
        """Set `key` of a block mapping to `value`, adding it after the last of `entries` if absent."""
        entries = mapping.value if entries is None else entries
        for k, v in entries:
            if isinstance(k, ScalarNode) and k.value == key:
                self._replace(mapping, k, v, value)
                return
        self._append(mapping, entries, key, value)

    def _replace(self, mapping: MappingNode, key: Node, old: Node, value: Any) -> None:
        text = self.text
        if isinstance(old, MappingNode) and not old.flow_style and isinstance(value, Mapping):
            # A block mapping stays a block mapping: edit its keys one by one (comments survive).
            wanted = {str(k) for k in value}
            kept = [(k, v) for k, v in old.value if not isinstance(k, ScalarNode) or k.value in wanted]
            for k, v in old.value:
                if isinstance(k, ScalarNode) and k.value not in wanted:
                    self._delete_entry(k, v)
            for k2, v2 in value.items():
                self.set_key(old, str(k2), v2, kept)
            return
        if _is_empty_null(old):
            after = _colon_after(text, key)
            column = after - _line_start(text, after)
            align = _aligned_column(text, mapping)
            pad = align - column if align is not None and align > column else 1
            self.edits.append(_inline_edit(text, after, after, " " * pad + self._render(value, old)))
            return
        start = int(old.start_mark.index)
        end = _value_end(text, key, old)
        self.edits.append(_inline_edit(text, start, end, self._render(value, old)))

    def _render(self, value: Any, old: Node | None) -> str:
        spaced = True
        order: list[Any] = []
        if isinstance(old, MappingNode):
            order = [k.value for k, _ in old.value if isinstance(k, ScalarNode)]
            if old.flow_style:
                # Keep the author's `{ a: b }` versus `{a: b}` spacing.
                spaced = self.text[old.start_mark.index + 1 : old.start_mark.index + 2] in (" ", "\n")
        return _render_inline(value, flow=False, spaced=spaced, order=order)

    def _delete_entry(self, key: Node, value: Node) -> None:
        start = _line_start(self.text, key.start_mark.index)
        end = _line_end(self.text, _value_end(self.text, key, value)) + 1
        self.edits.append(_Edit(start, min(end, len(self.text)), ""))

    def _append(
        self, mapping: MappingNode, entries: Sequence[tuple[Node, Node]], key: str, value: Any
    ) -> None:
        text = self.text
        if not mapping.value:
            raise LedgerWriteError("cannot add a key to an empty YAML mapping")
        indent = " " * mapping.value[0][0].start_mark.column
        head = f"{indent}{render_key(key)}:"
        align = _aligned_column(text, mapping)
        pad = align - len(head) if align is not None and align > len(head) else 1
        entry = head + " " * pad + self._render(value, None)
        if entries:
            last_key, last_value = entries[-1]
            at = _line_end(text, _value_end(text, last_key, last_value))
            # Before the "\n" that ends the last entry's line: the new line inherits that line end.
            self.edits.append(_Edit(at, at, "\n" + entry))
            return
        # Every old key is being deleted: add after the last deleted line, where nothing overlaps.
        last_key, last_value = mapping.value[-1]
        at = min(_line_end(text, _value_end(text, last_key, last_value)) + 1, len(text))
        self.edits.append(_Edit(at, at, entry + "\n"))  # the body ends with "\n", so `at` starts a line

    def apply(self) -> str:
        text = self.text
        last_start = len(text) + 1
        # Same-position inserts (two appended keys) must keep their order: sort by start, stable, reversed.
        ordered = sorted(enumerate(self.edits), key=lambda p: (p[1].start, p[0]), reverse=True)
        for _, edit in ordered:
            if edit.end > last_start:
                raise LedgerWriteError("overlapping Live State YAML edits")
            text = text[: edit.start] + edit.text + text[edit.end :]
            last_start = edit.start
        return text


def _load(text: str, where: str) -> Any:
    try:
        return _yaml(False).load(text)
    except YAMLError as exc:
        raise LedgerWriteError(f"{where}: YAML does not parse: {exc}") from exc


def _update_yaml(body: str, values: Mapping[str, Any], *, path: str | None, line: int) -> str:
    """The YAML body with `values` set at top level; re-parsed to check it says exactly that.

    `body` is "" or ends with "\n" (every line, the last included, has its end), and so is the result:
    then deleting or appending a last line needs no special case.
    """
    try:
        root = _yaml(False).compose(body)
    except YAMLError as exc:
        raise PlanError(f"Live State YAML does not parse: {exc}", path=path, line=line) from exc
    before = _load(body, "Live State YAML")
    if root is None:
        # An empty block: nothing to align with, write plain `key: value` lines.
        new = body + "".join(f"{render_key(k)}: {_render_inline(v, flow=False)}\n" for k, v in values.items())
    else:
        if not isinstance(root, MappingNode) or root.flow_style:
            raise PlanError(
                "Live State YAML must be a block mapping (`key: value` lines)", path=path, line=line
            )
        splicer = _YamlSplicer(body)
        for k, v in values.items():
            splicer.set_key(root, k, v)
        new = splicer.apply()
    after = _load(new, "Live State YAML after write-back")
    intended = dict(_exact(before) or {})
    intended.update({k: _exact(v) for k, v in values.items()})
    if _exact(after) != intended:
        raise LedgerWriteError(
            f"Live State YAML write-back did not round-trip: intended {intended!r}, re-read {_exact(after)!r}"
        )
    return new


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
    lines = Lines.of(plan.source)
    original = Lines(list(lines.contents), list(lines.endings))
    newline = plan.newline or "\n"
    inserts: list[tuple[int, list[str]]] = []  # (line index, new lines) performed after in-place edits

    # Table cells first: they edit lines in place, so the YAML splice below can change line counts.
    if update.kv or update.kv_add:
        table = state.kv_table
        if table is None:
            raise UnknownLedgerKey(f"{where}: Live State has no key/value table for {sorted(update.kv)!r}")
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
            raise UnknownLedgerKey(f"{where}: Live State has no check table for {sorted(update.checks)!r}")
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
        new_body = _update_yaml(body, update.yaml, path=plan.path, line=span.first_line)
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

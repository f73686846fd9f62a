"""Live State YAML write-back: new values spliced into the block's text, never a re-dump.

The YAML block is edited by splicing: ruamel's round-trip dump keeps comments and key order but not
the padding after `key:`, and that alignment is part of the ledger a human reads. ruamel is used to
parse (node marks locate each value exactly), to render new values as one-line YAML scalars, and to
re-parse the result as a check (`update_yaml`).
"""

from __future__ import annotations

import io
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from director.errors import LedgerWriteError, PlanError
from director.plan.source import quiet_ruamel

__all__ = ["LedgerWriteError", "render_inline", "render_key", "render_scalar", "update_yaml"]


# ---------------------------------------------------------------------------------------------------
# Rendering values


_PER_THREAD = threading.local()


def _yaml(flow: bool) -> YAML:
    """One round-trip instance per style and thread, reused (each load and dump resets it): building one
    globs ruamel's plug-in directories, about a millisecond, and a ledger write renders several values; an
    instance renders one value at a time, and a family run writes ledgers on several threads."""
    quiet_ruamel()  # each time: a caller may have reset the warning filters (pytest does, per test)
    cache: dict[bool, YAML] = _PER_THREAD.__dict__.setdefault("yaml", {})
    if flow not in cache:
        cache[flow] = _new_yaml(flow)
    return cache[flow]


@contextmanager
def _using(flow: bool) -> Iterator[YAML]:
    """This thread's instance for one load or dump; one that raised (a Ctrl-C lands mid-dump, a value it
    cannot write) is never used again: its emitter or parser may be left mid-document."""
    y = _yaml(flow)
    try:
        yield y
    except BaseException:
        _PER_THREAD.__dict__.get("yaml", {}).pop(flow, None)
        raise


def _new_yaml(flow: bool) -> YAML:
    y = YAML(typ="rt")
    y.width = 1_000_000_000  # never fold: a ledger value stays on its line
    y.allow_unicode = True
    y.default_flow_style = flow
    return y


def _dump_scalar(value: Any, flow: bool) -> str:
    out = io.StringIO()
    if flow:
        with _using(True) as y:
            y.dump([value], out)
        text = out.getvalue().rstrip("\n")
        return text[1:-1] if text.startswith("[") and text.endswith("]") else "\n"
    with _using(False) as y:
        y.dump({"k": value}, out)
    text = out.getvalue().rstrip("\n")
    return text[3:] if text.startswith("k: ") else "\n"


def _reads_back(text: str, value: Any, flow: bool) -> bool:
    try:
        with _using(False) as y:
            loaded = y.load(f"k: [{text}]\n" if flow else f"k: {text}\n")
    except YAMLError:
        return False
    got = loaded["k"][0] if flow else loaded["k"]
    return "\n" not in text and bool(_comparable(got) == _comparable(value))


# What a plain scalar or key renders as, by its type, its repr (-0.0 is not 0.0) and the style: a run writes
# its ledger after every section, and most of what it writes (inputs, names, statuses) it wrote the time
# before; each rendering is a ruamel dump and a load back, about a millisecond. Only built-in types: ruamel's
# own (a ScalarFloat's digits, a HexInt) render by attributes their repr does not show. Cleared when full.
_RENDERED: dict[tuple[type, str, bool, bool], str] = {}
_RENDERED_MAX = 4096
_PLAIN = (str, int, float, bool)


def _remembered(render: Callable[[Any, bool], str], value: Any, flow: bool, key: bool) -> str:
    if type(value) not in _PLAIN:
        return render(value, flow)
    memo = (type(value), repr(value), flow, key)
    text = _RENDERED.get(memo)
    if text is None:
        text = render(value, flow)
        if len(_RENDERED) >= _RENDERED_MAX:
            _RENDERED.clear()
        _RENDERED[memo] = text
    return text


def render_scalar(value: Any, *, flow: bool = False) -> str:
    """A scalar as YAML text on one line, quoted only when needed (`flow`: valid inside `{…}`/`[…]`)."""
    if value is None:
        return "null"  # ruamel would leave a block value empty; `null` says it on purpose
    return _remembered(_render_scalar, value, flow, False)


def _render_scalar(value: Any, flow: bool) -> str:
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
        with _using(False) as y:
            loaded = y.load(f"{{{text}: 0}}\n" if flow else f"{text}: 0\n")
    except YAMLError:
        return False
    if "\n" in text or not isinstance(loaded, Mapping):
        return False
    return [_comparable(k) for k in loaded] == [_comparable(key)]


def render_key(key: Any, *, flow: bool = False) -> str:
    """A mapping key as YAML text (`flow`: inside `{…}`), quoted only when needed."""
    return _remembered(_render_key, key, flow, True)


def _render_key(key: Any, flow: bool) -> str:
    for candidate in (key, DoubleQuotedScalarString(key) if isinstance(key, str) else key):
        out = io.StringIO()
        with _using(flow) as y:
            y.dump({candidate: 0}, out)
        text = out.getvalue().rstrip("\n")
        if flow:
            text = text[1:-1] if text.startswith("{") and text.endswith("}") else "\n"
        text = text[: -len(": 0")] if text.endswith(": 0") else "\n"
        if _key_reads_back(text, key, flow):
            return text
    raise LedgerWriteError(f"cannot render {key!r} as a one-line YAML key")


def render_inline(value: Any) -> str:
    """A value as one line of YAML, as the ledger writes it: `{ trigger: http, env: dev }`, `[a, b]`, `x`."""
    return _render_inline(value, flow=False)


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


def _comparable(value: Any) -> Any:
    """ruamel round-trip data as plain dicts/lists, for comparing what was meant with what re-parses.

    Not `director.plan.parse`'s JSON-able form: a date stays distinct from the string that spells it
    (a value that would re-read as a date must be quoted).
    """
    if isinstance(value, Mapping):
        return {_comparable(k): _comparable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_comparable(v) for v in value]
    if isinstance(value, datetime):
        return ("datetime", value.replace(tzinfo=None).isoformat())
    if isinstance(value, date):
        return ("date", value.isoformat())
    if isinstance(value, str):
        return str(value)  # drop ruamel's ScalarString subclasses
    return value


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


def _inline_edit(text: str, start: int, end: int, new: str, drop_comment: bool = False) -> _Edit:
    """Replace [start, end) on one line, keeping a following comment's column when the new value fits
    (`drop_comment`: the comment described the old value and goes with it)."""
    eol = _line_end(text, end)
    rest = text[end:eol]
    stripped = rest.lstrip(" \t")
    if not stripped.startswith("#"):
        return _Edit(start, end, new)
    if drop_comment:
        return _Edit(start, eol, new)
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
        self,
        mapping: MappingNode,
        key: str,
        value: Any,
        entries: Sequence[tuple[Node, Node]] | None = None,
        drop_comment: bool = False,
    ) -> None:
        """Set `key` of a block mapping to `value`, adding it after the last of `entries` if absent."""
        entries = mapping.value if entries is None else entries
        for k, v in entries:
            if isinstance(k, ScalarNode) and k.value == key:
                self._replace(mapping, k, v, value, drop_comment)
                return
        self._append(mapping, entries, key, value)

    def _replace(
        self, mapping: MappingNode, key: Node, old: Node, value: Any, drop_comment: bool = False
    ) -> None:
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
            new_value = " " * pad + self._render(value, old)
            self.edits.append(_inline_edit(text, after, after, new_value, drop_comment))
            return
        start = int(old.start_mark.index)
        end = _value_end(text, key, old)
        new = self._render(value, old)
        if drop_comment and text[start:end] == new:
            return  # unchanged: its comment still describes it
        self.edits.append(_inline_edit(text, start, end, new, drop_comment))

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
        with _using(False) as y:
            return y.load(text)
    except YAMLError as exc:
        raise LedgerWriteError(f"{where}: YAML does not parse: {exc}") from exc


def update_yaml(
    body: str,
    values: Mapping[str, Any],
    *,
    path: str | None,
    line: int,
    drop_comments: frozenset[str] = frozenset(),
) -> str:
    """The YAML body with `values` set at top level; re-parsed to check it says exactly that.

    A top-level key in `drop_comments` whose value changes loses the comment at the end of its line: it
    described the value being replaced (`status: not-created   # published template - run it`).

    `body` is "" or ends with "\n" (every line, the last included, has its end), and so is the result:
    then deleting or appending a last line needs no special case.
    """
    try:
        with _using(False) as y:
            root = y.compose(body)
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
            splicer.set_key(root, k, v, drop_comment=k in drop_comments)
        new = splicer.apply()
    after = _load(new, "Live State YAML after write-back")
    intended = dict(_comparable(before) or {})
    intended.update({k: _comparable(v) for k, v in values.items()})
    if _comparable(after) != intended:
        raise LedgerWriteError(
            "Live State YAML write-back did not round-trip: "
            f"intended {intended!r}, re-read {_comparable(after)!r}"
        )
    return new

"""Markdown plan → `Plan` model. Pure: `parse(text)` never touches the file system.

Built on markdown-it-py tokens (`Token.map` gives every node its line span). The conventions are those of
`PLAN-FORMAT.md`; nothing here knows any particular plan. Every malformed input raises `PlanError` naming
the 1-based line; no other exception escapes `parse`.

Heading marker rule (documented in docs/plan-json.md): a heading's *marker tail* is the longest suffix
that (a) starts after whitespace, (b) consists only of marker groups — one emoji-like symbol, optionally
followed by a `*( … )*` note — separated by whitespace, `/` or `·`. Emoji inside the title (followed by
words, like `🤖 Director prompt`) are title text. An emoji-like symbol in the tail that is not one of the
marker table's (`director.plan.markers`) is a `PlanError`.
"""

from __future__ import annotations

import gc
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from director.errors import PlanError
from director.plan import bash, checkrows, markers
from director.plan.model import (
    Block,
    BlockRole,
    CheckLine,
    CheckPolarity,
    CheckRow,
    Condition,
    ContractItem,
    Input,
    KVRow,
    LiveState,
    MarkerSpec,
    Plan,
    Realization,
    RetryPolicy,
    Section,
    SectionKind,
    Span,
    Table,
    TemplateLine,
)
from director.plan.templates import heading_target, template_lines

SHELL_LANGS = frozenset({"bash", "sh", "shell"})
EXECUTABLE_KINDS = frozenset(
    {SectionKind.VARIABLES, SectionKind.NUMBERED, SectionKind.DISCOVERY, SectionKind.TEARDOWN}
)
# Output samples are never templates, even in a numbered section.
ILLUSTRATIVE_LANGS = frozenset({"text", "txt", "plaintext", "console", "output", "log"})

_NEWLINES = re.compile(r"\r\n?|\n")  # exactly markdown-it's normalisation, so Token.map lines agree
_MD: MarkdownIt | None = None


def _md() -> MarkdownIt:
    """One shared markdown-it instance (building it costs more than parsing a small plan)."""
    global _MD
    if _MD is None:
        # Only block structure and raw inline `content` are read, never inline children: skipping the
        # inline pass halves the parse time of a large plan.
        _MD = MarkdownIt("commonmark").enable("table").disable("inline")
    return _MD


# ---------------------------------------------------------------------------------------------------
# Small helpers


def slugify(title: str) -> str:
    """Lower case, every run of non-alphanumerics → `-` (ASCII only, so keys stay stable)."""
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()  # Ü → U
    return re.sub(r"[^a-z0-9]+", "-", ascii_title.lower()).strip("-") or "section"


def _emoji_like(ch: str) -> bool:
    """A pictographic symbol that could be meant as a marker (So category, above the Latin blocks)."""
    return ord(ch) >= 0x2100 and unicodedata.category(ch) == "So"


@dataclass
class _Ctx:
    """Parse-wide state: the source lines and the path, for error messages."""

    lines: list[str]
    path: str | None

    def error(self, message: str, line0: int | None) -> PlanError:
        """A PlanError at a 0-based line."""
        return PlanError(message, path=self.path, line=None if line0 is None else line0 + 1)


# ---------------------------------------------------------------------------------------------------
# Heading markers

_NOTE = r"\*\((?:[^)]|\)(?!\*))*\)\*"
_EMOJI = (
    r"[^\s\w*/·()`\[\]<>.,;:!?'\"-][\ufe0f\ufe0e\u200d\U0001f3fb-\U0001f3ff]*(?:\u200d\S[\ufe0f\ufe0e]?)*"
)
_GROUP = rf"(?:{_EMOJI})(?:\s*{_NOTE})?"
_TAIL = re.compile(rf"\s+(?:{_GROUP})(?:\s*(?:/|·|\+|,)?\s*(?:{_GROUP}))*\s*")
_GROUP_RE = re.compile(rf"({_EMOJI})(?:\s*({_NOTE}))?")


def split_markers(heading: str) -> tuple[str, str]:
    """(title, marker tail) of a heading's inline text; the tail is "" when there are no markers."""
    for i, ch in enumerate(heading):
        if i == 0 or not _emoji_like(ch) or not heading[i - 1].isspace():
            continue
        start = i
        while start > 0 and heading[start - 1].isspace():
            start -= 1
        if start == 0:
            continue  # a heading that is only emoji keeps them as its title
        if _TAIL.fullmatch(heading, start):
            return heading[:start].rstrip(), heading[start:].strip()
    return heading.strip(), ""


_COND_KV = re.compile(
    r"^(?:`\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:=|∈|\bin\b)\s*\{?([^`}]*)\}?\s*`"
    r"|([A-Z][A-Z0-9_]*)\s*(?:=|∈)\s*\{?([^\s}—–;:,]+)\}?)"  # unquoted: upper-case knobs only
)
_COND_VALUES = re.compile(r"^((?:`[^`]+`\s*(?:/|\||,|or)?\s*)+)")


def _parse_note(note: str) -> tuple[Condition | None, str, bool]:
    """(condition, note text, condition-needs-knob) of a `*( … )*` note body."""
    body = note.strip()
    m = _COND_KV.match(body)
    knob, raw = (m.group(1), m.group(2)) if m and m.group(1) else (m.group(3), m.group(4)) if m else ("", "")
    if m and raw.strip():
        values = tuple(v.strip() for v in re.split(r"[/|,]", raw) if v.strip())
        rest = body[m.end() :]
        # `KNOB=a`/`b`: more backticked values may follow the first one
        more = _COND_VALUES.match(rest.lstrip(" /|,"))
        if more and rest.lstrip().startswith(("/", "|", ",")):
            values += tuple(re.findall(r"`([^`]+)`", more.group(1)))
            rest = rest.lstrip(" /|,")[more.end() :]
        return Condition(knob, values), _note_text(rest), False
    m2 = _COND_VALUES.match(body)
    if m2:
        values = tuple(v.strip() for v in re.findall(r"`([^`]+)`", m2.group(1)))
        if all(re.fullmatch(r"[\w.-]+", v) for v in values):
            return Condition("", values), _note_text(body[m2.end() :]), True
    return None, body, False


def _note_text(rest: str) -> str:
    return re.sub(r"^[\s—–:;,-]+", "", rest).strip()


def parse_markers(tail: str, ctx: _Ctx, line0: int, inputs: Sequence[Input]) -> tuple[MarkerSpec, ...]:
    """Marker specs of a heading's marker tail (conditional knobs resolved)."""
    specs: list[tuple[markers.Marker, Condition | None, str, bool]] = []
    for m in _GROUP_RE.finditer(tail):
        known = markers.by_glyph(m.group(1))
        if known is None:  # also a known glyph joined (ZWJ) or skin-toned into another symbol
            raise ctx.error(
                f"unknown marker {m.group(1)!r} in heading; known markers: {markers.known_list()}", line0
            )
        marker = known.marker
        cond: Condition | None = None
        note = ""
        needs_knob = False
        if m.group(2):
            cond, note, needs_knob = _parse_note(m.group(2)[2:-2])
        specs.append((marker, cond, note, needs_knob))
    knobs = {c.knob for _, c, _, need in specs if c is not None and not need}
    out: list[MarkerSpec] = []
    for marker, cond, note, needs_knob in specs:
        if cond is not None and needs_knob:
            if len(knobs) == 1:
                cond = Condition(next(iter(knobs)), cond.values)
            else:
                owners = [i.knob for i in inputs if set(cond.values) <= set(i.options)]
                if len(owners) != 1:
                    vals = "/".join(cond.values)
                    raise ctx.error(
                        f"condition values {vals!r} name no knob (write `KNOB={cond.values[0]}`)", line0
                    )
                cond = Condition(owners[0], cond.values)
        out.append(MarkerSpec(marker, cond, note))
    return tuple(out)


# ---------------------------------------------------------------------------------------------------
# Blocks


_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m|h)$")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float | None:
    """Seconds of `500ms`/`2s`/`5m`/`1h`; None when it is not a duration."""
    m = _DURATION.match(text.strip())
    return float(m.group(1)) * _UNITS[m.group(2)] if m else None


def parse_retry(info: str, ctx: _Ctx, line0: int) -> RetryPolicy | None:
    """The `{retries=… backoff=… delay=… timeout=…}` attributes of a fence info string."""
    if "{" not in info and "}" not in info:
        return None
    m = re.search(r"\{([^{}]*)\}", info)
    if m is None or info.count("{") != 1 or info.count("}") != 1:
        raise ctx.error(
            f"bad retry policy {info!r}: write {{retries=3 backoff=exponential delay=2s timeout=5m}}", line0
        )
    fields: dict[str, Any] = {}
    for item in re.split(r"[\s,]+", m.group(1).strip()):
        if not item:
            continue
        key, eq, value = item.partition("=")
        if not eq or not value:
            raise ctx.error(f"bad retry policy item {item!r}: expected key=value", line0)
        if (
            key in fields
            or (key == "delay" and "delay_s" in fields)
            or (key == "timeout" and "timeout_s" in fields)
        ):
            raise ctx.error(f"retry policy sets {key!r} twice", line0)
        if key == "retries":
            if not value.isdigit():
                raise ctx.error(f"bad retries={value!r}: expected a whole number", line0)
            fields["retries"] = int(value)
        elif key == "backoff":
            if value not in ("exponential", "constant"):
                raise ctx.error(f"bad backoff={value!r}: expected exponential or constant", line0)
            fields["backoff"] = value
        elif key in ("delay", "timeout"):
            secs = parse_duration(value)
            if secs is None or (key == "timeout" and secs <= 0):
                raise ctx.error(f"bad {key}={value!r}: expected a duration like 500ms, 2s, 5m or 1h", line0)
            fields["delay_s" if key == "delay" else "timeout_s"] = secs
        else:
            raise ctx.error(
                f"unknown retry policy key {key!r} (known: retries, backoff, delay, timeout)", line0
            )
    return RetryPolicy(**fields)


_REALIZED = re.compile(
    r"^\s*(?:export\s+|local\s+|readonly\s+)?([A-Za-z_][A-Za-z0-9_]*)=(\S.*?|)"
    r"\s+#.*?\brealized in\s*§\s*([\w-]+)"
)
_HINT_BLOCK = re.compile(r"^\s*#\s*(?:→|->)\s*(?:write\s+)?Live State\s*:\s*(.*?)\s*$", re.IGNORECASE)
_HINT_QUOTE = re.compile(r"^(?:→|->)\s*(?:write\s+)?Live State\s*:\s*(.*?)\s*$", re.IGNORECASE)
_VERIFY_LINE = re.compile(
    rf"^#\s*{re.escape(markers.VERIFY_BLOCK.value)}[{markers.VARIATION_SELECTORS}]?\s*(.*?)\s*$"
)


def _unquote_value(value: str) -> str:
    v = value.strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'":
        return v[1:-1]
    return v


def _realizations(text: str, body_start: int) -> tuple[Realization, ...]:
    out: list[Realization] = []
    for off, line in enumerate(text.split("\n")):
        m = _REALIZED.match(line)
        if m:
            out.append(Realization(m.group(1), m.group(3), body_start + off, _unquote_value(m.group(2))))
    return tuple(out)


def _block_hints(text: str) -> tuple[str, ...]:
    """`# → Live State: …` comments of a bash block, whole-line or trailing (read by the bash analyser)."""
    return tuple(m.group(1) for _, c in bash.parse(text).comments if (m := _HINT_BLOCK.match("#" + c)))


# ---------------------------------------------------------------------------------------------------
# Tables


def _table(tokens: Sequence[Token], start: int) -> tuple[Table, list[int], int]:
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


def _first_word(cell: str) -> str:
    c = markers.strip_variation(cell)
    for row in markers.MARKERS:  # `✔ check`
        c = c.replace(row.glyph, " ")
    c = c.strip().strip("*_`").lower()
    m = re.match(r"[#\w-]+", c)
    return m.group(0) if m else c


def _columns(table: Table, required: Sequence[str], ctx: _Ctx, what: str) -> dict[str, int]:
    cols: dict[str, int] = {}
    for idx, cell in enumerate(table.header):
        cols.setdefault(_first_word(cell), idx)
    missing = [c for c in required if c not in cols]
    if missing:
        raise ctx.error(
            f"{what} table lacks column(s) {', '.join(missing)} (has: {' / '.join(table.header)})",
            table.span.start,
        )
    return cols


def _cell(row: Sequence[str], idx: int | None) -> str:
    return row[idx] if idx is not None and idx < len(row) else ""


def parse_inputs(table: Table, row_lines: Sequence[int], ctx: _Ctx) -> tuple[Input, ...]:
    """Provisioning Inputs rows: closed options, a default among them, a knob."""
    cols = _columns(table, ("question", "options", "default", "sets"), ctx, "Provisioning Inputs")
    out: list[Input] = []
    knobs: dict[str, int] = {}
    for n, (row, line0) in enumerate(zip(table.rows, row_lines, strict=True), start=1):
        num_cell = _cell(row, cols.get("#")).strip()
        number = int(num_cell) if num_cell.isdigit() else n
        options = tuple(o.strip() for o in re.findall(r"`([^`]*)`", _cell(row, cols["options"])) if o.strip())
        if not options:
            raise ctx.error(f"input {number} has no options (write them as `a` / `b` / `c`)", line0)
        default = _cell(row, cols["default"]).replace("`", "").strip()
        if default not in options:
            raise ctx.error(
                f"input {number}: default {default!r} is not one of its options ({' / '.join(options)})",
                line0,
            )
        knob = _cell(row, cols["sets"]).replace("`", "").strip()
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
                _cell(row, cols["question"]),
                options,
                default,
                knob,
                _cell(row, cols.get("gates")),
                line0,
            )
        )
    return tuple(out)


# ---------------------------------------------------------------------------------------------------
# YAML


def _plain(value: Any) -> Any:
    """ruamel round-trip data → plain JSON-able Python (dict/list/str/int/float/bool/None)."""
    import datetime

    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_plain(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, datetime.date | datetime.datetime):
        return value.isoformat()
    if isinstance(value, str):
        return str(value)
    if hasattr(value, "value"):  # TaggedScalar
        return str(value.value)
    return str(value)


def load_yaml(text: str, ctx: _Ctx, body_start: int, what: str) -> Any:
    """Round-trip-parse YAML; any failure is a PlanError on the plan line of the problem."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    try:
        data = yaml.load(text)
    except Exception as exc:  # ruamel raises many types; each means bad YAML
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        context = getattr(exc, "context_mark", None)
        if mark is not None and context is not None and mark.line >= text.count("\n"):
            mark = context  # "got <stream end>": the opening of the unclosed construct is the useful line
        line = body_start + (mark.line if mark is not None else 0)
        problem = getattr(exc, "problem", None) or (str(exc).splitlines() or [type(exc).__name__])[0]
        raise ctx.error(f"{what} YAML does not parse: {problem}", line) from None
    return _plain(data)


# ---------------------------------------------------------------------------------------------------
# Sections


_RAW_KIND = (
    (re.compile(r"^requires[- ]discovery\b", re.I), SectionKind.DISCOVERY, "discovery"),
    (re.compile(r"^teardown\b", re.I), SectionKind.TEARDOWN, "teardown"),
    (re.compile(r"^update\b", re.I), SectionKind.UPDATE, "update"),
    (re.compile(r"^live state\s*$", re.I), SectionKind.LIVE_STATE, ""),
    (re.compile(r"^provisioning inputs\s*$", re.I), SectionKind.INPUTS, ""),
    (re.compile(r"^director prompt\s*$", re.I), SectionKind.PROMPT, ""),
)


def classify(title: str) -> tuple[SectionKind, int | None, str, str]:
    """(kind, number, key, title without the `N.` prefix) of a heading title (markers removed)."""
    m = re.match(r"^(\d+)\.\s+(.*)$", title)
    if m:
        number = int(m.group(1))
        kind = SectionKind.VARIABLES if number == 0 else SectionKind.NUMBERED
        return kind, number, str(number), m.group(2).strip()
    bare = re.sub(r"^[^\w]+", "", title).strip()  # `🤖 Director prompt` → `Director prompt`
    for rx, kind, key in _RAW_KIND:
        if rx.search(bare):
            return kind, None, key or slugify(bare), title
    return SectionKind.PROSE, None, slugify(title), title


def _unclosed_fence(tok: Token, ctx: _Ctx) -> bool:
    """Whether a fence token ran to the end of its container without its closing fence."""
    if tok.map is None:
        return False
    start, end = tok.map
    if end - 1 <= start:
        return True
    last = re.sub(r"^[\s>]*", "", ctx.lines[end - 1]) if end - 1 < len(ctx.lines) else ""
    ch = tok.markup[:1] or "`"
    return not re.fullmatch(rf"{re.escape(ch)}{{{len(tok.markup)},}}\s*", last)


def _quote_lines(tok: Token, ctx: _Ctx) -> list[str]:
    if tok.map is None:
        return []
    return [re.sub(r"^\s*>\s?", "", line) for line in ctx.lines[tok.map[0] : tok.map[1]]]


@dataclass
class _RawSection:
    """A section's heading and token range, before interpretation."""

    heading_tok: Token
    inline: str
    start: int  # token index of the first token after the heading
    end: int  # token index of the next h2 (exclusive)
    span: Span


class _PlanParser:
    """One parse: tokens in, `Plan` out."""

    def __init__(self, text: str, path: str | None) -> None:
        self.text = text
        self.path = path
        lines = _NEWLINES.split(text)
        if lines and lines[-1] == "":
            lines.pop()
        self.ctx = _Ctx(lines, path)
        # A BOM is an encoding artefact: parse without it (no line moves), keep it in `source`.
        self.tokens = _md().parse(text[1:] if text.startswith("\ufeff") else text)
        # parent[i]: index of the opening token that encloses token i (-1 at top level), in one pass.
        self.parent: list[int] = []
        stack: list[int] = []
        for i, t in enumerate(self.tokens):
            if t.nesting == -1 and stack:
                stack.pop()
            self.parent.append(stack[-1] if stack else -1)
            if t.nesting == 1:
                stack.append(i)

    def run(self) -> Plan:
        toks = self.tokens
        ctx = self.ctx
        for t in toks:
            if t.type == "fence" and _unclosed_fence(t, ctx):
                line = t.map[0] if t.map else None
                raise ctx.error(
                    f"unclosed {t.markup} fence (it runs to the end of the "
                    f"{'file' if t.level == 0 else 'enclosing block'})",
                    line,
                )
        title, title_line = self._title()
        raws = self._split()
        first_h2 = raws[0].heading_tok.map[0] if raws and raws[0].heading_tok.map else len(ctx.lines)
        preamble = tuple(
            "\n".join(self._paragraph_lines(toks, i))
            for i, t in enumerate(toks)
            if t.type == "paragraph_open"
            and t.map
            and t.map[1] <= first_h2
            and self._enclosing(i) == "blockquote_open"
        )
        legend = next((t.content.rstrip("\n") for t in toks if t.type == "fence" and self._is_legend(t)), "")

        # Inputs first: conditional markers may need the knob that owns bare values.
        inputs: tuple[Input, ...] = ()
        classified = [(r, *self._heading(r)) for r in raws]
        for r, kind, _num, _key, _title, _tail in classified:
            if kind is SectionKind.INPUTS:
                for i in range(r.start, r.end):
                    if toks[i].type == "table_open":
                        table, row_lines, _ = _table(toks, i)
                        inputs = parse_inputs(table, row_lines, ctx)
                        break
                break

        sections: list[Section] = []
        seen_keys: dict[str, int] = {}
        last_number: tuple[int, int] | None = None
        resolved: dict[str, Any] = {}
        resolved_seen = False
        live_state: LiveState | None = None
        contract: tuple[ContractItem, ...] = ()
        prompt_rules: tuple[str, ...] = ()
        seen_numbered = False
        # A contract may also stand in the preamble, before the first `##`.
        contract = self._contract(0, raws[0].start - 3 if raws else len(toks))
        for r, kind, number, key, stitle, tail in classified:
            line0 = r.span.start
            section_markers = parse_markers(tail, ctx, line0, inputs) if tail else ()
            if number is not None:
                if key in seen_keys:
                    raise ctx.error(
                        f"duplicate section number {number} (first on line {seen_keys[key]})", line0
                    )
                if last_number is not None and number < last_number[0]:
                    raise ctx.error(
                        f"section {number} comes after section {last_number[0]} "
                        f"(line {last_number[1]}): numbered sections must be in order",
                        line0,
                    )
                last_number = (number, line0 + 1)
            elif kind is not SectionKind.PROSE:
                if key in seen_keys:
                    raise ctx.error(
                        f"a second {stitle!r} section (the first is on line {seen_keys[key]})", line0
                    )
            else:
                base, k = key, 2
                while key in seen_keys:
                    key = f"{base}-{k}"
                    k += 1
            seen_keys[key] = line0 + 1
            if kind is SectionKind.PROSE and not contract and not seen_numbered:
                contract = self._contract(r.start, r.end)
            seen_numbered = seen_numbered or number is not None
            if kind is SectionKind.PROMPT:
                prompt_rules = self._bullets(r)
            blocks: list[Block] = []
            is_verify_section = any(m.rule.check for m in section_markers)
            live_yaml: Block | None = None
            for i in range(r.start, r.end):
                t = toks[i]
                if t.type != "fence":
                    continue
                role = self._role(t, kind, is_verify_section, stitle, live_yaml is None)
                blk = self._block(t, len(blocks), role, kind, stitle)
                if role is BlockRole.RESOLVED_INPUTS and not resolved_seen:
                    resolved_seen = True
                    data = load_yaml(blk.text, ctx, blk.body_start, "resolved_inputs")
                    inner = data.get("resolved_inputs") if isinstance(data, dict) else None
                    resolved = inner if isinstance(inner, dict) else (data if isinstance(data, dict) else {})
                if role is BlockRole.LIVE_STATE:
                    live_yaml = blk
                blocks.append(blk)
            quotes, hints = self._quotes(r)
            section = Section(
                key=key,
                number=number,
                title=stitle,
                heading=self._heading_text(r),
                kind=kind,
                markers=section_markers,
                blocks=tuple(blocks),
                quotes=quotes,
                hints=hints,
                span=r.span,
                slug=slugify(stitle),
            )
            sections.append(section)
            if kind is SectionKind.LIVE_STATE:
                live_state = self._live_state(r, live_yaml)

        self._check_realizations(sections)
        if live_state is not None and live_state.check_rows:
            rows = checkrows.feed_check_rows(live_state.check_rows, contract, sections)
            live_state = replace(live_state, check_rows=rows)
        return Plan(
            title=title,
            path=self.path,
            source=self.text,
            newline=self._newline(),
            preamble=preamble,
            prompt_rules=prompt_rules,
            legend=legend,
            inputs=inputs,
            resolved_inputs_template=resolved,
            sections=tuple(sections),
            contract=contract,
            live_state=live_state,
            title_line=title_line,
        )

    # -- document structure

    def _newline(self) -> str:
        m = _NEWLINES.search(self.text)
        return "\r\n" if m and m.group(0) == "\r\n" else "\n"

    def _title(self) -> tuple[str, int]:
        h1 = [
            i
            for i, t in enumerate(self.tokens)
            if t.type == "heading_open" and t.tag == "h1" and t.level == 0
        ]
        if not h1:
            raise self.ctx.error("the plan has no `#` title", 0)
        if len(h1) > 1:
            first, second = (self.tokens[h1[0]].map or [0])[0], (self.tokens[h1[1]].map or [0])[0]
            raise self.ctx.error(
                f"a second `#` title (the first is on line {first + 1}); a plan has one", second
            )
        i = h1[0]
        return self.tokens[i + 1].content.strip(), (self.tokens[i].map or [0])[0]

    def _split(self) -> list[_RawSection]:
        toks = self.tokens
        heads = [i for i, t in enumerate(toks) if t.type == "heading_open" and t.tag == "h2" and t.level == 0]
        out: list[_RawSection] = []
        for n, i in enumerate(heads):
            end_tok = heads[n + 1] if n + 1 < len(heads) else len(toks)
            start_line = (toks[i].map or [0, 0])[0]
            end_line = (toks[heads[n + 1]].map or [0])[0] if n + 1 < len(heads) else len(self.ctx.lines)
            out.append(_RawSection(toks[i], toks[i + 1].content, i + 3, end_tok, Span(start_line, end_line)))
        return out

    def _heading(self, r: _RawSection) -> tuple[SectionKind, int | None, str, str, str]:
        title, tail = split_markers(r.inline.replace("\n", " "))
        kind, number, key, title = classify(title)
        return kind, number, key, title, tail

    def _heading_text(self, r: _RawSection) -> str:
        m = r.heading_tok.map or [0, 1]
        return "\n".join(self.ctx.lines[m[0] : m[1]])

    def _enclosing(self, i: int) -> str:
        """Type of the opening token that encloses token i ("" at top level)."""
        p = self.parent[i]
        return self.tokens[p].type if p >= 0 else ""

    def _paragraph_lines(self, toks: Sequence[Token], i: int) -> list[str]:
        return _quote_lines(toks[i], self.ctx)

    def _is_legend(self, t: Token) -> bool:
        return not t.info.strip() and t.content.lstrip().startswith("Legend")

    def _quotes(self, r: _RawSection) -> tuple[tuple[str, ...], tuple[str, ...]]:
        quotes: list[str] = []
        hints: list[str] = []
        for i in range(r.start, r.end):
            t = self.tokens[i]
            if t.type == "paragraph_open" and self._enclosing(i) == "blockquote_open":
                lines = _quote_lines(t, self.ctx)
                quotes.append("\n".join(lines))
                hints.extend(m.group(1) for line in lines if (m := _HINT_QUOTE.match(line.strip())))
        return tuple(quotes), tuple(hints)

    def _bullets(self, r: _RawSection) -> tuple[str, ...]:
        out: list[str] = []
        depth = 0
        for i in range(r.start, r.end):
            t = self.tokens[i]
            if t.type == "bullet_list_open":
                depth += 1
            elif t.type == "bullet_list_close":
                depth -= 1
            elif t.type == "inline" and depth == 1 and self._enclosing(self.parent[i]) == "list_item_open":
                out.append(" ".join(t.content.split("\n")).strip())
        return tuple(out)

    def _contract(self, start: int, end: int) -> tuple[ContractItem, ...]:
        """The first ordered list of `N. **Title** — text` items in tokens[start:end]."""
        toks = self.tokens
        r_end = end
        for i in range(start, end):
            if toks[i].type != "ordered_list_open":
                continue
            items: list[ContractItem] = []
            level = toks[i].level
            j = i + 1
            while j < r_end and not (toks[j].type == "ordered_list_close" and toks[j].level == level):
                t = toks[j]
                if t.type == "list_item_open" and t.level == level + 1:
                    inline = next((toks[k] for k in range(j, r_end) if toks[k].type == "inline"), None)
                    m = re.match(
                        r"^\*\*(.+?)\*\*\s*(?:—|–|-|:)\s*(.*)$", inline.content if inline else "", re.S
                    )
                    if m and t.info.isdigit():
                        items.append(
                            ContractItem(
                                int(t.info),
                                m.group(1).strip(),
                                " ".join(m.group(2).split()),
                                (t.map or [0])[0],
                            )
                        )
                j += 1
            if items:
                return tuple(items)
        return ()

    # -- blocks

    def _role(
        self, t: Token, kind: SectionKind, verify_section: bool, title: str, first_yaml: bool
    ) -> BlockRole:
        lang = (t.info.split() or [""])[0].lower()
        if not lang:
            return BlockRole.DIAGRAM if not self._is_legend(t) else BlockRole.LEGEND
        if kind is SectionKind.LIVE_STATE and lang in ("yaml", "yml") and first_yaml:
            return BlockRole.LIVE_STATE
        if lang in ("yaml", "yml") and re.search(r"^resolved_inputs\s*:", t.content, re.M):
            return BlockRole.RESOLVED_INPUTS
        if kind in EXECUTABLE_KINDS and lang in SHELL_LANGS:
            first = next((ln.strip() for ln in t.content.split("\n") if ln.strip()), "")
            return BlockRole.VERIFY if verify_section or _VERIFY_LINE.match(first) else BlockRole.ACT
        if (
            kind in (SectionKind.VARIABLES, SectionKind.NUMBERED)
            and lang not in SHELL_LANGS
            and lang not in ILLUSTRATIVE_LANGS
        ):
            if lang in ("yaml", "yml") and heading_target(title) is None:
                return BlockRole.ILLUSTRATIVE
            return BlockRole.TEMPLATE
        return BlockRole.ILLUSTRATIVE

    def _block(self, t: Token, index: int, role: BlockRole, kind: SectionKind, title: str) -> Block:
        ctx = self.ctx
        span = Span(*(t.map or (0, 0)))
        body_start = span.start + 1
        lang = (t.info.split() or [""])[0]
        info = t.info.strip()
        text = t.content
        retry = parse_retry(info[len(lang) :], ctx, span.start) if lang.lower() in SHELL_LANGS else None
        verify_title = ""
        vmodel: bash.VerifyModel | None = None
        block_checks: tuple[CheckLine, ...] = ()
        realizations: tuple[Realization, ...] = ()
        hints: tuple[str, ...] = ()
        tlines: tuple[TemplateLine, ...] = ()
        target: str | None = None
        if role in (BlockRole.ACT, BlockRole.VERIFY):
            realizations = _realizations(text, body_start)
            hints = _block_hints(text)
        if role is BlockRole.VERIFY:
            first = next((ln.strip() for ln in text.split("\n") if ln.strip()), "")
            vm = _VERIFY_LINE.match(first)
            verify_title = vm.group(1) if vm else ""
            vmodel = bash.verify_model(text, body_start)
            block_checks = tuple(
                CheckLine(
                    ln.message,
                    CheckPolarity.PASS if ln.polarity == "pass" else CheckPolarity.FAIL,
                    body_start + ln.row,
                    ln.label,
                    soft=ln.polarity == "fail" and not ln.hard,
                )
                for ln in vmodel.lines
            )
        if role is BlockRole.TEMPLATE:
            target = heading_target(title)
            if target is None:
                raise ctx.error(
                    f"a {lang} file template in a section whose heading names no file "
                    f"(write the target path in backticks in the heading, e.g. `app.{lang}`)",
                    span.start,
                )
            tlines = template_lines(text, lang)
        return Block(
            index=index,
            lang=lang,
            info=info,
            role=role,
            text=text,
            span=span,
            body_start=body_start,
            retry=retry,
            checks=block_checks,
            realizations=realizations,
            hints=hints,
            template_lines=tlines,
            template_target=target,
            verify_title=verify_title,
            verify=vmodel,
        )

    def _check_realizations(self, sections: Sequence[Section]) -> None:
        keys = {s.key for s in sections}
        for s in sections:
            for b in s.blocks:
                for rz in b.realizations:
                    if rz.section not in keys:
                        raise self.ctx.error(
                            f"`# realized in §{rz.section}` names no section "
                            f"(sections: {', '.join(sorted(k for k in keys if k.isdigit()))})",
                            rz.line,
                        )

    # -- Live State

    def _live_state(self, r: _RawSection, yaml_block: Block | None) -> LiveState:
        ctx = self.ctx
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
        i = r.start
        while i < r.end:
            if self.tokens[i].type != "table_open":
                i += 1
                continue
            table, row_lines, i = _table(self.tokens, i)
            first = _first_word(table.header[0]) if table.header else ""
            if first == "key" and kv_table is None:
                kv_table = table
                kv_rows = tuple(
                    KVRow(_cell(row, 0).strip("` "), _cell(row, 1), ln)
                    for row, ln in zip(table.rows, row_lines, strict=True)
                )
            elif first == "check" and check_table is None:
                check_table = table
                cols = _columns(table, ("check", "expected", "observed", "result"), ctx, "Live State check")
                check_rows = tuple(
                    CheckRow(
                        _cell(row, cols["check"]),
                        _cell(row, cols["expected"]),
                        _cell(row, cols["observed"]),
                        _cell(row, cols["result"]),
                        ln,
                    )
                    for row, ln in zip(table.rows, row_lines, strict=True)
                )
        return LiveState(
            span=r.span,
            yaml_text=yaml_block.text if yaml_block else "",
            yaml_span=yaml_block.span if yaml_block else None,
            data=data,
            kv_table=kv_table,
            kv_rows=kv_rows,
            check_table=check_table,
            check_rows=check_rows,
        )


def parse(text: str, path: str | None = None) -> Plan:
    """Parse a plan's text; raises PlanError (naming path:line) for malformed plans, nothing else."""
    # The parse allocates many small acyclic objects; the cyclic GC's repeated passes over them made a
    # 5,000-section plan cost 25% more per section than a 500-section one. Pause it, restore it.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _PlanParser(text, path).run()
    finally:
        if was_enabled:
            gc.enable()


def parse_file(path: str | Path) -> Plan:
    """Read a plan as UTF-8 and parse it."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise PlanError(f"cannot read the plan: {exc.strerror or exc}", path=str(path)) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise PlanError(
            f"not UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start} cannot be decoded",
            path=str(path),
            line=line,
        ) from None
    return parse(text, str(path))


def iter_blocks(plan: Plan, roles: Iterable[BlockRole] | None = None) -> Iterable[tuple[Section, Block]]:
    """(section, block) pairs in document order, optionally only some roles."""
    wanted = set(roles) if roles is not None else None
    for s in plan.sections:
        for b in s.blocks:
            if wanted is None or b.role in wanted:
                yield s, b

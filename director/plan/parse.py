"""Markdown plan → `Plan` model. Pure: `parse(text)` never touches the file system.

Built on markdown-it-py tokens (`Token.map` gives every node its line span). The conventions are those of
`docs/plan-format.md`; nothing here knows any particular plan. Every malformed input raises `PlanError` naming
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
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from markdown_it.token import Token

from director.errors import PlanError
from director.plan import bash, checkrows, markers
from director.plan.bash.grammar import MAX_DEPTH, TooDeep
from director.plan.headings import classify, parse_markers, slugify, split_markers
from director.plan.model import (
    Block,
    BlockRole,
    CheckLine,
    CheckPolarity,
    ContractItem,
    Input,
    LiveState,
    MarkerSpec,
    Plan,
    Realization,
    Section,
    SectionKind,
    Span,
    TemplateLine,
)
from director.plan.retry import fence_attributes, parse_retry
from director.plan.source import (
    MAX_NESTING,
    NEWLINES,
    Source,
    load_yaml,
    nesting_too_deep,
    plan_lines,
    quote_lines,
    unclosed_fence,
)
from director.plan.source import tokens as markdown_tokens
from director.plan.tables import parse_inputs, parse_live_state, read_table
from director.plan.templates import heading_target, template_lines

SHELL_LANGS = frozenset({"bash", "sh", "shell"})
EXECUTABLE_KINDS = frozenset(
    {SectionKind.VARIABLES, SectionKind.NUMBERED, SectionKind.DISCOVERY, SectionKind.TEARDOWN}
)
# Output samples are never templates, even in a numbered section.
ILLUSTRATIVE_LANGS = frozenset({"text", "txt", "plaintext", "console", "output", "log"})


# ---------------------------------------------------------------------------------------------------
# Blocks


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
    """`VAR="…"  # realized in §N` assignments of a block."""
    out: list[Realization] = []
    for off, line in enumerate(text.split("\n")):
        m = _REALIZED.match(line)
        if m:
            out.append(Realization(m.group(1), m.group(3), body_start + off, _unquote_value(m.group(2))))
    return tuple(out)


def _block_hints(text: str) -> tuple[str, ...]:
    """`# → Live State: …` comments of a bash block, whole-line or trailing (read by the bash analyser)."""
    return tuple(m.group(1) for _, c in bash.parse(text).comments if (m := _HINT_BLOCK.match("#" + c)))


@dataclass
class _RawSection:
    """A section's heading and token range, before interpretation."""

    heading_tok: Token
    inline: str
    start: int  # token index of the first token after the heading
    end: int  # token index of the next h2 (exclusive)
    span: Span


class PlanParser:
    """One parse: tokens in, `Plan` out."""

    def __init__(
        self, text: str, path: str | None, lines: list[str] | None = None, tokens: list[Token] | None = None
    ) -> None:
        self.text = text
        self.path = path
        self.session_functions: dict[str, str] = {}  # name -> definition, as blocks so far define them
        if lines is None:
            lines = plan_lines(text)
        self.ctx = Source(lines, path)
        # A BOM is an encoding artefact: parse without it (no line moves), keep it in `source`.
        if tokens is None:
            tokens = markdown_tokens(text[1:] if text.startswith("\ufeff") else text)
        self.tokens = tokens
        deep = nesting_too_deep(tokens)
        if deep is not None:
            raise self.ctx.error(
                f"lists or blockquotes nested {deep[1]} deep: markdown-it stops reading at "
                f"{MAX_NESTING} levels (a list takes two, a blockquote one) and would drop the rest of the "
                "plan from here; nest less (docs/limits.md)",
                deep[0],
            )
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
        """The whole parse: structure, inputs, sections and their blocks, Live State."""
        toks = self.tokens
        ctx = self.ctx
        for t in toks:
            if t.type == "fence" and unclosed_fence(t, ctx):
                line = t.map[0] if t.map else None
                raise ctx.error(
                    f"unclosed {t.markup} fence (it runs to the end of the "
                    f"{'file' if t.level == 0 else 'enclosing block'})",
                    line,
                )
        title, title_line = self._title()
        raws = self.split_sections()
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
        classified = [(r, *self.classify_heading(r)) for r in raws]
        for r, kind, _num, _key, _title, _tail in classified:
            if kind is SectionKind.INPUTS:
                for i in range(r.start, r.end):
                    if toks[i].type == "table_open":
                        table, row_lines, _ = read_table(toks, i)
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
            section, live_yaml = self.build_section(r, kind, number, key, stitle, section_markers)
            for blk in section.blocks:
                if blk.role is BlockRole.RESOLVED_INPUTS and not resolved_seen:
                    resolved_seen = True
                    data = load_yaml(blk.text, ctx, blk.body_start, "resolved_inputs")
                    inner = data.get("resolved_inputs") if isinstance(data, dict) else None
                    resolved = inner if isinstance(inner, dict) else (data if isinstance(data, dict) else {})
            sections.append(section)
            if kind is SectionKind.LIVE_STATE:
                live_state = parse_live_state(toks, r.start, r.end, r.span, live_yaml, ctx)

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

    def build_section(
        self,
        r: _RawSection,
        kind: SectionKind,
        number: int | None,
        key: str,
        stitle: str,
        markers: tuple[MarkerSpec, ...],
    ) -> tuple[Section, Block | None]:
        """A section and its blocks (with its Live State YAML block, if it has one)."""
        blocks: list[Block] = []
        is_verify_section = any(m.rule.check for m in markers)
        live_yaml: Block | None = None
        for i in range(r.start, r.end):
            t = self.tokens[i]
            if t.type != "fence":
                continue
            role = self._role(t, kind, is_verify_section, stitle, live_yaml is None)
            blk = self._block(t, len(blocks), role, kind, stitle)
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
            markers=markers,
            blocks=tuple(blocks),
            quotes=quotes,
            hints=hints,
            span=r.span,
            slug=slugify(stitle),
        )
        return section, live_yaml

    # -- document structure

    def _newline(self) -> str:
        m = NEWLINES.search(self.text)
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

    def split_sections(self) -> list[_RawSection]:
        toks = self.tokens
        heads = [i for i, t in enumerate(toks) if t.type == "heading_open" and t.tag == "h2" and t.level == 0]
        out: list[_RawSection] = []
        for n, i in enumerate(heads):
            end_tok = heads[n + 1] if n + 1 < len(heads) else len(toks)
            start_line = (toks[i].map or [0, 0])[0]
            end_line = (toks[heads[n + 1]].map or [0])[0] if n + 1 < len(heads) else len(self.ctx.lines)
            out.append(_RawSection(toks[i], toks[i + 1].content, i + 3, end_tok, Span(start_line, end_line)))
        return out

    def classify_heading(self, r: _RawSection) -> tuple[SectionKind, int | None, str, str, str]:
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
        return quote_lines(toks[i], self.ctx)

    def _is_legend(self, t: Token) -> bool:
        return not t.info.strip() and t.content.lstrip().startswith("Legend")

    def _quotes(self, r: _RawSection) -> tuple[tuple[str, ...], tuple[str, ...]]:
        quotes: list[str] = []
        hints: list[str] = []
        for i in range(r.start, r.end):
            t = self.tokens[i]
            if t.type == "paragraph_open" and self._enclosing(i) == "blockquote_open":
                lines = quote_lines(t, self.ctx)
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
        """What Director does with a fenced block, by its language, section and first line."""
        lang = (t.info.split() or [""])[0].lower()
        if not lang:
            return BlockRole.DIAGRAM if not self._is_legend(t) else BlockRole.LEGEND
        if kind is SectionKind.LIVE_STATE and lang in ("yaml", "yml") and first_yaml:
            return BlockRole.LIVE_STATE
        if lang in ("yaml", "yml") and re.search(r"^resolved_inputs\s*:", t.content, re.M):
            return BlockRole.RESOLVED_INPUTS
        if kind in EXECUTABLE_KINDS and lang in SHELL_LANGS:
            attrs = fence_attributes(t.info.strip()[len(lang) :], self.ctx, (t.map or (0, 0))[0])
            if attrs is not None and attrs.excluded:
                return BlockRole.ILLUSTRATIVE  # Runme's excludeFromRunAll=true: shown, never run
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
        """A fenced block with what its role needs: retry policy, checks, realizations, template rules."""
        ctx = self.ctx
        span = Span(*(t.map or (0, 0)))
        body_start = span.start + 1
        lang = (t.info.split() or [""])[0]
        info = t.info.strip()
        text = t.content
        shell = lang.lower() in SHELL_LANGS
        if shell:
            try:
                bash.parse(text)  # cached: every later question about this block starts from it
            except TooDeep as exc:
                raise ctx.error(
                    f"this bash nests more than {MAX_DEPTH} levels deep ($(…) in $(…), a chain of && …): "
                    "Director's analyser reads no deeper (docs/limits.md); split it up",
                    body_start + exc.row,
                ) from None
        retry = parse_retry(info[len(lang) :], ctx, span.start) if shell else None
        attrs = fence_attributes(info[len(lang) :], ctx, span.start) if shell else None
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
            # the functions this block leaves in the session, for the verify blocks after it
            self.session_functions.update(bash.function_sources(text))
        context = ""
        if role is BlockRole.VERIFY:
            first = next((ln.strip() for ln in text.split("\n") if ln.strip()), "")
            vm = _VERIFY_LINE.match(first)
            verify_title = vm.group(1) if vm else ""
            context = bash.calls_functions(text, self.session_functions) if self.session_functions else ""
            vmodel = bash.verify_model(text, body_start, context)
            block_checks = tuple(
                CheckLine(
                    ln.message,
                    CheckPolarity(ln.polarity),
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
            attributes=attrs.items if attrs is not None else (),
            context=context,
        )

    def _check_realizations(self, sections: Sequence[Section]) -> None:
        """Every `# realized in §N` names a section of the plan."""
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


def parse(text: str, path: str | None = None) -> Plan:
    """Parse a plan's text; raises PlanError (naming path:line) for malformed plans, nothing else."""
    # The parse allocates many small acyclic objects; the cyclic GC's repeated passes over them made a
    # 5,000-section plan cost 25% more per section than a 500-section one. Pause it, restore it.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return PlanParser(text, path).run()
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

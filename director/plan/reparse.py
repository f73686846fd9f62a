"""After a ledger write, the plan re-read from its Live State section alone (`reparse_live_state`).

A write changes only Live State, yet parsing the whole plan again made every write cost as much as the
first read: on a 5 MB plan, seconds and a second copy of the model in memory. The Live State section
starts at a top-level `##` heading, so it reads alone exactly as inside the document; the next `##` line is
read with it, to show the section still ends there (an unclosed fence or an HTML block would swallow that
heading). Everything else is the same text, so it reads the same: the sections after Live State only move
by the lines the write added or removed. What a section can feed the rest of the plan (resolved inputs,
the legend, realizations, an act or verify block) is never in a section re-read alone: then, and whenever
any of this cannot be shown, the caller parses the whole text. tests/test_reparse.py proves the result
equal to the whole parse.
"""

from __future__ import annotations

from dataclasses import replace

from director.errors import PlanError
from director.plan import checkrows
from director.plan.headings import parse_markers
from director.plan.model import Block, BlockRole, Plan, Section, SectionKind, Span
from director.plan.parse import PlanParser
from director.plan.source import plan_lines, span_offsets, unclosed_fence
from director.plan.source import tokens as markdown_tokens
from director.plan.tables import parse_live_state

# Blocks that make a Live State section more than a ledger (they feed the rest of the plan).
_NOT_LEDGER_ROLES = frozenset(
    {BlockRole.ACT, BlockRole.VERIFY, BlockRole.TEMPLATE, BlockRole.RESOLVED_INPUTS, BlockRole.LEGEND}
)


def reparse_live_state(plan: Plan, text: str) -> Plan | None:
    """`parse(text)` for a text that differs from `plan.source` only inside its Live State section;
    None when that cannot be shown (the caller then parses the whole text)."""
    old = next((s for s in plan.sections if s.kind is SectionKind.LIVE_STATE), None)
    if old is None or plan.live_state is None or any(b.role in _NOT_LEDGER_ROLES for b in old.blocks):
        return None
    # By offsets: a huge plan is compared in place, never split into lines (only the section is).
    src, start, end = plan.source, old.span.start, old.span.end
    head, tail = span_offsets(src, start, end)
    new_tail = len(text) - (len(src) - tail)
    if new_tail <= head or not _same(text, 0, src, 0, head):
        return None
    if not _same(text, new_tail, src, tail, len(src) - tail):
        return None
    if tail < len(src) and text[new_tail - 1] != src[tail - 1]:
        return None  # the section's last line end changed: the next line might join it
    region = plan_lines(text[head:new_tail])
    if not region or region[0] != old.heading:
        return None  # the heading changed: its key, markers or kind may have
    new_end = start + len(region)
    delta = new_end - end
    following = plan_lines(text[new_tail : new_tail + 4096])[:1]  # the next `##` line, if any
    tokens = markdown_tokens("\n".join(region + following) + "\n")
    for t in tokens:
        if t.map is not None:
            t.map = [t.map[0] + start, t.map[1] + start]
    heads = [(t.tag, (t.map or [0])[0]) for t in tokens if t.type == "heading_open" and t.level == 0]
    if heads != [("h2", start)] + ([("h2", new_end)] if following else []):
        return None
    lines = [""] * start + region + following  # (the parser reads only the section's lines)
    try:
        p = PlanParser(text, plan.path, lines, tokens)
        r = p.split_sections()[0]
        kind, number, key, stitle, marks = p.classify_heading(r)
        if r.span != Span(start, new_end) or kind is not SectionKind.LIVE_STATE or key != old.key:
            return None
        if any(t.type == "fence" and unclosed_fence(t, p.ctx) for t in tokens[r.start : r.end]):
            return None
        markers = parse_markers(marks, p.ctx, r.span.start, plan.inputs) if marks else ()
        section, live_yaml = p.build_section(r, kind, number, key, stitle, markers)
        if any(b.role in _NOT_LEDGER_ROLES for b in section.blocks):
            return None
        live_state = parse_live_state(tokens, r.start, r.end, r.span, live_yaml, p.ctx)
    except PlanError:
        return None  # the whole parse says where
    sections = tuple(
        section if s is old else _shifted(s, delta) if delta and s.span.start >= end else s
        for s in plan.sections
    )
    if live_state.check_rows:
        rows = checkrows.feed_check_rows(live_state.check_rows, plan.contract, sections)
        live_state = replace(live_state, check_rows=rows)
    return replace(
        plan,
        source=text,
        sections=sections,
        live_state=live_state,
        inputs=tuple(replace(i, line=i.line + delta) if i.line >= end else i for i in plan.inputs),
        contract=tuple(replace(c, line=c.line + delta) if c.line >= end else c for c in plan.contract),
    )


def _same(a: str, i: int, b: str, j: int, n: int, chunk: int = 1 << 20) -> bool:
    """a[i:i+n] == b[j:j+n], compared a chunk at a time (no copy of a whole plan)."""
    return all(
        a[i + k : i + min(k + chunk, n)] == b[j + k : j + min(k + chunk, n)] for k in range(0, n, chunk)
    )


def _span(span: Span, delta: int) -> Span:
    return Span(span.start + delta, span.end + delta)


def _shifted(section: Section, delta: int) -> Section:
    """A section after Live State, `delta` lines further down: every plan line it holds moves."""
    blocks = tuple(_block(b, delta) for b in section.blocks)
    return replace(section, span=_span(section.span, delta), blocks=blocks)


def _block(b: Block, delta: int) -> Block:
    return replace(
        b,
        span=_span(b.span, delta),
        body_start=b.body_start + delta,
        checks=tuple(replace(c, line=c.line + delta) for c in b.checks),
        realizations=tuple(replace(z, line=z.line + delta) for z in b.realizations),
        verify=None if b.verify is None else replace(b.verify, line_offset=b.verify.line_offset + delta),
    )

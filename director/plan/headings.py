"""Section headings: the marker tail and its conditional notes, the kind and key of a section (pure)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from director.plan import markers
from director.plan.model import Condition, Input, MarkerSpec, SectionKind
from director.plan.source import Source


def slugify(title: str) -> str:
    """Lower case, every run of non-alphanumerics → `-` (ASCII only, so keys stay stable)."""
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()  # Ü → U
    return re.sub(r"[^a-z0-9]+", "-", ascii_title.lower()).strip("-") or "section"


def _emoji_like(ch: str) -> bool:
    """A pictographic symbol that could be meant as a marker (So category, above the Latin blocks)."""
    return ord(ch) >= 0x2100 and unicodedata.category(ch) == "So"


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


def parse_markers(tail: str, ctx: Source, line0: int, inputs: Sequence[Input]) -> tuple[MarkerSpec, ...]:
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

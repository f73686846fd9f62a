"""The plan source as the parser reads it: markdown-it tokens, lines for messages, YAML as plain data."""

from __future__ import annotations

import datetime
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from director.errors import PlanError

if TYPE_CHECKING:
    from ruamel.yaml import YAML

NEWLINES = re.compile(r"\r\n?|\n")  # exactly markdown-it's normalisation, so Token.map lines agree
_MD: MarkdownIt | None = None


def _markdown() -> MarkdownIt:
    """One shared markdown-it instance (building it costs more than parsing a small plan)."""
    global _MD
    if _MD is None:
        # Only block structure and raw inline `content` are read, never inline children: skipping the
        # inline pass halves the parse time of a large plan. `tokens` normalises, only when needed.
        _MD = MarkdownIt("commonmark").enable("table").disable(["inline", "normalize"])
    return _MD


def tokens(text: str) -> list[Token]:
    """markdown-it's tokens for `text`, normalised as markdown-it does (line ends to `\n`, NUL to U+FFFD)
    only when it needs it: markdown-it's own rule copies the whole text every time (a 5 MB plan with one
    emoji is a 20 MB string)."""
    if "\r" in text or "\0" in text:
        text = NEWLINES.sub("\n", text).replace("\0", "\ufffd")
    return _markdown().parse(text)


@dataclass
class Source:
    """Parse-wide state: the source lines and the path, for error messages."""

    lines: list[str]
    path: str | None

    def error(self, message: str, line0: int | None) -> PlanError:
        """A PlanError at a 0-based line."""
        return PlanError(message, path=self.path, line=None if line0 is None else line0 + 1)


def plan_lines(text: str) -> list[str]:
    """The text's lines as the parser numbers them (markdown-it's newlines; no empty last line)."""
    lines = NEWLINES.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def span_offsets(text: str, start: int, end: int) -> tuple[int, int]:
    """Where lines `start` and `end` begin in `text` (`end` may be the line count: the text's length),
    lines ending as markdown-it ends them (`\n`, `\r\n`, a lone `\r`)."""
    head, pos, n = 0, 0, 0
    if end > 0:
        for m in NEWLINES.finditer(text):
            n += 1
            pos = m.end()
            if n == start:
                head = pos
            if n == end:
                break
        else:  # the last line has no line end: line `end` begins past it
            pos = len(text)
            head = pos if n < start else head
    return head, pos


def unclosed_fence(tok: Token, ctx: Source) -> bool:
    """Whether a fence token ran to the end of its container without its closing fence."""
    if tok.map is None:
        return False
    start, end = tok.map
    if end - 1 <= start:
        return True
    last = re.sub(r"^[\s>]*", "", ctx.lines[end - 1]) if end - 1 < len(ctx.lines) else ""
    ch = tok.markup[:1] or "`"
    return not re.fullmatch(rf"{re.escape(ch)}{{{len(tok.markup)},}}\s*", last)


def quote_lines(tok: Token, ctx: Source) -> list[str]:
    """The lines of a blockquote paragraph token, without their `>` marks."""
    if tok.map is None:
        return []
    return [re.sub(r"^\s*>\s?", "", line) for line in ctx.lines[tok.map[0] : tok.map[1]]]


def plain(value: Any, *, exact: bool = False) -> Any:
    """ruamel round-trip data → plain Python: JSON-able by default, `exact` for round-trip comparisons.

    By default: dict/list/str/int/float/bool/None, keys as strings, dates as ISO strings, tagged scalars as
    their text (what the model keeps). `exact` keeps what comparing what was meant with what re-parses must
    tell apart: keys keep their type, and a date or datetime is tagged so that it equals neither the other
    nor the string that spells it; other scalars stay as loaded.
    """
    if isinstance(value, Mapping):
        return {(plain(k, exact=True) if exact else str(k)): plain(v, exact=exact) for k, v in value.items()}
    if isinstance(value, list | tuple) or (not exact and isinstance(value, set)):
        return [plain(v, exact=exact) for v in value]
    if isinstance(value, datetime.datetime):
        return ("datetime", value.replace(tzinfo=None).isoformat()) if exact else value.isoformat()
    if isinstance(value, datetime.date):
        return ("date", value.isoformat()) if exact else value.isoformat()
    if isinstance(value, str):
        return str(value)  # ruamel's ScalarString subclasses dropped
    if exact or isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if hasattr(value, "value"):  # TaggedScalar
        return str(value.value)
    return str(value)


_PER_THREAD = threading.local()


def _rt_yaml() -> YAML:
    """One round-trip loader per thread, reused (each load resets it; building one globs ruamel's plug-ins;
    a loader reads one text at a time, and a family run reads plans on several threads)."""
    loader: YAML | None = getattr(_PER_THREAD, "rt_yaml", None)
    if loader is None:
        from ruamel.yaml import YAML

        loader = _PER_THREAD.rt_yaml = YAML(typ="rt")
    return loader


def load_yaml(text: str, ctx: Source, body_start: int, what: str) -> Any:
    """Round-trip-parse YAML; any failure is a PlanError on the plan line of the problem."""
    try:
        data = _rt_yaml().load(text)
    except Exception as exc:  # ruamel raises many types; each means bad YAML
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        context = getattr(exc, "context_mark", None)
        if mark is not None and context is not None and mark.line >= text.count("\n"):
            mark = context  # "got <stream end>": the opening of the unclosed construct is the useful line
        line = body_start + (mark.line if mark is not None else 0)
        problem = getattr(exc, "problem", None) or (str(exc).splitlines() or [type(exc).__name__])[0]
        raise ctx.error(f"{what} YAML does not parse: {problem}", line) from None
    return plain(data)

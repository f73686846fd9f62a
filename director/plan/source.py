"""The plan source as the parser reads it: markdown-it tokens, lines for messages, YAML as plain data."""

from __future__ import annotations

import datetime
import re
import threading
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from director.errors import PlanError

if TYPE_CHECKING:
    from ruamel.yaml import YAML

NEWLINES = re.compile(r"\r\n?|\n")  # exactly markdown-it's normalisation, so Token.map lines agree
_MD: MarkdownIt | None = None

# How deep lists and blockquotes may nest (markdown-it's `maxNesting`, in its levels: a blockquote is one,
# a list two -- the list and its item). At that depth markdown-it stops reading and silently drops the
# rest of the document, so a plan that reaches it is refused (`nesting_too_deep`) instead of being read
# short. commonmark's preset says 20 (ten nested lists); 100 is markdown-it's own default preset's, and
# its recursion (two or three Python frames a level) stays far below Python's limit (docs/limits.md).
MAX_NESTING = 100


def _markdown() -> MarkdownIt:
    """One shared markdown-it instance (building it costs more than parsing a small plan)."""
    global _MD
    if _MD is None:
        # Only block structure and raw inline `content` are read, never inline children: skipping the
        # inline pass halves the parse time of a large plan. `tokens` normalises, only when needed.
        md = MarkdownIt("commonmark", {"maxNesting": MAX_NESTING})
        _MD = md.enable("table").disable(["inline", "normalize"])
    return _MD


def tokens(text: str) -> list[Token]:
    """markdown-it's tokens for `text`, normalised as markdown-it does (line ends to `\n`, NUL to U+FFFD)
    only when it needs it: markdown-it's own rule copies the whole text every time (a 5 MB plan with one
    emoji is a 20 MB string)."""
    if "\r" in text or "\0" in text:
        text = NEWLINES.sub("\n", text).replace("\0", "\ufffd")
    return _markdown().parse(text)


_CONTAINERS = frozenset({"blockquote_open", "bullet_list_open", "ordered_list_open"})


def nesting_too_deep(toks: list[Token]) -> tuple[int, int] | None:
    """(0-based line, how many lists and blockquotes enclose it, itself included) of the first container
    markdown-it opened where it stops reading (`MAX_NESTING`): everything after it in the document would
    be lost. None when no container reaches that level. A container's content is read one level below its
    opening token (a list's items two), so a blockquote, list or list item opened at level
    `MAX_NESTING - 1` is the one whose content is skipped; a paragraph or table there is read whole."""
    depth = 0
    for t in toks:
        if t.type in _CONTAINERS:
            depth += 1
            if t.level >= MAX_NESTING - 1:
                return (t.map[0] if t.map else 0), depth
        elif t.type == "list_item_open" and t.level >= MAX_NESTING - 1:
            return (t.map[0] if t.map else 0), depth
        elif t.type in ("blockquote_close", "bullet_list_close", "ordered_list_close"):
            depth -= 1
    return None


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


_FENCE_RUN = re.compile(r"`{3,}|~{3,}")
_OPENING_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*(\S.*)$")


def swallowed_fence(opening: str, body: str) -> int | None:
    """0-based row in a fenced block's `body` of a line that opens a fence as long as the block's own, with
    an info string (```` ```bash ```` inside a ```` ``` ```` block), else None.

    Such a line cannot close the block (a closing fence has no info string), so the block runs on to the
    next bare fence: the author did not close the block before it, and whatever lies between -- a verify
    block, an act -- became this block's text. A shorter fence inside (```` ```bash ```` in a
    ```` ```` ```` block) is how Markdown nests an example, and is left alone. `opening` is the block's
    opening line as written (a list's or quote's marks before the fence are skipped)."""
    m = _FENCE_RUN.search(opening)
    if m is None:
        return None
    mark = m.group(0)
    for row, line in enumerate(body.split("\n")):
        f = _OPENING_FENCE.match(line)
        if f is None or f.group(1)[0] != mark[0] or len(f.group(1)) < len(mark):
            continue
        if mark[0] == "`" and "`" in f.group(2):
            continue  # a backtick fence's info string holds no backtick: this line is not a fence
        return row
    return None


def swallowed_fences(source: str, blocks: Iterable[tuple[int, int, str]]) -> Iterator[tuple[int, int, str]]:
    """For each block (its 0-based opening line, first body line, text) whose fence the author did not
    close before the next one opens (`swallowed_fence`): its 1-based line, the 1-based line of the fence
    inside it, and that line's text."""
    lines: list[str] | None = None
    for start, body_start, text in blocks:
        if "```" not in text and "~~~" not in text:
            continue
        if lines is None:
            lines = plan_lines(source)  # only for a plan with a fence-like line inside a block
        row = swallowed_fence(lines[start], text)
        if row is not None:
            yield start + 1, body_start + row + 1, text.split("\n")[row].strip()


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


def quiet_ruamel() -> None:
    """ruamel reports some things about a document as Python warnings on stderr (an anchor defined twice:
    `ReusedAnchorWarning`), once per place, around Director's own message: a plan's YAML is judged by
    Director alone (an error names its line, or it reads), so they are never shown."""
    from ruamel.yaml.error import YAMLFutureWarning, YAMLWarning

    warnings.filterwarnings("ignore", category=YAMLWarning)
    warnings.filterwarnings("ignore", category=YAMLFutureWarning)


def _rt_yaml() -> YAML:
    """One round-trip loader per thread, reused (each load resets it; building one globs ruamel's plug-ins;
    a loader reads one text at a time, and a family run reads plans on several threads)."""
    quiet_ruamel()  # each time: a caller may have reset the warning filters (pytest does, per test)
    loader: YAML | None = getattr(_PER_THREAD, "rt_yaml", None)
    if loader is None:
        from ruamel.yaml import YAML

        loader = _PER_THREAD.rt_yaml = YAML(typ="rt")
    return loader


_SURROGATE = re.compile("[\ud800-\udfff]")
# A YAML escape that decodes to a lone surrogate (`"\ud800"`, `"\U0000DFFF"`): not a character.
_SURROGATE_ESCAPE = re.compile(r"\\(?:u[dD][89a-fA-F][0-9a-fA-F]{2}|U0000[dD][89a-fA-F][0-9a-fA-F]{2})")


def has_surrogate(text: str) -> bool:
    """Whether `text` holds a lone surrogate (U+D800..U+DFFF): not text, it cannot be written as UTF-8."""
    return _SURROGATE.search(text) is not None


def whole_number(text: str) -> int | None:
    """The number `text` writes in ASCII digits, else None: `str.isdigit` also says yes to `²`, which `int()`
    refuses (a plan's `#` cell or `retries=` that says `²` is not a number, never a traceback)."""
    return int(text) if text.isascii() and text.isdigit() else None


# How deep Director's YAML (Live State, the resolved-inputs template) may nest (docs/limits.md): Director
# writes two levels; ruamel composes a node by recursion, so thousands of `[` would exhaust Python's stack
# wherever the YAML is read next (a write-back, a diff) rather than here.
MAX_YAML_DEPTH = 64


def _yaml_shape(text: str) -> tuple[int, str] | None:
    """(0-based line, why) of the first alias (`*name`, a `<<: *name` merge too) or of a collection past
    `MAX_YAML_DEPTH`, from ruamel's events (its parser is a loop; only composing recurses); else None."""
    from ruamel.yaml.events import (
        AliasEvent,
        CollectionEndEvent,
        CollectionStartEvent,
    )

    depth = 0
    for event in _rt_yaml().parse(text):
        if isinstance(event, AliasEvent):
            return event.start_mark.line, (
                f"uses an alias (*{event.anchor}): Director reads plain values there, write the value out in "
                "full"
            )
        if isinstance(event, CollectionStartEvent):
            depth += 1
            if depth > MAX_YAML_DEPTH:
                return event.start_mark.line, f"nests deeper than {MAX_YAML_DEPTH} levels"
        elif isinstance(event, CollectionEndEvent):
            depth -= 1
    return None


def load_yaml(text: str, ctx: Source, body_start: int, what: str) -> Any:
    """Round-trip-parse YAML; any failure is a PlanError on the plan line of the problem.

    Aliases are refused: Director's YAML (Live State, the resolved-inputs template) holds plain values,
    and an alias repeats a node without copying it, so a few lines of them (a "billion laughs") stand
    for more data than any memory holds once read as values; so is nesting past `MAX_YAML_DEPTH`
    (docs/limits.md). A double-quoted escape
    that decodes to a lone surrogate (`"\ud800"`) is refused too: it is no character, and no file or
    terminal can be given it.
    """
    try:
        shape = _yaml_shape(text)
        data = _rt_yaml().load(text) if shape is None else None
    except Exception as exc:  # ruamel raises many types; each means bad YAML
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        context = getattr(exc, "context_mark", None)
        if mark is not None and context is not None and mark.line >= text.count("\n"):
            mark = context  # "got <stream end>": the opening of the unclosed construct is the useful line
        line = body_start + (mark.line if mark is not None else 0)
        problem = getattr(exc, "problem", None) or (str(exc).splitlines() or [type(exc).__name__])[0]
        raise ctx.error(f"{what} YAML does not parse: {problem}", line) from None
    if shape is not None:
        raise ctx.error(f"{what} YAML {shape[1]} (docs/limits.md)", body_start + shape[0])
    value = plain(data)
    if "\\" in text and _SURROGATE_ESCAPE.search(text) and any(map(has_surrogate, _strings(value))):
        row, escape = next(
            (n, m.group(0))
            for n, ln in enumerate(text.split("\n"))
            if (m := _SURROGATE_ESCAPE.search(ln)) is not None
        )
        raise ctx.error(
            f"{what} YAML holds {escape}, a lone surrogate: it is no character (write the character itself)",
            body_start + row,
        )
    return value


def _strings(value: Any) -> Iterator[str]:
    """Every string in plain data (keys and values), without recursion."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            yield v
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)

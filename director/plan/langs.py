"""Fence languages for file templates: how each writes comments, strings and values (pure).

`syntax_for(lang)` is the per-language table; `split_line` cuts a line at its trailing comment (outside
strings), `code_lines` does it for a whole body (skipping `/* … */` comments and YAML block scalars), and
`value_slot` finds, on a line of code, the span of the value a rule rewrites: the value of a key, or the
line's value as the language writes it. Rendering (`director.plan.templates`) rewrites that span.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

# ---------------------------------------------------------------------------------------------------
# Languages


# How a language's values are found on a line (`value_slot`) and written (templates).
Family = Literal["json", "yaml", "toml", "ini", "css", "sql", "nginx", "code", "generic"]
# How a quote character is escaped inside its string: `\"`, doubled (`''`), or not at all.
Escaping = Literal["backslash", "double", "none"]
BS: Final = "backslash"
DBL: Final = "double"
NONE: Final = "none"


@dataclass(frozen=True)
class Syntax:
    """How one fence language writes comments, strings and values."""

    family: Family
    marks: tuple[str, ...]  # line comment marks: "//", "#", ";", "--"
    block: bool  # `/* … */` comments
    tight: tuple[str, ...]  # marks that start a comment right after code (others need whitespace before)
    quotes: tuple[tuple[str, Escaping], ...]  # (quote character, how it is escaped)
    bare_quote: str  # quote for a bare slot whose new value is not a literal of the language ("": none)
    words: frozenset[str] = frozenset()  # bare literal words besides numbers (true, false, null …)


_JSON_WORDS = frozenset({"true", "false", "null"})
_JSON = Syntax("json", ("//",), True, ("//",), (('"', BS), ("'", BS)), '"', _JSON_WORDS)
_YAML = Syntax("yaml", ("#",), False, (), (('"', BS), ("'", DBL)), '"')
_TOML = Syntax("toml", ("#",), False, (), (('"', BS), ("'", NONE)), '"')
_INI = Syntax("ini", (";", "#"), False, (), (('"', BS), ("'", NONE)), "")
_CSS = Syntax("css", (), True, (), (('"', BS), ("'", BS)), "")
_SCSS = Syntax("css", ("//",), True, (), (('"', BS), ("'", BS)), "")
_SQL_WORDS = frozenset({"true", "false", "null", "TRUE", "FALSE", "NULL"})
_SQL = Syntax("sql", ("--",), True, ("--",), (("'", DBL), ('"', DBL)), "'", _SQL_WORDS)
_NGINX = Syntax("nginx", ("#",), False, (), (('"', BS), ("'", BS)), "")
_HCL = Syntax("code", ("#", "//"), True, (), (('"', BS),), '"', _JSON_WORDS)
_SQ_DQ: tuple[tuple[str, Escaping], ...] = (('"', BS), ("'", BS))
_PYTHON = Syntax("code", ("#",), False, (), _SQ_DQ, '"', frozenset({"True", "False", "None"}))
_RUBY = Syntax("code", ("#",), False, (), _SQ_DQ, '"', frozenset({"true", "false", "nil"}))
_JS = Syntax(
    "code", ("//",), True, ("//",), (('"', BS), ("'", BS), ("`", BS)), '"', _JSON_WORDS | {"undefined"}
)
_C = Syntax("code", ("//",), True, ("//",), (('"', BS),), '"', frozenset({"true", "false", "nil", "NULL"}))
_GENERIC = Syntax("generic", ("//", "#", ";", "--"), True, (), (('"', BS), ("'", BS)), "")


def _langs(syntax: Syntax, names: str) -> dict[str, Syntax]:
    return dict.fromkeys(names.split(), syntax)


_LANGS: dict[str, Syntax] = {
    **_langs(_JSON, "json jsonc json5 jsonl"),
    **_langs(_YAML, "yaml yml"),
    **_langs(_TOML, "toml"),
    **_langs(_INI, "ini cfg conf config properties env dotenv .env editorconfig gitconfig desktop systemd"),
    **_langs(_CSS, "css"),
    **_langs(_SCSS, "scss less"),
    **_langs(_SQL, "sql sqlite psql pgsql postgres postgresql mysql plsql tsql"),
    **_langs(_NGINX, "nginx"),
    **_langs(_HCL, "hcl tf terraform tfvars"),
    **_langs(_PYTHON, "python py python3"),
    **_langs(_RUBY, "ruby rb"),
    **_langs(_JS, "js javascript mjs cjs jsx ts typescript tsx"),
    **_langs(_C, "go rust rs c cpp c++ h java kotlin kt swift scala dart"),
}


def syntax_for(lang: str) -> Syntax:
    """The syntax of a fence language (its first word, any case); unknown languages accept every comment."""
    return _LANGS.get(lang.strip().lower(), _GENERIC)


# ---------------------------------------------------------------------------------------------------
# Strings and comments on one line


def _string_end(line: str, i: int, quote: str, esc: Escaping) -> int:
    """The index after the string opening at line[i], or -1 when it does not close on this line."""
    j, n = i + 1, len(line)
    while j < n:
        c = line[j]
        if esc == BS and c == "\\":
            j += 2
            continue
        if c == quote:
            if esc == DBL and j + 1 < n and line[j + 1] == quote:
                j += 2
                continue
            return j + 1
        j += 1
    return -1


def _string_at(line: str, i: int, syntax: Syntax) -> int:
    """If a string literal opens at line[i], the index after it; else -1."""
    c = line[i]
    for quote, esc in syntax.quotes:
        if c == quote:
            # An apostrophe inside a word (YAML/INI `it's`) does not open a string.
            if quote == "'" and i > 0 and line[i - 1].isalnum():
                return -1
            return _string_end(line, i, quote, esc)
    return -1


@dataclass(frozen=True)
class Split:
    """A line cut at its trailing comment."""

    code: str  # the line up to the trailing comment, without the whitespace before it
    gap: str  # whitespace between code and comment
    comment: str  # the trailing comment, mark included, to the end of the line ("" if none)
    text: str  # the comment's text: without its mark (and `*/`), for rules
    opens_block: bool  # an unclosed `/*` continues on the next line


def split_line(line: str, syntax: Syntax) -> Split:
    """Split a line at its trailing comment (outside strings)."""
    i, n = 0, len(line)
    while i < n:
        end = _string_at(line, i, syntax)
        if end > 0:
            i = end
            continue
        mark = None
        if syntax.block and line.startswith("/*", i):
            close = line.find("*/", i + 2)
            if close >= 0 and line[close + 2 :].strip():
                i = close + 2  # an inline comment with code after it is part of the code
                continue
            mark = "/*"
        else:
            for m in syntax.marks:
                if line.startswith(m, i) and (m in syntax.tight or i == 0 or line[i - 1].isspace()):
                    mark = m
                    break
        if mark is None:
            i += 1
            continue
        code = line[:i].rstrip(" \t")
        comment = line[i:]
        text = comment[len(mark) :]
        opens = False
        if mark == "/*":
            body = text.rstrip()
            if body.endswith("*/"):
                text = body[:-2]
            else:
                opens = True
        return Split(code, line[len(code) : i], comment, text, opens)
    return Split(line, "", "", "", False)


def _block_comment_continues(line: str, syntax: Syntax) -> bool:
    """Inside a `/* … */` comment: whether it is still open after this line."""
    close = line.find("*/")
    if close < 0:
        return True
    return split_line(line[close + 2 :], syntax).opens_block


_YAML_BLOCK_SCALAR = re.compile(r"(?:^|[:\s-])[|>][-+0-9]*$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def code_lines(
    text: str, syntax: Syntax, comments: dict[int, str] | None = None
) -> list[tuple[int, str, Split | None]]:
    """Every line with its split, or None for a line that is all comment, blank, or the content of a
    `/* … */` comment or of a YAML block scalar (`key: |`), where a `#` is text. `comments`, when given,
    receives the text of each line that is one whole comment (line offset -> text without its mark)."""
    out: list[tuple[int, str, Split | None]] = []
    in_block = False
    scalar_indent = -1  # indentation of the line that opened a YAML block scalar
    for off, line in enumerate(text.split("\n")):
        if in_block:
            in_block = _block_comment_continues(line, syntax)
            out.append((off, line, None))
            continue
        if scalar_indent >= 0:
            if not line.strip() or _indent(line) > scalar_indent:
                out.append((off, line, None))
                continue
            scalar_indent = -1
        sp = split_line(line, syntax)
        in_block = sp.opens_block
        if syntax.family == "yaml" and _YAML_BLOCK_SCALAR.search(sp.code):
            scalar_indent = _indent(line)
        if comments is not None and not sp.code.strip() and sp.comment and not sp.opens_block:
            comments[off] = sp.text
        out.append((off, line, sp if sp.code.strip() else None))
    return out


# ---------------------------------------------------------------------------------------------------
# Finding the value a rule rewrites


def mask(code: str, syntax: Syntax) -> tuple[str, list[tuple[int, int]]]:
    """The code with string interiors blanked (NUL) so structure can be searched, and the string spans."""
    chars = list(code)
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(code):
        end = _string_at(code, i, syntax)
        if end > 0:
            spans.append((i, end))
            for k in range(i + 1, end - 1):
                chars[k] = "\0"
            i = end
        else:
            i += 1
    return "".join(chars), spans


_CLOSE = {"[": "]", "{": "}", "(": ")"}


def _value_at(
    masked: str, spans: list[tuple[int, int]], p: int, stops: str, whole: bool = False
) -> tuple[int, int] | None:
    """The value starting at or after p: a string, a bracketed collection, or bare text up to a stop
    (`whole`: always the text up to a stop, strings included — CSS and INI values)."""
    n = len(masked)
    while p < n and masked[p] in " \t":
        p += 1
    if p >= n:
        return None
    for s, e in spans:
        if s == p and not whole:
            return s, e
    if masked[p] in _CLOSE and not whole:
        depth, q = 0, p
        while q < n:
            if masked[q] in _CLOSE:
                depth += 1
            elif masked[q] in _CLOSE.values():
                depth -= 1
                if depth == 0:
                    return p, q + 1
            q += 1
        return None
    e = p
    while e < n and masked[e] not in stops:
        e += 1
    while e > p and masked[e - 1] in " \t":
        e -= 1
    return (p, e) if e > p else None


def _depth_zero(masked: str, chars: str) -> list[int]:
    """Positions of `chars` outside brackets."""
    out, depth = [], 0
    for i, c in enumerate(masked):
        if c in _CLOSE:
            depth += 1
        elif c in _CLOSE.values():
            depth = max(0, depth - 1)
        elif depth == 0 and c in chars:
            out.append(i)
    return out


NUMBER = re.compile(
    r"(?<![\w.\0])[-+]?(?:\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][-+]?\d+)?|0x[0-9a-fA-F_]+)(?![\w.\0])"
)


def _last_literal(masked: str, spans: list[tuple[int, int]], syntax: Syntax) -> tuple[int, int] | None:
    """The last string or number (or literal word) on the line."""
    quotes = "'" if syntax.family == "sql" else "".join(q for q, _ in syntax.quotes)
    found = [(s, e) for s, e in spans if masked[s] in quotes]
    found += [m.span() for m in NUMBER.finditer(masked)]
    for w in syntax.words:
        found += [m.span() for m in re.finditer(rf"(?<![\w\0]){re.escape(w)}(?![\w\0])", masked)]
    return max(found) if found else None


def _keyed(masked: str, spans: list[tuple[int, int]], key: str, code: str) -> int | None:
    """The position after `key:` / `key=` (key bare or quoted), outside strings; None if absent."""
    for s, e in spans:
        if code[s + 1 : e - 1] == key:
            m = re.match(r"\s*[:=](?!=)", masked[e:])
            if m:
                return e + m.end()
    m = re.search(rf"(?<![\w$.\-\0]){re.escape(key)}\s*[:=](?![=>])", masked)
    return m.end() if m else None


def _separator_value(
    masked: str, spans: list[tuple[int, int]], seps: str, stops: str, whole: bool = False
) -> tuple[int, int] | None:
    """The value after the line's first separator (outside strings and brackets)."""
    at = _depth_zero(masked, seps)
    for i in at:
        if masked[i] == "=" and (masked[i + 1 : i + 2] in ("=", ">") or (i > 0 and masked[i - 1] in "!<>=:")):
            continue  # `==`, `=>`, `!=`, `<=`, `:=` are operators
        if masked[i] == ":" and masked[i + 1 : i + 2] == "=":
            return _value_at(masked, spans, i + 2, stops, whole)
        return _value_at(masked, spans, i + 1, stops, whole)
    return None


def _yaml_value(masked: str, spans: list[tuple[int, int]]) -> tuple[int, int] | None:
    m = re.match(r"[ \t]*(?:-[ \t]+)*", masked)
    p = m.end() if m else 0
    colon = [i for i in _depth_zero(masked, ":") if i >= p and masked[i + 1 : i + 2] in ("", " ", "\t")]
    if colon:
        return _value_at(masked, spans, colon[0] + 1, "")
    if p and masked[:p].strip().startswith("-"):
        return _value_at(masked, spans, p, "")
    return None


def _css_value(masked: str, spans: list[tuple[int, int]]) -> tuple[int, int] | None:
    start = masked.rfind("{") + 1
    decls = list(re.finditer(r"(?:^|[{;])\s*([$@]?-{0,2}[A-Za-z_][-\w]*)\s*:", masked[start:]))
    if not decls:
        return None
    span = _value_at(masked, spans, start + decls[-1].end(), ";}", whole=True)
    if span is None:
        return None
    s, e = span
    imp = re.search(r"\s*!\s*important\s*$", masked[s:e])
    return (s, s + imp.start()) if imp and imp.start() > 0 else span


def _nginx_value(masked: str, spans: list[tuple[int, int]], key: str | None) -> tuple[int, int] | None:
    pos, statements = 0, []
    for part in masked.split(";"):
        statements.append((pos, part))
        pos += len(part) + 1
    best = None
    for base, stmt in statements:
        words = [m.span() for m in re.finditer(r"\S+", stmt)]
        if len(words) < 2 or stmt[words[-1][0] : words[-1][1]] in ("{", "}"):
            continue
        name = stmt[words[0][0] : words[0][1]]
        if key is None or name == key:
            s, e = words[-1]
            best = (base + s, base + e)
            if key is not None:
                break
    return best


def value_slot(code: str, syntax: Syntax, key: str | None) -> tuple[int, int] | None:
    """The span in `code` of the value a rule rewrites (for `key`, or the line's value)."""
    masked, spans = mask(code, syntax)
    fam = syntax.family
    if fam == "nginx":
        return _nginx_value(masked, spans, key)
    if fam == "generic":
        return _generic_value(masked, spans, key, code)
    if key is not None:
        p = _keyed(masked, spans, key, code)
        if p is None:
            return None
        stops = ",;}] \t" if fam in ("json", "toml", "code") else ",;}]"
        return _value_at(masked, spans, p, stops)
    if fam == "json":
        keys = [e for s, e in spans if re.match(r"\s*:", masked[e:])]
        if keys:
            colon = masked.index(":", keys[-1])
            return _value_at(masked, spans, colon + 1, ",}] \t")
        return _last_literal(masked, spans, syntax)
    if fam == "yaml":
        return _yaml_value(masked, spans)
    if fam == "toml":
        return _separator_value(masked, spans, "=", ",}]")
    if fam == "ini":
        return _separator_value(masked, spans, "=:", "", whole=True)
    if fam == "css":
        return _css_value(masked, spans)
    if fam == "sql":
        return _last_literal(masked, spans, syntax)
    # code: the value after the line's `=`/`:`, or else the last literal
    return _separator_value(masked, spans, "=:", ",;") or _last_literal(masked, spans, syntax)


def _generic_value(
    masked: str, spans: list[tuple[int, int]], key: str | None, code: str
) -> tuple[int, int] | None:
    """In a language Director does not know, where a value ends cannot be read from its punctuation (a
    `,` or `;` may be part of it: `ciphers = A,B;C`): the value is the whole rest of the line after the
    line's first `=` (or, without one, its first `:`), or after the key's own `=`/`:`. None -- the rule
    cannot be applied, and lint says so -- when the line has no separator, or when the rest after a key
    holds another `=` (`a = 1; b = 2`: where `a`'s value ends is not known)."""
    if key is not None:
        p = _keyed(masked, spans, key, code)
        if p is None or _separators(masked[p:], "="):
            return None
        return _value_at(masked, spans, p, "", whole=True)
    seps = _separators(masked, "=") or _separators(masked, ":")
    if not seps:
        return None
    return _value_at(masked, spans, seps[0] + 1, "", whole=True)


def _separators(masked: str, chars: str) -> list[int]:
    """The `=` (or `:`) at depth zero that separate a key from its value (`==`, `=>`, `!=`, `<=`, `:=`
    are operators)."""
    out = []
    for i in _depth_zero(masked, chars):
        nxt, prev = masked[i + 1 : i + 2], masked[i - 1] if i > 0 else ""
        if masked[i] == "=" and (nxt in ("=", ">") or prev in "!<>=:"):
            continue
        out.append(i)
    return out


def unknown_language(syntax: Syntax) -> bool:
    """Whether this is the table's fallback: a fence language Director does not know."""
    return syntax.family == "generic"

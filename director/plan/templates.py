"""File templates: the annotations in their trailing comments, rendering, and where the file goes (pure).

A non-shell block in a numbered section is a file template (docs/plan-format.md, "Blocks"). Its fence
language (the first word of the info string) selects the comment syntax and how a line's value is found
(the per-language table is `director.plan.langs`):

    "name": "orders-dev",        // = ${WORKER} (${SVC}-${ENV})          JSON/JSONC
    mode = "enforce"  # POLICY=strict → "enforce"; lenient → "warn"       TOML
    background: #ffffff;   /* THEME=light → #ffffff; dark → #111111 */    CSS
    INSERT INTO meta VALUES ('env', 'dev');    -- = ${ENV}                SQL

An annotation in a line's *trailing* comment is a rule; a rule rewrites the value, never the comment:

- `= expr` — the value becomes the expansion of `expr` (`${VAR}` / `$VAR`; an unknown variable is a
  `TemplateError`). Text from ` (` on is commentary. Without a `$` it is commentary, not a rule.
- `key = expr; key2 = expr2` — the same for the values of named keys (several pairs on one line).
- `KNOB=a → x; b/c → y` (also `->`; options split by `/`, `|` or `,`, backticks allowed) — the value
  becomes the literal mapped for the knob's value, as written.

The value keeps its type and quoting: a quoted value stays quoted with the same quote character, escaped
for its language; a bare value stays bare while the new value reads as the same kind of literal, and is
quoted where the language needs it (JSON, TOML, SQL, code; YAML when the plain scalar would change type
or not read back). A knob literal is written as written, except that a bare literal going into a quoted
value is quoted like it. The comment is kept byte for byte, and its column where the code's new length
allows. Lines without rules, whole-line comments and lines inside `/* … */` are copied byte for byte.

In a language Director does not know (a fence language the table in `director.plan.langs` lacks), where
a value ends cannot be read from punctuation -- a `,` or `;` may belong to it (`ciphers = A,B;C`) -- so a
value is the whole rest of its line after the line's first `=` (or `:`), or after its key's; a line with
no separator, or with another `=` after the key, cannot be rewritten, and lint says so
(`template-no-value`) before apply refuses. Never a part of a value.

Where the file goes: the heading names it in backticks (``## 2. Bindings — `${SVC}.jsonc` ``), or names a
variable that holds its whole path (``## 2. Settings — `${CONF}` ``), and the plan's own variables say
where it lives (`export CONFIG="$PWD/${SVC}.jsonc"`, `export CONF="$APP/app.cfg"`): `resolve_target` at
run time, `target_variables` statically (for `director show` and `director lint`).
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from ruamel.yaml import YAML

from director.plan.langs import (
    BS,
    DBL,
    NONE,
    NUMBER,
    Escaping,
    Family,
    Split,
    Syntax,
    code_lines,
    mask,
    split_line,
    syntax_for,
    unknown_language,
    value_slot,
)
from director.plan.model import Block, BlockRole, Plan, TemplateLine, TemplateRule

# ---------------------------------------------------------------------------------------------------
# Errors and expansion


class TemplateError(ValueError):
    """A template cannot be rendered: an unknown variable, an unmapped knob value, no value to rewrite,
    or an ambiguous target."""


_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def expand(expr: str, env: Mapping[str, str]) -> str:
    """Expand `$VAR` / `${VAR}` from env; an unknown variable is an error, never silently empty."""

    def sub(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        if name not in env:
            raise TemplateError(f"${{{name}}} is not set in the session")
        return env[name]

    return _VAR.sub(sub, expr)


# ---------------------------------------------------------------------------------------------------
# Rules


_KNOB_HEAD = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.+)$")
_ARROW = re.compile(r"\s*(?:→|->)\s*")
_OPTIONS = re.compile(r"^[`\w.\-/|, ]+$")
_KEY_RULE = re.compile(r"^([\w.\[\]-]+)\s*=\s*(.+)$")


def _cut_expr(expr: str) -> str:
    """An expression stops before ` (` — the rest is commentary."""
    cut = expr.find(" (")
    return (expr[:cut] if cut >= 0 else expr).strip()


def _knob_rule(text: str) -> TemplateRule | None:
    """`KNOB=a → x; b/c → y` as a rule, or None when the text is not a knob map."""
    head = _KNOB_HEAD.match(text)
    if head is None or not _ARROW.search(head.group(2)):
        return None
    knob = head.group(1)
    mapping: list[tuple[str, str]] = []
    clauses = [c.strip() for c in head.group(2).split(";") if c.strip()]
    for clause in clauses:
        parts = _ARROW.split(clause, maxsplit=1)
        if len(parts) != 2 or not parts[1] or not _OPTIONS.match(parts[0]):
            return None
        options = [o.strip().strip("`") for o in re.split(r"[/|,]", parts[0])]
        if not all(options):
            return None
        mapping.extend((o, parts[1].strip()) for o in options)
    return TemplateRule("knob", knob=knob, mapping=tuple(mapping))


def parse_rules(comment: str) -> tuple[TemplateRule, ...]:
    """Regeneration rules in a trailing comment's text (none for plain commentary)."""
    c = comment.strip()
    if c.startswith("="):
        expr = _cut_expr(c[1:])
        return (TemplateRule("expr", None, expr),) if "$" in expr else ()
    knob = _knob_rule(c)
    if knob is not None:
        return (knob,)
    rules: list[TemplateRule] = []
    for part in c.split(";"):
        km = _KEY_RULE.match(part.strip())
        if not km or "$" not in km.group(2):
            return ()  # commentary like `// retries = 3 per step` is not a rule: rules name a variable
        rules.append(TemplateRule("expr", km.group(1), _cut_expr(km.group(2))))
    return tuple(rules)


def template_lines(text: str, lang: str) -> tuple[TemplateLine, ...]:
    """The lines of a template body that carry rules: in their trailing comment, or -- where the language
    allows no comment after a value (libpq's `pg_service.conf`, many `.env` readers) -- alone on the comment
    line directly above (`# = ${APP_DB}` then `dbname=appdb_dev`). Commented-out lines carry none."""
    syntax = syntax_for(lang)
    out: list[TemplateLine] = []
    comments: dict[int, str] = {}
    lines = code_lines(text, syntax, comments)
    for off, _line, sp in lines:
        above = parse_rules(comments[off - 1]) if off - 1 in comments else ()
        trailing = parse_rules(sp.text) if sp is not None and sp.comment and not sp.opens_block else ()
        if sp is not None and (above or trailing):
            out.append(TemplateLine(off, above + trailing))
    return tuple(out)


def stray_rules(text: str, lang: str) -> list[int]:
    """Line offsets of rule comments that annotate nothing: alone on a line, with no value right below."""
    syntax = syntax_for(lang)
    comments: dict[int, str] = {}
    lines = code_lines(text, syntax, comments)
    has_code = {off for off, _line, sp in lines if sp is not None}
    return [off for off, c in comments.items() if parse_rules(c) and off + 1 not in has_code]


_ONE_VARIABLE = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$[A-Za-z_][A-Za-z0-9_]*")


def heading_target(title: str) -> str | None:
    """The file a template writes: the last backticked path in its heading title (`${SVC}.jsonc`), or a
    backticked variable that names it whole (`` `${CONF}` ``: §0 says where it lives)."""
    paths = [
        p for p in re.findall(r"`([^`]+)`", title)
        if (re.search(r"[./]", p) or _ONE_VARIABLE.fullmatch(p)) and not re.search(r"\s", p)
    ]  # fmt: skip
    return paths[-1] if paths else None


# ---------------------------------------------------------------------------------------------------
# Writing a value in the slot's type and quoting


def _escape(value: str, quote: str, esc: Escaping, family: Family) -> str | None:
    """`value` as the inside of a `quote` string, or None when that string cannot hold it."""
    if esc == DBL:
        return value.replace(quote, quote * 2)
    if esc == NONE:
        return None if (quote in value or any(ord(c) < 0x20 or ord(c) == 0x7F for c in value)) else value
    out = []
    for c in value:
        if c in ("\\", quote):
            out.append("\\" + c)
        elif ord(c) < 0x20 or ord(c) == 0x7F:
            if family == "css":
                out.append(f"\\{ord(c):x} ")
            else:
                named = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\b": "\\b", "\f": "\\f"}.get(c)
                out.append(named or f"\\u{ord(c):04x}")
        else:
            out.append(c)
    return "".join(out)


def _quote(value: str, quote: str, syntax: Syntax) -> str:
    """A string literal for `value` with this quote character (a double-quoted one if it cannot hold it)."""
    escs = dict(syntax.quotes)
    if syntax.family == "yaml" and quote == "'" and any(ord(c) < 0x20 for c in value):
        quote = '"'  # a single-quoted YAML scalar would fold the line breaks
    inner = _escape(value, quote, escs.get(quote, BS), syntax.family)
    if inner is None:
        quote = '"'
        inner = _escape(value, quote, escs.get(quote, BS), syntax.family) or ""
    return quote + inner + quote


# YAML 1.1 (still read by many tools) takes these plain scalars for bools, a null or sexagesimal numbers.
_YAML_11 = re.compile(r"^(?:[yYnN]|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF|~|[-+]?\d[\d_]*(?::[0-5]?\d)+)$")
_PER_THREAD = threading.local()  # a loader reads one text at a time; a family run reads on several threads


def _yaml_plain(text: str) -> tuple[bool, object]:
    """(reads as one plain scalar, what it reads as) for `k: text` in YAML."""
    _yaml_loader: YAML | None = getattr(_PER_THREAD, "yaml", None)
    if _yaml_loader is None:
        from ruamel.yaml import YAML

        _yaml_loader = _PER_THREAD.yaml = YAML(typ="safe", pure=True)
    from ruamel.yaml.error import YAMLError

    if not text or "\n" in text or text != text.strip():
        return False, None
    try:
        loaded = _yaml_loader.load(f"k: {text}\n")
    except YAMLError:
        return False, None
    if not isinstance(loaded, dict) or list(loaded) != ["k"]:
        return False, None
    got = loaded["k"]
    if isinstance(got, str) and _YAML_11.match(text):
        return True, True  # YAML 1.1 readers take it for a bool, a null or a sexagesimal number
    return True, got


def _not_json(word: str) -> NoReturn:
    """`json.loads`'s `parse_constant`: NaN and Infinity are not JSON values."""
    raise ValueError(f"{word} is not JSON")


def _is_literal(text: str, syntax: Syntax) -> bool:
    """Whether bare `text` is a number, bool or null literal (JSON/TOML: any non-string value) here."""
    if syntax.family == "json":
        try:
            return not isinstance(json.loads(text, parse_constant=_not_json), str)
        except ValueError:
            return False
    if syntax.family == "toml":
        import tomllib  # only TOML templates need it (2 ms of every start-up otherwise)

        try:
            return not isinstance(tomllib.loads(f"v = {text}\n")["v"], str)
        except (tomllib.TOMLDecodeError, ValueError):
            return False
    return text in syntax.words or bool(NUMBER.fullmatch(text))


def _is_quoted(text: str, syntax: Syntax) -> str:
    """The quote character of a string literal that is all of `text` ("" if it is not one)."""
    if len(text) >= 2 and text[0] == text[-1] and any(text[0] == q for q, _ in syntax.quotes):
        _masked, spans = mask(text, syntax)
        if spans == [(0, len(text))]:
            return text[0]
    return ""


def _bare_slot(old: str, new: str, syntax: Syntax) -> str:
    """The text for `new` in a slot whose old value was bare."""
    if syntax.family == "yaml":
        ok_new, got_new = _yaml_plain(new)
        ok_old, got_old = _yaml_plain(old)
        old_is_str = not ok_old or isinstance(got_old, str)
        if ok_new and isinstance(got_new, str) and got_new == new and old_is_str:
            return new  # a string stays a plain string
        if ok_new and ok_old and not isinstance(got_old, str | dict | list) and not isinstance(got_new, str):
            return new  # a number/bool/null stays bare while the new value is one too
        return _quote(new, '"', syntax)
    if syntax.bare_quote and not _is_literal(new, syntax):
        return _quote(new, syntax.bare_quote, syntax)
    return new


def _new_value(
    old: str, rule: TemplateRule, env: Mapping[str, str], knobs: Mapping[str, str], syntax: Syntax
) -> str:
    """The text that replaces the value `old` under `rule`."""
    quote = _is_quoted(old, syntax)
    if rule.kind == "knob":
        knob_value = knobs.get(rule.knob, env.get(rule.knob))
        mapping = dict(rule.mapping)
        if knob_value not in mapping:
            raise TemplateError(f"{rule.knob}={knob_value!r} has no literal in the mapping")
        literal = mapping[knob_value]
        if quote and not _is_quoted(literal, syntax):
            return _quote(literal, quote, syntax)
        return literal
    value = expand(rule.expr, env)
    if quote:
        return _quote(value, quote, syntax)
    return _bare_slot(old, value, syntax)


def _rewrite(
    sp: Split,
    rules: tuple[TemplateRule, ...],
    env: Mapping[str, str],
    knobs: Mapping[str, str],
    syntax: Syntax,
    where: str,
) -> str:
    """The line with each rule's value rewritten and the comment kept (at its column when it fits)."""
    code = sp.code
    for rule in rules:
        span = value_slot(code, syntax, rule.key)
        if span is None:
            what = f"`{rule.key}`" if rule.key else "the annotation"
            raise TemplateError(f"{where}: no value for {what} in {code.strip()!r}")
        s, e = span
        code = code[:s] + _new_value(code[s:e], rule, env, knobs, syntax) + code[e:]
    gap = sp.gap
    if gap and not gap.strip(" "):  # spaces only: keep the comment's column when the code allows
        keep = len(sp.code) + len(gap) - len(code)
        gap = " " * max(keep, min(len(gap), 2))
    line = code + gap + sp.comment
    again = split_line(line, syntax)
    if "\n" in line or "\r" in line.rstrip("\r") or (again.code, again.comment) != (code, sp.comment):
        # A bare value in a language without quoting (INI, CSS …) that would start a comment or a string,
        # or a line break no string here can escape: the file would not say what the rule means.
        raise TemplateError(f"{where}: the new value cannot be written here as {syntax.family}: {code!r}")
    return line


def render_lines(
    text: str,
    lang: str,
    lines: Sequence[TemplateLine],
    env: Mapping[str, str],
    knobs: Mapping[str, str],
    first_line: int = 1,
) -> str:
    """Render a template body: the values of the rule lines rewritten, every other line kept byte for byte.
    `first_line` is the 1-based plan line of the body's first line (for messages)."""
    syntax = syntax_for(lang)
    out = text.split("\n")
    for tl in lines:
        out[tl.offset] = _rewrite(
            split_line(out[tl.offset], syntax), tl.rules, env, knobs, syntax, f"line {first_line + tl.offset}"
        )
    return "\n".join(out)


def render_text(text: str, lang: str, env: Mapping[str, str], knobs: Mapping[str, str]) -> str:
    """Render a template body written in `lang` (its rules read from its comments)."""
    return render_lines(text, lang, template_lines(text, lang), env, knobs)


def render_template(block: Block, env: Mapping[str, str], knobs: Mapping[str, str]) -> str:
    """Regenerate a file template block: each annotated value as a pure function of the session/knobs."""
    return render_lines(block.text, block.lang, block.template_lines, env, knobs, block.body_start + 1)


def unlocated_rules(block: Block) -> list[tuple[int, str]]:
    """(0-based line offset, rule) of every rule whose value cannot be found on its line (for lint): in a
    language Director does not know, also where it cannot tell where the value ends."""
    syntax = syntax_for(block.lang)
    out: list[tuple[int, str]] = []
    for tl in block.template_lines:
        line = block.text.split("\n")[tl.offset]
        code = split_line(line, syntax).code
        for rule in tl.rules:
            if value_slot(code, syntax, rule.key) is None:
                what = f"`{rule.key}`" if rule.key else "the annotation"
                if unknown_language(syntax):
                    what += (
                        f" (Director does not know `{block.lang}`, so a value is the whole rest of its line "
                        "after the first `=` or `:`, or after the key's; it cannot tell where the value ends "
                        "on a line with no separator, or with another `=` after the key)"
                    )
                out.append((tl.offset, what))
    return out


# ---------------------------------------------------------------------------------------------------
# Where the file goes

_NOT_PATHS = frozenset({"_", "PWD", "OLDPWD"})


def resolve_target(heading_target: str, env: Mapping[str, str], cwd: str) -> str:
    """The file a template writes: the heading's path expanded; the session variable that names it as an
    absolute path if exactly one does; else relative to `cwd`. Several naming different files: ambiguous."""
    expanded = expand(heading_target, env)
    if os.path.isabs(expanded):
        return expanded
    rel = os.path.normpath(expanded)
    named: dict[str, list[str]] = {}
    for name, value in sorted(env.items()):
        if name in _NOT_PATHS or not os.path.isabs(value):
            continue
        path = os.path.normpath(value)
        if path == rel or path.endswith("/" + rel):
            named.setdefault(path, []).append(name)
    if len(named) > 1:
        which = "; ".join(f"{' = '.join('$' + n for n in names)} = {path}" for path, names in named.items())
        raise TemplateError(f"`{heading_target}` is ambiguous: several variables name it ({which})")
    if named:
        return next(iter(named))
    return os.path.join(cwd, expanded)


def _assignments(text: str) -> list[tuple[str, str]]:
    """(name, value as written, quotes removed) of the assignments in a bash block (the bash analyser)."""
    from director.plan import bash

    return [(name, w.pattern) for name, w in bash.assignments(text)]


def _braced(text: str) -> str:
    """`$VAR` spelled `${VAR}`, so two spellings of one path compare equal."""
    return _VAR.sub(lambda m: "${" + (m.group(1) or m.group(2)) + "}", text)


def target_variables(plan: Plan) -> dict[tuple[str, int], tuple[str, ...]]:
    """(section key, block index) of each template -> the variables assigned (in the shell blocks before
    it) a value that ends with the heading's path, e.g. `CONFIG="$PWD/${SVC}.jsonc"` for `${SVC}.jsonc`."""
    out: dict[tuple[str, int], tuple[str, ...]] = {}
    assigned: dict[str, set[str]] = {}
    for s in plan.sections:
        for b in s.blocks:
            if b.role in (BlockRole.ACT, BlockRole.VERIFY):
                for name, value in _assignments(b.text):
                    assigned.setdefault(name, set()).add(_braced(value))
            elif b.role is BlockRole.TEMPLATE and b.template_target:
                target = _braced(b.template_target)
                target = target[2:] if target.startswith("./") else target
                whole = _ONE_VARIABLE.fullmatch(b.template_target)
                if whole is not None:  # `${CONF}`: the variable is the path
                    name = whole.group(0).strip("${}")
                    out[(s.key, b.index)] = (name,) if name in assigned else ()
                    continue
                out[(s.key, b.index)] = tuple(
                    name
                    for name, values in assigned.items()
                    if any(v == target or v.endswith("/" + target) for v in values)
                )
    return out

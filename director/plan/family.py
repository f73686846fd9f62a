"""What a plan says about its family: the **Provides** and **Requires** of its preamble (docs/plan-format.md).

A plan's preamble blockquote declares, in prose a human reads first, what it provides to other plans and
what it needs from them:

    > **Provides / Requires**: **Provides** `workflow(WF_NAME @ WORKER_NAME)` — a consumer … **Requires**
    > nothing mandatory; optionally **discovers** … — `d1-db` (`database.cloudflare.md`), `kv-namespace` — …

Read by structure, never by the words around it:

- the bold keywords **Provides**, **Requires** and **discovers**/**discovered** start a clause; the
  declarations are the code spans that stand in a list (`a`, `b` and `c`): right after **Provides** or
  **Requires** (a clause that begins with prose, like "nothing", declares nothing), and in a
  **discovers** clause the first list of code spans not written in parentheses;
- each declaration is `` `name` `` or `` `name(EXPRESSION)` ``; the upper-case words of the expression are
  its keys (`WF_NAME`, `WORKER_NAME`; `kv(127.0.0.1:PORT)` has the key `PORT`);
- a requirement may name the plan that provides it right after it, `` (`database.cloudflare.md`) ``;
  without one it is discovered by name (a plan of the family that provides that name, or nothing);
- "optionally" before a list (or before **discovers**) makes its requirements optional.

Pure: text in, values out. The family graph built from these is `director.run.family`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from director.plan.model import Plan

__all__ = ["Declarations", "Provide", "Require", "declarations", "env_name", "key_candidates"]


@dataclass(frozen=True)
class Provide:
    """Something a plan provides: a name, and the Live State keys that make it up."""

    name: str
    expression: str  # inside the parentheses, as written ("" for a bare name)
    keys: tuple[str, ...]
    line: int  # 1-based line of the declaration in the plan

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "expression": self.expression, "keys": list(self.keys), "line": self.line}


@dataclass(frozen=True)
class Require:
    """Something a plan needs: a name, and the plan providing it (None: discovered by name)."""

    name: str
    expression: str
    keys: tuple[str, ...]
    plan: str | None  # the providing plan's file, as written (relative to this plan's directory)
    optional: bool
    discovered: bool  # declared in a **discovers** clause: the plan finds it itself at run time
    line: int

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "expression": self.expression,
            "keys": list(self.keys),
            "plan": self.plan,
            "optional": self.optional,
            "discovered": self.discovered,
            "line": self.line,
        }


@dataclass(frozen=True)
class Declarations:
    """A plan's Provides and Requires."""

    provides: tuple[Provide, ...] = ()
    requires: tuple[Require, ...] = ()

    def provide(self, name: str) -> Provide | None:
        return next((p for p in self.provides if p.name == name), None)


_KEYWORD = re.compile(r"\*\*\s*(provides|requires|discovers|discovered)\s*\*\*", re.IGNORECASE)
_CODE = re.compile(r"`([^`\n]+)`")
_ITEM = re.compile(r"^([A-Za-z][A-Za-z0-9_.-]*)(?:\((.*)\))?$")
_KEY = re.compile(r"\b[A-Z][A-Z0-9_]*\b")
_PLAN_FILE = re.compile(r"^\s*\(\s*`([^`\n]+\.md)`\s*\)")
# What may stand between two declarations of one list: a comma, "and", "or", "&", "/".
_GAP = re.compile(r"^\s*(?:,\s*(?:(?:and|or)\s+)?|(?:and|or|&|/)\s+|;\s*)?$", re.IGNORECASE)
_OPTIONALLY = re.compile(r"\boptional(?:ly)?\b[\s:,]*$", re.IGNORECASE)
_LEAD = re.compile(r"^[\s:]*(?:\(?optional(?:ly)?\)?[\s:,]*)?$", re.IGNORECASE)


@dataclass(frozen=True)
class _Item:
    name: str
    expression: str
    plan: str | None
    start: int  # offset of the code span in the paragraph
    in_parens: bool


def _items(text: str) -> list[_Item]:
    """Every code span of a clause that reads as a declaration, with the plan file named right after it."""
    out: list[_Item] = []
    for m in _CODE.finditer(text):
        content = m.group(1).strip()
        if content.endswith(".md"):
            continue  # a plan file: it belongs to the declaration before it
        im = _ITEM.match(content)
        if im is None:
            out.append(_Item("", content, None, m.start(), False))  # not a declaration: ends a list
            continue
        before = text[: m.start()].rstrip()
        after = text[m.end() :]
        in_parens = before.endswith("(") and after.lstrip().startswith(")")
        pm = _PLAN_FILE.match(after)
        out.append(_Item(im.group(1), (im.group(2) or "").strip(), pm.group(1) if pm else None, m.start(),
                         in_parens))  # fmt: skip
    return out


def _span_end(text: str, item: _Item) -> int:
    """Where an item ends in the clause: after its code span and the plan file named after it."""
    end = text.index("`", item.start + 1) + 1
    pm = _PLAN_FILE.match(text[end:])
    return end + (pm.end() if pm else 0)


def _list(text: str, items: list[_Item], first: int) -> list[_Item]:
    """The run of declarations that starts at `items[first]`, joined only by list separators."""
    run: list[_Item] = []
    for i in range(first, len(items)):
        item = items[i]
        if not item.name or item.in_parens:
            break
        if run and not _GAP.match(text[_span_end(text, run[-1]) : item.start]):
            break
        run.append(item)
    return run


def _clauses(paragraph: str) -> list[tuple[str, int, int, str]]:
    """(keyword, start of its text, end of its text, the text before the keyword) for each clause."""
    marks = list(_KEYWORD.finditer(paragraph))
    out = []
    for n, m in enumerate(marks):
        end = marks[n + 1].start() if n + 1 < len(marks) else len(paragraph)
        before = paragraph[marks[n - 1].end() if n else 0 : m.start()]
        out.append((m.group(1).lower(), m.end(), end, before))
    return out


def _line_of(plan: Plan, paragraph: str, offset: int) -> int:
    """The 1-based line of `paragraph[offset]` in the plan source (the paragraph is found by its lines)."""
    first = paragraph.splitlines()[0].strip() if paragraph.strip() else ""
    lines = plan.source.splitlines()
    for i, ln in enumerate(lines):
        if first and first in ln:
            return i + 1 + paragraph.count("\n", 0, offset)
    return plan.title_line + 1


def declarations(plan: Plan) -> Declarations:
    """The Provides and Requires declared in the plan's preamble blockquotes."""
    provides: list[Provide] = []
    requires: list[Require] = []
    for paragraph in plan.preamble:
        for keyword, start, end, before in _clauses(paragraph):
            text = paragraph[start:end]
            items = _items(text)
            if keyword in ("provides", "requires"):
                if not items or not _LEAD.match(text[: items[0].start]):
                    continue  # the clause begins with prose ("nothing", "no …"): it declares nothing
                run = _list(text, items, 0)
                optional = bool(re.search(r"optional", text[: items[0].start], re.IGNORECASE))
            else:
                first = next((i for i, it in enumerate(items) if it.name and not it.in_parens), None)
                if first is None:
                    continue
                run = _list(text, items, first)
                optional = bool(_OPTIONALLY.search(before))
            for it in run:
                keys = tuple(dict.fromkeys(_KEY.findall(it.expression)))
                line = _line_of(plan, paragraph, start + it.start)
                if keyword == "provides":
                    provides.append(Provide(it.name, it.expression, keys, line))
                else:
                    requires.append(
                        Require(it.name, it.expression, keys, it.plan, optional, keyword != "requires", line)
                    )
    return Declarations(tuple(provides), tuple(requires))


def env_name(name: str, key: str | None = None) -> str:
    """`DIRECTOR_PROVIDED_<NAME>[_<KEY>]`: the variable a consumer's blocks read a provided value from."""
    base = "DIRECTOR_PROVIDED_" + re.sub(r"[^A-Za-z0-9]", "_", name).upper()
    return base if key is None else f"{base}_{re.sub(r'[^A-Za-z0-9]', '_', key).upper()}"


def key_candidates(key: str) -> tuple[str, ...]:
    """The Live State rows a provided key may name: itself, then with `_NAME` dropped or added (a name's
    key is often written `X_NAME` for the row `X`, and the other way round)."""
    if key.endswith("_NAME") and len(key) > len("_NAME"):
        return (key, key.removesuffix("_NAME"))
    return (key, f"{key}_NAME")

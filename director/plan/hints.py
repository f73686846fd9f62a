"""What a `→ Live State:` hint names: Live State keys, by their exact name or by the variable a run realizes
each from (`$KEY`, `${KEY}`), never by a word of the hint's prose in another spelling (pure)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from director.plan.model import KVRow

_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def key_pattern(key: str) -> re.Pattern[str]:
    """A key as a hint names it: its exact name as a word, or `$KEY` / `${KEY}` (`class` is not `CLASS`)."""
    k = re.escape(key)
    return re.compile(rf"(?<![\w$]){k}(?!\w)|\${k}(?!\w)|\$\{{{k}\}}")


def keys_named(hints: Iterable[str], rows: Iterable[KVRow]) -> list[str]:
    """The key/value keys these hints name, in the table's order."""
    text = " ".join(hints)
    return [r.key for r in rows if key_pattern(r.key).search(text)]


def unknown_refs(hint: str, keys: Iterable[str]) -> list[str]:
    """Variables a hint names as what it realizes (`$X`, `${X}`) that are no key of the table.

    A reference in a value (after `=`: `DB_PATH = $DB`, `name = $WF`) says where a value comes from, not
    which key is realized, so it is not one.
    """
    known = set(keys)
    out: list[str] = []
    for part in re.split(r"[;,]", hint):
        named = part.split("=", 1)[0]
        for m in _REF.finditer(named):
            name = m.group(1) or m.group(2)
            if name not in known and name not in out:
                out.append(name)
    return out

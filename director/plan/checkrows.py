"""Which checks feed which row of the Live State check table (pure).

The format ties rows to checks by name: a row named after an item of the acceptance contract
(`happy path completes` ← `1. **Happy path**`) is fed by the checks labelled with that item's number
(`1:`, `2a:`); any other row is fed by the verify blocks whose title or pass lines say what the row says
(`workflow registered` ← `# ✔ the workflow is registered`). These compare the plan's own words with each
other -- never with a fixed vocabulary.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from director.plan.model import CheckPolarity, CheckRow, ContractItem, Section

_STOP = {"the", "a", "an", "is", "are", "was", "be", "of", "to", "and", "on", "in", "for", "with", "its"}


def _stem(word: str) -> str:
    """A tiny stemmer so `registered`/`registers`/`register` and `verified`/`verify` compare equal."""
    if len(word) > 4 and word.endswith("ied"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith("ed"):
        return word[:-2]
    if len(word) > 3 and word.endswith("es") and word[-3] in "sxz":
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def words(text: str) -> list[str]:
    """Normalised words: lower case, punctuation and backticks dropped, stemmed."""
    return [_stem(w) for w in re.findall(r"[a-z0-9]+", text.lower())]


def _starts_with(haystack: Sequence[str], prefix: Sequence[str]) -> bool:
    return bool(prefix) and list(haystack[: len(prefix)]) == list(prefix)


def contract_item_for(row_name: str, contract: Sequence[ContractItem]) -> ContractItem | None:
    """The contract item a check-table row names (row words start with the item title's words)."""
    row = words(row_name)
    best: ContractItem | None = None
    for item in contract:
        title = words(item.title)
        if _starts_with(row, title) and (best is None or len(title) > len(words(best.title))):
            best = item
    return best


def feed_check_rows(
    rows: Sequence[CheckRow], contract: Sequence[ContractItem], sections: Sequence[Section]
) -> tuple[CheckRow, ...]:
    """The rows with `fed_by` filled: `label:2a` (contract-labelled checks), `section:K` (verify titles)."""
    labelled: dict[str, None] = {}  # an ordered set: document order, each label once
    for s in sections:
        for b in s.verify_blocks:
            for c in b.checks:
                if c.label and (c.polarity is CheckPolarity.PASS or not c.soft):
                    labelled.setdefault(c.label, None)  # a hard failure line checks its item too
    out: list[CheckRow] = []
    for row in rows:
        refs: list[str] = []
        item = contract_item_for(row.name, contract)
        if item is not None:
            for lab in labelled:
                m = re.match(r"\d+", lab)
                if m and int(m.group(0)) == item.number:
                    refs.append(f"label:{lab}")
        need = [w for w in words(row.name) if w not in _STOP]
        if need and item is None:
            for s in sections:
                for b in s.verify_blocks:
                    texts = [b.verify_title] + [
                        c.message for c in b.checks if c.polarity is CheckPolarity.PASS
                    ]
                    if any(set(need) <= set(words(t)) for t in texts if t):
                        ref = f"section:{s.key}"
                        if ref not in refs:
                            refs.append(ref)
        out.append(CheckRow(row.name, row.expected, row.observed, row.result, row.line, tuple(refs)))
    return tuple(out)

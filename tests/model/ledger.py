"""The plan's `## Live State`, read by the test itself (not through Director's parser)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_STATUS = re.compile(r"^status:\s*(.*?)\s*(?:#.*)?$", re.M)
_TICKS = re.compile(r"`([^`]*)`")


@dataclass
class LiveState:
    status: str
    kv: dict[str, str | None] = field(default_factory=dict)  # key -> the cell's value (None: `—`)
    rows: dict[str, tuple[str, str]] = field(default_factory=dict)  # check -> (observed, result)

    def realized(self) -> dict[str, str]:
        """Keys holding a value (not `—`, not a `${…}` template): what `director output` prints."""
        return {k: v for k, v in self.kv.items() if v is not None and "${" not in v}


def split(text: str) -> tuple[str, str, str]:
    """(before, the Live State section, after)."""
    start = text.index("\n## Live State\n")
    end = text.find("\n## ", start + 1)
    end = len(text) if end < 0 else end
    return text[:start], text[start:end], text[end:]


def outside(text: str) -> tuple[str, str]:
    before, _, after = split(text)
    return before, after


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _value(cell: str) -> str | None:
    m = _TICKS.search(cell)
    raw = m.group(1) if m else cell.split("(")[0].strip()
    return None if raw.strip() in ("—", "-", "") else raw


def parse(text: str) -> LiveState:
    _, section, _ = split(text)
    m = _STATUS.search(section)
    ls = LiveState(m.group(1).strip().strip("'\"") if m else "")
    table = ""
    for line in section.splitlines():
        if not line.startswith("|"):
            table = "" if not line.strip() else table
            continue
        cells = _cells(line)
        if set("".join(cells)) <= set("-: "):
            continue
        if cells[0].lower() == "key":
            table = "kv"
        elif cells[0].startswith("✔"):
            table = "checks"
        elif table == "kv" and len(cells) >= 2:
            ls.kv[cells[0]] = _value(cells[1])
        elif table == "checks" and len(cells) >= 4:
            ls.rows[cells[0]] = (cells[2], cells[3])
    return ls

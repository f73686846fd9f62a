"""JSON Schemas (draft 2020-12) of every JSON Director prints, shipped with the package.

| output | `schema` field | file |
| --- | --- | --- |
| `director show --json` | `director.plan/1` | plan.json |
| `director diff --json` | `director.diff/1` | diff.json |
| `director status --json` | `director.status/1` | status.json |
| `director status --json` of several plans (a family) | `director.family/1` | family.json |
| `director audit --json` | `director.audit/1` | audit.json |
| `director audit --jsonl` (one line) | `director.audit/1` + `record` | audit-record.json |
| `director lint --json` | `director.lint/1` | lint.json |
| `--events` (one line) | `director.event/1` | event.json |
| `director apply, teardown, plan, check --json` | `director.result/1` | result.json |
| the same of several plans (a family) | `director.family-result/1` | family-result.json |
| `director output --json` | `director.output/1` | output.json |

Objects are closed (`additionalProperties: false`) except where the content is the plan's or a target's own
(YAML data, gate content, session records): a new field is a schema change (docs/json.md).
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

NAMES = (
    "plan", "diff", "status", "family", "audit", "audit-record", "lint", "event",
    "result", "family-result", "output",
)  # fmt: skip


@cache
def load(name: str) -> dict[str, Any]:
    """The schema called `name` (one of `NAMES`)."""
    if name not in NAMES:
        raise KeyError(f"no schema {name!r} (known: {', '.join(NAMES)})")
    text = resources.files(__name__).joinpath(f"{name}.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def name_for(document: dict[str, Any]) -> str:
    """Which schema a document of Director's declares (its `schema` field; `record` marks an audit line)."""
    declared = str(document.get("schema", ""))
    what = declared.removeprefix("director.").partition("/")[0]
    if what == "audit" and "record" in document:
        return "audit-record"
    if what not in NAMES:
        raise KeyError(f"not a Director document: schema {declared!r}")
    return what

"""`director audit`: the journal's history as a table, one JSON document, or JSON lines, with the check of
its hash chain (every break named: `chain`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from director.commands.paths import open_journal, require_plan
from director.errors import ExitCode

SCHEMA = "director.audit/1"
# The journal's tables, in this order, and the name of one of their rows in `--jsonl` (`record`).
TABLES = {
    "runs": "run",
    "transitions": "transition",
    "steps": "step",
    "approvals": "approval",
    "events": "event",
    "lease_holder": "lease_holder",
}


def audit_command(
    plan_path: Path, *, state_dir: Path | None, as_json: bool, jsonl: bool, state_url: str | None = None
) -> ExitCode:
    """Print runs, transitions, steps, approvals and events from the journal."""
    from director.ui.render import make_console

    require_plan(plan_path)
    journal = open_journal(plan_path, state_dir, state_url)
    tables: dict[str, Any] = {t: [] for t in TABLES}
    where: str | None = None
    breaks: list[dict[str, str]] = []
    if journal is not None:
        try:
            exported = journal.export_data()
            breaks = [b.to_json() for b in journal.chain_breaks()]
        finally:
            journal.close()
        tables.update({k: [_unchained(r) for r in v] for k, v in exported.items() if k in TABLES})
        where = str(exported.get("path")) if exported.get("path") else None
    chain = {"intact": not breaks, "breaks": breaks}  # the hash chain's check (`director.state.chain`)
    data: dict[str, Any] = {"schema": SCHEMA, "plan": str(plan_path), "journal": where, **tables}
    data["chain"] = chain
    data = _clean(data)  # what blocks printed may carry colours and other control sequences
    for ev in data.get("events", []):
        if ev.get("kind") == "plan-before-run":
            ev["data"] = {
                "kind": ev["data"].get("kind"),
                "text": f"<{len(ev['data'].get('text', ''))} chars>",
            }
    if as_json:
        print(json.dumps(data, indent=2, ensure_ascii=False, default=str))
        return ExitCode.OK
    if jsonl:
        for table, record in TABLES.items():
            for row in data[table]:
                line = {"schema": SCHEMA, "record": record, **row}
                print(json.dumps(line, ensure_ascii=False, default=str))
        print(json.dumps({"schema": SCHEMA, "record": "chain", **data["chain"]}, ensure_ascii=False))
        return ExitCode.OK
    from director.ui.audit import render_audit

    render_audit(make_console(False), data)
    return ExitCode.OK


def _unchained(row: dict[str, Any]) -> dict[str, Any]:
    """A row without its chain columns (the chain is checked, and its breaks shown, as a whole)."""
    from director.state.chain import CHAIN_COLUMNS

    return {k: v for k, v in row.items() if k not in CHAIN_COLUMNS}


def _clean(value: Any) -> Any:
    """Every string without terminal control sequences (newlines and tabs kept; CR rewrites resolved)."""
    from director.ledger.cells import strip_ansi

    if isinstance(value, str):
        if "\r" in value:  # a progress bar's rewrites: what a terminal finally showed
            lines = value.replace("\r\n", "\n").split("\n")
            value = "\n".join(([s for s in ln.split("\r") if s] or [""])[-1] for ln in lines)
        return strip_ansi(value)
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value

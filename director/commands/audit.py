"""`director audit`: the journal's history as a table, one JSON document, or JSON lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from director.commands.paths import open_journal, require_plan
from director.errors import ExitCode


def audit_command(
    plan_path: Path, *, state_dir: Path | None, as_json: bool, jsonl: bool, state_url: str | None = None
) -> ExitCode:
    """Print runs, transitions, steps, approvals and events from the journal."""
    from director.ui.render import make_console

    require_plan(plan_path)
    journal = open_journal(plan_path, state_dir, state_url)
    if journal is None:
        data: dict[str, Any] = {"runs": [], "transitions": [], "steps": [], "approvals": [], "events": []}
    else:
        try:
            data = journal.export_data()
        finally:
            journal.close()
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
        for table, rows in data.items():
            if isinstance(rows, list):
                for row in rows:
                    print(json.dumps({"record": table.rstrip("s"), **row}, ensure_ascii=False, default=str))
        return ExitCode.OK
    from director.ui.audit import render_audit

    render_audit(make_console(False), data)
    return ExitCode.OK

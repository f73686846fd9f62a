"""`director diff`: the Live State diff against a git revision or the state before the last run."""

from __future__ import annotations

import json
from pathlib import Path

from director.commands.paths import open_journal, require_plan
from director.errors import ExitCode, UsageError


def diff_command(
    plan_path: Path,
    *,
    against: str,
    last_run: bool,
    state_dir: Path | None,
    as_json: bool,
    state_url: str | None = None,
) -> ExitCode:
    """Print the diff; exit 1 (differences) when there are any, like `git diff --exit-code`."""
    from director.ledger.diff import live_state_diff, text_at_revision
    from director.ui.render import make_console

    new = require_plan(plan_path).read_text(encoding="utf-8")
    old = (
        _text_before_last_run(plan_path, state_dir, state_url)
        if last_run
        else text_at_revision(plan_path, against)
    )
    d = live_state_diff(old, new)
    if as_json:
        print(json.dumps(d.to_json(), indent=2, ensure_ascii=False))
    else:
        d.render(make_console(False))
    return ExitCode.OK if d.is_empty else ExitCode.FINDINGS


def _text_before_last_run(plan_path: Path, state_dir: Path | None, state_url: str | None = None) -> str:
    """The plan text the journal kept when the last run began."""
    # No run is a usage problem (there is nothing to compare with), never "differences" (exit 1).
    journal = open_journal(plan_path, state_dir, state_url)
    if journal is None:
        raise UsageError(f"{plan_path}: no run recorded; nothing to compare with")
    try:
        evs = journal.events(kind="plan-before-run")
    finally:
        journal.close()
    if not evs:
        raise UsageError(f"{plan_path}: no run recorded; nothing to compare with")
    text: str = evs[-1].data["text"]
    return text

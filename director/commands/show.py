"""`director show`: the parsed plan, for humans or as JSON."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from director.commands.paths import load_plan
from director.errors import ExitCode


def show_command(plan_path: Path, *, as_json: bool) -> ExitCode:
    """Print the parsed plan: sections, markers, gates, blocks, inputs, Live State."""
    plan = load_plan(plan_path)
    if as_json:
        from director.plan.tojson import to_json

        sys.stdout.write(json.dumps(to_json(plan), ensure_ascii=False, indent=2) + "\n")
        return ExitCode.OK
    from rich.console import Console

    from director.ui.show import render

    # In a pipe a line is never wrapped (a command cut mid-token reads as two); at a terminal rich fits it.
    render(plan, Console(soft_wrap=not sys.stdout.isatty()))
    return ExitCode.OK

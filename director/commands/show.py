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

    render(plan, Console())
    return ExitCode.OK

"""`director output [KEY]`: the values the plan's ledger holds as realized (like `terraform output`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from director.commands.paths import load_plan
from director.errors import ExitCode, UsageError


def output_command(plan_path: Path, key: str | None, *, as_json: bool, raw: bool) -> ExitCode:
    """All realized values (`KEY = value`), or one (`--raw`: the bare value, for `$(director output …)`).

    Read from the plan's Live State key/value table: a cell is realized once it holds a value instead of
    its template (`${SVC}-${ENV}`), placeholder or `—`.
    """
    from director.ledger.compose import outputs
    from director.ui.render import make_console
    from director.ui.summary import print_outputs

    plan = load_plan(plan_path)
    if plan.live_state is None:
        raise UsageError(f"{plan_path}: the plan has no `## Live State` section")
    values = outputs(plan)
    if key is None:
        if raw:
            raise UsageError("--raw: name the KEY whose value to print")
        if as_json:
            print(json.dumps(values, indent=2, ensure_ascii=False))
        elif values:
            print_outputs(make_console(False), values)
        else:
            print("no realized values yet: run `director apply` first")
        return ExitCode.OK
    keys = {r.key.lower(): r.key for r in plan.live_state.kv_rows}
    name = keys.get(key.lower())
    if name is None:
        known = ", ".join(r.key for r in plan.live_state.kv_rows) or "none"
        raise UsageError(f"KEY: the Live State has no key {key!r} (keys: {known})")
    if name not in values:
        raise UsageError(f"KEY: {name} is not realized yet (its cell is still a template); apply first")
    if as_json:
        print(json.dumps(values[name], ensure_ascii=False))
    elif raw:
        sys.stdout.write(values[name])
    else:
        print(values[name])
    return ExitCode.OK

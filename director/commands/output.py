"""`director output [KEY]`: the values the plan's ledger holds as realized (like `terraform output`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from director.commands.paths import load_plan
from director.errors import ExitCode, UsageError
from director.plan.model import Plan


def output_command(plan_path: Path, key: str | None, *, as_json: bool, raw: bool) -> ExitCode:
    """All realized values (`KEY = value`), or one (`--raw`: the bare value, for `$(director output …)`).

    Read from the plan's Live State key/value table: a cell is realized once it holds a value instead of
    its template (`${SVC}-${ENV}`), placeholder or `—`.
    """
    from director.ledger.compose import doubts, outputs
    from director.ui.render import make_console
    from director.ui.summary import print_outputs

    plan = load_plan(plan_path)

    def document(values: dict[str, str]) -> str:
        doubt = doubts(plan)
        shown = {k: doubt[k] for k in values if k in doubt}
        doc = {"schema": "director.output/1", "plan": str(plan_path), "values": values, "doubts": shown}
        return json.dumps(doc, indent=2, ensure_ascii=False)

    if plan.live_state is None:
        raise UsageError(f"{plan_path}: the plan has no `## Live State` section")
    values = outputs(plan)
    if key is None:
        if raw:
            raise UsageError("--raw: name the KEY whose value to print")
        if as_json:
            print(document(values))
        elif values:
            print_outputs(make_console(False), values, doubts(plan))
        else:
            print(f"no realized values: {_why_none(plan)}")
        return ExitCode.OK
    keys = {r.key.lower(): r.key for r in plan.live_state.kv_rows}
    name = keys.get(key.lower())
    if name is None:
        known = ", ".join(r.key for r in plan.live_state.kv_rows) or "none"
        raise UsageError(f"KEY: the Live State has no key {key!r} (keys: {known})")
    if name not in values:
        cell = next(r.value for r in plan.live_state.kv_rows if r.key == name)
        raise UsageError(f"KEY: {name} holds no realized value (its cell is {cell}): {_why_none(plan, name)}")
    doubt = doubts(plan).get(name)
    if doubt and not as_json:
        print(f"warning: {name} may not hold: {doubt}", file=sys.stderr)
    if as_json:
        print(document({name: values[name]}))
    elif raw:
        sys.stdout.write(values[name])
    else:
        print(values[name])
    return ExitCode.OK


def _why_none(plan: Plan, key: str | None = None) -> str:
    """Why the ledger holds no value (for one key): never applied, torn down, or nothing realizes it."""
    from director.ledger.cells import keys_named

    ls = plan.live_state
    assert ls is not None
    status = str(ls.data.get("status") or "").strip()
    if status.startswith("gone"):
        return "the plan was torn down (`director apply` realizes it again)"
    if status in ("", "not-created"):
        return "the plan was never applied; run `director apply` first"
    if key is None:
        return f"the ledger says {status}, and no key holds a value"
    if not any(keys_named(list(s.hints) + [h for b in s.blocks for h in b.hints], ls.kv_rows).count(key)
               for s in plan.sections):
        return (
            f"the ledger says {status}, but no section realizes {key}: a section's `→ Live State:` hint must "
            f"name it ({key} or ${key}) and set the variable {key}"
        )
    return f"the ledger says {status}: the section that realizes {key} has not completed; `director apply`"

"""`director status`: the plan's state at a glance (the data; `director.ui.status` renders it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from director.commands.paths import backend_for, load_plan, paths_for
from director.errors import DirectorError, ExitCode


def status_command(
    plan_path: Path, *, state_dir: Path | None, as_json: bool, state_url: str | None = None
) -> ExitCode:
    """Print Live State, last run, lease, per-section last success and the targets' sessions."""
    from director.ui.render import make_console
    from director.ui.status import render_status

    out = status_data(plan_path, state_dir, state_url)
    if as_json:
        print(json.dumps(out, indent=2, ensure_ascii=False, default=str))
    else:
        render_status(make_console(False), out)
    return ExitCode.OK


def status_data(plan_path: Path, state_dir: Path | None, state_url: str | None = None) -> dict[str, Any]:
    """Everything `status` shows, JSON-ready (the `--json` document)."""
    plan = load_plan(plan_path)
    backend = backend_for(plan_path, state_dir, state_url, plan)
    ls = plan.live_state
    out: dict[str, Any] = {
        "plan": str(plan_path),
        "title": plan.title,
        "live_state": {k: ls.data.get(k) for k in ("status", "last_action", "last_verified", "target")}
        if ls
        else {},
        "last_run": None,
        "sections": [],
        "lease": None,
        "sessions": [],
        "state": backend.describe(),  # where the journal, receipts and lease live; the plan key in use
    }
    journal = backend.open(create=False)
    if journal is not None:
        try:
            out["last_run"] = _last_run(journal)
            for s in plan.executable_sections + ((plan.teardown,) if plan.teardown else ()):
                last = journal.last_success(f"{s.key}/section")
                out["sections"].append(
                    {"key": s.key, "title": s.title, "last_success": last.finished_at if last else None}
                )
            out["lease"] = _lease(journal, backend)
        finally:
            journal.close()
    out["sessions"] = _sessions(paths_for(plan_path, state_dir, None).state)
    return out


def _last_run(journal: Any) -> dict[str, Any] | None:
    run = journal.latest_run()
    if run is None:
        return None
    waiting = None
    if run.state == "awaiting-approval":
        evs = [e for e in journal.events(kind="gate-waiting") if e.run_id == run.id]
        waiting = evs[-1].data.get("section") if evs else None
    return {
        "id": run.id,
        "kind": run.kind,
        "state": run.state,
        "target": run.target,
        "operator": run.operator,
        "created_at": run.created_at,
        "updated_at": run.updated_at,
        "waiting_on": waiting,
        "inputs": run.inputs,
    }


def _lease(journal: Any, backend: Any) -> dict[str, Any] | None:
    holder = journal.lease_holder()
    if holder is None:
        return None
    return {
        "pid": holder.pid,
        "host": holder.host,
        "kind": holder.kind,
        "started_at": holder.started_at.isoformat(),
        "heartbeat_at": holder.heartbeat_at.isoformat(),
        "run_id": holder.run_id,
        # False: its process is gone (a crash; the next apply takes over). None: cannot tell from here
        # (another host's, with SQLite; PostgreSQL knows from any machine).
        "alive": backend.holder_alive(journal, holder),
    }


def _sessions(state: Path) -> list[dict[str, Any]]:
    """Every target's sessions kept under this plan's state directory (most targets keep none)."""
    from director.targets import TARGETS

    found: list[dict[str, Any]] = []
    for make in TARGETS.values():
        try:
            found += [s.to_dict() for s in make(state, progress=None).sessions()]
        except DirectorError:
            continue  # a target that cannot read its own state shows no sessions, as before
    return found

"""`director status`: the plan's state at a glance (the data; `director.ui.status` renders it)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from director.commands.paths import backend_for, load_plan, paths_for
from director.errors import DirectorError, ExitCode, UsageError


def status_command(
    plan_path: Path, *, state_dir: Path | None, as_json: bool, state_url: str | None = None
) -> ExitCode:
    """Print Live State, last run, lease, per-section last success, the targets' sessions and the processes
    the plan's blocks started that still run."""
    from director.ui.render import make_console
    from director.ui.status import render_status

    out = status_data(plan_path, state_dir, state_url)
    if as_json:
        print(json.dumps(out, indent=2, ensure_ascii=False, default=_rfc3339))
    else:
        render_status(make_console(False), out)
    return ExitCode.OK


SCHEMA = "director.status/1"
FAMILY_SCHEMA = "director.family/1"


def family_status_command(
    plans: list[Path],
    *,
    state_dir: Path | None,
    as_json: bool,
    state_url: str | None = None,
    details: bool = False,
) -> ExitCode:
    """Each plan of the family in dependency order, one line each (its status, its last run, what it requires
    from which plan); `details`: each plan's whole status."""
    from director.commands.family import is_live
    from director.commands.family_run import members
    from director.ui.render import make_console
    from director.ui.status import family_lines, render_status

    if state_dir is not None:
        raise UsageError("--state-dir names one plan's state: ask for one plan's status with it")
    graph, read = members(plans)
    order = graph.order()
    docs = [status_data(Path(m.label), None, state_url) for m in order]
    label = {m.path: m.label for m in graph.members}
    edges = [
        {"consumer": label[e.consumer], "provider": label[e.provider], "name": e.require.name}
        for e in graph.edges
    ]
    if as_json:
        out = {
            "schema": FAMILY_SCHEMA,
            "order": [m.label for m in order],
            "edges": edges,
            "live": {m.label: is_live(m.path, read[m.path], state_url) for m in order},
            "plans": docs,
        }
        print(json.dumps(out, indent=2, ensure_ascii=False, default=_rfc3339))
        return ExitCode.OK
    console = make_console(False)
    if not details:
        family_lines(console, [m.label for m in order], docs, edges)
        return ExitCode.OK
    for m, doc in zip(order, docs, strict=True):
        console.rule(m.label)
        for e in edges:
            if e["consumer"] == m.label:
                console.print(f"requires {e['name']} from {e['provider']}", markup=False, highlight=False)
        render_status(console, doc)
    return ExitCode.OK


def _rfc3339(value: object) -> str:
    """JSON for what `json` cannot write: times as RFC 3339 (`2026-05-01T09:13:11.149+00:00`)."""
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


def status_data(plan_path: Path, state_dir: Path | None, state_url: str | None = None) -> dict[str, Any]:
    """Everything `status` shows, JSON-ready (the `director.status/1` document of `--json`)."""
    from director.exec.marks import state_identity
    from director.plan.tojson import check_row_json, kv_json

    plan = load_plan(plan_path)
    backend = backend_for(plan_path, state_dir, state_url, plan)
    ls = plan.live_state
    out: dict[str, Any] = {
        "schema": SCHEMA,
        "plan": str(plan_path),
        "title": plan.title,
        "live_state": {
            **{k: ls.data.get(k) for k in ("status", "last_action", "last_verified", "target")},
            "kv": [kv_json(r) for r in ls.kv_rows],
            "checks": [check_row_json(r) for r in ls.check_rows],
        }
        if ls
        else None,
        "last_run": None,
        "sections": [],
        "lease": None,
        "sessions": [],
        "processes": [],
        "state": backend.describe(),  # where the journal, receipts and lease live; the plan key in use
    }
    journal = backend.open(create=False)
    out["processes"] = _processes(state_identity(plan_path.name, backend.describe()), journal)
    if journal is not None:
        try:
            out["last_run"] = _last_run(journal)
            successes = journal.section_successes()
            for s in plan.executable_sections + ((plan.teardown,) if plan.teardown else ()):
                last = successes.get(f"{s.key}/section")
                finished = last.finished_at if last else None
                out["sections"].append(
                    {"key": s.key, "title": s.title, "last_success": _time(finished)}
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
        "created_at": _time(run.created_at),
        "updated_at": _time(run.updated_at),
        "waiting_on": waiting,
        "inputs": run.inputs,
    }


def _time(value: object) -> str | None:
    """A journal time (a datetime, or text from another backend) as RFC 3339 text."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.isoformat()
    return datetime.fromisoformat(str(value)).isoformat()


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


def _processes(identity: str, journal: Any) -> list[dict[str, Any]]:
    """The live processes carrying the plan's mark, or that the journal recorded as the plan's
    (docs/processes.md), on this machine."""
    from director.exec.marks import STARTED, marked, recorded_in

    known = recorded_in(e.data for e in journal.events(kind=STARTED)) if journal is not None else []
    return [p.to_json() for p in marked(identity, recorded=known)]


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

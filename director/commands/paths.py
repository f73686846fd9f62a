"""Where a plan's machine state lives, and the checks every command makes on its PLAN argument."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from director.errors import UsageError
from director.files import write_atomic

if TYPE_CHECKING:
    from director.plan.model import Plan
    from director.state.backends import StateBackend
    from director.state.store import StateStore


@dataclass(frozen=True)
class Paths:
    """Where a plan's machine state lives."""

    state: Path
    journal: Path
    lock: Path
    workspace: Path


def paths_for(plan_path: Path, state_dir: Path | None, workdir: Path | None) -> Paths:
    """`.director/<plan file name>/` beside the plan unless told otherwise."""
    plan_path = plan_path.resolve()
    if state_dir is None:
        root = plan_path.parent / ".director"
        state = root / plan_path.name
    else:
        root = state_dir.resolve()
        state = root
    return Paths(
        state,
        state / "journal.sqlite3",
        state / "lease.lock",
        (workdir.resolve() if workdir else state / "workspace"),
    )


def prepare_dirs(p: Paths) -> None:
    """Create the state and workspace directories, and keep them out of git."""
    p.state.mkdir(parents=True, exist_ok=True)
    p.workspace.mkdir(parents=True, exist_ok=True)
    ignore = p.state.parent / ".gitignore" if p.state.parent.name == ".director" else p.state / ".gitignore"
    if not ignore.exists():
        write_atomic(ignore, "# Director's journal, leases and workspaces: machine state, not for git\n*\n")


def require_plan(plan_path: Path) -> Path:
    """The PLAN argument, which must exist (a usage error otherwise)."""
    if not plan_path.exists():
        raise UsageError(f"PLAN: no such file: {plan_path}")
    return plan_path


def load_plan(plan_path: Path) -> Plan:
    """Parse the PLAN argument."""
    from director.plan.parse import parse_file

    return parse_file(str(require_plan(plan_path)))


def backend_for(
    plan_path: Path, state_dir: Path | None, state_url: str | None, plan: Plan | None = None
) -> StateBackend:
    """SQLite beside the plan, or PostgreSQL with `--state-url` / `DIRECTOR_STATE_URL` (keyed by
    `director.state.identity.plan_key`: the Live State's `plan_id`, else the path in the git repository)."""
    from director.state.backends import SqliteBackend, pg_backend
    from director.state.identity import plan_key

    if not state_url:
        p = paths_for(plan_path, state_dir, None)
        return SqliteBackend(p.journal, p.lock)
    if plan is None:
        plan = load_plan(plan_path)
    plan_id = plan.live_state.data.get("plan_id") if plan.live_state is not None else None
    return pg_backend(state_url, plan_key(plan_path, plan_id), str(plan_path.resolve()))


def open_journal(plan_path: Path, state_dir: Path | None, state_url: str | None = None) -> StateStore | None:
    """The plan's journal, or None when nothing was recorded for it yet (nothing ran)."""
    return backend_for(plan_path, state_dir, state_url).open(create=False)

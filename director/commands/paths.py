"""Where a plan's machine state lives, and the checks every command makes on its PLAN argument."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from director.errors import UsageError
from director.files import write_atomic

if TYPE_CHECKING:
    from director.plan.model import Plan
    from director.state.journal import Journal


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


def open_journal(plan_path: Path, state_dir: Path | None) -> Journal | None:
    """The plan's journal, or None when no command has created it yet (nothing ran)."""
    from director.state.journal import Journal

    p = paths_for(plan_path, state_dir, None)
    if not p.journal.exists():
        return None
    return Journal.open(p.journal)

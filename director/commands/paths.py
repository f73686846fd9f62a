"""Where a plan's machine state lives, and the checks every command makes on its PLAN argument."""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from director.errors import StorageError, UsageError
from director.files import write_atomic

if TYPE_CHECKING:
    from director.ledger.planfile import PlanFile
    from director.plan.family import Declarations
    from director.plan.model import Plan
    from director.run.config import RunRequest
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


_IGNORE = "# Director's journal, leases and workspaces: machine state, not for git\n*\n"


def _mkdirs(directory: Path, created: list[Path]) -> None:
    """`mkdir -p`, remembering each directory it created (outermost first)."""
    missing: list[Path] = []
    d = directory
    while not d.exists():
        missing.append(d)
        d = d.parent
    for d in reversed(missing):
        try:
            d.mkdir()
        except FileExistsError:
            continue  # made meanwhile by another plan of a family starting beside this one: not ours
        created.append(d)


def remove_created(created: list[Path]) -> None:
    """Undo a failed start: remove what it created, innermost first (directories only if empty)."""
    for path in reversed(created):
        with contextlib.suppress(OSError):
            if path.is_dir() and not path.is_symlink():
                path.rmdir()
            else:
                path.unlink()


def _fault(exc: OSError, where: Path) -> str:
    """`: No space left on device`, naming the file if it is not `where` itself."""
    reason = exc.strerror or str(exc)
    return f"{exc.filename}: {reason}" if exc.filename and str(exc.filename) != str(where) else reason


def ignore_file(p: Paths) -> Path:
    """The `.gitignore` that keeps the state out of git (`.director/.gitignore`, shared by its plans)."""
    return p.state.parent / ".gitignore" if p.state.parent.name == ".director" else p.state / ".gitignore"


def prepare_dirs(p: Paths) -> list[Path]:
    """Create the state and workspace directories and keep them out of git; returns what it created.

    On failure (no permission, disk full, read-only file system) it leaves nothing it created and raises
    `StorageError` naming the path (no half-written `.gitignore`: it is written atomically).
    """
    created: list[Path] = []
    ignore = ignore_file(p)
    try:
        _mkdirs(p.state, created)
        _mkdirs(p.workspace, created)
        if not ignore.exists() or ignore.stat().st_size == 0:  # an empty one is an earlier failed write
            new = not ignore.exists()
            write_atomic(ignore, _IGNORE)
            if new:
                created.append(ignore)
    except OSError as exc:
        remove_created(created)
        raise StorageError(
            f"cannot prepare the state directory {p.state}: {_fault(exc, p.state)}; nothing was run "
            "(free space or fix its permissions, or choose another with --state-dir)"
        ) from None
    return created


@dataclass(frozen=True)
class Site:
    """One plan's run, located once before anything is created (`locate`) and handed down: the path the
    operator named, the plan as this run reads it (`file`: parsed once, its secret values known to the
    writer), where its state lives (`paths`), its state backend, and the identity every process its blocks
    start carries (`exec.marks.state_identity`). Its directories are made when the run starts
    (`prepare_dirs`)."""

    path: Path
    file: PlanFile
    paths: Paths
    backend: StateBackend
    identity: str
    decl: Declarations  # what it declares to its family (Provides/Requires), read with it


def locate(plan_path: Path, request: RunRequest) -> Site:
    """The PLAN argument checked (readable; writable when the run writes Live State back) and read (its
    secret values, those of the environment and of `--secret`, known to the writer), and where its state
    is: nothing is created."""
    from director.exec.marks import state_identity
    from director.exec.secrets import secret_name_predicate, secret_values
    from director.ledger.planfile import PlanFile
    from director.plan.family import declarations
    from director.state.backends import choose

    require_plan(plan_path)
    if request.mode == "run":
        require_writable_plan(plan_path)
    state = request.state
    p = paths_for(plan_path, state.state_dir, state.workdir)
    secrets = secret_values(os.environ, secret_name_predicate(list(request.step.secrets)))
    pf = PlanFile.load(plan_path, secret_values=secrets)
    decl = declarations(pf.plan)
    backend = choose(p.journal, p.lock, plan_path, state.state_url, pf.plan.plan_id)
    return Site(plan_path, pf, p, backend, state_identity(plan_path.name, backend.describe()), decl)


def require_plan(plan_path: Path) -> Path:
    """The PLAN argument: an existing, readable file (a usage error naming it otherwise)."""
    try:
        os.stat(plan_path)
    except FileNotFoundError:
        raise UsageError(f"PLAN: no such file: {plan_path}") from None
    except OSError as exc:  # a name too long for the system, a loop of links, a path through a file
        raise UsageError(f"PLAN: {plan_path}: {exc.strerror or exc}") from None
    if plan_path.is_dir():
        raise UsageError(f"PLAN: {plan_path} is a directory, not a plan file")
    if not plan_path.is_file():
        raise UsageError(f"PLAN: {plan_path} is not a regular file")
    if not os.access(plan_path, os.R_OK):
        raise UsageError(f"PLAN: {plan_path} is not readable (permission denied)")
    return plan_path


def require_writable_plan(plan_path: Path) -> None:
    """apply/teardown write Live State back by replacing the plan file: refuse, before anything runs, a
    plan marked read-only (its owner's write bit cleared: also for root, who could write it anyway) or in
    a directory where Director cannot create the temp file it renames over the plan."""
    real = plan_path.resolve()
    if not real.stat().st_mode & stat.S_IWUSR or not os.access(real, os.W_OK):
        raise UsageError(
            f"PLAN: {plan_path} is read-only; apply and teardown write Live State into it, so nothing was "
            "run. Make it writable (chmod u+w) or apply a writable copy"
        )
    if not os.access(real.parent, os.W_OK | os.X_OK):
        raise UsageError(
            f"PLAN: cannot write in {real.parent} (the plan's directory): Live State is written by replacing "
            f"{real.name} with a file made beside it, so nothing was run. Make the directory writable or "
            "apply a copy of the plan elsewhere"
        )


def load_plan(plan_path: Path) -> Plan:
    """Parse the PLAN argument."""
    from director.plan.parse import parse_file

    return parse_file(str(require_plan(plan_path)))


def backend_for(
    plan_path: Path, state_dir: Path | None, state_url: str | None, plan: Plan | None = None
) -> StateBackend:
    """SQLite beside the plan, or PostgreSQL with `--state-url` / `DIRECTOR_STATE_URL` (`backend_of`; the
    plan read from `plan_path` when it is not given and a database keys the state by its `plan_id`)."""
    if state_url and plan is None:
        plan = load_plan(plan_path)
    return backend_of(plan_path, plan, state_dir, state_url)


def backend_of(
    plan_path: Path, plan: Plan | None, state_dir: Path | None, state_url: str | None
) -> StateBackend:
    """The state backend of the plan as read (`state.backends.choose`: keyed by its `plan_id`, else its
    path in the git repository)."""
    from director.state.backends import choose

    p = paths_for(plan_path, state_dir, None)
    return choose(p.journal, p.lock, plan_path, state_url, plan.plan_id if plan is not None else None)


def where(plan_path: Path, plan: Plan, state_url: str | None) -> tuple[Path, StateBackend]:
    """Another plan of a family: its state directory beside it, and its state backend."""
    return paths_for(plan_path, None, None).state, backend_of(plan_path, plan, None, state_url)


def open_journal(plan_path: Path, state_dir: Path | None, state_url: str | None = None) -> StateStore | None:
    """The plan's journal, or None when nothing was recorded for it yet (nothing ran)."""
    return backend_for(plan_path, state_dir, state_url).open(create=False)

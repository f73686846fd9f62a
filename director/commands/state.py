"""`director state push|pull`: move a plan's journal between SQLite and PostgreSQL; `director state adopt`:
make a journal recorded for a plan elsewhere this plan's (`director.state.location`).

push/pull copy every run, transition, step, approval and event with their ids, in one transaction on the
destination, while both sides' leases are held (no run can write either during the copy), then check
that the destination exports exactly what the source does. The source is kept. A destination that
already has history is refused unless `--replace`: an SQLite journal is then first copied aside
(`journal.sqlite3.replaced-<time>`), a PostgreSQL plan's rows are deleted in the copying transaction.
"""

from __future__ import annotations

import os
import shutil
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from director.commands.paths import backend_for, load_plan, paths_for, prepare_dirs
from director.errors import ExitCode, JournalError, UsageError

if TYPE_CHECKING:
    from director.state.store import StateStore


def transfer_command(
    plan_path: Path,
    direction: Literal["push", "pull"],
    *,
    state_dir: Path | None,
    state_url: str | None,
    replace: bool = False,
) -> ExitCode:
    """push: SQLite beside the plan → PostgreSQL; pull: PostgreSQL → SQLite beside the plan."""
    from director.state.identity import host_name
    from director.state.records import utc_now
    from director.ui.render import make_console

    if not state_url:
        raise UsageError(f"state {direction} needs --state-url postgresql://… (or DIRECTOR_STATE_URL)")
    plan = load_plan(plan_path)
    sqlite = backend_for(plan_path, state_dir, None, plan)
    pg = backend_for(plan_path, state_dir, state_url, plan)
    src, dst = (sqlite, pg) if direction == "push" else (pg, sqlite)
    console = make_console(False)
    with ExitStack() as stack:
        source = src.open(create=False)
        if source is None:
            where = src.describe()["where"]
            raise UsageError(f"{plan_path}: nothing recorded in {where}; nothing to {direction}")
        stack.callback(source.close)
        if direction == "pull":
            prepare_dirs(paths_for(plan_path, state_dir, None))
        if direction == "pull" and replace:
            _set_aside(paths_for(plan_path, state_dir, None).journal, utc_now().strftime("%Y%m%dT%H%M%S"))
        dest = dst.open()
        assert dest is not None
        stack.callback(dest.close)
        if dest.has_history() and not replace:
            raise UsageError(
                f"{dst.describe()['where']} already has history for this plan ({dst.describe()['key']}); "
                f"`director state {'pull' if direction == 'push' else 'push'}` it first, or pass --replace"
            )
        kind = f"state-{direction}"
        stack.enter_context(src.acquire(source, run_kind=kind))
        stack.enter_context(dst.acquire(dest, run_kind=kind))
        data = source.export_data()
        n = dest.import_data(data, replace=replace)
        if _history(dest.export_data()) != _history(data):
            raise JournalError(f"state {direction}: the copy does not read back as the source")
        dest.record_event(
            None,
            kind,
            {"from": src.describe()["where"], "rows": n, "host": host_name(), "pid": os.getpid()},
        )
    runs = len(data.get("runs", []))
    console.print(
        f"{direction}: {runs} run(s), {n} row(s) from {src.describe()['where']} to {dst.describe()['where']}"
        f" (plan key {pg.describe()['key']}); the source is kept"
    )
    return ExitCode.OK


def adopt_command(plan_path: Path, *, state_dir: Path | None, state_url: str | None) -> ExitCode:
    """`director state adopt PLAN`: the journal found for the plan (beside it, or its key's rows in
    PostgreSQL) was recorded for a plan elsewhere -- the plan was moved or copied, or another repository
    shares its key --; make that history this plan's, under the plan's lease, audited
    (`journal-adopted`, from and to)."""
    from director.state import location
    from director.ui.render import make_console

    plan = load_plan(plan_path)
    backend = backend_for(plan_path, state_dir, state_url, plan)
    here = backend.here()
    store = backend.open(create=False)
    if store is None:
        where = backend.describe()["where"]
        raise UsageError(f"{plan_path}: no journal to adopt in {where}; nothing was recorded for it")
    console = make_console(False)
    with store, backend.acquire(store, run_kind="adopt", plan=str(plan_path)):
        before = store.recorded_location()
        if here is None or (before is not None and before.get("identity") == here.identity):
            where = here.where if here is not None else f"plan key {backend.describe()['key']}"
            console.print(f"{store.location} already belongs to {where}: nothing to adopt", markup=False)
            return ExitCode.OK
        location.check(store, here, plan=str(plan_path), adopt=True)
        cancelled = _cancel_unfinished(store, f"the journal was adopted by {here.where}")
    was = before.get("where") if before else "no recorded place"
    for rid in cancelled:  # its session held the old place's paths: the next apply starts a new run
        console.print(f"run {rid} cancelled: it was not finished, and its session held the old place's paths")
    console.print(
        f"adopted {store.location}: its history now belongs to {here.where} (it belonged to {was}); "
        "the next apply goes on from it here",
        markup=False,
        highlight=False,
    )
    return ExitCode.OK


def _cancel_unfinished(store: StateStore, why: str) -> list[int]:
    """Cancel the latest apply and teardown runs that were not finished (they would resume)."""
    from director.state.lifecycle import TERMINAL, RunState

    out = []
    for kind in ("apply", "teardown"):
        run = store.latest_run(kind)
        if run is not None and run.state not in TERMINAL:
            store.transition(run.id, RunState.CANCELLED, why)
            out.append(run.id)
    return out


def _history(data: dict[str, Any]) -> dict[str, Any]:
    """The rows that make a plan's history (not where it is stored, nor who holds the lease now)."""
    return {k: v for k, v in data.items() if isinstance(v, list) and k != "lease_holder"}


def _set_aside(journal: Path, stamp: str) -> None:
    """Keep an SQLite journal about to be replaced (and its WAL) next to it."""
    if not journal.exists():
        return
    for suffix in ("", "-wal", "-shm"):
        f = Path(f"{journal}{suffix}")
        if f.exists():
            shutil.copy2(f, f"{journal}.replaced-{stamp}{suffix}")

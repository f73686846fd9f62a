"""`apply`, `teardown`, `plan` and `check`: wire the console, target, events, live view, prompter, journal,
shell, engine, lease and signals around one `Engine.execute`, and turn its result into an exit code."""

from __future__ import annotations

import math
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from director.commands import run_screen
from director.commands.lintgate import refuse_lint_errors
from director.commands.paths import Paths, Site, ignore_file, prepare_dirs, remove_created
from director.commands.run_screen import InFamily
from director.errors import DirectorError, ExitCode, PlanError, UsageError

if TYPE_CHECKING:
    from rich.console import Console

    from director.exec.shell import Shell
    from director.plan.model import Plan
    from director.run.config import Mode, RunRequest
    from director.run.events import Bus
    from director.state.backends import StateBackend
    from director.state.journal import RunKind
    from director.state.store import StateStore
    from director.targets.base import Target, TargetEnv


def check_request(request: RunRequest) -> None:
    """Usage errors in the options themselves, found before any plan is read or anything created."""
    st, a, screen = request.step, request.approval, request.screen
    if request.jobs is not None and request.jobs < 1:
        raise UsageError(f"--jobs must be at least 1 (got {request.jobs})")
    if not (math.isfinite(st.step_timeout) and 0 < st.step_timeout <= _MAX_TIMEOUT_S):
        raise UsageError(
            f"--step-timeout must be a number of seconds > 0 and at most {_MAX_TIMEOUT_S:.0f} "
            f"(got {st.step_timeout})"
        )
    if st.max_recoveries < 0:
        raise UsageError("--max-recoveries must be >= 0")
    for option, path in (("--state-dir", request.state.state_dir), ("--workdir", request.state.workdir)):
        if path is not None and path.exists() and not path.is_dir():
            raise UsageError(f"{option}: {path} exists and is not a directory")
    if screen.events not in (None, "-"):
        target = Path(screen.events)
        if target.is_dir() or not os.access(target if target.exists() else target.parent, os.W_OK):
            raise UsageError(f"--events: cannot write {screen.events}")
    if screen.json and screen.events == "-":
        raise UsageError("--json and --events - both write to stdout: send the events to a file")
    if a.wait_for_approval is not None and not a.wait_for_approval > 0:  # inf: no limit; nan is refused
        raise UsageError("--wait-for-approval TIMEOUT must be a number of seconds > 0")


# A block may run at most this long (a year): a larger number would overflow the clocks it is added to.
_MAX_TIMEOUT_S = 365 * 24 * 3600.0


def run_command(
    request: RunRequest,
    site: Site,
    *,
    provided: dict[str, str] | None = None,
    family: InFamily | None = None,
) -> ExitCode:
    """apply / teardown (mode `run`), plan (`preview`), check (`check`) of one plan, as `request` asks.

    `site` is the plan as read and where its state is (`paths.locate`); `provided` is what the plan's
    providers realized (`DIRECTOR_PROVIDED_*`, docs/plan-format.md), added to its blocks' environment;
    `family` is set when the run is a member of a family run.
    """
    from director.ci import github_actions, in_ci
    from director.commands import trust
    from director.exec.secrets import secret_name_predicate
    from director.ledger.evidence import record_template
    from director.run.closure import load_key
    from director.run.config import RunConfig
    from director.run.engine import Engine
    from director.run.gates import operator_name
    from director.ui.render import make_console

    kind, mode, st, screen = request.kind, request.mode, request.step, request.screen
    approval, secrets, p, pf = request.approval, list(st.secrets), site.paths, site.file
    # 1. What is said about the plan and the options before anything is created: its lint errors, who may
    # approve and how (`trust.gather`), the `--set` values. The plan is read as `pf.plan` where needed,
    # never kept in a local for the run: a ledger write replaces it, and a local would hold the plan as
    # first read (its text and model: 40 MB for a 5 MB plan) to the end.
    trusted = None
    if mode == "run":
        refuse_lint_errors(pf.plan, site.path, ignore=st.ignore_lint_errors)
        a = approval
        trusted = trust.gather(pf.plan, site.path, sign_with=a.sign_with, allowed=a.allowed_signers,
                               allow_dirty=a.allow_dirty_signers)  # fmt: skip
    given = _preflight(pf.plan, pf.path, kind, mode, list(approval.approve), list(st.sets))
    _check_detail(pf.plan, screen.detail_section)
    interactive = not screen.non_interactive and not in_ci() and sys.stdin.isatty() and sys.stdout.isatty()
    to_stdout = screen.events == "-" or screen.json  # the screen's lines then go to stderr
    if family is not None:
        interactive, console = family.prompter is not None, family.console
    else:
        console = make_console(screen.plain or to_stdout or not sys.stdout.isatty(), stderr=to_stdout)
    # 2. The effects the engine is handed: its directories, target, screen, journal and shell.
    created = prepare_dirs(p)
    tgt, tenv, used = _target(st.target, p, pf.plan, console)
    with ExitStack() as closing:
        bus, live = run_screen.views(console, pf.plan, kind, interactive, screen.plain, family)
        if family is None:
            try:
                run_screen.event_sinks(bus, screen.events, closing)
            except UsageError:
                remove_created(created)  # refused before anything ran: nothing of this run is left
                raise
        elif family.events is not None:
            bus.subscribe(family.events)
        if family is not None:
            prompter = family.prompter
        else:
            prompter = run_screen.prompter(console, live, interactive, site.path, kind)
        journal = _open_journal(site.backend, secret_name_predicate(secrets), created)
        # A family member's blocks never read the terminal: several may run at once (docs/families.md).
        shell = _shell(
            tenv, p, interactive and family is None, secrets, provided or {}, site.identity, pf.plan
        )
        bus.redact_with(lambda text: shell.redactor.redact(text))  # every event, every field
        cfg = RunConfig.derive(
            request,
            interactive=interactive,
            operator=operator_name(approval.operator),
            target=st.target if used else "none",  # the target a run really used
            sets=given,
            signing_key=trusted.key if trusted is not None else None,
            allowed_signers=trusted.signers if trusted is not None else None,
            closure_key=load_key(p.state),
            policy=trusted.policy if trusted is not None else None,
        )
        if trusted is not None and trusted.signers is not None:
            console.print(f"approvals must be signed by a key in {trusted.signers}", markup=False,
                          highlight=False)  # fmt: skip
        for said in trusted.dirty if trusted is not None else ():  # said, and journaled (`director audit`)
            console.print(said, markup=False, highlight=False)
        engine = Engine(
            plan_file=pf,
            journal=journal,
            shell=shell,
            target=tgt,
            bus=bus,
            prompter=prompter,
            config=cfg,
            workdir=p.workspace,
        )
        # 3. The run: under the plan's lease, held to what its journal requires, then the engine.
        try:
            lease = _lease(site, journal, bus, kind, mode)
            signals = family.interrupts if family is not None else _signals_to
            with lease, signals(engine.interrupt), run_screen.shown(live):
                if trusted is not None:  # fail closed (docs/approvals.md)
                    trust.hold(journal, trusted, site.path, record=True)
                    record_template(pf.plan, journal)  # once, before the plan's first run here
                    journal.record_event(None, "plan-before-run", {"text": pf.plan.source, "kind": kind})
                result = engine.execute()  # the interview first
        except KeyboardInterrupt:
            if engine.run is None:  # Ctrl-C at the interview: say so, the board of pending sections is gone
                what = "no run was started" if mode == "run" else "nothing was observed"
                console.print(f"interrupted before anything ran: {what}; nothing changed", markup=False,
                              highlight=False)  # fmt: skip
            raise
        finally:
            shell.close()
            journal.close()
        if screen.detail_section is not None and result.detail is None:
            result.detail = (
                f"--section {screen.detail_section}: no gate to show (the preview does not judge it)"
            )
        # 4. How it ended: the screen's summary, the exit code, `--json`, GitHub's annotations.
        code = run_screen.finish(
            console, bus, result, mode, kind, to_stdout,
            live=live is not None, pf=pf, table=family is None,
        )  # fmt: skip
    if family is not None:
        family.result = result
    if screen.json and family is None:
        run_screen.print_result(request.command, site.path, result, code, pf)
    if github_actions():
        out = sys.stderr if to_stdout else sys.stdout
        run_screen.github_report(pf.plan, site.path, result, mode, kind, code, out)
    return code


def _preflight(
    plan: Plan, path: Path, kind: RunKind, mode: Mode, approve: list[str], sets: list[str]
) -> dict[str, str]:
    """What is said about the plan and the options before anything is created or run; the `--set` values."""
    from director.plan import knobs

    if mode != "preview" and plan.live_state is None:
        raise PlanError(
            "no `## Live State` section: Director writes what a run realized and verified there, and "
            "`check` compares with it; add one (`director init` shows the format), nothing was run",
            path=str(path),
        )
    if kind == "teardown" and mode == "run" and plan.teardown is None:
        raise UsageError(f"{path}: the plan has no `## Teardown` section")
    _check_approvals(plan, approve)
    return knobs.parse_sets(plan, sets)


def _check_detail(plan: Plan, selector: str | None) -> None:
    """`plan --section N` must name a section of this plan."""
    from director.run.gates import matches

    if selector is not None and not any(matches(selector, s.key, s.slug, s.title) for s in plan.sections):
        raise UsageError(f"--section: the plan has no section {selector!r}")


def _check_approvals(plan: Plan, approve: list[str]) -> None:
    """`--approve SECTION` must name a section of this plan (as `director approve` requires)."""
    from director.run.gates import matches

    for selector in approve:
        if not any(matches(selector, s.key, s.slug, s.title) for s in plan.sections):
            raise UsageError(f"--approve: the plan has no section {selector!r}")


def _open_journal(backend: StateBackend, is_secret: Callable[[str], bool], created: list[Path]) -> StateStore:
    """The plan's state store; if it cannot be opened, the directories this start created are removed
    again (if empty). A journal is never removed: it is created whole or not at all (`state.schema`), and
    one that exists may be another process's, made a moment ago."""
    try:
        store = backend.open(is_secret=is_secret)
        assert store is not None  # create=True always gives a store
        return store
    except DirectorError:
        remove_created(created)
        raise


def _secret_values(names: list[str]) -> list[str]:
    """Values of the environment's secret-looking variables and of those named by `--secret`."""
    from director.exec.secrets import secret_name_predicate, secret_values

    return secret_values(os.environ, secret_name_predicate(names))


def _target(name: str, p: Paths, plan: Plan, console: Console) -> tuple[Target, TargetEnv, bool]:
    """The target, the environment it gives the blocks, and whether the plan uses it at all."""
    from director.targets import get_target
    from director.targets.base import TargetEnv
    from director.ui.progress import ProgressLine

    progress = ProgressLine(console)
    tgt = get_target(name, p.state, progress=progress)
    if not tgt.needed_by(plan):
        # A plan that does not use the target needs no account, no shim and no install.
        return tgt, TargetEnv(description=f"{name} (the plan does not use it)"), False
    try:
        tgt.check_prerequisites()
        return tgt, tgt.block_environment(), True
    finally:
        progress.close()  # an install's status line is never left under an error or the run


def _shell(
    tenv: TargetEnv,
    p: Paths,
    interactive: bool,
    secrets: list[str],
    provided: dict[str, str],
    plan_mark: str,
    plan: Plan,
) -> Shell:
    """The blocks' session: this environment, what its providers realized, and the target's, in the
    workspace, secrets redacted, every process a block starts marked with the plan's identity
    (docs/processes.md). A variable the plan's blocks assign is the session's even when the operator's
    environment holds the same value (`ENV=dev director apply` on a §0 saying `export ENV="dev"`)."""
    from director.exec.marks import PLAN_VAR
    from director.exec.secrets import Redactor
    from director.exec.shell import Shell
    from director.plan import bash
    from director.run.closure import DIRECTOR_OPTIONS

    # Director's own options are not the blocks' (a gate's closure holds the environment they inherit)
    base_env = {k: v for k, v in os.environ.items() if k not in DIRECTOR_OPTIONS}
    base_env.update(provided)
    base_env.update(tenv.env)
    redactor = Redactor(_secret_values(secrets))
    assigned = frozenset().union(*(bash.assigns(b.text) for s in plan.sections for b in s.executable_blocks))
    return Shell(
        base_env, p.workspace, interactive=interactive, path_prepend=tenv.path_prepend, redactor=redactor,
        marks={PLAN_VAR: plan_mark},
        assigned=assigned,
    )  # fmt: skip


@contextmanager
def _lease(site: Site, journal: StateStore, bus: Bus, kind: str, mode: str) -> Iterator[None]:
    """One writer per plan while a run (not a preview or a check) executes; its holder row kept fresh.

    Holding the lease proves every earlier writer of this plan and state directory gone: the temp files
    they left (the pid in each name) are removed at once, those of the holder it took over included.
    """
    from director.files import remove_stale_temps, sweep_stale_temps

    pf, p, backend = site.file, site.paths, site.backend
    cm: Any = backend.acquire(journal, run_kind=kind, plan=str(pf.path)) if mode == "run" else nullcontext()
    with cm as lease:
        if lease is not None:
            pf.catch_up()  # Live State the previous holder wrote since the plan was read is the baseline
            dead = {lease.previous_pid} if lease.previous_pid is not None else set()
            remove_stale_temps(pf.path, dead_pids=dead)
            remove_stale_temps(ignore_file(p), dead_pids=dead)  # written at start, before the lease
            sweep_stale_temps(p.state, dead_pids=dead, skip={str(p.workspace)})
            # The holder row names its run and stays fresh, so `status` and a takeover can tell;
            # at most one heartbeat commit a second, so trivial blocks do not pay an fsync each.
            beat = [time.monotonic()]

            def _lease_events(ev: dict[str, Any]) -> None:
                if ev["type"] == "run.start":
                    lease.attach_run(ev["run_id"])
                elif ev["type"] == "step.end" and time.monotonic() - beat[0] >= 1.0:
                    beat[0] = time.monotonic()
                    lease.heartbeat()

            bus.subscribe(_lease_events)
        yield


@contextmanager
def _signals_to(handler: Callable[[str], bool]) -> Iterator[None]:
    """Route Ctrl-C (and SIGTERM) to the engine so the running block stops and the run is journaled."""

    def on_signal(signum: int, _frame: Any) -> None:
        if not handler("SIGTERM" if signum == signal.SIGTERM else "Ctrl-C"):
            # No block is running (a prompt, a journal write…): stop here, the engine journals it.
            raise KeyboardInterrupt

    old_int = signal.signal(signal.SIGINT, on_signal)
    old_term = signal.signal(signal.SIGTERM, on_signal)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old_int)
        signal.signal(signal.SIGTERM, old_term)

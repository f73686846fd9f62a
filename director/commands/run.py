"""`apply`, `teardown`, `plan` and `check`: wire the console, target, events, live view, prompter, journal,
shell, engine, lease and signals around one `Engine.execute`, and turn its result into an exit code."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from director.commands.paths import Paths, backend_for, paths_for, prepare_dirs, require_plan
from director.errors import ExitCode, UsageError

if TYPE_CHECKING:
    from rich.console import Console

    from director.exec.shell import Shell
    from director.plan import knobs
    from director.plan.model import Plan
    from director.run.config import Mode, RunResult
    from director.run.events import Bus
    from director.run.gates import Prompter
    from director.state.backends import StateBackend
    from director.state.journal import RunKind
    from director.state.store import StateStore
    from director.targets import Target, TargetEnv
    from director.ui.render import LiveReporter


def run_command(
    *,
    kind: RunKind,
    mode: Mode,
    plan_path: Path,
    target: str,
    state_dir: Path | None,
    workdir: Path | None,
    secrets: list[str],
    events: str | None,
    plain: bool,
    sets: list[str] = [],  # noqa: B006 - never mutated
    approve: list[str] = [],  # noqa: B006 - never mutated
    auto_approve: bool = False,
    non_interactive: bool = True,
    restart: bool = False,
    operator: str | None = None,
    step_timeout: float = 600.0,
    max_recoveries: int = 5,
    state_url: str | None = None,
    wait_for_approval: float | None = None,
) -> ExitCode:
    """apply / teardown (mode `run`), plan (`preview`), check (`check`)."""
    from director.exec.secrets import secret_name_predicate
    from director.ledger.planfile import PlanFile
    from director.plan import knobs
    from director.run.config import RunConfig
    from director.run.engine import Engine
    from director.run.gates import operator_name
    from director.ui.render import make_console

    _check_options(plan_path, step_timeout, max_recoveries, wait_for_approval)
    pf = PlanFile.load(plan_path, secret_values=_secret_values(secrets))
    plan = pf.plan
    if kind == "teardown" and mode == "run" and plan.teardown is None:
        # Said before anything is created (the engine would say it too, after taking the lease).
        raise UsageError(f"{pf.path}: the plan has no `## Teardown` section")
    given = knobs.parse_sets(plan, sets)
    interactive = (
        not non_interactive and not os.environ.get("CI") and sys.stdin.isatty() and sys.stdout.isatty()
    )
    events_to_stdout = events == "-"
    console = make_console(plain or events_to_stdout or not sys.stdout.isatty(), stderr=events_to_stdout)
    p = paths_for(plan_path, state_dir, workdir)
    prepare_dirs(p)
    who = operator_name(operator)
    backend = backend_for(plan_path, state_dir, state_url, plan)
    tgt, tenv, used = _target(target, p, plan, console, plain)

    with ExitStack() as closing:
        bus, live = _views(console, plan, kind, interactive, plain)
        _event_sinks(bus, events, closing)
        prompter = _prompter(console, live, interactive)
        journal = backend.open(is_secret=secret_name_predicate(secrets))
        assert journal is not None  # create=True always gives a store
        shell = _shell(tenv, p, interactive, secrets)
        cfg = RunConfig(
            kind=kind,
            mode=mode,
            interactive=interactive,
            restart=restart,
            approve=tuple(approve),
            auto_approve=auto_approve,
            operator=who,
            step_timeout_s=step_timeout,
            max_recoveries=max_recoveries,
            target=target if used else "none",  # the target a run really used
            sets=given,
            secret_names=tuple(secrets),
            wait_for_approval=wait_for_approval,
        )
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
        try:
            with _lease(backend, journal, bus, kind, mode), _signals_to(engine.interrupt), _shown(live):
                if mode == "run":
                    journal.record_event(None, "plan-before-run", {"text": pf.plan.source, "kind": kind})
                result = engine.execute(_resolver(plan, given, prompter))
        finally:
            shell.close()
            journal.close()
        return _finish(console, bus, result, mode, kind, events_to_stdout)


def _check_options(
    plan_path: Path, step_timeout: float, max_recoveries: int, wait_for_approval: float | None = None
) -> None:
    """Usage errors found before anything is read or created."""
    require_plan(plan_path)
    if step_timeout <= 0:
        raise UsageError("--step-timeout must be > 0 seconds")
    if max_recoveries < 0:
        raise UsageError("--max-recoveries must be >= 0")
    if wait_for_approval is not None and not wait_for_approval > 0:
        raise UsageError("--wait-for-approval TIMEOUT must be > 0 seconds")


def _secret_values(names: list[str]) -> list[str]:
    """Values of the environment's secret-looking variables and of those named by `--secret`."""
    from director.exec.secrets import secret_name_predicate, secret_values

    return secret_values(os.environ, secret_name_predicate(names))


def _target(name: str, p: Paths, plan: Plan, console: Console, plain: bool) -> tuple[Target, TargetEnv, bool]:
    """The target, the environment it gives the blocks, and whether the plan uses it at all."""
    from rich.text import Text

    from director.targets import TargetEnv, get_target

    def progress(msg: str) -> None:
        console.print(Text(msg, style="" if plain else "dim"))

    tgt = get_target(name, p.state, progress=progress)
    if not tgt.needed_by(plan):
        # A plan that does not use the target needs no account, no shim and no install.
        return tgt, TargetEnv(description=f"{name} (the plan does not use it)"), False
    tgt.check_prerequisites()
    return tgt, tgt.block_environment(), True


def _views(
    console: Console, plan: Plan, kind: str, interactive: bool, plain: bool
) -> tuple[Bus, LiveReporter | None]:
    """The event bus with the screen on it: a live view at an interactive terminal, else plain lines."""
    from director.run.events import Bus
    from director.ui.render import LiveReporter, PlainReporter

    bus = Bus()
    use_live = interactive and not plain and console.is_terminal and not os.environ.get("NO_COLOR")
    if not use_live:
        bus.subscribe(PlainReporter(console))
        return bus, None
    rows = [
        (s.key, f"§{s.key}" if s.number is not None else s.key, s.title) for s in plan.executable_sections
    ]
    if kind == "teardown" and plan.teardown:
        rows.append((plan.teardown.key, "teardown", plan.teardown.title))
    live = LiveReporter(console, rows)
    bus.subscribe(live)
    return bus, live


def _event_sinks(bus: Bus, events: str | None, closing: ExitStack) -> None:
    """`--events FILE|-`: JSONL events to a file (closed with `closing`) or to stdout."""
    from director.run.events import JsonlWriter

    if not events:
        return
    if events == "-":
        bus.subscribe(JsonlWriter(sys.stdout))
        return
    bus.subscribe(JsonlWriter(closing.enter_context(open(events, "a", encoding="utf-8"))))  # noqa: SIM115


def _prompter(console: Console, live: LiveReporter | None, interactive: bool) -> Prompter | None:
    """Questions at the terminal (the live view steps aside while one is asked), or none."""
    from director.ui.prompts import TerminalPrompter

    if not interactive:
        return None
    tp = TerminalPrompter(console)
    if live is not None:
        tp.pause, tp.resume = live.pause, live.resume
    return tp


def _shell(tenv: TargetEnv, p: Paths, interactive: bool, secrets: list[str]) -> Shell:
    """The blocks' session: this environment plus the target's, in the workspace, secrets redacted."""
    from director.exec.secrets import Redactor
    from director.exec.shell import Shell

    base_env = dict(os.environ)
    base_env.update(tenv.env)
    redactor = Redactor(_secret_values(secrets))
    return Shell(
        base_env, p.workspace, interactive=interactive, path_prepend=tenv.path_prepend, redactor=redactor
    )


def _resolver(
    plan: Plan, given: dict[str, str], prompter: Prompter | None
) -> Callable[[dict[str, str] | None], knobs.Resolution]:
    """The interview: `--set` answers, then the previous run's, then the prompter (if any)."""
    from director.plan import knobs

    def resolve(previous: dict[str, str] | None) -> knobs.Resolution:
        ask = prompter.ask_input if prompter is not None else None

        def ask_knob(knob: str) -> str:
            assert ask is not None
            return ask(plan.knob_inputs()[knob])

        return knobs.resolve(plan, given, previous, ask_knob if ask else None)

    return resolve


@contextmanager
def _lease(backend: StateBackend, journal: StateStore, bus: Bus, kind: str, mode: str) -> Iterator[None]:
    """One writer per plan while a run (not a preview or a check) executes; its holder row kept fresh."""
    cm: Any = backend.acquire(journal, run_kind=kind) if mode == "run" else nullcontext()
    with cm as lease:
        if lease is not None:
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
def _signals_to(handler: Callable[[], bool]) -> Iterator[None]:
    """Route Ctrl-C (and SIGTERM) to the engine so the running block stops and the run is journaled."""

    def on_signal(*_: Any) -> None:
        if not handler():
            # No block is running (a prompt, a journal write…): stop here, the engine journals it.
            raise KeyboardInterrupt

    old_int = signal.signal(signal.SIGINT, on_signal)
    old_term = signal.signal(signal.SIGTERM, on_signal)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old_int)
        signal.signal(signal.SIGTERM, old_term)


@contextmanager
def _shown(live: LiveReporter | None) -> Iterator[None]:
    """The live view on screen while the engine runs (nothing to do for plain output)."""
    if live is None:
        yield
        return
    live.start()
    try:
        yield
    finally:
        live.stop()


def _finish(
    console: Console, bus: Bus, result: RunResult, mode: str, kind: str, events_to_stdout: bool
) -> ExitCode:
    """The summary table, the outcome in words, the `run.end` event; the exit code."""
    from director.ui.render import summary_table

    if result.sections and (mode != "run" or not events_to_stdout):
        summary_table(
            console,
            result.sections,
            title={"preview": "plan", "check": "check"}.get(mode, f"{kind} run {result.run_id}"),
        )
    code = _report(console, result, mode, kind)
    bus.emit("run.end", **_end_fields(result, mode, code))
    return code


def _end_fields(result: RunResult, mode: str, code: ExitCode) -> dict[str, Any]:
    return {
        "run_id": result.run_id,
        "mode": mode,
        "outcome": result.outcome,
        "section": result.section,
        "message": result.message,
        "exit_code": int(code),
    }


def _report(console: Console, result: RunResult, mode: str, kind: str) -> ExitCode:
    """Say how the run ended, in one or a few lines, and pick its exit code."""
    from director.ui.render import clean

    def say(line: str) -> None:
        # Messages carry block output: never read them as rich markup.
        console.print(clean(line), markup=False, highlight=False)

    if mode == "preview":
        say("changes pending" if result.changes else "no changes: everything is in sync")
        return ExitCode.CHANGES if result.changes else ExitCode.OK
    if mode == "check":
        for d in result.drift:
            say(f"drift: {d}")
        say("drift found" if result.drift else "in sync with the ledger")
        return ExitCode.CHANGES if result.drift else ExitCode.OK
    outcome = result.outcome
    if outcome == "completed":
        say(f"{kind} completed: {result.message}")
        if result.unconfirmed:
            for note in result.unconfirmed:
                say(f"unconfirmed: {note}")
            return ExitCode.UNCONFIRMED
        return ExitCode.OK
    if outcome == "awaiting-approval":
        say(f"awaiting approval: {result.message}")
        say(f"approve with:  {result.approve_hint}   (or re-run with --approve {result.section})")
        return ExitCode.AWAITING_APPROVAL
    if outcome == "interrupted":
        say(f"interrupted: {result.message}; `director {kind}` resumes")
        return ExitCode.INTERRUPTED
    say(f"failed: {result.message}")
    return ExitCode.STEP_FAILED

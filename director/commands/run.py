"""`apply`, `teardown`, `plan` and `check`: wire the console, target, events, live view, prompter, journal,
shell, engine, lease and signals around one `Engine.execute`, and turn its result into an exit code."""

from __future__ import annotations

import math
import os
import re
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from director.commands.lintgate import refuse_lint_errors
from director.commands.paths import (
    Paths,
    backend_for,
    ignore_file,
    paths_for,
    prepare_dirs,
    process_identity,
    remove_created,
    require_plan,
    require_writable_plan,
)
from director.errors import DirectorError, ExitCode, PlanError, UsageError

if TYPE_CHECKING:
    from rich.console import Console

    from director.exec.shell import Shell
    from director.ledger.planfile import PlanFile
    from director.plan import knobs
    from director.plan.model import Plan
    from director.run.config import Mode, RunResult
    from director.run.events import Bus
    from director.run.gates import Prompter
    from director.state.backends import StateBackend
    from director.state.journal import RunKind
    from director.state.store import StateStore
    from director.targets.base import Target, TargetEnv
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
    reinterview: bool = False,
    operator: str | None = None,
    step_timeout: float = 600.0,
    max_recoveries: int = 5,
    state_url: str | None = None,
    wait_for_approval: float | None = None,
    ignore_lint_errors: bool = False,
) -> ExitCode:
    """apply / teardown (mode `run`), plan (`preview`), check (`check`)."""
    from director.ci import github_actions, in_ci
    from director.exec.secrets import secret_name_predicate
    from director.ledger.planfile import PlanFile
    from director.run.config import RunConfig
    from director.run.engine import Engine
    from director.run.gates import operator_name
    from director.ui.render import make_console

    _check_options(plan_path, step_timeout, max_recoveries, state_dir, workdir, events, wait_for_approval)
    if mode == "run":
        require_writable_plan(plan_path)
    pf = PlanFile.load(plan_path, secret_values=_secret_values(secrets))
    if mode == "run":
        refuse_lint_errors(pf.plan, plan_path, ignore=ignore_lint_errors)
    # Read as `pf.plan` where needed, never kept in a local for the run: a ledger write replaces it, and a
    # local would hold the plan as first read (its text and model: 40 MB for a 5 MB plan) to the end.
    given = _preflight(pf.plan, pf.path, kind, mode, approve, sets)
    interactive = not non_interactive and not in_ci() and sys.stdin.isatty() and sys.stdout.isatty()
    events_to_stdout = events == "-"
    console = make_console(plain or events_to_stdout or not sys.stdout.isatty(), stderr=events_to_stdout)
    p = paths_for(plan_path, state_dir, workdir)
    created = prepare_dirs(p)
    who = operator_name(operator)
    backend = backend_for(plan_path, state_dir, state_url, pf.plan)
    tgt, tenv, used = _target(target, p, pf.plan, console, plain)

    with ExitStack() as closing:
        bus, live = _views(console, pf.plan, kind, interactive, plain)
        _event_sinks(bus, events, closing)
        prompter = _prompter(console, live, interactive)
        journal = _open_journal(backend, p, secret_name_predicate(secrets), created)
        shell = _shell(tenv, p, interactive, secrets, process_identity(plan_path, backend))
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
            lease = _lease(backend, p, pf, journal, bus, kind, mode)
            with lease, _signals_to(engine.interrupt), _shown(live):
                if mode == "run":
                    journal.record_event(None, "plan-before-run", {"text": pf.plan.source, "kind": kind})
                ask_again = reinterview or (kind == "apply" and mode == "run" and _torn_down(journal))
                result = engine.execute(_resolver(pf, given, prompter, ask_again))
        finally:
            shell.close()
            journal.close()
        code = _finish(console, bus, result, mode, kind, events_to_stdout, live=live is not None, pf=pf)
    if github_actions():
        out = sys.stderr if events_to_stdout else sys.stdout
        _github_report(pf.plan, plan_path, result, mode, kind, code, out)
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


def _check_options(
    plan_path: Path,
    step_timeout: float,
    max_recoveries: int,
    state_dir: Path | None,
    workdir: Path | None,
    events: str | None,
    wait_for_approval: float | None = None,
) -> None:
    """Usage errors found before anything is read or created."""
    require_plan(plan_path)
    if not (math.isfinite(step_timeout) and step_timeout > 0):
        raise UsageError(f"--step-timeout must be a number of seconds > 0 (got {step_timeout})")
    if max_recoveries < 0:
        raise UsageError("--max-recoveries must be >= 0")
    for option, path in (("--state-dir", state_dir), ("--workdir", workdir)):
        if path is not None and path.exists() and not path.is_dir():
            raise UsageError(f"{option}: {path} exists and is not a directory")
    if events not in (None, "-"):
        target = Path(events)
        if target.is_dir() or not os.access(target if target.exists() else target.parent, os.W_OK):
            raise UsageError(f"--events: cannot write {events}")
    if wait_for_approval is not None and not wait_for_approval > 0:  # inf: no limit; nan is refused
        raise UsageError("--wait-for-approval TIMEOUT must be a number of seconds > 0")


def _check_approvals(plan: Plan, approve: list[str]) -> None:
    """`--approve SECTION` must name a section of this plan (as `director approve` requires)."""
    from director.run.gates import matches

    for selector in approve:
        if not any(matches(selector, s.key, s.slug, s.title) for s in plan.sections):
            raise UsageError(f"--approve: the plan has no section {selector!r}")


def _open_journal(
    backend: StateBackend, p: Paths, is_secret: Callable[[str], bool], created: list[Path]
) -> StateStore:
    """The plan's state store; if it cannot be opened, what this start created is removed again."""
    new = backend.name == "sqlite" and not p.journal.exists()
    try:
        store = backend.open(is_secret=is_secret)
        assert store is not None  # create=True always gives a store
        return store
    except DirectorError:
        if new:  # a journal this start began (an empty file, its -wal/-shm) is not left half-made
            files = [p.journal.with_name(p.journal.name + end) for end in ("", "-wal", "-shm")]
            remove_created([*created, *files])
        raise


def _secret_values(names: list[str]) -> list[str]:
    """Values of the environment's secret-looking variables and of those named by `--secret`."""
    from director.exec.secrets import secret_name_predicate, secret_values

    return secret_values(os.environ, secret_name_predicate(names))


def _target(name: str, p: Paths, plan: Plan, console: Console, plain: bool) -> tuple[Target, TargetEnv, bool]:
    """The target, the environment it gives the blocks, and whether the plan uses it at all."""
    from director.targets import get_target
    from director.targets.base import TargetEnv

    def progress(msg: str) -> None:
        if plain:
            console.print(msg, markup=False)
            return
        from rich.text import Text

        console.print(Text(msg, style="dim"))

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
    try:
        sink = closing.enter_context(open(events, "a", encoding="utf-8"))  # noqa: SIM115
    except OSError as exc:
        raise UsageError(f"--events: cannot write {events}: {exc.strerror or exc}") from None
    bus.subscribe(JsonlWriter(sink))


def _prompter(console: Console, live: LiveReporter | None, interactive: bool) -> Prompter | None:
    """Questions at the terminal (the live view steps aside while one is asked), or none."""
    if not interactive:
        return None
    from director.ui.prompts import TerminalPrompter

    tp = TerminalPrompter(console)
    if live is not None:
        tp.pause, tp.hold, tp.resume = live.pause, live.hold, live.resume
    return tp


def _shell(tenv: TargetEnv, p: Paths, interactive: bool, secrets: list[str], plan_mark: str) -> Shell:
    """The blocks' session: this environment plus the target's, in the workspace, secrets redacted, every
    process a block starts marked with the plan's identity (docs/processes.md)."""
    from director.exec.marks import PLAN_VAR
    from director.exec.secrets import Redactor
    from director.exec.shell import Shell

    base_env = dict(os.environ)
    base_env.update(tenv.env)
    redactor = Redactor(_secret_values(secrets))
    return Shell(
        base_env, p.workspace, interactive=interactive, path_prepend=tenv.path_prepend, redactor=redactor,
        marks={PLAN_VAR: plan_mark},
    )  # fmt: skip


def _torn_down(journal: StateStore) -> bool:
    """Whether the plan's latest run is a completed teardown (what it applied is gone: ask again)."""
    latest = journal.latest_run()
    return latest is not None and latest.kind == "teardown" and latest.state == "completed"


def _resolver(
    pf: PlanFile, given: dict[str, str], prompter: Prompter | None, reinterview: bool = False
) -> Callable[[dict[str, str] | None], knobs.Resolution]:
    """The interview: `--set` answers, then the previous run's, then the prompter (if any).

    With `reinterview` (`--reinterview`, or the first apply after a completed teardown) every question
    without a `--set` answer is asked again at a terminal, the previous answer as its default; without a
    terminal the previous answers stand.
    """
    import dataclasses

    from director.plan import knobs

    def resolve(previous: dict[str, str] | None) -> knobs.Resolution:
        ask = prompter.ask_input if prompter is not None else None

        def ask_knob(knob: str) -> str:
            assert ask is not None
            inp = pf.plan.knob_inputs()[knob]
            if previous and previous.get(knob) in inp.options:
                inp = dataclasses.replace(inp, default=previous[knob])
            return ask(inp)

        asked_again = reinterview and ask is not None
        return knobs.resolve(pf.plan, given, None if asked_again else previous, ask_knob if ask else None)

    return resolve


@contextmanager
def _lease(
    backend: StateBackend, p: Paths, pf: PlanFile, journal: StateStore, bus: Bus, kind: str, mode: str
) -> Iterator[None]:
    """One writer per plan while a run (not a preview or a check) executes; its holder row kept fresh.

    Holding the lease proves every earlier writer of this plan and state directory gone: the temp files
    they left (the pid in each name) are removed at once, those of the holder it took over included.
    """
    from director.files import remove_stale_temps, sweep_stale_temps

    cm: Any = backend.acquire(journal, run_kind=kind, plan=str(pf.path)) if mode == "run" else nullcontext()
    with cm as lease:
        if lease is not None:
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
    console: Console,
    bus: Bus,
    result: RunResult,
    mode: str,
    kind: str,
    events_to_stdout: bool,
    *,
    live: bool = False,
    pf: Any = None,
) -> ExitCode:
    """The summary, the outcome in words, the realized values, the `run.end` event; the exit code."""
    from director.ledger.compose import outputs
    from director.ui.summary import print_outputs, summary_table

    if result.sections and (mode != "run" or not events_to_stdout):
        summary_table(
            console,
            result.sections,
            title={"preview": "plan", "check": "check"}.get(mode, f"{kind} run {result.run_id}"),
            live=live,
        )
    code = _report(console, result, mode, kind)
    realized = outputs(pf.plan) if pf is not None and mode == "run" and kind == "apply" else {}
    print_outputs(console, realized)
    bus.emit("run.end", **_end_fields(result, mode, code), outputs=realized)
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


def _github_report(
    plan: Plan, plan_path: Path, result: RunResult, mode: str, kind: str, code: ExitCode, out: Any
) -> None:
    """On GitHub Actions: annotations at the sections concerned, and a Markdown job summary (docs/ci.md)."""
    from director.ci import Level, annotation, append_summary, md_cell
    from director.plan.model import section_label

    path = str(plan_path)
    command = {"preview": "plan", "check": "check"}.get(mode, kind)

    def line_of(key: str | None) -> int:
        for s in plan.sections:
            if s.key == key:
                return s.span.first_line
        return plan.title_line + 1

    def line_of_drift(text: str) -> int:
        ls = plan.live_state
        m = re.match(r"check row '(.*)':", text)
        if m and ls is not None:
            return next((r.line + 1 for r in ls.check_rows if r.name == m.group(1)), ls.span.first_line)
        for s in plan.sections:
            label = section_label(s)
            if text == label or text.startswith((f"{label}:", f"{label} ")):
                return s.span.first_line
        return plan.title_line + 1

    title = f"director {command}"

    def say(level: Level, msg: str, key: str | None = None, line: int | None = None, name: str = "") -> None:
        where = line if line is not None else line_of(key)
        print(annotation(level, msg, file=path, line=where, title=name or title), file=out, flush=True)

    if mode == "preview":
        for r in result.sections:
            if r.verdict in ("will-apply", "needs-approval"):
                say("notice", f"{r.verdict}: {r.detail}", r.key)
            elif r.verdict in ("blocked", "failed"):
                say("error", f"{r.verdict}: {r.detail}", r.key)
    elif mode == "check":
        for d in result.drift:
            say("error", f"drift: {d}", line=line_of_drift(d), name=f"{title}: drift")
    elif result.outcome == "awaiting-approval":
        msg = f"awaiting approval: {result.message}; approve with: {result.approve_hint}"
        say("warning", msg, result.section)
    elif result.outcome in ("failed", "interrupted"):
        msg = f"{result.outcome}: {result.message}"
        say("error", msg, result.section, name=f"{title} {result.outcome}")
    for note in result.unconfirmed:
        say("warning", f"unconfirmed: {note}", result.section)

    if mode == "preview":
        outcome = "changes pending" if result.changes else "no changes: everything is in sync"
    elif mode == "check":
        outcome = "drift found" if result.drift else "in sync with the ledger"
    else:
        outcome = f"{kind} {result.outcome}" + (f": {result.message}" if result.message else "")
    md = [f"### `director {command}` · `{md_cell(path)}`", ""]
    md += [f"**{md_cell(outcome)}** (exit {int(code)})", ""]
    if result.sections:
        md += ["| section | verdict | detail |", "| --- | --- | --- |"]
        for r in result.sections:
            s = next((x for x in plan.sections if x.key == r.key), None)
            name = f"{section_label(s)} {s.title}" if s is not None else r.key
            md.append(f"| {md_cell(name)} | {md_cell(r.verdict)} | {md_cell(r.detail)} |")
        md.append("")
    if result.drift:
        md += ["Drift:", "", *[f"- {md_cell(d)}" for d in result.drift], ""]
    if result.unconfirmed:
        md += ["Unconfirmed:", "", *[f"- {md_cell(n)}" for n in result.unconfirmed], ""]
    if result.outcome == "awaiting-approval" and result.approve_hint:
        md += [f"Approve with `{result.approve_hint}` or re-run with `--approve {result.section}`.", ""]
    append_summary("\n".join(md))

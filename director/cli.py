"""The `director` command line: typer options → one command function call each → its exit code.

`director.error_handler` is the one place where an error becomes a message and an exit code (pre-commit's
`error_handler`, copier's `_handle_exceptions`); every code is an `ExitCode` (README "Exit codes").
The options the commands share are in `director.cli_options`.
Heavy modules (markdown-it, ruamel, rich, pexpect, sqlite) are imported inside the commands so that
`director --help` starts about as fast as typer itself.
"""

import enum
import functools
import gc
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from director import __version__
from director.cli_options import (
    ApproveOpt,
    EventsOpt,
    IgnoreLintOpt,
    JsonOpt,
    MaxRecoveriesOpt,
    NonInteractiveOpt,
    OperatorOpt,
    PlainOpt,
    PlanArg,
    SecretOpt,
    SetOpt,
    StateDirOpt,
    StateUrlOpt,
    StepTimeoutOpt,
    TargetOpt,
    WaitOpt,
    WorkdirOpt,
)
from director.error_handler import error_handler
from director.errors import ExitCode
from director.errors import UsageError as DirectorUsageError
from director.targets import DEFAULT_TARGET

# click's UsageError (a bad option or argument), reached through typer's public `BadParameter`: typer up
# to 0.25 re-exports click's class, typer 0.26+ its vendored copy; importing `click` or `typer._click`
# would miss one of the two.

app = typer.Typer(
    name="director",
    help="Run self-executing Markdown plans as durable workflows: observe before act, gates with receipts, "
    "a Live State ledger written back into the plan.",
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    add_completion=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_version(value: bool) -> None:
    if value:
        print(f"director {__version__}")
        raise typer.Exit(int(ExitCode.OK))


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", help="Print the version and exit.", callback=_print_version, is_eager=True),
    ] = False,
) -> None:
    """Run self-executing Markdown plans as durable workflows: observe before act, gates with receipts,
    a Live State ledger written back into the plan."""


def _command(name: str | None = None) -> Callable[[Callable[..., int]], Callable[..., NoReturn]]:
    """Register a command whose function returns an exit code, inside `error_handler`."""

    def register(fn: Callable[..., int]) -> Callable[..., NoReturn]:
        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> NoReturn:
            with error_handler():
                code = fn(*args, **kwargs)
                sys.stdout.flush()  # a closed pipe is found here, where the handler sees it
            raise SystemExit(int(code))

        app.command(name)(run)
        return run

    return register


# ---------------------------------------------------------------------------------------- commands


@_command()
def show(
    plan: PlanArg, as_json: Annotated[bool, typer.Option("--json", help="Print the model as JSON.")] = False
) -> int:
    """Show the parsed plan: sections, markers, gates, blocks, inputs, Live State.

    Example: director show plans/workflow.cloudflare.md --json | jq '.sections[].key'
    """
    from director.commands.show import show_command

    return show_command(plan, as_json=as_json)


class LintFormat(enum.StrEnum):
    text = "text"
    json = "json"
    github = "github"


@_command()
def lint(
    plans: Annotated[list[Path], typer.Argument(help="The plans (Markdown files).", show_default=False)],
    fmt: Annotated[
        LintFormat,
        typer.Option(
            "--format",
            help="text (path:line: severity: code: message), json (one document), github (annotations).",
            envvar="DIRECTOR_LINT_FORMAT",
        ),
    ] = LintFormat.text,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict",
            help="Warnings fail too (exit 1); by default only errors do.",
            envvar="DIRECTOR_LINT_STRICT",
        ),
    ] = False,
) -> int:
    """Check plans for what an author would want fixed: exit 1 on errors (on warnings too with --strict).

    Silence one finding with `<!-- director-lint: disable=CODE -->` (or `# director-lint: disable=CODE` in
    a bash block) on the line before it; docs/lint.md lists every code and its severity.

    \b
    Examples:
      director lint plans/*.md plans/examples/*.md
      director lint plans/*.md --format github --strict
    """
    from director.commands.lint import lint_command

    return lint_command(plans, fmt=fmt.value, strict=strict)


@_command()
def apply(
    plan: PlanArg,
    target: TargetOpt = DEFAULT_TARGET,
    set_: SetOpt = None,
    approve: ApproveOpt = None,
    auto_approve: Annotated[
        bool,
        typer.Option("--auto-approve", help="Approve 🔴 gates (never 💥).", envvar="DIRECTOR_AUTO_APPROVE"),
    ] = False,
    non_interactive: NonInteractiveOpt = False,
    restart: Annotated[
        bool, typer.Option("--restart", help="Begin a fresh run instead of resuming.")
    ] = False,
    reinterview: Annotated[
        bool,
        typer.Option(
            "--reinterview",
            help="Ask the Provisioning Inputs again (the previous answers as defaults); "
            "also done on the first apply after a teardown.",
        ),
    ] = False,
    operator: OperatorOpt = None,
    state_dir: StateDirOpt = None,
    workdir: WorkdirOpt = None,
    step_timeout: StepTimeoutOpt = 1800.0,
    max_recoveries: MaxRecoveriesOpt = 5,
    secret: SecretOpt = None,
    events: EventsOpt = None,
    plain: PlainOpt = False,
    state_url: StateUrlOpt = None,
    wait_for_approval: WaitOpt = None,
    ignore_lint_errors: IgnoreLintOpt = False,
) -> int:
    """Apply a plan: observe before act, stop at gates, resume where a previous run stopped.

    \b
    Examples:
      director apply plans/workflow.cloudflare.md --target local --set trigger=cli --auto-approve
      director apply plan.md --non-interactive --approve 3     # CI: approve §3's gate by flag
    """
    from director.commands.run import run_command

    return run_command(
        kind="apply",
        mode="run",
        plan_path=plan,
        target=target,
        sets=set_ or [],
        approve=approve or [],
        auto_approve=auto_approve,
        non_interactive=non_interactive,
        restart=restart,
        reinterview=reinterview,
        operator=operator,
        state_dir=state_dir,
        workdir=workdir,
        step_timeout=step_timeout,
        max_recoveries=max_recoveries,
        secrets=secret or [],
        events=events,
        plain=plain,
        state_url=state_url,
        wait_for_approval=wait_for_approval,
        ignore_lint_errors=ignore_lint_errors,
    )


@_command()
def teardown(
    plan: PlanArg,
    target: TargetOpt = DEFAULT_TARGET,
    set_: SetOpt = None,
    approve: ApproveOpt = None,
    non_interactive: NonInteractiveOpt = False,
    restart: Annotated[bool, typer.Option("--restart", help="Begin a fresh teardown run.")] = False,
    operator: OperatorOpt = None,
    state_dir: StateDirOpt = None,
    workdir: WorkdirOpt = None,
    step_timeout: StepTimeoutOpt = 1800.0,
    max_recoveries: MaxRecoveriesOpt = 5,
    secret: SecretOpt = None,
    events: EventsOpt = None,
    plain: PlainOpt = False,
    state_url: StateUrlOpt = None,
    wait_for_approval: WaitOpt = None,
    ignore_lint_errors: IgnoreLintOpt = False,
) -> int:
    """Tear down what the plan created: observe first, 💥 approval, resumable.

    Example: director teardown plans/workflow.cloudflare.md --target local --approve teardown
    """
    from director.commands.run import run_command

    return run_command(
        kind="teardown",
        mode="run",
        plan_path=plan,
        target=target,
        sets=set_ or [],
        approve=approve or [],
        auto_approve=False,
        non_interactive=non_interactive,
        restart=restart,
        operator=operator,
        state_dir=state_dir,
        workdir=workdir,
        step_timeout=step_timeout,
        max_recoveries=max_recoveries,
        secrets=secret or [],
        events=events,
        plain=plain,
        state_url=state_url,
        wait_for_approval=wait_for_approval,
        ignore_lint_errors=ignore_lint_errors,
    )


@_command("plan")
def plan_cmd(
    plan: PlanArg,
    target: TargetOpt = DEFAULT_TARGET,
    set_: SetOpt = None,
    teardown_: Annotated[bool, typer.Option("--teardown", help="Preview the teardown instead.")] = False,
    state_dir: StateDirOpt = None,
    workdir: WorkdirOpt = None,
    secret: SecretOpt = None,
    events: EventsOpt = None,
    plain: PlainOpt = False,
    state_url: StateUrlOpt = None,
) -> int:
    """Preview (read-only): in sync / will apply / needs approval / blocked, per section. Exit 2 if changes.

    Example: director plan plans/workflow.cloudflare.md --target local
    """
    from director.commands.run import run_command

    return run_command(
        kind="teardown" if teardown_ else "apply",
        mode="preview",
        plan_path=plan,
        target=target,
        sets=set_ or [],
        state_dir=state_dir,
        workdir=workdir,
        secrets=secret or [],
        events=events,
        plain=plain,
        state_url=state_url,
    )


@_command()
def check(
    plans: Annotated[list[Path], typer.Argument(help="The plans (Markdown files).", show_default=False)],
    target: TargetOpt = DEFAULT_TARGET,
    state_dir: StateDirOpt = None,
    workdir: WorkdirOpt = None,
    secret: SecretOpt = None,
    events: EventsOpt = None,
    plain: PlainOpt = False,
    state_url: StateUrlOpt = None,
) -> int:
    """Drift: run the observation blocks read-only and compare with the ledger. Exit 0 in sync, 2 drift.

    Several plans are checked one after the other; the exit code is the highest of theirs.

    Example: director check plans/workflow.cloudflare.md --target local
    """
    from director.commands.run import run_command

    if len(plans) > 1 and state_dir is not None:
        raise DirectorUsageError("--state-dir names one plan's state: check one plan at a time with it")
    codes = [
        run_command(
            kind="apply",
            mode="check",
            plan_path=plan,
            target=target,
            state_dir=state_dir,
            workdir=workdir,
            secrets=secret or [],
            events=events,
            plain=plain,
            state_url=state_url,
        )
        for plan in plans
    ]
    return max(codes)


@_command("approve")
def approve_cmd(
    plan: PlanArg,
    section: Annotated[str, typer.Argument(help="The gated section: number (3) or slug (teardown).")],
    operator: OperatorOpt = None,
    state_dir: StateDirOpt = None,
    yes: Annotated[
        bool, typer.Option("--yes", help="Record it without asking (required without a terminal).")
    ] = False,
    state_url: StateUrlOpt = None,
) -> int:
    """Record an approval receipt for a gate as it stands now (shows it, then asks to confirm).

    Example: director approve plans/workflow.cloudflare.md 3 --operator alice
    """
    from director.commands.approve import approve_command

    return approve_command(
        plan, section, operator=operator, state_dir=state_dir, yes=yes, state_url=state_url
    )


@_command()
def status(
    plan: PlanArg, state_dir: StateDirOpt = None, as_json: JsonOpt = False, state_url: StateUrlOpt = None
) -> int:
    """The plan's state at a glance: Live State, last run, frontier, gate, lease, local sessions.

    Example: director status plans/workflow.cloudflare.md --json
    """
    from director.commands.status import status_command

    return status_command(plan, state_dir=state_dir, as_json=as_json, state_url=state_url)


@_command()
def diff(
    plan: PlanArg,
    against: Annotated[str, typer.Option("--against", help="A git revision to compare with.")] = "HEAD",
    last_run: Annotated[
        bool, typer.Option("--last-run", help="Compare with the state before the last run.")
    ] = False,
    state_dir: StateDirOpt = None,
    as_json: JsonOpt = False,
    state_url: StateUrlOpt = None,
) -> int:
    """The Live State diff against a git revision (default HEAD) or the last run. Exit 1 if different.

    Example: director diff plans/workflow.cloudflare.md --against HEAD~1
    """
    from director.commands.diff import diff_command

    return diff_command(
        plan, against=against, last_run=last_run, state_dir=state_dir, as_json=as_json, state_url=state_url
    )


@_command()
def audit(
    plan: PlanArg,
    state_dir: StateDirOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Everything as one JSON document.")] = False,
    jsonl: Annotated[bool, typer.Option("--jsonl", help="One JSON record per line.")] = False,
    state_url: StateUrlOpt = None,
) -> int:
    """The history from the journal: runs, transitions, steps, approvals, inputs, target changes.

    Example: director audit plans/workflow.cloudflare.md --jsonl > audit.jsonl
    """
    from director.commands.audit import audit_command

    return audit_command(plan, state_dir=state_dir, as_json=as_json, jsonl=jsonl, state_url=state_url)


@_command()
def unlock(
    plan: PlanArg,
    state_dir: StateDirOpt = None,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation.")] = False,
    operator: OperatorOpt = None,
    state_url: StateUrlOpt = None,
) -> int:
    """Break a lease whose holder this host cannot check (asks first; audited).

    SQLite: a holder recorded by another host; a running holder is refused. PostgreSQL (--state-url):
    a dead holder's row is cleared, a live holder's database session is ended (it stops, exit 11).

    Example: director unlock plans/workflow.cloudflare.md --yes
    """
    from director.commands.unlock import unlock_command

    return unlock_command(plan, state_dir=state_dir, yes=yes, operator=operator, state_url=state_url)


@_command()
def output(
    plan: PlanArg,
    key: Annotated[str | None, typer.Argument(help="One key of the Live State table.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="As JSON (an object, or KEY's string).")] = False,
    raw: Annotated[bool, typer.Option("--raw", help="KEY's value alone, no newline (for scripts).")] = False,
) -> int:
    """The values the plan realized (its Live State key/value table), like terraform's outputs.

    Example: curl "$(director output plans/workflow.cloudflare.md URL --raw)/status/1"
    """
    from director.commands.output import output_command

    return output_command(plan, key, as_json=as_json, raw=raw)


@_command()
def logs(
    plan: PlanArg,
    section: Annotated[str | None, typer.Argument(help="Only this section: number, key or slug.")] = None,
    run: Annotated[int | None, typer.Option("--run", help="This run (default: the latest).")] = None,
    state_dir: StateDirOpt = None,
) -> int:
    """The full output of each step of a run (as the journal keeps it), colours removed.

    Example: director logs plans/workflow.cloudflare.md 3
    """
    from director.commands.logs import logs_command

    return logs_command(plan, section, run_id=run, state_dir=state_dir)


@_command()
def init(
    name: Annotated[str, typer.Argument(help="Plan name: writes NAME.md (e.g. cache.local).")],
    directory: Annotated[Path, typer.Option("--dir", help="Where to write it.")] = Path("."),
) -> int:
    """Scaffold a new plan in this format that lints clean and applies on a fresh machine.

    Example: director init cache.local && director apply cache.local.md --non-interactive
    """
    from director.commands.init import init_command

    return init_command(name, directory)


state_app = typer.Typer(
    name="state",
    help="Move a plan's journal between SQLite and PostgreSQL; break its lease.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(state_app)


def _state_command(name: str) -> Callable[[Callable[..., int]], Callable[..., NoReturn]]:
    """Register a `director state NAME` command (same error handling as the top-level commands)."""

    def register(fn: Callable[..., int]) -> Callable[..., NoReturn]:
        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> NoReturn:
            with error_handler():
                code = fn(*args, **kwargs)
                sys.stdout.flush()
            raise SystemExit(int(code))

        state_app.command(name)(run)
        return run

    return register


ReplaceOpt = Annotated[
    bool, typer.Option("--replace", help="Replace the destination's history (an SQLite one is kept aside).")
]


@_state_command("push")
def state_push(
    plan: PlanArg, state_url: StateUrlOpt = None, state_dir: StateDirOpt = None, replace: ReplaceOpt = False
) -> int:
    """Copy the plan's SQLite journal (beside the plan) into PostgreSQL, every id and event kept.

    Example: director state push plans/workflow.cloudflare.md --state-url postgresql://director@db/director
    """
    from director.commands.state import transfer_command

    return transfer_command(plan, "push", state_dir=state_dir, state_url=state_url, replace=replace)


@_state_command("pull")
def state_pull(
    plan: PlanArg, state_url: StateUrlOpt = None, state_dir: StateDirOpt = None, replace: ReplaceOpt = False
) -> int:
    """Copy the plan's journal from PostgreSQL into the SQLite journal beside the plan.

    Example: director state pull plans/workflow.cloudflare.md --state-url postgresql://director@db/director
    """
    from director.commands.state import transfer_command

    return transfer_command(plan, "pull", state_dir=state_dir, state_url=state_url, replace=replace)


def _optional_values(argv: list[str]) -> list[str]:
    """`--wait-for-approval` takes an optional TIMEOUT (typer has no such option): alone, no limit."""
    out: list[str] = []
    for i, arg in enumerate(argv):
        out.append(arg)
        if arg == "--wait-for-approval":
            nxt = argv[i + 1] if i + 1 < len(argv) else ""
            try:
                float(nxt)
            except ValueError:
                out.append("inf")
    return out


def main(argv: list[str] | None = None) -> NoReturn:
    """Run one command: usage errors exit 64 (2 means drift/changes, as in terraform)."""
    with error_handler():
        rv = app(args=_optional_values(sys.argv[1:] if argv is None else argv), standalone_mode=False)
    sys.exit(rv if isinstance(rv, int) else ExitCode.OK)


def _closed_std_streams_to_devnull() -> None:
    """A standard stream the caller closed (`<&-`, `>&-`, `2>&-`) becomes /dev/null.

    Otherwise the next file Director opens would take its number (a journal on descriptor 2 would receive
    warnings) and `sys.stdin`/`sys.stdout` would be None. So: a closed stdin reads EOF (the run is not
    interactive), a closed stdout or stderr discards what is written, and the command runs and exits with
    its usual code.
    """
    import os

    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        try:
            os.fstat(fd)
            if getattr(sys, name) is not None:
                continue
        except OSError:
            new = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
            if new != fd:
                os.dup2(new, fd)
                os.close(new)
        errors = "backslashreplace" if fd == 2 else "strict"
        stream = open(fd, "r" if fd == 0 else "w", encoding="utf-8", errors=errors, closefd=False)  # noqa: SIM115
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def entry() -> NoReturn:
    """The `director` command (console script and `python -m director`): `main`, then the process ends.

    The heap is frozen on the way out: the interpreter's shutdown then skips its cyclic-garbage passes
    over everything a run built (the parsed plan, syntax trees, caches), 40-60 ms of every invocation.
    Nothing is lost by it: every command closes its journal, files and shell before it returns, atexit
    handlers still run, and objects freed by reference counting are still finalized.
    """
    _closed_std_streams_to_devnull()
    try:
        main()
    finally:
        gc.freeze()

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
    AllowedSignersOpt,
    ApproveOpt,
    AutoApproveOpt,
    Command,
    DetailSectionOpt,
    EventsOpt,
    GateSectionArg,
    IgnoreLintOpt,
    JobsOpt,
    JsonOpt,
    LastRunOpt,
    LintStrictOpt,
    LogSectionArg,
    MaxRecoveriesOpt,
    NonInteractiveOpt,
    OperatorOpt,
    OrphanOpt,
    PlainOpt,
    PlanArg,
    PlansArg,
    ReinterviewOpt,
    RestartOpt,
    SecretOpt,
    SetOpt,
    SignWithOpt,
    StateDirOpt,
    StateUrlOpt,
    StepTimeoutOpt,
    TargetOpt,
    TeardownPreviewOpt,
    VerifyReceiptsOpt,
    WaitOpt,
    WorkdirOpt,
    YesOpt,
)
from director.cli_streams import closed_std_streams_to_devnull
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

        app.command(name, cls=Command)(run)
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
    plans: PlansArg,
    fmt: Annotated[
        LintFormat,
        typer.Option(
            "--format",
            help="text (path:line: severity: code: message), json (one document), github (annotations).",
            envvar="DIRECTOR_LINT_FORMAT",
        ),
    ] = LintFormat.text,
    strict: LintStrictOpt = False,
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
    plans: PlansArg,
    target: TargetOpt = DEFAULT_TARGET,
    set_: SetOpt = None,
    approve: ApproveOpt = None,
    auto_approve: AutoApproveOpt = False,
    non_interactive: NonInteractiveOpt = False,
    restart: RestartOpt = False,
    reinterview: ReinterviewOpt = False,
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
    sign_with: SignWithOpt = None,
    allowed_signers: AllowedSignersOpt = None,
    jobs: JobsOpt = None,
    ignore_lint_errors: IgnoreLintOpt = False,
) -> int:
    """Apply a plan (or a family: providers first, in parallel where they can): observe before act, stop
    at gates, resume where a previous run stopped.

    \b
    Examples:
      director apply plans/workflow.cloudflare.md --target local --set trigger=cli --auto-approve
      director apply plan.md --non-interactive --approve 3     # CI: approve §3's gate by flag
      director apply plans/ --target local --jobs 2             # a family, in dependency order
    """
    from director.commands.family_run import run_plans

    return run_plans(
        plans,
        kind="apply",
        mode="run",
        jobs=jobs,
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
        sign_with=sign_with,
        allowed_signers=allowed_signers,
        ignore_lint_errors=ignore_lint_errors,
    )


@_command()
def teardown(
    plans: PlansArg,
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
    sign_with: SignWithOpt = None,
    allowed_signers: AllowedSignersOpt = None,
    jobs: JobsOpt = None,
    orphan_consumers: OrphanOpt = False,
    ignore_lint_errors: IgnoreLintOpt = False,
) -> int:
    """Tear down what the plan created (a family: consumers first): observe first, 💥 approval, resumable.

    Example: director teardown plans/workflow.cloudflare.md --target local --approve teardown
    """
    from director.commands.family_run import run_plans

    return run_plans(
        plans,
        kind="teardown",
        mode="run",
        jobs=jobs,
        orphan_consumers=orphan_consumers,
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
        sign_with=sign_with,
        allowed_signers=allowed_signers,
        ignore_lint_errors=ignore_lint_errors,
    )


@_command("plan")
def plan_cmd(
    plans: PlansArg,
    target: TargetOpt = DEFAULT_TARGET,
    set_: SetOpt = None,
    teardown_: TeardownPreviewOpt = False,
    section: DetailSectionOpt = None,
    state_dir: StateDirOpt = None,
    workdir: WorkdirOpt = None,
    secret: SecretOpt = None,
    events: EventsOpt = None,
    plain: PlainOpt = False,
    state_url: StateUrlOpt = None,
    jobs: JobsOpt = None,
) -> int:
    """Preview (read-only): in sync / will apply / needs approval / blocked, per section. Exit 2 if changes.

    Example: director plan plans/workflow.cloudflare.md --target local --section 3
    """
    from director.commands.family_run import run_plans

    return run_plans(
        plans,
        kind="teardown" if teardown_ else "apply",
        mode="preview",
        jobs=jobs,
        detail_section=section,
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
    plans: PlansArg,
    target: TargetOpt = DEFAULT_TARGET,
    state_dir: StateDirOpt = None,
    workdir: WorkdirOpt = None,
    secret: SecretOpt = None,
    events: EventsOpt = None,
    plain: PlainOpt = False,
    state_url: StateUrlOpt = None,
    jobs: JobsOpt = None,
) -> int:
    """Drift: run the observation blocks read-only and compare with the ledger. Exit 0 in sync, 2 drift.

    Several plans (or a directory) are checked at once, as a fleet; the exit code is the highest of theirs.

    Example: director check plans/workflow.cloudflare.md --target local
    """
    from director.commands.family_run import run_plans

    return run_plans(
        plans,
        kind="apply",
        mode="check",
        jobs=jobs,
        target=target,
        state_dir=state_dir,
        workdir=workdir,
        secrets=secret or [],
        events=events,
        plain=plain,
        state_url=state_url,
    )


@_command("approve")
def approve_cmd(
    plan: PlanArg,
    section: GateSectionArg = None,
    operator: OperatorOpt = None,
    state_dir: StateDirOpt = None,
    yes: YesOpt = False,
    state_url: StateUrlOpt = None,
    sign_with: SignWithOpt = None,
    allowed_signers: AllowedSignersOpt = None,
    verify: VerifyReceiptsOpt = False,
) -> int:
    """Record an approval receipt for a gate as it stands now (shows it, then asks to confirm).

    \b
    Examples:
      director approve plans/workflow.cloudflare.md 3 --operator alice
      director approve plans/workflow.cloudflare.md 3 --sign-with ~/.ssh/id_ed25519
      director approve plans/workflow.cloudflare.md --verify
    """
    from director.commands.approve import approve_command, verify_command

    if verify:
        return verify_command(plan, state_dir=state_dir, state_url=state_url, allowed_signers=allowed_signers)
    if section is None:
        raise DirectorUsageError("SECTION: name the gated section to approve (or pass --verify)")
    return approve_command(
        plan, section, operator=operator, state_dir=state_dir, yes=yes, state_url=state_url,
        sign_with=sign_with, allowed_signers=allowed_signers,
    )  # fmt: skip


@_command()
def status(
    plans: PlansArg, state_dir: StateDirOpt = None, as_json: JsonOpt = False, state_url: StateUrlOpt = None
) -> int:
    """The plan's state at a glance: Live State, last run, frontier, gate, lease, local sessions (a family:
    each plan in dependency order, and who requires what).

    Example: director status plans/workflow.cloudflare.md --json
    """
    from director.commands.status import family_status_command, status_command

    if len(plans) == 1 and not plans[0].is_dir():
        return status_command(plans[0], state_dir=state_dir, as_json=as_json, state_url=state_url)
    return family_status_command(plans, state_dir=state_dir, as_json=as_json, state_url=state_url)


@_command()
def diff(
    plan: PlanArg,
    against: Annotated[str, typer.Option("--against", help="A git revision to compare with.")] = "HEAD",
    last_run: LastRunOpt = False,
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
    key: Annotated[str | None, typer.Argument(help="One key of the Live State table.", metavar="KEY")] = None,
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
    section: LogSectionArg = None,
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
    name: Annotated[str, typer.Argument(help="Plan name: writes NAME.md (cache.local).", metavar="NAME")],
    directory: Annotated[Path, typer.Option("--dir", help="Where to write it.")] = Path("."),
) -> int:
    """Scaffold a new plan in this format that lints clean and applies on a fresh machine.

    Example: director init cache.local && director apply cache.local.md --non-interactive
    """
    from director.commands.init import init_command

    return init_command(name, directory)


state_app = typer.Typer(
    name="state",
    help="Move a plan's journal between SQLite and PostgreSQL; adopt one recorded for a plan elsewhere.",
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

        state_app.command(name, cls=Command)(run)
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


@_state_command("adopt")
def state_adopt(plan: PlanArg, state_url: StateUrlOpt = None, state_dir: StateDirOpt = None) -> int:
    """Make a journal recorded for a plan elsewhere this plan's: the plan was moved or copied with its
    `.director/`, or (PostgreSQL) another repository's plan shares its key. Until then apply refuses it.

    Example: director state adopt plans/workflow.cloudflare.md
    """
    from director.commands.state import adopt_command

    return adopt_command(plan, state_dir=state_dir, state_url=state_url)


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


def entry() -> NoReturn:
    """The `director` command (console script and `python -m director`): `main`, then the process ends.

    The heap is frozen on the way out: the interpreter's shutdown then skips its cyclic-garbage passes
    over everything a run built (the parsed plan, syntax trees, caches), 40-60 ms of every invocation.
    Nothing is lost by it: every command closes its journal, files and shell before it returns, atexit
    handlers still run, and objects freed by reference counting are still finalized.
    """
    closed_std_streams_to_devnull()
    try:
        main()
    finally:
        gc.freeze()

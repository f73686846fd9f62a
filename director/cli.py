"""The `director` command line: typer options → one command function call each → its exit code.

`error_handler` is the one place where an error becomes a message and an exit code (pre-commit's
`error_handler`, copier's `_handle_exceptions`); every code is an `ExitCode` (README "Exit codes").
Heavy modules (markdown-it, ruamel, rich, pexpect, sqlite) are imported inside the commands so that
`director --help` starts about as fast as typer itself.
"""

from __future__ import annotations

import functools
import os
import sys
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from typer._click.exceptions import UsageError as ClickUsageError

from director.errors import DirectorError, ExitCode
from director.targets import DEFAULT_TARGET, TARGETS

app = typer.Typer(
    name="director",
    help="Run self-executing Markdown plans as durable workflows: observe before act, gates with receipts, "
    "a Live State ledger written back into the plan.",
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    add_completion=True,
)


# ------------------------------------------------------------------------------------------ errors


def _say_error(message: str) -> None:
    """`error: …` on stderr; the message is never read as rich markup (it may quote block output)."""
    from rich.console import Console
    from rich.text import Text

    err = Console(stderr=True, highlight=False)
    err.print(Text.assemble(("error:", "bold red"), " ", message), soft_wrap=True)


@contextmanager
def error_handler() -> Iterator[None]:
    """Turn whatever ends a command early into its exit code; a traceback only for a bug (exit 70)."""
    try:
        yield
    except DirectorError as exc:
        _say_error(str(exc))
        raise SystemExit(int(exc.exit_code)) from None
    except ClickUsageError as exc:  # a bad option or argument, found by typer
        exc.show()
        raise SystemExit(int(ExitCode.USAGE)) from None
    except (KeyboardInterrupt, typer.Abort):
        raise SystemExit(int(ExitCode.INTERRUPTED)) from None
    except BrokenPipeError:
        # The reader went away (`director audit --jsonl | head -1`): the output was cut short, like an
        # interrupt. Point stdout at /dev/null so the interpreter's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(int(ExitCode.INTERRUPTED)) from None
    except Exception as exc:  # a bug: say so, keep the traceback for the report, never exit 1
        traceback.print_exc()
        _say_error(f"internal error: {type(exc).__name__}: {exc}")
        raise SystemExit(int(ExitCode.INTERNAL)) from None


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


# ----------------------------------------------------------------------------------------- options


def _known_target(value: str) -> str:
    """`--target` takes a name from the registry (`director.targets.TARGETS`)."""
    if value not in TARGETS:
        raise typer.BadParameter(f"unknown target {value!r}; choose one of: {', '.join(TARGETS)}")
    return value


def _target_names() -> list[str]:
    return list(TARGETS)


PlanArg = Annotated[Path, typer.Argument(help="The plan (a Markdown file).", show_default=False)]
StateDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--state-dir", help="Journal, lease and local account (default: .director/<plan>/ beside the plan)."
    ),
]
StateUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--state-url",
        envvar="DIRECTOR_STATE_URL",
        help="Keep the journal, receipts and lease in PostgreSQL (postgresql://…) instead of SQLite beside "
        "the plan, shared by every machine that uses the same URL.",
        show_envvar=True,
    ),
]
WaitOpt = Annotated[
    float | None,
    typer.Option(
        "--wait-for-approval",
        help="At a gate without approval, wait up to TIMEOUT seconds (no value: no limit) for a "
        "`director approve` receipt instead of exiting 4.",
        metavar="[TIMEOUT]",
    ),
]
WorkdirOpt = Annotated[
    Path | None, typer.Option("--workdir", help="Where blocks run (default: <state-dir>/workspace).")
]
TargetOpt = Annotated[
    str,
    typer.Option(
        "--target",
        help=f"Where the blocks act: {' | '.join(TARGETS)} (cloudflare: as written; local: wrangler dev).",
        callback=_known_target,
        autocompletion=_target_names,
    ),
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option("--set", help="Answer an input: KNOB=value (repeatable, case-insensitive)."),
]
ApproveOpt = Annotated[
    list[str] | None,
    typer.Option("--approve", help="Approve a gated section by number or slug (repeatable); 💥 needs this."),
]
OperatorOpt = Annotated[
    str | None, typer.Option("--operator", help="Who is running this (default: login name).")
]
SecretOpt = Annotated[
    list[str] | None,
    typer.Option("--secret", help="Treat this variable as a secret (never stored or shown)."),
]
EventsOpt = Annotated[
    str | None, typer.Option("--events", help="Write JSONL events to FILE ('-' for stdout).", metavar="FILE")
]
PlainOpt = Annotated[bool, typer.Option("--plain", help="Line-oriented output, no live view or colours.")]
StepTimeoutOpt = Annotated[float, typer.Option("--step-timeout", help="Seconds a block may run.")]
MaxRecoveriesOpt = Annotated[
    int, typer.Option("--max-recoveries", help="Crash recoveries without progress before giving up.")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable.")]


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


@_command()
def lint(plan: PlanArg) -> int:
    """Check a plan for what an author would want fixed (exit 1 on findings).

    Example: director lint plans/workflow.cloudflare.md
    """
    from director.commands.lint import lint_command

    return lint_command(plan)


@_command()
def apply(
    plan: PlanArg,
    target: TargetOpt = DEFAULT_TARGET,
    set_: SetOpt = None,
    approve: ApproveOpt = None,
    auto_approve: Annotated[
        bool, typer.Option("--auto-approve", help="Approve 🔴 gates (never 💥).")
    ] = False,
    non_interactive: Annotated[
        bool,
        typer.Option("--non-interactive", help="Never prompt (also when CI is set or there is no terminal)."),
    ] = False,
    restart: Annotated[
        bool, typer.Option("--restart", help="Begin a fresh run instead of resuming.")
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
    )


@_command()
def teardown(
    plan: PlanArg,
    target: TargetOpt = DEFAULT_TARGET,
    set_: SetOpt = None,
    approve: ApproveOpt = None,
    non_interactive: Annotated[bool, typer.Option("--non-interactive", help="Never prompt.")] = False,
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
    plan: PlanArg,
    target: TargetOpt = DEFAULT_TARGET,
    state_dir: StateDirOpt = None,
    workdir: WorkdirOpt = None,
    secret: SecretOpt = None,
    events: EventsOpt = None,
    plain: PlainOpt = False,
    state_url: StateUrlOpt = None,
) -> int:
    """Drift: run the observation blocks read-only and compare with the ledger. Exit 0 in sync, 2 drift.

    Example: director check plans/workflow.cloudflare.md --target local
    """
    from director.commands.run import run_command

    return run_command(
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


@_command("approve")
def approve_cmd(
    plan: PlanArg,
    section: Annotated[str, typer.Argument(help="The gated section: number (3) or slug (teardown).")],
    operator: OperatorOpt = None,
    state_dir: StateDirOpt = None,
    state_url: StateUrlOpt = None,
) -> int:
    """Record an approval receipt for a gate as it stands now (shows what is approved first).

    Example: director approve plans/workflow.cloudflare.md 3 --operator alice
    """
    from director.commands.approve import approve_command

    return approve_command(plan, section, operator=operator, state_dir=state_dir, state_url=state_url)


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


@_state_command("unlock")
def state_unlock(
    plan: PlanArg, state_url: StateUrlOpt = None, state_dir: StateDirOpt = None, operator: OperatorOpt = None
) -> int:
    """Break the plan's lease, audited (PostgreSQL: a live holder's session is ended; it stops, exit 11).

    Example: director state unlock plan.md --state-url postgresql://director@db/director
    """
    from director.commands.state import unlock_command

    return unlock_command(plan, state_dir=state_dir, state_url=state_url, operator=operator)


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
    """Console-script entry point: usage errors exit 64 (2 means drift/changes, as in terraform)."""
    with error_handler():
        rv = app(args=_optional_values(sys.argv[1:] if argv is None else argv), standalone_mode=False)
    sys.exit(rv if isinstance(rv, int) else ExitCode.OK)

"""The `director` command line: parse options, call one function, render, map errors to exit codes.

Heavy modules (markdown-it, ruamel, rich, pexpect, sqlite) are imported inside the commands so that
`director --help` starts about as fast as typer itself.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from director.errors import DirectorError, UsageError

# Exit codes, one table (README "Exit codes").
EXIT_OK = 0
EXIT_FINDINGS = 1  # lint findings, diff differences
EXIT_CHANGES = 2  # plan: something would change; check: drift (terraform's -detailed-exitcode)
EXIT_STEP_FAILED = 3  # a block or a verify failed; the run is `failed`
EXIT_AWAITING_APPROVAL = 4  # a gate needs a human go; the run is `awaiting-approval`
EXIT_LEASE_HELD = 5
EXIT_PREREQUISITES = 6
EXIT_LEDGER_CONFLICT = 7
EXIT_CRASH_LOOP = 8
EXIT_UPSTREAM_GUARD = 9
EXIT_UNCONFIRMED = 10  # completed, but a check after an act was inconclusive (docs/verify-semantics.md)
EXIT_USAGE = 64
EXIT_PLAN_ERROR = 65
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130

app = typer.Typer(
    name="director",
    help="Run self-executing Markdown plans as durable workflows: observe before act, gates with receipts, "
    "a Live State ledger written back into the plan.",
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    add_completion=True,
)

PlanArg = Annotated[Path, typer.Argument(help="The plan (a Markdown file).", show_default=False)]
StateDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--state-dir", help="Journal, lease and local account (default: .director/<plan>/ beside the plan)."
    ),
]
WorkdirOpt = Annotated[
    Path | None, typer.Option("--workdir", help="Where blocks run (default: <state-dir>/workspace).")
]
TargetOpt = Annotated[
    str, typer.Option("--target", help="cloudflare (blocks run as written) or local (real wrangler dev).")
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


def _fail(exc: BaseException) -> None:
    """Print an error (never a traceback for known errors) and exit with its code."""
    from rich.console import Console

    err = Console(stderr=True, highlight=False)
    if isinstance(exc, DirectorError):
        err.print(f"[bold red]error:[/] {exc}", markup=True, soft_wrap=True)
        raise typer.Exit(exc.exit_code)
    raise exc


def _load(plan: Path) -> Any:
    from director.plan.parse import parse_file

    if not plan.exists():
        raise UsageError(f"PLAN: no such file: {plan}")
    return parse_file(str(plan))


@app.command()
def show(
    plan: PlanArg, as_json: Annotated[bool, typer.Option("--json", help="Print the model as JSON.")] = False
) -> None:
    """Show the parsed plan: sections, markers, gates, blocks, inputs, Live State.

    Example: director show plans/workflow.cloudflare.md --json | jq '.sections[].key'
    """
    try:
        p = _load(plan)
        if as_json:
            import json

            from director.plan.tojson import to_json

            sys.stdout.write(json.dumps(to_json(p), ensure_ascii=False, indent=2) + "\n")
            return
        from rich.console import Console

        from director.ui.show import render

        render(p, Console())
    except DirectorError as exc:
        _fail(exc)


@app.command()
def lint(plan: PlanArg) -> None:
    """Check a plan for what an author would want fixed (exit 1 on findings).

    Example: director lint plans/workflow.cloudflare.md
    """
    try:
        p = _load(plan)
        from director.plan.lint import lint as run_lint

        findings = run_lint(p)
        for f in findings:
            print(f.format(str(plan)))
        if findings:
            print(f"{len(findings)} finding(s)")
            raise typer.Exit(EXIT_FINDINGS)
        print("clean")
    except DirectorError as exc:
        _fail(exc)


def _run(kind: str, mode: str, plan: Path, **opts: Any) -> None:
    from director.commands import app as runner

    try:
        code = runner.run_command(kind=kind, mode=mode, plan_path=plan, **opts)
    except DirectorError as exc:
        _fail(exc)
        return
    raise typer.Exit(code)


@app.command()
def apply(
    plan: PlanArg,
    target: TargetOpt = "cloudflare",
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
    step_timeout: Annotated[float, typer.Option("--step-timeout", help="Seconds a block may run.")] = 1800.0,
    max_recoveries: Annotated[
        int, typer.Option("--max-recoveries", help="Crash recoveries without progress before giving up.")
    ] = 5,
    secret: SecretOpt = None,
    events: EventsOpt = None,
    plain: Annotated[
        bool, typer.Option("--plain", help="Line-oriented output, no live view or colours.")
    ] = False,
) -> None:
    """Apply a plan: observe before act, stop at gates, resume where a previous run stopped.

    \b
    Examples:
      director apply plans/workflow.cloudflare.md --target local --set trigger=cli --auto-approve
      director apply plan.md --non-interactive --approve 3     # CI: approve §3's gate by flag
    """
    _run(
        "apply",
        "run",
        plan,
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
    )


@app.command()
def teardown(
    plan: PlanArg,
    target: TargetOpt = "cloudflare",
    set_: SetOpt = None,
    approve: ApproveOpt = None,
    non_interactive: Annotated[bool, typer.Option("--non-interactive", help="Never prompt.")] = False,
    restart: Annotated[bool, typer.Option("--restart", help="Begin a fresh teardown run.")] = False,
    operator: OperatorOpt = None,
    state_dir: StateDirOpt = None,
    workdir: WorkdirOpt = None,
    step_timeout: Annotated[float, typer.Option("--step-timeout", help="Seconds a block may run.")] = 1800.0,
    max_recoveries: Annotated[
        int, typer.Option("--max-recoveries", help="Crash recoveries without progress before giving up.")
    ] = 5,
    secret: SecretOpt = None,
    events: EventsOpt = None,
    plain: Annotated[bool, typer.Option("--plain", help="Line-oriented output.")] = False,
) -> None:
    """Tear down what the plan created: observe first, 💥 approval, resumable.

    Example: director teardown plans/workflow.cloudflare.md --target local --approve teardown
    """
    _run(
        "teardown",
        "run",
        plan,
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
    )


@app.command("plan")
def plan_cmd(
    plan: PlanArg,
    target: TargetOpt = "cloudflare",
    set_: SetOpt = None,
    teardown_: Annotated[bool, typer.Option("--teardown", help="Preview the teardown instead.")] = False,
    state_dir: StateDirOpt = None,
    workdir: WorkdirOpt = None,
    secret: SecretOpt = None,
    events: EventsOpt = None,
    plain: Annotated[bool, typer.Option("--plain", help="Line-oriented output.")] = False,
) -> None:
    """Preview (read-only): in sync / will apply / needs approval / blocked, per section. Exit 2 if changes.

    Example: director plan plans/workflow.cloudflare.md --target local
    """
    _run(
        "teardown" if teardown_ else "apply",
        "preview",
        plan,
        target=target,
        sets=set_ or [],
        state_dir=state_dir,
        workdir=workdir,
        secrets=secret or [],
        events=events,
        plain=plain,
    )


@app.command()
def check(
    plan: PlanArg,
    target: TargetOpt = "cloudflare",
    state_dir: StateDirOpt = None,
    workdir: WorkdirOpt = None,
    secret: SecretOpt = None,
    events: EventsOpt = None,
    plain: Annotated[bool, typer.Option("--plain", help="Line-oriented output.")] = False,
) -> None:
    """Drift: run the observation blocks read-only and compare with the ledger. Exit 0 in sync, 2 drift.

    Example: director check plans/workflow.cloudflare.md --target local
    """
    _run(
        "apply",
        "check",
        plan,
        target=target,
        state_dir=state_dir,
        workdir=workdir,
        secrets=secret or [],
        events=events,
        plain=plain,
    )


@app.command("approve")
def approve_cmd(
    plan: PlanArg,
    section: Annotated[str, typer.Argument(help="The gated section: number (3) or slug (teardown).")],
    operator: OperatorOpt = None,
    state_dir: StateDirOpt = None,
) -> None:
    """Record an approval receipt for a gate as it stands now (shows what is approved first).

    Example: director approve plans/workflow.cloudflare.md 3 --operator alice
    """
    from director.commands import app as runner

    try:
        code = runner.approve_command(plan, section, operator=operator, state_dir=state_dir)
    except DirectorError as exc:
        _fail(exc)
        return
    raise typer.Exit(code)


@app.command()
def status(
    plan: PlanArg,
    state_dir: StateDirOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable.")] = False,
) -> None:
    """The plan's state at a glance: Live State, last run, frontier, gate, lease, local sessions.

    Example: director status plans/workflow.cloudflare.md --json
    """
    from director.commands import app as runner

    try:
        raise typer.Exit(runner.status_command(plan, state_dir=state_dir, as_json=as_json))
    except DirectorError as exc:
        _fail(exc)


@app.command()
def diff(
    plan: PlanArg,
    against: Annotated[str, typer.Option("--against", help="A git revision to compare with.")] = "HEAD",
    last_run: Annotated[
        bool, typer.Option("--last-run", help="Compare with the state before the last run.")
    ] = False,
    state_dir: StateDirOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable.")] = False,
) -> None:
    """The Live State diff against a git revision (default HEAD) or the last run. Exit 1 if different.

    Example: director diff plans/workflow.cloudflare.md --against HEAD~1
    """
    from director.commands import app as runner

    try:
        raise typer.Exit(
            runner.diff_command(
                plan, against=against, last_run=last_run, state_dir=state_dir, as_json=as_json
            )
        )
    except DirectorError as exc:
        _fail(exc)


@app.command()
def audit(
    plan: PlanArg,
    state_dir: StateDirOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Everything as one JSON document.")] = False,
    jsonl: Annotated[bool, typer.Option("--jsonl", help="One JSON record per line.")] = False,
) -> None:
    """The history from the journal: runs, transitions, steps, approvals, inputs, target changes.

    Example: director audit plans/workflow.cloudflare.md --jsonl > audit.jsonl
    """
    from director.commands import app as runner

    try:
        raise typer.Exit(runner.audit_command(plan, state_dir=state_dir, as_json=as_json, jsonl=jsonl))
    except DirectorError as exc:
        _fail(exc)


@app.command()
def init(
    name: Annotated[str, typer.Argument(help="Plan name: writes NAME.md (e.g. cache.local).")],
    directory: Annotated[Path, typer.Option("--dir", help="Where to write it.")] = Path("."),
) -> None:
    """Scaffold a new plan in this format that lints clean and applies on a fresh machine.

    Example: director init cache.local && director apply cache.local.md --non-interactive
    """
    from director.plan import scaffold

    try:
        path = scaffold.write(name, directory)
    except DirectorError as exc:
        _fail(exc)
        return
    print(f"wrote {path}")


def main() -> None:
    """Console-script entry point: usage errors exit 64 (2 means drift/changes, as in terraform)."""
    from typer._click.exceptions import UsageError as ClickUsageError

    try:
        rv = app(standalone_mode=False)
    except ClickUsageError as exc:
        exc.show()
        sys.exit(EXIT_USAGE)
    except typer.Abort:
        sys.exit(EXIT_INTERRUPTED)
    except KeyboardInterrupt:
        sys.exit(EXIT_INTERRUPTED)
    sys.exit(rv if isinstance(rv, int) else 0)

"""The `director` command line: typer options → one command function call each → its exit code.

`director.error_handler` is the one place where an error becomes a message and an exit code (pre-commit's
`error_handler`, copier's `_handle_exceptions`); every code is an `ExitCode` (README "Exit codes").
The options the commands share are in `director.cli_options`.
Heavy modules (markdown-it, ruamel, rich, pexpect, sqlite) are imported inside the commands so that
`director --help` starts about as fast as typer itself.
"""

import dataclasses
import enum
import functools
import gc
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from director import __version__
from director.cli_build import only_the_command
from director.cli_options import (
    RUN_OPTIONS,
    AllowDirtySignersOpt,
    AllowedSignersOpt,
    Command,
    DetailSectionOpt,
    GateSectionArg,
    JsonOpt,
    LastRunOpt,
    LintStrictOpt,
    LogSectionArg,
    OperatorOpt,
    OrphanOpt,
    PlanArg,
    PlansArg,
    ReasonOpt,
    RevokeOpt,
    SignWithOpt,
    StateDirOpt,
    StateUrlOpt,
    TeardownPreviewOpt,
    ValidForOpt,
    VerifyReceiptsOpt,
    YesOpt,
)
from director.cli_streams import closed_std_streams_to_devnull, guard_stdout, keep_going_without_reader
from director.error_handler import error_handler
from director.errors import ExitCode
from director.targets import DEFAULT_TARGET

if TYPE_CHECKING:
    from director.run.config import Mode, RunRequest
    from director.state.journal import RunKind

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
        typer.Option(
            "--version", "-V", help="Print the version and exit.", callback=_print_version, is_eager=True
        ),
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
            help="text (path:line: severity: code: message), json (one document, as --json), github "
            "(annotations).",
            envvar="DIRECTOR_LINT_FORMAT",
        ),
    ] = LintFormat.text,
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON document (director.lint/1): the same as --format json.")
    ] = False,
    strict: LintStrictOpt = False,
) -> int:
    """Check plans for what an author would want fixed: exit 1 on errors (on warnings too with --strict).

    Silence one finding with `<!-- director-lint: disable=CODE -->` (or `# director-lint: disable=CODE` in
    a bash block) on the line before it; `director docs lint` lists every code and its severity.

    \b
    Examples:
      director lint plans/*.md plans/examples/*.md
      director lint plans/*.md --format github --strict
    """
    from director.commands.lint import lint_command

    return lint_command(plans, fmt="json" if as_json else fmt.value, strict=strict)


def _run_command(
    name: str, kind: "RunKind", mode: "Mode"
) -> Callable[[Callable[..., int]], Callable[..., NoReturn]]:
    """Register `apply`, `teardown`, `plan` or `check`: the function's own parameters, then the run options
    `cli_options.RUN_OPTIONS` gives this command (declared once for the four), whose values are gathered
    into one `RunRequest` and passed to the function as `request`."""
    shared = {n: (ann, default) for n, (ann, default, commands) in RUN_OPTIONS.items() if name in commands}

    def register(fn: Callable[..., int]) -> Callable[..., NoReturn]:
        own = [p for p in inspect.signature(fn).parameters.values() if p.name != "request"]
        params = own + [
            inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, annotation=ann, default=default)
            for n, (ann, default) in shared.items()
        ]

        @functools.wraps(fn)
        def run(**kwargs: Any) -> int:
            keep_going_without_reader()  # a run is not stopped, nor left pending, by `| head -1`
            values = {n: kwargs.pop(n) for n in shared}
            return fn(**kwargs, request=_request(kind, mode, values))

        run.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in params}
        return _command(name)(run)

    return register


def _request(kind: "RunKind", mode: "Mode", v: dict[str, Any]) -> "RunRequest":
    """The one `RunRequest` of this invocation, from its run options' values (those a command does not take
    have their defaults: `plan` and `check` never ask, never approve a 💥 gate)."""
    from director.run.config import ApprovalOptions, RunRequest, ScreenOptions, StateOptions, StepOptions

    return RunRequest(
        kind=kind,
        mode=mode,
        state=StateOptions(
            state_dir=v.get("state_dir"), state_url=v.get("state_url"), workdir=v.get("workdir")
        ),
        approval=ApprovalOptions(
            approve=tuple(v.get("approve") or ()),
            auto_approve=bool(v.get("auto_approve")),
            operator=v.get("operator"),
            wait_for_approval=v.get("wait_for_approval"),
            sign_with=v.get("sign_with"),
            allowed_signers=v.get("allowed_signers"),
            allow_dirty_signers=bool(v.get("allow_dirty_signers")),
        ),
        step=StepOptions(
            target=v.get("target", DEFAULT_TARGET),
            sets=tuple(v.get("set_") or ()),
            secrets=tuple(v.get("secret") or ()),
            step_timeout=v.get("step_timeout", 1800.0),
            max_recoveries=v.get("max_recoveries", 5),
            restart=bool(v.get("restart")),
            reinterview=bool(v.get("reinterview")),
            ignore_lint_errors=bool(v.get("ignore_lint_errors")),
        ),
        screen=ScreenOptions(
            events=v.get("events"),
            plain=bool(v.get("plain")),
            json=bool(v.get("as_json")),
            non_interactive=v.get("non_interactive", True),
        ),
        jobs=v.get("jobs"),
        acceptance=bool(v.get("acceptance")),
    )


@_run_command("apply", "apply", "run")
def apply(plans: PlansArg, request: "RunRequest") -> int:
    """Apply a plan (or a family: providers first, in parallel where they can): observe before act, stop
    at gates, resume where a previous run stopped.

    \b
    Examples:
      director apply plans/workflow.cloudflare.md --target local --set trigger=cli --auto-approve
      director apply plan.md --non-interactive --approve 3     # CI: approve §3's gate by flag
      director apply plans/ --target local --jobs 2             # a family, in dependency order
    """
    from director.commands.family_run import run_plans

    return run_plans(plans, request)


@_run_command("teardown", "teardown", "run")
def teardown(plans: PlansArg, request: "RunRequest", orphan_consumers: OrphanOpt = False) -> int:
    """Tear down what the plan created (a family: consumers first): observe first, 💥 approval, resumable.

    `--auto-approve` passes a 🔴 gate met on the way, never the 💥 teardown itself: that takes
    `--approve teardown`, an answer at the terminal or a `director approve` receipt.

    Example: director teardown plans/workflow.cloudflare.md --target local --approve teardown
    """
    from director.commands.family_run import run_plans

    return run_plans(plans, dataclasses.replace(request, orphan_consumers=orphan_consumers))


@_run_command("plan", "apply", "preview")
def plan_cmd(
    plans: PlansArg,
    request: "RunRequest",
    teardown_: TeardownPreviewOpt = False,
    section: DetailSectionOpt = None,
) -> int:
    """Preview (read-only): in sync / will apply / needs approval / blocked, per section. Exit 2 if changes.

    Takes apply's `--set`, `--approve` and `--auto-approve`, so that it says what that apply would do.

    Example: director plan plans/workflow.cloudflare.md --target local --section 3
    """
    from director.commands.family_run import run_plans

    screen = dataclasses.replace(request.screen, detail_section=section)
    kind: RunKind = "teardown" if teardown_ else "apply"
    return run_plans(plans, dataclasses.replace(request, kind=kind, screen=screen))


@_run_command("check", "apply", "check")
def check(plans: PlansArg, request: "RunRequest") -> int:
    """Drift: run the observation blocks read-only and compare with the ledger. Exit 0 in sync, 2 drift,
    12 when the plan was never applied here (its Live State is still the published template's).

    Several plans (or a directory) are checked at once, as a fleet; the exit code is the highest of theirs.
    The ✔ (acceptance) sections' checks run only with --acceptance (they may exercise what the plan built).

    Example: director check plans/workflow.cloudflare.md --target local
    """
    from director.commands.family_run import run_plans

    return run_plans(plans, request)


@_command("approve")
def approve_cmd(
    plan: PlanArg, section: GateSectionArg = None, operator: OperatorOpt = None,
    state_dir: StateDirOpt = None, yes: YesOpt = False, state_url: StateUrlOpt = None,
    sign_with: SignWithOpt = None, allowed_signers: AllowedSignersOpt = None,
    verify: VerifyReceiptsOpt = False, valid_for: ValidForOpt = None, revoke: RevokeOpt = None,
    reason: ReasonOpt = None, allow_dirty_signers: AllowDirtySignersOpt = False,
) -> int:  # fmt: skip
    """Record an approval receipt for a gate as it stands now (shows it, then asks to confirm). Exits 14
    when a run would not release the gate on it (the allowed signers or the approval policy refuse it).

    \b
    Examples:
      director approve plans/workflow.cloudflare.md 3 --operator alice
      director approve plans/workflow.cloudflare.md 3 --sign-with ~/.ssh/id_ed25519 --valid-for 2h
      director approve plans/workflow.cloudflare.md --revoke 7 --reason "wrong change"
      director approve plans/workflow.cloudflare.md --verify
    """
    from director.commands.approve import approve_dispatch

    return approve_dispatch(
        plan, section, verify=verify, revoke=revoke, reason=reason, operator=operator, state_dir=state_dir,
        yes=yes, state_url=state_url, sign_with=sign_with, allowed_signers=allowed_signers,
        valid_for=valid_for, allow_dirty_signers=allow_dirty_signers,
    )  # fmt: skip


@_command()
def status(
    plans: PlansArg,
    state_dir: StateDirOpt = None,
    as_json: JsonOpt = False,
    state_url: StateUrlOpt = None,
    details: Annotated[
        bool, typer.Option("--details", help="A family: every plan's whole status, not one line each.")
    ] = False,
) -> int:
    """The plan's state at a glance: Live State, last run, frontier, gate, lease, local sessions (a family:
    one line a plan in dependency order, who requires what; --details for each plan's whole status).

    Example: director status plans/workflow.cloudflare.md --json
    """
    from director.commands.status import family_status_command, status_command

    if len(plans) == 1 and not plans[0].is_dir():
        return status_command(plans[0], state_dir=state_dir, as_json=as_json, state_url=state_url)
    return family_status_command(
        plans, state_dir=state_dir, as_json=as_json, state_url=state_url, details=details
    )


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
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON document (director.output/1; with KEY: that key only).")
    ] = False,
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
    state_url: StateUrlOpt = None,
) -> int:
    """The full output of each step of a run (as the journal keeps it), colours removed.

    Example: director logs plans/workflow.cloudflare.md 3
    """
    from director.commands.logs import logs_command

    return logs_command(plan, section, run_id=run, state_dir=state_dir, state_url=state_url)


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


@_command()
def docs(
    page: Annotated[
        str | None, typer.Argument(help="A page: families, json, lint, … (none: the list).", metavar="PAGE")
    ] = None,
) -> int:
    """The documentation, as installed with Director: every page and its title, or one page's Markdown
    (the repository's docs directory, shipped inside the package).

    Example: director docs families | less
    """
    from director.commands.docs import docs_command

    return docs_command(page)


state_app = typer.Typer(
    name="state",
    help="A plan's local state: move its journal between SQLite and PostgreSQL, adopt one recorded for a "
    "plan elsewhere, or forget it (reset).",
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


@_state_command("forget")
def state_forget(
    plan: PlanArg,
    state_dir: StateDirOpt = None,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation.")] = False,
    force: Annotated[
        bool,
        typer.Option("--force", help="Forget it although its journal says what it created may still exist."),
    ] = False,
) -> int:
    """Reset: remove the plan's local state (journal, receipts, lease, workspace, local account, logs),
    so that it reads as never applied here. Refused while a run holds the lease, and while the journal
    says what the plan created may still exist (--force). Says what it does not remove.

    Example: git checkout plans/workflow.cloudflare.md && director state forget plans/workflow.cloudflare.md
    """
    from director.commands.forget import forget_command

    return forget_command(plan, state_dir=state_dir, yes=yes, force=force)


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
    args = _optional_values(sys.argv[1:] if argv is None else argv)
    with error_handler(), only_the_command(app, args):
        rv = app(args=args, standalone_mode=False)
    sys.exit(rv if isinstance(rv, int) else ExitCode.OK)


def entry() -> NoReturn:
    """The `director` command (console script and `python -m director`): `main`, then the process ends.

    The heap is frozen on the way out: the interpreter's shutdown then skips its cyclic-garbage passes
    over everything a run built (the parsed plan, syntax trees, caches), 40-60 ms of every invocation.
    Nothing is lost by it: every command closes its journal, files and shell before it returns, atexit
    handlers still run, and objects freed by reference counting are still finalized.
    """
    closed_std_streams_to_devnull()
    guard_stdout()
    try:
        main()
    finally:
        gc.freeze()

"""The options the commands share (typer `Annotated` types), each with its `DIRECTOR_*` variable."""

from pathlib import Path
from typing import Annotated

import typer

from director.targets import TARGETS


def _known_target(value: str) -> str:
    """`--target` takes a name from the registry (`director.targets.TARGETS`)."""
    if value not in TARGETS:
        raise typer.BadParameter(f"unknown target {value!r}; choose one of: {', '.join(TARGETS)}")
    return value


def _target_names() -> list[str]:
    return list(TARGETS)


PlanArg = Annotated[Path, typer.Argument(help="The plan (a Markdown file).", show_default=False)]
# Every common option also reads a DIRECTOR_* environment variable (README "Configuration"); list options
# split the variable's value on whitespace (DIRECTOR_APPROVE="3 teardown").
StateDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--state-dir",
        help="Journal, lease and local account (default: .director/<plan>/ beside the plan).",
        envvar="DIRECTOR_STATE_DIR",
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
        envvar="DIRECTOR_WAIT_FOR_APPROVAL",
        help="At a gate without approval, wait up to TIMEOUT seconds (no value: no limit) for a "
        "`director approve` receipt instead of exiting 4.",
        metavar="[TIMEOUT]",
    ),
]
# No variable on purpose (like --restart): running a plan despite its lint errors is decided per invocation.
IgnoreLintOpt = Annotated[
    bool,
    typer.Option(
        "--ignore-lint-errors",
        help="Run the plan even though `director lint` finds errors in it (refused otherwise, exit 65).",
    ),
]
WorkdirOpt = Annotated[
    Path | None,
    typer.Option(
        "--workdir", help="Where blocks run (default: <state-dir>/workspace).", envvar="DIRECTOR_WORKDIR"
    ),
]
TargetOpt = Annotated[
    str,
    typer.Option(
        "--target",
        help=f"Where the blocks act: {' | '.join(TARGETS)} (cloudflare: as written; local: wrangler dev).",
        callback=_known_target,
        autocompletion=_target_names,
        metavar="[" + "|".join(TARGETS) + "]",
        envvar="DIRECTOR_TARGET",
    ),
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set", help="Answer an input: KNOB=value (repeatable, case-insensitive).", envvar="DIRECTOR_SET"
    ),
]
ApproveOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--approve",
        help="Approve a gated section by number or slug (repeatable); 💥 needs this.",
        envvar="DIRECTOR_APPROVE",
    ),
]
OperatorOpt = Annotated[
    str | None,
    typer.Option("--operator", help="Who is running this (default: login name).", envvar="DIRECTOR_OPERATOR"),
]
SecretOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--secret", help="Treat this variable as a secret (never stored or shown).", envvar="DIRECTOR_SECRET"
    ),
]
EventsOpt = Annotated[
    str | None,
    typer.Option(
        "--events",
        help="Write JSONL events to FILE ('-' for stdout).",
        metavar="FILE",
        envvar="DIRECTOR_EVENTS",
    ),
]
PlainOpt = Annotated[
    bool,
    typer.Option("--plain", help="Line-oriented output, no live view or colours.", envvar="DIRECTOR_PLAIN"),
]
StepTimeoutOpt = Annotated[
    float, typer.Option("--step-timeout", help="Seconds a block may run.", envvar="DIRECTOR_STEP_TIMEOUT")
]
MaxRecoveriesOpt = Annotated[
    int,
    typer.Option(
        "--max-recoveries",
        help="Crash recoveries without progress before giving up.",
        envvar="DIRECTOR_MAX_RECOVERIES",
    ),
]
NonInteractiveOpt = Annotated[
    bool,
    typer.Option(
        "--non-interactive",
        help="Never prompt (also when CI=true/1 or there is no terminal).",
        envvar="DIRECTOR_NON_INTERACTIVE",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable.")]

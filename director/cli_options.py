"""The options the commands share (typer `Annotated` types), each with its `DIRECTOR_*` variable."""

from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from director.targets import DEFAULT_TARGET, TARGETS


def _known_target(value: str) -> str:
    """`--target` takes a name from the registry (`director.targets.TARGETS`)."""
    if value not in TARGETS:
        raise typer.BadParameter(f"unknown target {value!r}; choose one of: {', '.join(TARGETS)}")
    return value


def _target_names() -> list[str]:
    return list(TARGETS)


class Command(TyperCommand):
    """A command whose usage line names its arguments as the help does: `director apply [OPTIONS] PLAN`.

    typer 0.26+ writes a required argument as `{plan}` (braces, lower case), older typer as `PLAN`; every
    argument here has an upper-case metavar and the usage line is `[OPTIONS]`, then each argument as
    `NAME`, `[NAME]` when optional and `NAME...` when repeated, whichever typer is installed.
    """

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name != "argument":
                continue  # options are summed up by [OPTIONS]
            name = _name(param)
            name += "..." if param.nargs != 1 else ""
            pieces.append(name if param.required else f"[{name}]")
        return pieces

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """Parse, then insist on every required argument: typer before 0.26 (its own copy of click) with
        the newest click (8.5: missing values are a sentinel) passes a missing one on as None."""
        rest: list[str] = super().parse_args(ctx, args)
        if ctx.resilient_parsing:  # shell completion: the command line is unfinished on purpose
            return rest
        for param in self.get_params(ctx):
            missing = param.name is not None and ctx.params.get(param.name) in (None, (), [])
            if param.param_type_name == "argument" and param.required and missing:
                ctx.fail(f"Missing argument '{_name(param)}'.")
        return rest


def _name(param: Any) -> str:
    """An argument's name as usage lines and errors show it: its metavar, in capitals."""
    return str(param.metavar or param.name or "").strip("[]{}.").upper()


PlanArg = Annotated[
    Path, typer.Argument(help="The plan (a Markdown file).", show_default=False, metavar="PLAN")
]
PlansArg = Annotated[
    list[Path],
    typer.Argument(
        help="The plan (a Markdown file), or several, or a directory of them: a family "
        "(`director docs families`).",
        show_default=False,
        metavar="PLAN",
    ),
]
JobsOpt = Annotated[
    int | None,
    typer.Option(
        "--jobs",
        "-j",
        help="A family runs at most N plans at once (default: every plan that is ready).",
        envvar="DIRECTOR_JOBS",
    ),
]
OrphanOpt = Annotated[
    bool,
    typer.Option(
        "--orphan-consumers",
        help="Tear a provider down although a consumer beside it is still live (audited).",
    ),
]
# Every common option also reads a DIRECTOR_* environment variable (README "Configuration"); list options
# split the variable's value on whitespace (DIRECTOR_APPROVE="3 teardown").
# `approve`'s section: optional only because `approve --verify PLAN` checks every receipt instead.
GateSectionArg = Annotated[
    str | None,
    typer.Argument(
        help="The gated section: number (3) or slug (teardown).", metavar="SECTION", show_default=False
    ),
]
AutoApproveOpt = Annotated[
    bool,
    typer.Option(
        "--auto-approve",
        help="Pass 🔴 gates without asking (never 💥: those need --approve SECTION or a receipt); "
        "`plan` previews them as passed.",
        envvar="DIRECTOR_AUTO_APPROVE",
    ),
]
RestartOpt = Annotated[bool, typer.Option("--restart", help="Begin a fresh run instead of resuming.")]
ReinterviewOpt = Annotated[
    bool,
    typer.Option(
        "--reinterview",
        help="Ask the Provisioning Inputs again (the previous answers as defaults); "
        "also done on the first apply after a teardown.",
    ),
]
VerifyReceiptsOpt = Annotated[
    bool, typer.Option("--verify", help="Re-check every stored receipt (exit 1 if one is not accepted).")
]
TeardownPreviewOpt = Annotated[bool, typer.Option("--teardown", help="Preview the teardown instead.")]
DetailSectionOpt = Annotated[
    str | None,
    typer.Option(
        "--section",
        help="Also show this gated section's gate in full (every command as it runs, file diffs, "
        "variables): the details a gate's panel at a terminal leaves out. Number, key or slug.",
    ),
]
AcceptanceOpt = Annotated[
    bool,
    typer.Option(
        "--acceptance",
        help="Also run the ✔ (acceptance) sections' checks, which `check` otherwise leaves to apply. They "
        "may exercise what the plan built -- send it a request, trigger a job, write a test record -- "
        "as they do on every apply: use this where that is acceptable. A check that took the path it took "
        "when it did not hold, or one never seen, is drift.",
        envvar="DIRECTOR_ACCEPTANCE",
    ),
]
LintStrictOpt = Annotated[
    bool,
    typer.Option(
        "--strict",
        help="Warnings fail too (exit 1); by default only errors do.",
        envvar="DIRECTOR_LINT_STRICT",
    ),
]
YesOpt = Annotated[
    bool, typer.Option("--yes", help="Record it without asking (required without a terminal).")
]
LastRunOpt = Annotated[bool, typer.Option("--last-run", help="Compare with the state before the last run.")]
LogSectionArg = Annotated[
    str | None, typer.Argument(help="Only this section: number, key or slug.", metavar="SECTION")
]
StateDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--state-dir",
        help="Journal, lease and local account (default: .director/<plan>/ beside the plan).",
        envvar="DIRECTOR_STATE_DIR",
        metavar="DIR",
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
        metavar="URL",
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
        "--workdir",
        help="Where blocks run (default: <state-dir>/workspace).",
        envvar="DIRECTOR_WORKDIR",
        metavar="DIR",
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
        "--set",
        help="Answer an input: KNOB=value (repeatable, case-insensitive).",
        envvar="DIRECTOR_SET",
        metavar="KNOB=VALUE",
    ),
]
ApproveOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--approve",
        help="Approve a gated section by number or slug (repeatable); 💥 needs this.",
        envvar="DIRECTOR_APPROVE",
        metavar="SECTION",
    ),
]
OperatorOpt = Annotated[
    str | None,
    typer.Option(
        "--operator",
        help="Who is running this (default: login name).",
        envvar="DIRECTOR_OPERATOR",
        metavar="NAME",
    ),
]
SecretOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--secret",
        help="Treat this variable as a secret (never stored or shown).",
        envvar="DIRECTOR_SECRET",
        metavar="NAME",
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
MaxRecoveriesOpt = Annotated[
    int,
    typer.Option(
        "--max-recoveries",
        help="Crash recoveries without progress before giving up.",
        envvar="DIRECTOR_MAX_RECOVERIES",
        metavar="N",
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
SignWithOpt = Annotated[
    Path | None,
    typer.Option(
        "--sign-with",
        help="Sign approvals with this SSH key (a private key file, or the public key of one ssh-agent "
        "holds), as `ssh-keygen -Y sign` does (`director docs approvals`).",
        envvar="DIRECTOR_SIGNING_KEY",
        metavar="KEYFILE",
    ),
]
AllowedSignersOpt = Annotated[
    Path | None,
    typer.Option(
        "--allowed-signers",
        help="Release a gate only on an approval signed by a key in this OpenSSH allowed-signers file "
        "(default: .director-allowed-signers beside the plan or above it, up to the repository root).",
        envvar="DIRECTOR_ALLOWED_SIGNERS",
        metavar="FILE",
    ),
]
# No variable on purpose (like --ignore-lint-errors): trusting files git does not hold is decided per run.
AllowDirtySignersOpt = Annotated[
    bool,
    typer.Option(
        "--allow-dirty-signers",
        help="Use the allowed-signers and approval policy files even if git says they are not committed "
        "(untracked, modified, staged): refused otherwise, exit 64; allowed, each is a warning, journaled.",
    ),
]
ValidForOpt = Annotated[
    str | None,
    typer.Option(
        "--valid-for",
        help="How long the receipt counts (90s, 30m, 24h, 7d; signed into it): default 24h, or less when "
        "the approval policy's max_valid_for says so.",
        metavar="DURATION",
    ),
]
RevokeOpt = Annotated[
    int | None,
    typer.Option(
        "--revoke",
        help="Revoke receipt RECEIPT (its number in `director audit`): it never releases a gate; journaled.",
        metavar="RECEIPT",
    ),
]
ReasonOpt = Annotated[
    str | None,
    typer.Option("--reason", help="Why the receipt is revoked (journaled with it).", metavar="TEXT"),
]
JsonResultOpt = Annotated[
    bool,
    typer.Option(
        "--json",
        help="Print one JSON result document on stdout when the run ends (director.result/1, "
        "`director docs json`); the screen's lines go to stderr.",
    ),
]
StepTimeoutOpt = Annotated[
    float,
    typer.Option(
        "--step-timeout", help="Seconds a block may run.", envvar="DIRECTOR_STEP_TIMEOUT", metavar="SECONDS"
    ),
]

# The options `apply`, `teardown`, `plan` and `check` share, declared once: the parameter's name → its
# typer annotation, its default, and the commands that take it. `director.cli` adds them to each command's
# signature and gathers their values into one `RunRequest` (director/run/config.py). README "Options" lists
# the same table; tests/test_commands.py holds the two against each other.
_ALL = ("apply", "teardown", "plan", "check")
_RUNS = ("apply", "teardown")
RUN_OPTIONS: dict[str, tuple[Any, Any, tuple[str, ...]]] = {
    "target": (TargetOpt, DEFAULT_TARGET, _ALL),
    "set_": (SetOpt, None, _ALL),
    "approve": (ApproveOpt, None, ("apply", "teardown", "plan")),
    "auto_approve": (AutoApproveOpt, False, ("apply", "teardown", "plan")),
    "non_interactive": (NonInteractiveOpt, False, _RUNS),
    "restart": (RestartOpt, False, _RUNS),
    "reinterview": (ReinterviewOpt, False, ("apply",)),
    "operator": (OperatorOpt, None, _RUNS),
    "state_dir": (StateDirOpt, None, _ALL),
    "state_url": (StateUrlOpt, None, _ALL),
    "workdir": (WorkdirOpt, None, _ALL),
    "step_timeout": (StepTimeoutOpt, 1800.0, _ALL),
    "max_recoveries": (MaxRecoveriesOpt, 5, _RUNS),
    "secret": (SecretOpt, None, _ALL),
    "events": (EventsOpt, None, _ALL),
    "plain": (PlainOpt, False, _ALL),
    "as_json": (JsonResultOpt, False, _ALL),
    "wait_for_approval": (WaitOpt, None, _RUNS),
    "sign_with": (SignWithOpt, None, _RUNS),
    "allowed_signers": (AllowedSignersOpt, None, _RUNS),
    "allow_dirty_signers": (AllowDirtySignersOpt, False, _RUNS),
    "jobs": (JobsOpt, None, _ALL),
    "ignore_lint_errors": (IgnoreLintOpt, False, _RUNS),
    "acceptance": (AcceptanceOpt, False, ("check",)),
}

"""What an invocation was asked to do and how it ended: the values that cross the engine's boundary."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from director.run.policy import Policy
from director.state.journal import RunKind

Mode = Literal["run", "preview", "check"]  # apply/teardown, `director plan`, `director check`
Outcome = Literal["completed", "awaiting-approval", "failed", "interrupted", "preview", "check"]


@dataclass(frozen=True)
class StateOptions:
    """Where the plan's journal, lease and workspace are (`--state-dir`, `--state-url`, `--workdir`)."""

    state_dir: Path | None = None
    state_url: str | None = None
    workdir: Path | None = None


@dataclass(frozen=True)
class ApprovalOptions:
    """How gates may be passed: `--approve`, `--auto-approve` (🔴, never 💥), who, signatures, waiting."""

    approve: tuple[str, ...] = ()
    auto_approve: bool = False
    operator: str | None = None
    wait_for_approval: float | None = None
    sign_with: Path | None = None
    allowed_signers: Path | None = None
    allow_dirty_signers: bool = False  # use an allowed-signers or policy file git says is not committed


@dataclass(frozen=True)
class StepOptions:
    """Where and how the blocks run: the target, the answers, the secrets, the limits, the run to resume."""

    target: str = "cloudflare"
    sets: tuple[str, ...] = ()
    secrets: tuple[str, ...] = ()
    step_timeout: float = 1800.0
    max_recoveries: int = 5
    restart: bool = False
    reinterview: bool = False
    ignore_lint_errors: bool = False


@dataclass(frozen=True)
class ScreenOptions:
    """What the operator sees and is asked: `--plain`, `--events`, `--json`, `--non-interactive`,
    `plan --section`."""

    events: str | None = None
    plain: bool = False
    json: bool = False
    non_interactive: bool = True
    detail_section: str | None = None


@dataclass(frozen=True)
class RunRequest:
    """One `apply`/`teardown`/`plan`/`check` invocation as the command line asked for it: built once by
    `director.cli`, handed down unchanged to the family run and to each plan's run (`commands/run.py`);
    the engine's `RunConfig` is derived from it (`RunConfig.derive`)."""

    kind: RunKind
    mode: Mode
    state: StateOptions = field(default_factory=StateOptions)
    approval: ApprovalOptions = field(default_factory=ApprovalOptions)
    step: StepOptions = field(default_factory=StepOptions)
    screen: ScreenOptions = field(default_factory=ScreenOptions)
    jobs: int | None = None  # a family: at most N plans at once
    orphan_consumers: bool = False  # a provider's teardown despite a live consumer (audited)
    acceptance: bool = False  # `check --acceptance`: the ✔ sections' checks run too

    @property
    def command(self) -> str:
        """The command's name as typed: apply, teardown, plan or check."""
        return {"preview": "plan", "check": "check"}.get(self.mode, self.kind)


@dataclass(frozen=True)
class RunConfig:
    """What the operator asked for, as the engine reads it (derived from a `RunRequest`)."""

    kind: RunKind = "apply"
    mode: Mode = "run"
    interactive: bool = False
    restart: bool = False
    approve: tuple[str, ...] = ()
    auto_approve: bool = False
    operator: str = "unknown"
    step_timeout_s: float = 1800.0
    max_recoveries: int = 5
    target: str = "cloudflare"
    sets: dict[str, str] = field(default_factory=dict)
    reinterview: bool = False  # `--reinterview`: every question asked again (as after a teardown)
    secret_names: tuple[str, ...] = ()
    wait_for_approval: float | None = None  # seconds a gate waits for a receipt (`--wait-for-approval`)
    signing_key: Path | None = None  # `--sign-with`: this run's own approvals are signed with it
    allowed_signers: Path | None = None  # in force: a gate is released only by a verified signature
    policy: Policy = field(default_factory=Policy)  # how many approvals a gate needs, from whom (run.policy)
    detail_section: str | None = None  # `plan --section N`: the gate to show in full
    acceptance: bool = False  # `check --acceptance`: the ✔ sections' checks run too
    # the key that seals secrets in a gate's closure (`director.run.closure`; b"": this process's own)
    closure_key: bytes = field(default=b"", repr=False)

    @classmethod
    def derive(
        cls,
        request: RunRequest,
        *,
        interactive: bool,
        operator: str,
        target: str,
        sets: dict[str, str],
        signing_key: Path | None,
        allowed_signers: Path | None,
        closure_key: bytes = b"",
        policy: Policy | None = None,
    ) -> RunConfig:
        """The engine's view of a request, with what was resolved from it: the operator's name, the
        target the run really uses, the `--set` answers by knob, the signing key and signers in force."""
        a, st = request.approval, request.step
        return cls(
            kind=request.kind,
            mode=request.mode,
            interactive=interactive,
            restart=st.restart,
            approve=a.approve,
            auto_approve=a.auto_approve,
            operator=operator,
            step_timeout_s=st.step_timeout,
            max_recoveries=st.max_recoveries,
            target=target,
            sets=sets,
            reinterview=st.reinterview,
            secret_names=st.secrets,
            wait_for_approval=a.wait_for_approval,
            signing_key=signing_key,
            allowed_signers=allowed_signers,
            policy=policy or Policy(),
            detail_section=request.screen.detail_section,
            acceptance=request.acceptance,
            closure_key=closure_key,
        )


@dataclass
class SectionReport:
    """One section's outcome in this invocation (for the summary, `plan` and `check`)."""

    key: str
    title: str
    verdict: str
    detail: str = ""
    duration_s: float = 0.0
    attempts: int = 0


@dataclass
class RunResult:
    """How an invocation ended."""

    outcome: Outcome
    run_id: int | None
    section: str | None = None
    message: str = ""
    sections: list[SectionReport] = field(default_factory=list)
    approve_hint: str = ""
    changes: bool = False  # preview: something would change; check: drift found
    drift: list[str] = field(default_factory=list)
    unconfirmed: list[str] = field(default_factory=list)  # completed, but a check was inconclusive
    detail: object = None  # `plan --section N`: that section's `GateContent`, or why there is none (str)
    pristine: bool = False  # plan/check: no run of the plan is recorded here (ledger.evidence)


class Stop(Exception):
    """Ends the section loop with a result (a failure, a gate that waits, an interruption)."""

    def __init__(self, result: RunResult) -> None:
        super().__init__(result.outcome)
        self.result = result

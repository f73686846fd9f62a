"""What an invocation was asked to do and how it ended: the values that cross the engine's boundary."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from director.state.journal import RunKind

Mode = Literal["run", "preview", "check"]  # apply/teardown, `director plan`, `director check`
Outcome = Literal["completed", "awaiting-approval", "failed", "interrupted", "preview", "check"]


@dataclass(frozen=True)
class RunConfig:
    """What the operator asked for."""

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
    secret_names: tuple[str, ...] = ()
    wait_for_approval: float | None = None  # seconds a gate waits for a receipt (`--wait-for-approval`)
    signing_key: Path | None = None  # `--sign-with`: this run's own approvals are signed with it
    allowed_signers: Path | None = None  # in force: a gate is released only by a verified signature
    detail_section: str | None = None  # `plan --section N`: the gate to show in full
    acceptance: bool = False  # `check --acceptance`: the ✔ sections' checks run too


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


class Stop(Exception):
    """Ends the section loop with a result (a failure, a gate that waits, an interruption)."""

    def __init__(self, result: RunResult) -> None:
        super().__init__(result.outcome)
        self.result = result

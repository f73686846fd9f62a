"""Approval receipts for gates: what exactly was approved, by whom, when and how; and the prompts."""

from __future__ import annotations

import getpass
import hashlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from director.plan.model import Input
from director.state.identity import host_name
from director.state.records import ApprovalRecord


@dataclass(frozen=True)
class Review:
    """What the gate panel shows besides what is approved: the consequences (display only, never hashed)."""

    reasons: tuple[str, ...] = ()  # why the section is not in sync: which input, file, observation
    ledger: tuple[str, ...] = ()  # Live State changes: `+ URL …`, `~ status: a → b`, `- WORKER …`
    diffs: tuple[tuple[str, str], ...] = ()  # (file, unified diff of the regenerated template vs the disk)
    resources: tuple[str, ...] = ()  # what the commands name: `WORKER orders-dev`
    expanded: tuple[str, ...] = ()  # per command: the command with its variables' values put in (display)
    reasked: str = ""  # why an approval is asked again (an earlier receipt no longer matches, or was spent)
    receipt_diff: str = ""  # the approved text against this one, when a receipt no longer matches
    confirm: str = "go"  # what the operator types to approve (💥: the resource's name, or `destroy`)


@dataclass(frozen=True)
class GateContent:
    """The exact content a gate approval covers: commands after substitution, variables, inputs."""

    section_key: str
    title: str
    marker: str  # "🔴" | "💥"
    note: str
    quotes: tuple[str, ...]
    commands: tuple[str, ...]
    variables: dict[str, str]
    inputs: dict[str, str]
    context: dict[str, str] = field(default_factory=dict)  # what the ledger says exists (teardown)
    review: Review = field(default_factory=Review)  # display only: not part of what is approved
    # everything else the act can read, secrets sealed (`director.run.closure`): hashed with the rest
    closure: dict[str, Any] = field(default_factory=dict)
    # what the closure was computed from (`closure.Reach`, secrets sealed): recorded for `director
    # approve`, not hashed (the closure holds what of it the act reads)
    reach: dict[str, Any] = field(default_factory=dict)

    def canonical(self) -> bytes:
        """The bytes the receipt hashes: commands, variables, inputs and the closure (display excluded)."""
        return canonical({"section_key": self.section_key, "commands": self.commands,
                          "variables": self.variables, "inputs": self.inputs,
                          "closure": self.closure})  # fmt: skip

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.canonical()).hexdigest()

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def canonical(content: Mapping[str, Any]) -> bytes:
    """The bytes a receipt hashes, from gate content as stored (`GateContent.to_json`, a receipt's
    `content`): the section, commands, variables, inputs and everything else the act can read."""
    payload = {
        "section": content.get("section_key"),
        "commands": list(content.get("commands", ())),
        "variables": dict(sorted(dict(content.get("variables", {})).items())),
        "inputs": dict(sorted(dict(content.get("inputs", {})).items())),
        "closure": dict(content.get("closure") or {}),
    }
    return json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()


@dataclass(frozen=True)
class Receipt:
    """An approval: operator, host, time, how it was given, and the sha256 of the content approved."""

    section_key: str
    sha256: str
    operator: str
    host: str
    at: str
    how: str  # "prompt" | "flag" | "approve-command"


def operator_name(explicit: str | None) -> str:
    """The operator: `--operator`, else the login name."""
    if explicit:
        return explicit
    try:
        return getpass.getuser()
    except Exception:  # no passwd entry in some containers
        return os.environ.get("USER", "unknown")


def make_receipt(content: GateContent, operator: str, how: str, now: datetime | None = None) -> Receipt:
    """A receipt for exactly this content."""
    at = (now or datetime.now(UTC)).isoformat(timespec="seconds")
    return Receipt(content.section_key, content.sha256, operator, host_name(), at, how)


def matches(selector: str, section_key: str, slug: str, title: str) -> bool:
    """Whether an `--approve SECTION` selector (number, key or slug) names this section."""
    s = selector.strip().lstrip("§").lower()
    return s in {section_key.lower(), slug.lower(), title.lower()} or (
        bool(slug) and slug.startswith(s + "-")
    )


@dataclass(frozen=True)
class Arrival:
    """What a wait for an approval from elsewhere found: a receipt that releases the gate (verified, when
    signatures are checked), refusals to say, or that the time ran out."""

    receipt: ApprovalRecord | None = None
    refused: tuple[str, ...] = ()  # what to say of receipts that arrived and do not release it (yet)
    timed_out: bool = False
    said: str = ""  # whose approvals released it: `receipt 5 signed by alice@example.com with SHA256:… (…)`
    principal: str | None = None  # the receipt's signer, when its signature verified


@dataclass(frozen=True)
class Elsewhere:
    """While the operator is asked at the terminal, approvals may come from elsewhere (`director approve`
    in another terminal or, with `--state-url`, on another machine): the prompt and them race."""

    wait: Callable[[float], Arrival]  # waits up to that many seconds for a receipt; never longer
    hint: str  # the `director approve PLAN SECTION` command
    timeout: float | None = None  # `--wait-for-approval TIMEOUT`: when the run stops waiting (None: never)
    refused: tuple[str, ...] = ()  # receipts already refused for this content (said above the prompt)
    panel: bool = True  # show the gate panel (not when asking again after a typed go)
    # whether a typed confirmation can approve here; when not, `waiting` says why, once, and any line
    # typed stops the wait (the run stops, awaiting approval): never the same refusal asked again
    typed: bool = True
    waiting: str = ""


class Prompter(Protocol):
    """Asks the operator; implemented at a terminal by `director.ui.prompts.TerminalPrompter`."""

    def ask_input(self, inp: Input) -> str:
        """One Provisioning Inputs question; returns one of its options."""
        ...

    def ask_go(self, content: GateContent, elsewhere: Elsewhere | None = None) -> bool | Arrival:
        """Shows the gate; True only for the typed confirmation, False for anything else; with
        `elsewhere`, the `Arrival` of an approval from elsewhere (or of the time running out) if that
        comes first."""
        ...

"""The `Target` contract the engine and the commands use: whether a plan needs it, prerequisites, the
blocks' environment, events (and how to say one in a line), sessions."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from director.plan.model import Plan

class Progress(Protocol):
    """What a target says while it prepares (`None`: silent). `progress(message)` is a line of its own;
    `progress(message, ongoing=True)` a status the next message replaces: rewritten in place at a
    terminal, not written at all in plain output or a log (where its start and end lines say enough)."""

    def __call__(self, message: str, /, *, ongoing: bool = False) -> None: ...
#: In a block's environment: the state directories of the plans this plan requires (its providers), joined
#: by `os.pathsep`; a target may look there for what a provider deployed (docs/families.md).
ENV_PROVIDER_STATES = "DIRECTOR_PROVIDER_STATE_DIRS"


@dataclass(frozen=True)
class TargetEnv:
    """What a target adds to every block's environment."""

    path_prepend: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    description: str = ""


@dataclass(frozen=True)
class SessionInfo:
    """One long-running process a target keeps for a deployed Worker (for `director status`)."""

    name: str
    pid: int | None
    port: int | None
    url: str | None
    alive: bool
    healthy: bool
    workflows: tuple[str, ...] = ()
    log_path: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view."""
        return {
            "name": self.name,
            "pid": self.pid,
            "port": self.port,
            "url": self.url,
            "alive": self.alive,
            "healthy": self.healthy,
            "workflows": list(self.workflows),
            "log_path": self.log_path,
        }


class Target(Protocol):
    """Where a plan's blocks act: the operator's Cloudflare account, a local stand-in for it, or any other.

    A target is one module with a class that has these members, plus one line in `TARGETS`
    (`director/targets/__init__.py`); nothing else in Director names a target.
    """

    name: str

    def needed_by(self, plan: Plan) -> bool:
        """Whether the plan's blocks use what this target provides (else: no prerequisites, no env)."""
        ...

    def check_prerequisites(self) -> None:
        """Raise `PrerequisiteError` naming what is missing; may install tools (reporting progress)."""
        ...

    def block_environment(self) -> TargetEnv:
        """The PATH entries and variables every block of this run gets."""
        ...

    def drain_events(self) -> list[dict[str, Any]]:
        """Changes the target made since the last call, oldest first, for the journal."""
        ...

    def describe_event(self, event: dict[str, Any]) -> str:
        """One line saying what an event from `drain_events` did (for the screen and `--events`)."""
        ...

    def sessions(self) -> list[SessionInfo]:
        """The target's long-running sessions under its state directory and their health (`status`)."""
        ...

    def stop_all(self) -> list[SessionInfo]:
        """Stop every session this target runs; return the ones that were stopped."""
        ...


class TargetFactory(Protocol):
    """What `TARGETS` maps a name to: a target class, or any callable with its constructor's shape."""

    def __call__(self, state_dir: Path, *, progress: Progress | None = None) -> Target:
        """The target, keeping its local state under `state_dir`."""
        ...


def plan_calls(plan: Plan, program: str) -> bool:
    """Whether any executable block of the plan runs `program` (read by the bash grammar)."""
    from director.plan import bash

    return any(bash.calls(b.text, program) for s in plan.sections for b in s.executable_blocks)


def describe_change(event: dict[str, Any], subject_key: str) -> str:
    """`<kind> <subject>`: what changed and on what (a target names its subject key)."""
    what = str(event.get("kind") or event.get("op") or "change")
    name = event.get(subject_key) or event.get("name")
    return f"{what} {name}" if name else what

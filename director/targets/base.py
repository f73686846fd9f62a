"""The `Target` contract the engine uses: prerequisites, the blocks' environment, events, sessions."""

from __future__ import annotations

import abc
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

#: A progress callback: the CLI turns each message into a spinner line; `None` means silent.
Progress = Callable[[str], None]


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


class Target(abc.ABC):
    """Where a plan's blocks act: the operator's Cloudflare account, or a local stand-in for it."""

    name: str

    @abc.abstractmethod
    def check_prerequisites(self) -> None:
        """Raise `PrerequisiteError` naming what is missing; may install tools (reporting progress)."""

    @abc.abstractmethod
    def block_environment(self) -> TargetEnv:
        """The PATH entries and variables every block of this run gets."""

    @abc.abstractmethod
    def drain_events(self) -> list[dict[str, Any]]:
        """Changes the target made since the last call, oldest first, for the journal."""

    @abc.abstractmethod
    def sessions(self) -> list[SessionInfo]:
        """The target's long-running sessions and their health."""

    @abc.abstractmethod
    def stop_all(self) -> list[SessionInfo]:
        """Stop every session this target runs; return the ones that were stopped."""

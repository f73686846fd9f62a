"""Targets: where a plan's blocks act (`cloudflare`, the default, or `local`)."""

from __future__ import annotations

from pathlib import Path

from director.errors import UsageError
from director.targets.base import Progress, SessionInfo, Target, TargetEnv

TARGET_NAMES = ("cloudflare", "local")

__all__ = ["TARGET_NAMES", "Progress", "SessionInfo", "Target", "TargetEnv", "get_target"]


def get_target(name: str, state_dir: Path, *, progress: Progress | None = None) -> Target:
    """The target called `name`, keeping its local state under `state_dir`."""
    # Imported here so `python -m director.targets.wrangler_shim` does not pay for both targets.
    if name == "cloudflare":
        from director.targets.cloudflare import CloudflareTarget

        return CloudflareTarget(state_dir, progress=progress)
    if name == "local":
        from director.targets.local import LocalTarget

        return LocalTarget(state_dir, progress=progress)
    raise UsageError(f"--target: unknown target {name!r}; choose one of: {', '.join(TARGET_NAMES)}")

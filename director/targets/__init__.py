"""Targets: where a plan's blocks act. One module per target, one line per target in `TARGETS`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from director.errors import UsageError

if TYPE_CHECKING:  # the protocol and its dataclasses live in `base`; --help needs only the names below
    from pathlib import Path

    from director.targets.base import Progress, Target, TargetFactory

__all__ = ["DEFAULT_TARGET", "TARGETS", "get_target"]


# The factories import their module on first use, so `director --help` and every run of the wrangler shim
# (`python -m director.targets.wrangler_shim`) do not pay for the targets they do not use.
def _cloudflare(state_dir: Path, *, progress: Progress | None = None) -> Target:
    from director.targets.cloudflare import CloudflareTarget

    return CloudflareTarget(state_dir, progress=progress)


def _local(state_dir: Path, *, progress: Progress | None = None) -> Target:
    from director.targets.local import LocalTarget

    return LocalTarget(state_dir, progress=progress)


#: name → factory; the keys are `--target`'s choices.
TARGETS: dict[str, TargetFactory] = {
    "cloudflare": _cloudflare,
    "local": _local,
}
DEFAULT_TARGET = "cloudflare"


def get_target(name: str, state_dir: Path, *, progress: Progress | None = None) -> Target:
    """The target called `name`, keeping its local state under `state_dir`."""
    make = TARGETS.get(name)
    if make is None:
        raise UsageError(f"--target: unknown target {name!r}; choose one of: {', '.join(TARGETS)}")
    return make(state_dir, progress=progress)

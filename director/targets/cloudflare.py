"""The default target: blocks run exactly as written against the operator's wrangler and account."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from director.errors import PrerequisiteError
from director.targets.base import Progress, SessionInfo, TargetEnv, describe_change, plan_calls

if TYPE_CHECKING:
    from director.plan.model import Plan

NOT_AUTHENTICATED = "You are not authenticated"
_HINT = "Or run the plan without a Cloudflare account: `--target local`."
# `wrangler --version` costs ~1-2 s of Node start-up; a hung Node should not hang Director.
_TIMEOUT_S = 60.0


def _tail(text: str, lines: int = 15) -> str:
    """The last lines of a command's output, for an error message."""
    return "\n".join(text.strip().splitlines()[-lines:])


def _has_env_credentials(environ: dict[str, str] | os._Environ[str]) -> bool:
    """True when wrangler would authenticate from the environment (API token, or global key + email)."""
    if environ.get("CLOUDFLARE_API_TOKEN"):
        return True
    return bool(environ.get("CLOUDFLARE_API_KEY") and environ.get("CLOUDFLARE_EMAIL"))


class CloudflareTarget:
    """Runs blocks unchanged; only checks that wrangler and credentials are there first."""

    name = "cloudflare"

    def __init__(self, state_dir: Path, *, progress: Progress | None = None) -> None:
        self.state_dir = state_dir
        self._progress = progress

    def _say(self, message: str) -> None:
        if self._progress is not None:
            self._progress(message)

    def _run(self, argv: list[str]) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ)
        env.setdefault("WRANGLER_SEND_METRICS", "false")
        try:
            return subprocess.run(
                argv,
                capture_output=True,
                text=True,
                stdin=subprocess.DEVNULL,
                env=env,
                timeout=_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise PrerequisiteError(
                f"`{' '.join(argv)}` did not finish within {_TIMEOUT_S:.0f} s. {_HINT}"
            ) from exc
        except OSError as exc:
            raise PrerequisiteError(f"cannot run `{' '.join(argv)}`: {exc}. {_HINT}") from exc

    def needed_by(self, plan: Plan) -> bool:
        """Only a plan that calls wrangler needs wrangler and an account."""
        return plan_calls(plan, "wrangler")

    def check_prerequisites(self) -> None:
        """Wrangler on PATH and runnable, plus a token or a `wrangler login`."""
        wrangler = shutil.which("wrangler")
        if wrangler is None:
            raise PrerequisiteError(
                "`wrangler` is not on PATH: the cloudflare target runs the plan's `wrangler` commands "
                f"against your account. Install it (`npm install -g wrangler`). {_HINT}"
            )
        self._say("checking wrangler --version")
        version = self._run([wrangler, "--version"])
        if version.returncode != 0:
            output = _tail(version.stdout + version.stderr)
            raise PrerequisiteError(
                f"`{wrangler} --version` failed (exit {version.returncode}):\n{output}\n{_HINT}"
            )
        if _has_env_credentials(os.environ):
            return
        self._say("checking wrangler whoami")
        whoami = self._run([wrangler, "whoami"])
        if NOT_AUTHENTICATED in whoami.stdout + whoami.stderr:
            raise PrerequisiteError(
                "no Cloudflare credentials: CLOUDFLARE_API_TOKEN is not set and `wrangler whoami` says "
                f"'{NOT_AUTHENTICATED}'. Set CLOUDFLARE_API_TOKEN or run `wrangler login`. {_HINT}"
            )

    def block_environment(self) -> TargetEnv:
        """No changes: the blocks use the operator's PATH and environment."""
        return TargetEnv(path_prepend=(), env={}, description="cloudflare: blocks run as written")

    def drain_events(self) -> list[dict[str, Any]]:
        """The account is the record here; Director makes no changes of its own."""
        return []

    def describe_event(self, event: dict[str, Any]) -> str:
        """`<kind> <worker>` (this target has no events of its own; kept for the contract)."""
        return describe_change(event, "worker")

    def sessions(self) -> list[SessionInfo]:
        """Nothing runs locally for this target."""
        return []

    def stop_all(self) -> list[SessionInfo]:
        """Nothing to stop."""
        return []

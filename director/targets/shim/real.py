"""The real wrangler behind the shim: where it is, its environment (never an account's credentials), and
wrangler's own notion of an interactive terminal."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from director.targets.base import ENV_PROVIDER_STATES
from director.targets.local import ENV_ACCOUNT, ENV_REAL, ENV_REAL_VERSION, LocalAccount, WorkerRecord
from director.targets.shim.output import out

_TOKEN_VARS = (
    "CLOUDFLARE_API_TOKEN",
    "CLOUDFLARE_API_KEY",
    "CLOUDFLARE_EMAIL",
    "CF_API_TOKEN",
    "CF_API_KEY",
    "CF_EMAIL",
)


@dataclass(frozen=True)
class Context:
    """Where the account and the real wrangler are, from the wrapper's environment."""

    account: LocalAccount
    real: Path
    cwd: Path
    peers: tuple[LocalAccount, ...] = ()  # the local accounts of the plan's providers (a family)

    @classmethod
    def from_env(cls) -> Context:
        """Read DIRECTOR_LOCAL_ACCOUNT / DIRECTOR_REAL_WRANGLER, refusing to recurse into ourselves."""
        account = os.environ.get(ENV_ACCOUNT)
        real = os.environ.get(ENV_REAL)
        if not account or not real:
            raise ShimError(f"{ENV_ACCOUNT} and {ENV_REAL} must be set (run through Director's wrapper)")
        real_path = Path(real)
        try:
            head = real_path.read_bytes()[:4096]
        except OSError as exc:
            raise ShimError(f"{ENV_REAL}={real} cannot be read: {exc}") from exc
        if b"director.targets.wrangler_shim" in head:
            raise ShimError(f"{ENV_REAL}={real} is Director's own wrapper, not a real wrangler")
        peers = tuple(
            LocalAccount(Path(d) / "local")
            for d in os.environ.get(ENV_PROVIDER_STATES, "").split(os.pathsep)
            if d and (Path(d) / "local").is_dir() and (Path(d) / "local").resolve() != Path(account).resolve()
        )
        return cls(account=LocalAccount(Path(account)), real=real_path, cwd=Path.cwd(), peers=peers)

    def find_worker(self, name: str) -> WorkerRecord | None:
        """A Worker of this account, else of a provider's account (the same account on Cloudflare)."""
        for account in (self.account, *self.peers):
            record = account.load().workers.get(name)
            if record is not None:
                return record
        return None


class ShimError(Exception):
    """The shim itself cannot work (bad environment); printed as a wrangler-style error."""


def real_env(account: LocalAccount | None = None) -> dict[str, str]:
    """The environment for the real wrangler: no account credentials, no metrics, no shim on PATH."""
    env = dict(os.environ)
    # The local target must never reach a real account, even when the operator's shell has a token.
    for var in _TOKEN_VARS:
        env.pop(var, None)
    env["WRANGLER_SEND_METRICS"] = "false"
    # wrangler prints its banner (` ⛅️ wrangler 4.86.0 (update available 4.164.0)` and a rule) at the top of
    # every command, after asking the npm registry for a newer release (packages/wrangler/src/
    # wrangler-banner.ts, update-check.ts). Under the local target that is noise five times a run, and bad
    # advice: the pin is the newest release that runs on Node 20. Director names the wrangler it uses once,
    # before the run; WRANGLER_HIDE_BANNER (wrangler 4.48+: every wrangler the local target accepts, which
    # needs 4.79+) skips the banner and its registry query. An operator's own setting of it is kept.
    env.setdefault("WRANGLER_HIDE_BANNER", "true")
    if account is not None:
        bin_dir = os.path.realpath(account.bin_dir)
        parts = env.get("PATH", "").split(os.pathsep)
        env["PATH"] = os.pathsep.join(p for p in parts if p and os.path.realpath(p) != bin_dir)
    return env


def exec_real(ctx: Context, argv: Sequence[str]) -> NoReturn:
    """Become the real wrangler: same argv, output, exit code and signals."""
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(str(ctx.real), [str(ctx.real), *argv], real_env(ctx.account))


def run_real(ctx: Context, argv: Sequence[str], *, capture: bool = False) -> subprocess.CompletedProcess[str]:
    """Run the real wrangler to completion (inheriting stdio unless capturing)."""
    sys.stdout.flush()
    sys.stderr.flush()
    return subprocess.run(
        [str(ctx.real), *argv],
        env=real_env(ctx.account),
        capture_output=capture,
        text=True,
        check=False,
    )


def real_version(ctx: Context) -> str:
    """The real wrangler's version (from the wrapper's environment, else asked once)."""
    known = os.environ.get(ENV_REAL_VERSION)
    if known:
        return known
    result = run_real(ctx, ["--version"], capture=True)
    found = re.findall(r"\d+\.\d+\.\d+", result.stdout)
    return found[-1] if found else "?"


def banner(ctx: Context) -> None:
    """packages/wrangler/src/wrangler-banner.ts, without the update check; hidden as the real wrangler's
    is under the local target (`real_env`) unless the operator set WRANGLER_HIDE_BANNER to false."""
    if real_env().get("WRANGLER_HIDE_BANNER", "").lower() in ("1", "true"):
        return
    text = f" ⛅️ wrangler {real_version(ctx)}"
    out("\n" + text + "\n" + "─" * len(text))


# --- interactivity (packages/wrangler/src/is-interactive.ts, dialogs.ts) --------------------------

_CI_VARS = (
    "BUILD_ID", "BUILD_NUMBER", "CI", "CI_APP_ID", "CI_BUILD_ID", "CI_BUILD_NUMBER", "CI_NAME",
    "CONTINUOUS_INTEGRATION", "RUN_ID", "GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "CIRCLECI",
    "TRAVIS", "JENKINS_URL", "CF_PAGES", "WORKERS_CI",
)  # fmt: skip


def is_ci() -> bool:
    """ci-info's `isCI`, approximately (the generic variables plus common vendors)."""
    if os.environ.get("CI") == "false":
        return False
    return any(os.environ.get(var) for var in _CI_VARS)


def is_interactive() -> bool:
    """Both stdin and stdout are terminals and this is not CI."""
    try:
        return sys.stdin.isatty() and sys.stdout.isatty() and not is_ci()
    except (AttributeError, ValueError):
        return False


def confirm(text: str) -> bool:
    """wrangler's `confirm` (default and non-interactive fallback are both yes)."""
    if not is_interactive():
        out(f"? {text}")
        out("🤖 Using fallback value in non-interactive context: yes")
        return True
    try:
        answer = input(f"? {text} › (Y/n) ").strip().lower()
    except (EOFError, KeyboardInterrupt):
        out("")
        raise SystemExit(1) from None  # prompts: an aborted prompt exits 1
    return answer in ("", "y", "yes")

"""`wrangler` for --target local: account operations act on the local account, the rest run the real one.

Run as `python -m director.targets.wrangler_shim <wrangler argv…>` by the generated wrapper. Each call is
its own short process; the only long-lived processes are the `wrangler dev` sessions it starts, each
detached in its own session so that it outlives the shim (and a crashed Director).

Output of emulated commands follows wrangler 4.86's own wording (sources named next to each).
"""

from __future__ import annotations

import contextlib
import getpass
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from director.targets.local import (
    ENV_ACCOUNT,
    ENV_REAL,
    ENV_REAL_VERSION,
    Deployment,
    LocalAccount,
    WorkerRecord,
    free_port,
    now_iso,
    port_free,
    proc_start_time,
    stop_group,
)

# packages/wrangler/src/core/handle-errors.ts adds this note to every API (ParseError) failure.
BUG_NOTE = (
    "\nIf you think this is a bug, please open an issue at: "
    "https://github.com/cloudflare/workers-sdk/issues/new/choose"
)
# packages/wrangler/src/utils/worker-not-found-error.ts: the API's message for code 10007.
WORKER_NOT_FOUND = "This Worker does not exist on your account."
WORKER_NOT_FOUND_CODE = 10007
# The API's not-found for a workflow: code 10200 (packages/wrangler/src/deploy/check-workflow-conflicts.ts);
# the text is the API's own (not in wrangler's source), as quoted from live runs in public logs.
WORKFLOW_NOT_FOUND = "workflows.api.error.workflow.not_found"
WORKFLOW_NOT_FOUND_CODE = 10200
# packages/wrangler/src/deploy/index.ts and versions/deployments/list.ts.
NEED_NAME_DEPLOY = (
    "You need to provide a name when publishing a worker. Either pass it as a cli arg with "
    '`--name <name>` or in your config file as `name = "<name>"`'
)
NEED_NAME_LIST = (
    "You need to provide a name for your Worker. Either pass it as a cli arg with `--name <name>` "
    'or in your configuration file as `name = "<name>"`'
)
# packages/wrangler/src/workflows/commands/list.ts, remote branch, page 1.
NO_WORKFLOWS = "There are no deployed Workflows in this account"
#: Seconds a new dev session gets to print "Ready on" (measured: ~1 s warm, a few s cold).
READY_TIMEOUT_S = float(os.environ.get("DIRECTOR_LOCAL_READY_TIMEOUT", "60"))
#: Deploy snapshots kept per Worker (the live one plus a couple for post-mortems).
KEEP_BUILDS = 3
_TOKEN_VARS = (
    "CLOUDFLARE_API_TOKEN",
    "CLOUDFLARE_API_KEY",
    "CLOUDFLARE_EMAIL",
    "CF_API_TOKEN",
    "CF_API_KEY",
    "CF_EMAIL",
)

# --- argv ------------------------------------------------------------------------------------------

#: Options that take a value (wrangler 4.86 global options and those of the commands the shim reads);
#: needed to tell a positional (a workflow name) from an option's value.
VALUE_FLAGS = frozenset(
    {
        "config", "env", "env-file", "cwd", "name", "message", "tag", "outdir", "outfile", "port",
        "inspector-port", "inspector-ip", "ip", "id", "type", "payload", "status", "page", "per-page",
        "truncate-output-limit", "compatibility-date", "compatibility-flags", "compatibility-flag",
        "var", "define", "alias", "routes", "route", "triggers", "schedule", "schedules",
        "jsx-factory", "jsx-fragment", "tsconfig", "assets", "site", "site-include", "site-exclude",
        "dispatch-namespace", "containers-rollout", "persist-to", "log-level", "upstream-protocol",
        "local-protocol", "host", "local-upstream", "https-key-path", "https-cert-path", "metafile",
        "script", "experimental-json-config", "account-id",
    }
)  # fmt: skip
SHORT_ALIASES = {"c": "config", "e": "env", "v": "version", "h": "help", "j": "experimental-json-config"}
INSTANCE_SUBCOMMANDS = frozenset(
    {"list", "describe", "send-event", "terminate", "pause", "resume", "restart"}
)
MUTATING = frozenset({"trigger", "delete", "send-event", "terminate", "pause", "resume", "restart"})


def _kebab(name: str) -> str:
    """yargs accepts `--dryRun` for `--dry-run`; compare in one spelling."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", lambda m: "-" + m.group(1).lower(), name)


@dataclass(frozen=True)
class Args:
    """A wrangler command line, split into positionals and options (enough to route it)."""

    argv: tuple[str, ...]
    positionals: tuple[str, ...]
    options: dict[str, list[str | bool]] = field(default_factory=dict)

    def value(self, name: str) -> str | None:
        """The last string value given for an option."""
        for found in reversed(self.options.get(name, [])):
            if isinstance(found, str):
                return found
        return None

    def flag(self, name: str) -> bool:
        """A boolean option's effective value (`--x`, `--x=true`, `--no-x`, `--x=false`)."""
        values = self.options.get(name)
        if not values:
            return False
        last = values[-1]
        if isinstance(last, bool):
            return last
        return last.lower() not in ("false", "0", "no", "")


def parse_args(argv: Sequence[str]) -> Args:
    """Split argv like yargs would for routing purposes (unknown options are treated as booleans)."""
    positionals: list[str] = []
    options: dict[str, list[str | bool]] = {}
    i = 0
    while i < len(argv):
        token = argv[i]
        if token == "--":
            positionals.extend(argv[i + 1 :])
            break
        if token.startswith("--") and len(token) > 2:
            name, eq, val = token[2:].partition("=")
            name = _kebab(name)
            if eq:
                options.setdefault(name, []).append(val)
            elif name.startswith("no-") and name[3:] not in VALUE_FLAGS:
                options.setdefault(name[3:], []).append(False)
            elif name in VALUE_FLAGS and i + 1 < len(argv):
                options.setdefault(name, []).append(argv[i + 1])
                i += 1
            else:
                options.setdefault(name, []).append(True)
        elif token.startswith("-") and len(token) > 1 and not token[1].isdigit():
            name, eq, val = token[1:].partition("=")
            name = SHORT_ALIASES.get(name, name)
            if eq:
                options.setdefault(name, []).append(val)
            elif name in VALUE_FLAGS and i + 1 < len(argv):
                options.setdefault(name, []).append(argv[i + 1])
                i += 1
            else:
                options.setdefault(name, []).append(True)
        else:
            positionals.append(token)
        i += 1
    return Args(argv=tuple(argv), positionals=tuple(positionals), options=options)


@dataclass(frozen=True)
class Route:
    """What the shim does with a command: `kind` plus the workflow name for routed workflow commands."""

    kind: str  # passthrough | deploy | delete | deployments-list | workflows-list | workflow | unavailable
    workflow: str | None = None


def classify(args: Args) -> Route:
    """Decide which commands are account operations (emulated) and which pass through."""
    pos = args.positionals
    if not pos or args.flag("help") or args.flag("version"):
        return Route("passthrough")
    command = pos[0]
    if command in ("deploy", "delete"):
        return Route("passthrough") if args.flag("dry-run") else Route(command)
    if command == "deployments" and pos[1:2] == ("list",):
        return Route("deployments-list")
    if command == "workflows" and not args.flag("local"):
        sub = pos[1] if len(pos) > 1 else None
        if sub == "list":
            return Route("workflows-list")
        if sub in ("describe", "trigger", "delete") and len(pos) > 2:
            return Route("workflow", pos[2])
        if sub == "instances" and len(pos) > 2:
            if pos[2] == "terminate-all":
                # wrangler 4.86 has no --local for it (instances/terminate-all.ts): account only.
                return Route("unavailable")
            if pos[2] in INSTANCE_SUBCOMMANDS and len(pos) > 3:
                return Route("workflow", pos[3])
        return Route("passthrough")
    if pos[:2] == ("d1", "info") or pos[:3] in (("r2", "bucket", "info"), ("kv", "namespace", "list")):
        return Route("unavailable")
    return Route("passthrough")


def with_local(argv: Sequence[str], port: int) -> list[str]:
    """argv plus `--local --port P`, kept before a `--` separator."""
    extra = ["--local", "--port", str(port)]
    items = list(argv)
    if "--" in items:
        cut = items.index("--")
        return items[:cut] + extra + items[cut:]
    return items + extra


def without_options(argv: Sequence[str], names: frozenset[str]) -> list[str]:
    """argv minus some value options (both `--x v` and `--x=v`)."""
    out: list[str] = []
    skip = False
    for token in argv:
        if skip:
            skip = False
            continue
        if token.startswith("--"):
            name, eq, _ = token[2:].partition("=")
            if _kebab(name) in names:
                skip = not eq
                continue
        out.append(token)
    return out


# --- config ----------------------------------------------------------------------------------------


def strip_jsonc(text: str) -> str:
    """JSONC → JSON: drop // and /* */ comments and trailing commas, leaving strings untouched."""
    out: list[str] = []
    pending_comma: int | None = None  # index in `out` of a comma that may turn out to be trailing
    i, n = 0, len(text)
    if text.startswith("\ufeff"):
        i = 1
    while i < n:
        char = text[i]
        if char == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            pending_comma = None
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise ValueError("unterminated /* comment")
            out.append(" ")
            i = end + 2
        elif char.isspace():
            out.append(char)
            i += 1
        else:
            if pending_comma is not None and char in "}]":
                out[pending_comma] = ""
            pending_comma = None
            if char == ",":
                pending_comma = len(out)
            out.append(char)
            i += 1
    return "".join(out)


def parse_jsonc(text: str) -> Any:
    """Parse a JSONC document (wrangler.jsonc allows comments and trailing commas)."""
    return json.loads(strip_jsonc(text))


CONFIG_NAMES = ("wrangler.json", "wrangler.jsonc", "wrangler.toml")


def find_config(start: Path) -> Path | None:
    """wrangler's lookup: each of wrangler.json, .jsonc, .toml searched upwards, in that order."""
    start = start.resolve()
    for name in CONFIG_NAMES:
        for directory in (start, *start.parents):
            candidate = directory / name
            if candidate.is_file():
                return candidate
    return None


def read_config(path: Path) -> dict[str, Any]:
    """A wrangler config file as a dict (TOML or JSON/JSONC)."""
    text = path.read_text(encoding="utf-8")
    data = tomllib.loads(text) if path.suffix == ".toml" else parse_jsonc(text)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: the top level is not an object")
    return data


def config_file_name(path: Path | None) -> str:
    """packages/workers-utils/src/config/index.ts `configFileName`."""
    if path is None:
        return "Wrangler configuration"
    return {".toml": "wrangler.toml", ".json": "wrangler.json", ".jsonc": "wrangler.jsonc"}.get(
        path.suffix, "Wrangler configuration"
    )


@dataclass(frozen=True)
class WorkerConfig:
    """What the shim needs from a Worker's config (after `--env` and `--name`)."""

    path: Path | None
    name: str | None
    main: str | None
    workflows: tuple[str, ...]
    workers_dev: bool


def worker_config(
    path: Path | None, *, env: str | None = None, name: str | None = None, script: str | None = None
) -> WorkerConfig:
    """Resolve name, entry point, hosted workflows and workers_dev like wrangler does."""
    raw = read_config(path) if path is not None else {}
    section: dict[str, Any] = raw
    if env:
        section = dict(raw.get("env", {}).get(env, {}))
        # Inheritable keys fall back to the top level; `workflows` is not inheritable.
        for key in ("main", "workers_dev", "routes", "route"):
            if key not in section and key in raw:
                section[key] = raw[key]
        if "name" not in section and raw.get("name"):
            section["name"] = f"{raw['name']}-{env}"
    worker_name = name or section.get("name")
    main = script or section.get("main")
    if main and path is not None and not os.path.isabs(main):
        main = str((path.parent / main).resolve())
    hosted = tuple(
        str(w["name"])
        for w in section.get("workflows", []) or []
        if isinstance(w, dict) and w.get("name") and w.get("script_name") in (None, worker_name)
    )
    routes = section.get("routes") or section.get("route")
    # packages/wrangler/src/triggers/deploy.ts getSubdomainValues: default on only without routes.
    workers_dev = section.get("workers_dev")
    if workers_dev is None:
        workers_dev = not routes
    return WorkerConfig(
        path=path, name=worker_name, main=main, workflows=hosted, workers_dev=bool(workers_dev)
    )


def config_path_for(args: Args, cwd: Path, script: str | None = None) -> Path | None:
    """`--config`, else found from the script's directory or the cwd (resolveWranglerConfigPath)."""
    explicit = args.value("config")
    if explicit:
        return (cwd / explicit).resolve()
    return find_config(cwd / Path(script).parent if script else cwd)


# --- output ----------------------------------------------------------------------------------------


def out(text: str = "") -> None:
    """One line to stdout, flushed (child processes share the stream)."""
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def err(text: str) -> None:
    """Text to stderr, flushed."""
    sys.stderr.write(text)
    sys.stderr.flush()


def format_error(text: str, notes: Sequence[str] = ()) -> str:
    """esbuild's `formatMessagesSync` shape wrangler uses for errors (no colour, no wrapping)."""
    body = "".join("\n".join("  " + line for line in note.split("\n")) + "\n" for note in notes)
    return f"✘ [ERROR] {text}\n\n{body}" + ("\n" if notes else "")


def api_error(resource: str, message: str, code: int) -> None:
    """How wrangler reports a failed API call (cfetch/index.ts throwFetchError + handle-errors.ts)."""
    text = f"A request to the Cloudflare API ({resource}) failed."
    err(format_error(text, [f"{message} [code: {code}]", BUG_NOTE]))


def warn(text: str) -> None:
    """logger.warn's shape."""
    err(f"▲ [WARNING] {text}\n\n")


def note(text: str) -> None:
    """A Director line (stderr, so stdout stays shaped like wrangler's)."""
    err(f"[director] {text}\n")


# --- the real wrangler ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Context:
    """Where the account and the real wrangler are, from the wrapper's environment."""

    account: LocalAccount
    real: Path
    cwd: Path

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
        return cls(account=LocalAccount(Path(account)), real=real_path, cwd=Path.cwd())


class ShimError(Exception):
    """The shim itself cannot work (bad environment); printed as a wrangler-style error."""


def real_env(account: LocalAccount | None = None) -> dict[str, str]:
    """The environment for the real wrangler: no account credentials, no metrics, no shim on PATH."""
    env = dict(os.environ)
    # The local target must never reach a real account, even when the operator's shell has a token.
    for var in _TOKEN_VARS:
        env.pop(var, None)
    env["WRANGLER_SEND_METRICS"] = "false"
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
    """packages/wrangler/src/wrangler-banner.ts, without the update check."""
    if os.environ.get("WRANGLER_HIDE_BANNER", "").lower() in ("1", "true"):
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


# --- deploy ----------------------------------------------------------------------------------------


def pick_bundle(build_dir: Path, main: str | None) -> Path | None:
    """The single module a deploy bundled, or None (then the session runs the config's entry point)."""
    modules = [p for p in build_dir.iterdir() if p.is_file() and p.suffix in (".js", ".mjs", ".cjs")]
    if main:
        stem = Path(main).stem
        preferred = [p for p in modules if p.stem == stem]
        if len(modules) == 1 and preferred:
            return preferred[0]
    return modules[0] if len(modules) == 1 else None


def _prune_builds(account: LocalAccount, worker: str, keep: str) -> None:
    builds = account.builds_dir(worker)
    if not builds.is_dir():
        return
    versions = sorted((p for p in builds.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime)
    for old in versions[:-KEEP_BUILDS]:
        if old.name != keep:
            shutil.rmtree(old, ignore_errors=True)


def _log_tail(path: Path, lines: int = 25) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.rstrip().splitlines()[-lines:])


def wait_ready(proc: subprocess.Popen[bytes], log: Path, port: int, timeout: float) -> bool:
    """Until the session prints `Ready on http://127.0.0.1:P`; False if it exits or times out."""
    marker = f"Ready on http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if marker in log.read_text(errors="replace"):
                return True
        except OSError:
            pass
        if proc.poll() is not None:
            return False
        time.sleep(0.1)
    return False


def dev_argv(
    ctx: Context, args: Args, cfg: WorkerConfig, bundle: Path | None, port: int, inspector: int, state: Path
) -> list[str]:
    """The `wrangler dev` command line that stands in for a deployed Worker."""
    argv = [str(ctx.real), "dev"]
    if bundle is not None:
        # Run the snapshot the deploy bundled (like the real upload), not the live source file:
        # edits then go live on the next deploy, not on save.
        argv += [str(bundle), "--no-bundle"]
    if cfg.path is not None:
        argv += ["--config", str(cfg.path)]
    for option in ("env", "name", "compatibility-date", "compatibility-flags"):
        value = args.value(option)
        if value is not None:
            argv += [f"--{option}", value]
    argv += ["--ip", "127.0.0.1", "--port", str(port), "--inspector-port", str(inspector)]
    return [*argv, "--persist-to", str(state)]


_WORKER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")


def valid_worker_name(name: str) -> bool:
    """A name safe to use as a file name in the account (no separators, no `..`)."""
    return bool(_WORKER_NAME.match(name))


def _clean_stale_pending(account: LocalAccount, max_age_s: float = 3600.0) -> None:
    """Remove bundles of deploys that were interrupted between dry-run and start."""
    cutoff = time.time() - max_age_s
    for pending in account.builds_root.glob(".pending-*"):
        with contextlib.suppress(OSError):
            if pending.stat().st_mtime < cutoff:
                shutil.rmtree(pending, ignore_errors=True)


def cmd_deploy(ctx: Context, args: Args) -> int:
    """Dry-run for real (so failures are real), then (re)start the Worker's dev session."""
    account = ctx.account
    account.builds_root.mkdir(parents=True, exist_ok=True)
    _clean_stale_pending(account)
    pending = account.builds_root / f".pending-{uuid.uuid4().hex}"
    own = without_options(args.argv, frozenset({"outdir", "outfile"}))
    dry = [*own, "--dry-run", "--outdir", str(pending)]
    started = time.monotonic()
    result = run_real(ctx, dry, capture=True)
    upload_s = time.monotonic() - started
    if result.returncode != 0:
        sys.stdout.write(result.stdout)
        err(result.stderr)
        shutil.rmtree(pending, ignore_errors=True)
        return result.returncode
    script = args.positionals[1] if len(args.positionals) > 1 else None
    try:
        path = config_path_for(args, ctx.cwd, script)
        cfg = worker_config(path, env=args.value("env"), name=args.value("name"), script=script)
    except (OSError, ValueError, tomllib.TOMLDecodeError) as exc:
        shutil.rmtree(pending, ignore_errors=True)
        err(format_error(f"Director's local target could not read the Worker config: {exc}"))
        return 1
    if not cfg.name:
        shutil.rmtree(pending, ignore_errors=True)
        err(format_error(NEED_NAME_DEPLOY))
        return 1
    if not valid_worker_name(cfg.name):
        shutil.rmtree(pending, ignore_errors=True)
        err(format_error(f"Director's local target cannot host a Worker named {cfg.name!r}."))
        return 1
    # The dry-run's banner, bundle size and bindings table are what a real deploy prints first.
    for line in result.stdout.splitlines():
        if line.strip() != "--dry-run: exiting now.":
            out(line)
    err(result.stderr)
    return _deploy_session(ctx, args, cfg, pending, upload_s)


def _deploy_session(ctx: Context, args: Args, cfg: WorkerConfig, pending: Path, upload_s: float) -> int:
    account = ctx.account
    name = cfg.name
    assert name is not None
    version_id = str(uuid.uuid4())
    argv = list(args.argv)
    with account.worker_lock(name):
        previous = account.load().workers.get(name)
        was_live = previous is not None and previous.alive()
        if previous is not None:
            # Stop even a session whose leader died: its workerd children may still hold the port.
            account.stop_session(previous, reason="redeploy", argv=argv)
        build = account.builds_dir(name) / version_id
        build.parent.mkdir(parents=True, exist_ok=True)
        pending.rename(build)
        bundle = pick_bundle(build, cfg.main)
        port = previous.port if previous and previous.port and port_free(previous.port) else free_port()
        inspector = (
            previous.inspector_port
            if previous
            and previous.inspector_port
            and previous.inspector_port != port
            and port_free(previous.inspector_port)
            else free_port(avoid=(port,))
        )
        state = account.state_dir(name)
        state.mkdir(parents=True, exist_ok=True)
        account.logs_dir.mkdir(parents=True, exist_ok=True)
        log = account.logs_dir / f"{name}-{time.strftime('%Y%m%dT%H%M%S')}-{version_id[:8]}.log"
        command = dev_argv(ctx, args, cfg, bundle, port, inspector, state)
        started = time.monotonic()
        with log.open("wb") as log_handle:
            # Own session + process group: survives the shim and Director, and stops as one group.
            proc = subprocess.Popen(
                command,
                cwd=cfg.path.parent if cfg.path else ctx.cwd,
                stdin=subprocess.DEVNULL,
                stdout=log_handle,
                stderr=subprocess.STDOUT,
                env=real_env(account),
                start_new_session=True,
                close_fds=True,
            )
        url = f"http://127.0.0.1:{port}"
        # Record the session before waiting, so a crash here still leaves it findable (stop_all).
        with account.update() as data:
            record = data.workers.get(name) or WorkerRecord(name=name)
            record.config = str(cfg.path) if cfg.path else None
            record.main, record.env = cfg.main, args.value("env")
            record.workflows, record.deleted_workflows = list(cfg.workflows), []
            record.workers_dev = cfg.workers_dev
            record.port, record.inspector_port, record.url = port, inspector, url
            record.pid = record.pgid = proc.pid
            record.proc_start = proc_start_time(proc.pid)
            record.started_at, record.log_path = now_iso(), str(log)
            record.persist_to, record.bundle = str(state), str(bundle) if bundle else None
            data.workers[name] = record
        account.append_event(
            "session-start", worker=name, session_pid=proc.pid, pgid=proc.pid, port=port,
            inspector_port=inspector, log=str(log), argv=command,
        )  # fmt: skip
        try:
            ready = wait_ready(proc, log, port, READY_TIMEOUT_S)
        except BaseException:
            stop_group(proc.pid)
            raise
        deploy_s = time.monotonic() - started
        if not ready:
            stop_group(proc.pid)
            proc.wait()
            with account.update() as data:
                failed = data.workers.get(name)
                if failed is not None and failed.pid == proc.pid:
                    failed.pid = failed.pgid = None
                    failed.proc_start = None
            account.append_event(
                "session-stop", worker=name, session_pid=proc.pid, pgid=proc.pid, reason="not ready",
                argv=argv,
            )  # fmt: skip
            err(
                format_error(
                    f"Director's local target: the wrangler dev session for {name} did not become ready "
                    f"within {READY_TIMEOUT_S:.0f} s (log: {log}).",
                    [_log_tail(log)],
                )
            )
            return 1
        deployment = Deployment(
            id=str(uuid.uuid4()),
            version_id=version_id,
            time=now_iso(),
            message=args.value("message"),
            author=f"{getpass.getuser()}@localhost",
        )
        with account.update() as data:
            record = data.workers[name]
            record.deployments.append(deployment)
        account.append_event(
            "restart" if was_live else "deploy", worker=name, version_id=version_id,
            message=deployment.message, port=port, url=url, session_pid=proc.pid,
            workflows=list(cfg.workflows), config=str(cfg.path) if cfg.path else None, argv=argv,
            cwd=str(ctx.cwd),
        )  # fmt: skip
        _prune_builds(account, name, keep=version_id)
    _print_deploy_summary(name, cfg, url, version_id, upload_s, deploy_s)
    note(
        f"local target: {name} runs in a local `wrangler dev` session (pid {proc.pid}, log {log}), "
        "not on Cloudflare"
    )
    return 0


def _print_deploy_summary(
    name: str, cfg: WorkerConfig, url: str, version_id: str, upload_s: float, deploy_s: float
) -> None:
    """packages/wrangler/src/deploy/deploy.ts + triggers/deploy.ts wording."""
    out(f"Uploaded {name} ({upload_s:.2f} sec)")
    targets = ([url] if cfg.workers_dev else []) + [f"workflow: {wf}" for wf in cfg.workflows]
    if targets:
        out(f"Deployed {name} triggers ({deploy_s:.2f} sec)")
        for target in targets:
            out(f"  {target}")
    else:
        out(f"No deploy targets for {name} ({deploy_s:.2f} sec)")
    out(f"Current Version ID: {version_id}")


# --- delete ----------------------------------------------------------------------------------------


def cmd_delete(ctx: Context, args: Args) -> int:
    """packages/wrangler/src/delete.ts: confirm, then remove the Worker (here: stop its session)."""
    account = ctx.account
    positional = args.positionals[1] if len(args.positionals) > 1 else None
    path: Path | None = None
    name = positional or args.value("name")
    if not name:
        try:
            path = config_path_for(args, ctx.cwd)
            name = worker_config(path, env=args.value("env")).name if path else None
        except (OSError, ValueError, tomllib.TOMLDecodeError) as exc:
            err(format_error(f"Director's local target could not read the Worker config: {exc}"))
            return 1
    banner(ctx)
    if not name:
        file = config_file_name(path)
        err(format_error(f"A worker name must be defined, either via --name, or in your {file} file"))
        return 1
    if not args.flag("force") and not confirm(
        f"Are you sure you want to delete {name}? This action cannot be undone."
    ):
        return 0
    argv = list(args.argv)
    # A name that cannot be a file name was never deployed here; don't build lock paths from it.
    lock = account.worker_lock(name) if valid_worker_name(name) else contextlib.nullcontext()
    with lock:
        record = account.load().workers.get(name)
        if record is None:
            # Without --force wrangler first asks the API for the Worker's references; with it, it deletes.
            resource = (
                f"/accounts/{account.account_id}/workers/services/{name}"
                if args.flag("force")
                else f"/accounts/{account.account_id}/workers/scripts/{name}/references"
            )
            api_error(resource, WORKER_NOT_FOUND, WORKER_NOT_FOUND_CODE)
            return 1
        account.stop_session(record, reason="delete", argv=argv)
        with account.update() as data:
            data.workers.pop(name, None)
            data.tombstones.append(
                {
                    "name": name,
                    "deleted_at": now_iso(),
                    "deployments": [vars(d) for d in record.deployments],
                    "workflows": record.workflows,
                    "argv": argv,
                }
            )
        # Deleting a Worker deletes what it hosted, including its Workflows' instances.
        shutil.rmtree(account.state_dir(name), ignore_errors=True)
        shutil.rmtree(account.builds_dir(name), ignore_errors=True)
        account.append_event("delete", worker=name, workflows=record.workflows, argv=argv, cwd=str(ctx.cwd))
    out(f"Successfully deleted {name}")
    return 0


# --- deployments list ------------------------------------------------------------------------------


def format_labelled(
    view: dict[str, str], *, indentation: int = 0, right: bool = False, spacer: int = 2
) -> str:
    """packages/wrangler/src/utils/render-labelled-values.ts (without colours)."""
    labels = [label + ":" for label in view]
    align = max(len(label) for label in labels)
    lines = []
    for label, value in zip(labels, view.values(), strict=True):
        pad = " " * (align - len(label)) if right else ""
        value_lines = value.split("\n")
        first = " " * (align + spacer - len(label) - len(pad)) + value_lines[0]
        rest = [" " * (align + spacer + indentation) + line for line in value_lines[1:]]
        lines.append(" " * indentation + pad + label + "\n".join([first, *rest]))
    return re.sub(r"^\s+$", "", "\n".join(lines), flags=re.MULTILINE)


def render_deployments(deployments: Sequence[Deployment]) -> str:
    """packages/wrangler/src/versions/deployments/list.ts text output."""
    blocks = []
    for deployment in deployments:
        details = format_labelled(
            {"Created": deployment.time, "Tag": "-", "Message": deployment.message or "-"},
            indentation=4,
            right=True,
        )
        blocks.append(
            format_labelled(
                {
                    "Created": deployment.time,
                    "Author": deployment.author,
                    "Source": "Upload",  # a deploy's triggered_by annotation is "upload"
                    "Message": "-",
                    "Version(s)": f"(100%) {deployment.version_id}\n{details}",
                }
            )
        )
    return "\n\n".join(blocks)


def deployments_json(deployments: Sequence[Deployment]) -> list[dict[str, Any]]:
    """The API objects `deployments list --json` prints."""
    return [
        {
            "id": d.id,
            "source": d.source,
            "strategy": "percentage",
            "author_email": d.author,
            "created_on": d.time,
            "annotations": {"workers/triggered_by": "upload"},
            "versions": [{"version_id": d.version_id, "percentage": 100}],
        }
        for d in deployments
    ]


def cmd_deployments_list(ctx: Context, args: Args) -> int:
    """The 10 latest deployments of a Worker in the local account, or the API's not-found error."""
    as_json = args.flag("json")
    name = args.value("name")
    if not name:
        with contextlib.suppress(OSError, ValueError, tomllib.TOMLDecodeError):
            path = config_path_for(args, ctx.cwd)
            name = worker_config(path, env=args.value("env")).name if path else None
    if not as_json:
        banner(ctx)
    if not name:
        err(format_error(NEED_NAME_LIST))
        return 1
    record = ctx.account.load().workers.get(name)
    if record is None:
        # A deleted Worker is gone from the account just like one that never existed.
        api_error(
            f"/accounts/{ctx.account.account_id}/workers/scripts/{name}/deployments",
            WORKER_NOT_FOUND,
            WORKER_NOT_FOUND_CODE,
        )
        return 1
    latest = sorted(record.deployments, key=lambda d: d.time)[-10:]
    if as_json:
        out(json.dumps(deployments_json(latest), indent=2))
    else:
        out(render_deployments(latest))
    return 0


# --- workflows -------------------------------------------------------------------------------------


def workflow_resource(args: Args, account_id: str, name: str) -> str:
    """The API path the real command would have called first (for the not-found error)."""
    pos = args.positionals
    base = f"/accounts/{account_id}/workflows/{name}"
    if pos[1] in ("describe", "delete"):
        return base
    if pos[1] == "trigger" or pos[2] == "list":
        return f"{base}/instances"
    instance = pos[4] if len(pos) > 4 else "latest"
    if instance == "latest":
        return f"{base}/instances/"  # utils.ts getInstanceIdFromArgs lists them first
    if pos[2] == "describe":
        return f"{base}/instances/{instance}"
    if pos[2] == "send-event":
        return f"{base}/instances/{instance}/events/{args.value('type')}"
    return f"{base}/instances/{instance}/status"


_OUTPUT_LINE = re.compile(r"^(\s+Output:\s+)(.+)$")


def account_step_outputs(text: str) -> str:
    """Render describe's step outputs the way the account API shows them (structured ones as strings)."""
    # The local explorer API returns a step's output as the value itself, so describe prints
    # {"a":1}; the account API returns structured outputs serialised as a string, which describe's
    # JSON.stringify prints as "{\"a\":1}". Evidence: the plan's dogfood-derived grep for
    # reservedOnAttempt\":2 and the API schema's `output: string | number`. Objects and arrays are
    # re-encoded; scalars, null and truncated outputs are left alone.
    lines = []
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\n")
        match = _OUTPUT_LINE.match(body)
        if match:
            try:
                value = json.loads(match.group(2))
            except ValueError:
                value = None
            if isinstance(value, dict | list):
                encoded = json.dumps(match.group(2), ensure_ascii=False)
                line = match.group(1) + encoded + line[len(body) :]
        lines.append(line)
    return "".join(lines)


def _filter_rows(text: str, hidden: Sequence[str]) -> str:
    """Drop table rows whose first cell names a deleted workflow."""
    kept = []
    for line in text.splitlines(keepends=True):
        cells = [c.strip() for c in line.split("│")]
        if len(cells) > 2 and cells[1] in hidden:
            continue
        kept.append(line)
    return "".join(kept)


def cmd_workflows_list(ctx: Context, args: Args) -> int:
    """The real local list of every live session that hosts workflows; else the real empty message."""
    hosts = [r for _, r in sorted(ctx.account.load().workers.items()) if r.live_workflows and r.alive()]
    if not hosts:
        banner(ctx)
        warn(NO_WORKFLOWS)
        return 0
    status = 0
    for record in hosts:
        assert record.port is not None
        argv = with_local(args.argv, record.port)
        if record.deleted_workflows:
            result = run_real(ctx, argv, capture=True)
            sys.stdout.write(_filter_rows(result.stdout, record.deleted_workflows))
            err(result.stderr)
            code = result.returncode
        else:
            code = run_real(ctx, argv).returncode
        status = status or code
    return status


def cmd_workflow(ctx: Context, args: Args, workflow: str) -> int:
    """A command on one workflow: run for real against the session that hosts it."""
    account = ctx.account
    record = account.load().host_of(workflow)
    if record is None or not record.alive() or record.port is None:
        banner(ctx)
        resource = workflow_resource(args, account.account_id, workflow)
        api_error(resource, WORKFLOW_NOT_FOUND, WORKFLOW_NOT_FOUND_CODE)
        if record is not None:
            note(
                f"local target: the dev session of Worker {record.name} is not running; "
                "`wrangler deploy` starts it again"
            )
        return 1
    argv = list(args.argv)
    pos = args.positionals
    if pos[1] == "instances" and pos[2] == "describe":
        result = run_real(ctx, with_local(argv, record.port), capture=True)
        sys.stdout.write(account_step_outputs(result.stdout))
        err(result.stderr)
        code = result.returncode
    else:
        code = run_real(ctx, with_local(argv, record.port)).returncode
    operation = pos[2] if pos[1] == "instances" else pos[1]
    if operation in MUTATING:
        account.append_event(
            "workflow", worker=record.name, workflow=workflow, operation=operation, rc=code, argv=argv
        )
    if pos[1] == "delete" and code == 0:
        # The dev session keeps the class registered; the account forgets the workflow until redeploy.
        with account.update() as data:
            current = data.workers.get(record.name)
            if current is not None and workflow not in current.deleted_workflows:
                current.deleted_workflows.append(workflow)
        account.append_event("workflow-delete", worker=record.name, workflow=workflow, argv=argv)
    return code


def cmd_unavailable(args: Args) -> int:
    """Account-only discovery commands have no local stand-in."""
    words = " ".join(args.positionals[:3])
    err(
        format_error(
            f"`wrangler {words}` needs a Cloudflare account; it is not available on Director's local target "
            "(--target local has no D1/R2/KV discovery or bulk instance termination). "
            "Leave BIND_* empty, or run with --target cloudflare."
        )
    )
    return 1


# --- entry point -----------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Route one wrangler invocation."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    route = classify(args)
    if route.kind == "unavailable":
        return cmd_unavailable(args)
    try:
        ctx = Context.from_env()
    except ShimError as exc:
        err(format_error(f"Director's wrangler shim: {exc}"))
        return 1
    if route.kind == "passthrough":
        exec_real(ctx, argv)
    if route.kind == "deploy":
        return cmd_deploy(ctx, args)
    if route.kind == "delete":
        return cmd_delete(ctx, args)
    if route.kind == "deployments-list":
        return cmd_deployments_list(ctx, args)
    if route.kind == "workflows-list":
        return cmd_workflows_list(ctx, args)
    assert route.kind == "workflow" and route.workflow is not None
    return cmd_workflow(ctx, args, route.workflow)


if __name__ == "__main__":
    raise SystemExit(main())

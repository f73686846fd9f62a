"""`wrangler deploy` on the local account: a real dry-run (so failures are real), then a detached
`wrangler dev` session that stands in for the deployed Worker."""

from __future__ import annotations

import contextlib
import getpass
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
import uuid
from pathlib import Path

from director.exec.processes import proc_start_time
from director.targets.local import (
    SESSION_VAR,
    Deployment,
    LocalAccount,
    WorkerRecord,
    free_port,
    now_iso,
    port_free,
    stop_group,
)
from director.targets.shim.argv import Args, without_options
from director.targets.shim.config import WorkerConfig, config_path_for, worker_config
from director.targets.shim.output import NEED_NAME_DEPLOY, err, format_error, note, out
from director.targets.shim.real import Context, real_env, run_real

#: Seconds a new dev session gets to print "Ready on" (measured: ~1 s warm, a few s cold).
READY_TIMEOUT_S = float(os.environ.get("DIRECTOR_LOCAL_READY_TIMEOUT", "60"))
#: Deploy snapshots kept per Worker (the live one plus a couple for post-mortems).
KEEP_BUILDS = 3


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
    ctx: Context,
    args: Args,
    cfg: WorkerConfig,
    bundle: Path | None,
    port: int,
    inspector: int,
    state: Path,
    serves: tuple[Path, ...] = (),
) -> list[str]:
    """The `wrangler dev` command line that stands in for a deployed Worker (and, after it, the configs of
    the Workers whose Workflows it binds cross-script: `serves`)."""
    argv = [str(ctx.real), "dev"]
    if bundle is not None:
        # Run the snapshot the deploy bundled (like the real upload), not the live source file:
        # edits then go live on the next deploy, not on save.
        argv += [str(bundle), "--no-bundle"]
    if cfg.path is not None:
        argv += ["--config", str(cfg.path)]
    for other in serves:
        argv += ["--config", str(other)]
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
    serves = _bound_hosts(ctx, cfg)
    if serves is None:
        shutil.rmtree(pending, ignore_errors=True)
        return 1
    return _deploy_session(ctx, args, cfg, pending, upload_s, serves)


def _bound_hosts(ctx: Context, cfg: WorkerConfig) -> dict[str, Path] | None:
    """The config of each Worker whose Workflow `cfg` binds cross-script (its name → its config), found in
    this account or a provider's; None (said) when one cannot be found.

    wrangler 4.86 cannot bind a Workflow across two `wrangler dev` sessions (the consumer's session fails:
    `Worker "workflows:<wf>"'s binding "USER_WORKFLOW" refers to a service "core:user:<script>", but no
    such service is defined`; the dev registry serves service bindings and Durable Objects, not
    Workflows). So the consumer's session runs the host Worker too (`wrangler dev -c consumer -c host`):
    the binding works, and the instances it starts live in the consumer's session (docs/families.md).
    """
    found: dict[str, Path] = {}
    for workflow, script in cfg.bound:
        record = ctx.find_worker(script)
        if record is None or not record.config or not Path(record.config).is_file():
            err(
                format_error(
                    f"Director's local target: {cfg.name} binds Workflow {workflow} of Worker {script}, "
                    "which neither this plan's local account nor its providers' has deployed. Apply the plan "
                    "that provides it first (a family run, or a plan that names it as its provider, passes "
                    "its account on)."
                )
            )
            return None
        found[script] = Path(record.config)
    return found


def _deploy_session(
    ctx: Context, args: Args, cfg: WorkerConfig, pending: Path, upload_s: float, serves: dict[str, Path]
) -> int:
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
        command = dev_argv(ctx, args, cfg, bundle, port, inspector, state, tuple(serves.values()))
        started = time.monotonic()
        mark = f"{name}@{uuid.uuid4().hex[:16]}"  # what the session's processes carry: stopped by it alone
        with log.open("wb") as log_handle:
            # Own session + process group: survives the shim and Director, and stops as one group.
            proc = subprocess.Popen(
                command,
                cwd=cfg.path.parent if cfg.path else ctx.cwd,
                stdin=subprocess.DEVNULL,
                stdout=log_handle,
                stderr=subprocess.STDOUT,
                env={**real_env(account), SESSION_VAR: mark},
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
            record.bound_workflows, record.serves = [w for w, _ in cfg.bound], list(serves)
            record.workers_dev = cfg.workers_dev
            record.port, record.inspector_port, record.url = port, inspector, url
            record.pid = record.pgid = proc.pid
            record.proc_start, record.session_mark = proc_start_time(proc.pid), mark
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
                    failed.proc_start = failed.session_mark = None
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

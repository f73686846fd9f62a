"""`wrangler` for --target local: account operations act on the local account, the rest run the real one.

Run as `python -m director.targets.wrangler_shim <wrangler argv…>` by the generated wrapper. Each call is
its own short process; the only long-lived processes are the `wrangler dev` sessions it starts, each
detached in its own session so that it outlives the shim (and a crashed Director).

Output of emulated commands follows wrangler 4.86's own wording (sources named next to each).
This module routes one call and holds the account commands but deploy; the parts live in
`director/targets/shim/`: `argv` (routing), `config` (Worker configs), `output` (wrangler-shaped
output), `real` (the real wrangler, interactivity) and `deploy` (the dev session for a deploy).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path

from director.targets.local import now_iso
from director.targets.shim.argv import MUTATING, Args, classify, parse_args, with_local
from director.targets.shim.config import config_file_name, config_path_for, worker_config
from director.targets.shim.deploy import cmd_deploy, valid_worker_name
from director.targets.shim.output import (
    NEED_NAME_LIST,
    NO_WORKFLOWS,
    WORKER_NOT_FOUND,
    WORKER_NOT_FOUND_CODE,
    WORKFLOW_NOT_FOUND,
    WORKFLOW_NOT_FOUND_CODE,
    account_step_outputs,
    api_error,
    deployments_json,
    err,
    filter_rows,
    format_error,
    note,
    out,
    render_deployments,
    warn,
)
from director.targets.shim.real import Context, ShimError, banner, confirm, exec_real, run_real

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


def cmd_workflows_list(ctx: Context, args: Args) -> int:
    """The real local list of every live session that hosts workflows; else the real empty message."""
    hosts = [r for _, r in sorted(ctx.account.load().workers.items()) if r.live_workflows and r.alive()]
    for peer in ctx.peers:  # a provider's account: one account on Cloudflare
        hosts += [r for _, r in sorted(peer.load().workers.items()) if r.live_workflows and r.alive()]
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
            sys.stdout.write(filter_rows(result.stdout, record.deleted_workflows))
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
    for peer in ctx.peers if record is None else ():
        record = record or peer.load().host_of(workflow)
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

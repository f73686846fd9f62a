"""The wrangler shim: argv routing, JSONC, config resolution, output shapes, and records (fake wrangler)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from director.exec.processes import group_members
from director.targets.local import Deployment, LocalAccount, WorkerRecord, stop_group
from director.targets.shim.argv import Args, Route, classify, parse_args, with_local, without_options
from director.targets.shim.config import find_config, parse_jsonc, worker_config
from director.targets.shim.output import account_step_outputs, format_error, render_deployments
from director.targets.wrangler_shim import workflow_resource
from tests.pristine import SEED

ROOT = Path(__file__).resolve().parent.parent


# --- argv --------------------------------------------------------------------------------------------


def test_parse_args_splits_positionals_from_option_values() -> None:
    args = parse_args(["workflows", "instances", "describe", "--port", "9", "wf", "latest", "--step-output"])
    assert args.positionals == ("workflows", "instances", "describe", "wf", "latest")
    assert args.value("port") == "9"
    assert args.flag("step-output")


def test_parse_args_forms() -> None:
    args = parse_args(
        ["deploy", "-c", "a.jsonc", "--message=hi there", "--dryRun", "--no-minify", "-e", "stg"]
    )
    assert args.value("config") == "a.jsonc"
    assert args.value("message") == "hi there"
    assert args.flag("dry-run")
    assert args.options["minify"] == [False]
    assert args.value("env") == "stg"
    assert not parse_args(["deploy", "--dry-run=false"]).flag("dry-run")


def test_parse_args_double_dash_ends_options() -> None:
    args = parse_args(["workflows", "trigger", "--", "--weird-name"])
    assert args.positionals == ("workflows", "trigger", "--weird-name")


@pytest.mark.parametrize(
    ("argv", "route"),
    [
        ([], Route("passthrough")),
        (["--version"], Route("passthrough")),
        (["whoami"], Route("passthrough")),
        (["deploy", "--config", "c.jsonc", "--message", "m"], Route("deploy")),
        (["deploy", "--config", "c.jsonc", "--dry-run"], Route("passthrough")),
        (["deploy", "--help"], Route("passthrough")),
        (["delete", "--config", "c.jsonc"], Route("delete")),
        (["delete", "--dry-run"], Route("passthrough")),
        (["deployments", "list", "--name", "w"], Route("deployments-list")),
        (["deployments", "status"], Route("passthrough")),
        (["workflows", "list"], Route("workflows-list")),
        (["workflows", "list", "--local", "--port", "1"], Route("passthrough")),
        (["workflows", "describe", "wf"], Route("workflow", "wf")),
        (["workflows", "trigger", "wf", '{"a":1}'], Route("workflow", "wf")),
        (["workflows", "delete", "wf"], Route("workflow", "wf")),
        (["workflows", "instances", "list", "wf", "--status", "running"], Route("workflow", "wf")),
        (["workflows", "instances", "describe", "wf", "latest"], Route("workflow", "wf")),
        (
            ["workflows", "instances", "send-event", "wf", "latest", "--type", "t", "--payload", "{}"],
            Route("workflow", "wf"),
        ),
        (["workflows", "instances", "terminate", "wf", "latest"], Route("workflow", "wf")),
        (["workflows", "instances", "terminate-all", "wf"], Route("unavailable")),
        (["workflows", "trigger"], Route("passthrough")),  # real wrangler prints its usage error
        (["d1", "info", "db"], Route("unavailable")),
        (["r2", "bucket", "info", "b"], Route("unavailable")),
        (["kv", "namespace", "list"], Route("unavailable")),
        (["d1", "execute", "db", "--local"], Route("passthrough")),
    ],
)
def test_classify(argv: list[str], route: Route) -> None:
    assert classify(parse_args(argv)) == route


def test_with_local_and_without_options() -> None:
    assert with_local(["workflows", "list"], 8) == ["workflows", "list", "--local", "--port", "8"]
    assert with_local(["a", "--", "b"], 8) == ["a", "--local", "--port", "8", "--", "b"]
    argv = ["deploy", "--outdir", "x", "--outfile=y", "--message", "m"]
    assert without_options(argv, frozenset({"outdir", "outfile"})) == ["deploy", "--message", "m"]


def test_workflow_resource_paths() -> None:
    def path(argv: list[str]) -> str:
        return workflow_resource(parse_args(argv), "acc", "wf")

    assert path(["workflows", "describe", "wf"]) == "/accounts/acc/workflows/wf"
    assert path(["workflows", "trigger", "wf"]) == "/accounts/acc/workflows/wf/instances"
    assert (
        path(["workflows", "instances", "describe", "wf", "latest"])
        == "/accounts/acc/workflows/wf/instances/"
    )
    assert path(["workflows", "instances", "describe", "wf"]) == "/accounts/acc/workflows/wf/instances/"
    assert (
        path(["workflows", "instances", "terminate", "wf", "i1"])
        == "/accounts/acc/workflows/wf/instances/i1/status"
    )
    assert (
        path(["workflows", "instances", "send-event", "wf", "i1", "--type", "approval"])
        == "/accounts/acc/workflows/wf/instances/i1/events/approval"
    )


# --- JSONC and config ---------------------------------------------------------------------------------


def test_parse_jsonc_comments_trailing_commas_and_strings() -> None:
    text = """\ufeff// head
    {
      "url": "http://x//not-a-comment", /* block
      comment */ "glob": "a/*b*/c",
      "quote": "he said \\"hi\\" // still string",
      "list": [1, 2, 3,],   // trailing comma in an array
      "obj": { "k": "v", },
    }
    """
    assert parse_jsonc(text) == {
        "url": "http://x//not-a-comment",
        "glob": "a/*b*/c",
        "quote": 'he said "hi" // still string',
        "list": [1, 2, 3],
        "obj": {"k": "v"},
    }


def test_parse_jsonc_keeps_commas_inside_strings() -> None:
    assert parse_jsonc('{"a": ",]", "b": ",}",}') == {"a": ",]", "b": ",}"}


def test_parse_jsonc_rejects_garbage() -> None:
    with pytest.raises(ValueError):
        parse_jsonc('{"a": 1 /* never closed')
    with pytest.raises(ValueError):
        parse_jsonc('{"a": }')


def seed_jsonc() -> str:
    """The §2 config block of the seed plan, as the plan shows it."""
    text = SEED.read_text(encoding="utf-8")
    match = re.search(r"```jsonc\n(.*?)```", text, re.S)
    assert match, "the seed plan has no jsonc block"
    return match.group(1)


def test_seed_plan_config_resolves(tmp_path: Path) -> None:
    config = tmp_path / "orders.jsonc"
    config.write_text(seed_jsonc())
    cfg = worker_config(config)
    assert cfg.name == "orders-dev"
    assert cfg.main == str(tmp_path / "src" / "orders-workflow.js")
    assert cfg.workflows == ("orders-wf-dev",)
    assert cfg.workers_dev is True


def test_worker_config_env_name_and_defaults(tmp_path: Path) -> None:
    config = tmp_path / "wrangler.jsonc"
    config.write_text(
        json.dumps(
            {
                "name": "svc",
                "main": "index.js",
                "routes": ["example.com/*"],
                "workflows": [
                    {"name": "own", "binding": "A", "class_name": "A"},
                    {"name": "other", "binding": "B", "class_name": "B", "script_name": "elsewhere"},
                ],
                "env": {"stg": {"workflows": [{"name": "own-stg", "binding": "A", "class_name": "A"}]}},
            }
        )
    )
    base = worker_config(config)
    assert base.workflows == ("own",)  # the other one is hosted by another Worker
    assert base.workers_dev is False  # routes and no explicit workers_dev
    staged = worker_config(config, env="stg")
    assert staged.name == "svc-stg"
    assert staged.workflows == ("own-stg",)
    assert worker_config(config, name="override").name == "override"


def test_worker_config_toml(tmp_path: Path) -> None:
    config = tmp_path / "wrangler.toml"
    config.write_text(
        'name = "t"\nmain = "src/i.js"\n[[workflows]]\nname = "w"\nbinding = "W"\nclass_name = "C"\n'
    )
    cfg = worker_config(config)
    assert (cfg.name, cfg.workflows, cfg.workers_dev) == ("t", ("w",), True)


def test_find_config_searches_up_in_wrangler_order(tmp_path: Path) -> None:
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    (tmp_path / "wrangler.json").write_text("{}")
    (tmp_path / "a" / "wrangler.jsonc").write_text("{}")
    # wrangler.json anywhere up the tree wins over a nearer wrangler.jsonc (find.file per name, in order).
    assert find_config(deep) == tmp_path / "wrangler.json"
    (tmp_path / "wrangler.json").unlink()
    assert find_config(deep) == tmp_path / "a" / "wrangler.jsonc"


# --- output shapes ------------------------------------------------------------------------------------


def test_format_error_matches_esbuild_shape() -> None:
    text = format_error("A request failed.", ["Detail [code: 1]", "\nIf you think"])
    assert text == "✘ [ERROR] A request failed.\n\n  Detail [code: 1]\n  \n  If you think\n\n"
    assert format_error("plain") == "✘ [ERROR] plain\n\n"


def test_render_deployments_layout() -> None:
    rendered = render_deployments(
        [Deployment(id="d", version_id="v-1", time="2026-01-01T00:00:00.000Z", message="m", author="a@b")]
    )
    assert rendered.splitlines() == [
        "Created:     2026-01-01T00:00:00.000Z",
        "Author:      a@b",
        "Source:      Upload",
        "Message:     -",
        "Version(s):  (100%) v-1",
        "                 Created:  2026-01-01T00:00:00.000Z",
        "                     Tag:  -",
        "                 Message:  m",
    ]


def test_account_step_outputs_reencodes_structured_values_only() -> None:
    text = (
        "  Name:      finalize-1\n"
        '  Output:    {"orderId":"A-1","reservedOnAttempt":2}\n'
        "  Output:    null\n"
        "  Output:    42\n"
        '  Output:    {"long":"xx[...output truncated]\n'
    )
    lines = account_step_outputs(text).splitlines()
    assert lines[1] == '  Output:    "{\\"orderId\\":\\"A-1\\",\\"reservedOnAttempt\\":2}"'
    assert 'reservedOnAttempt\\":2' in lines[1]  # what the seed plan's acceptance check greps
    assert lines[2:] == text.splitlines()[2:]


# --- records --------------------------------------------------------------------------------------------


def test_account_update_is_atomic_and_round_trips(tmp_path: Path) -> None:
    account = LocalAccount(tmp_path / "local")
    with account.update() as data:
        data.workers["w"] = WorkerRecord(name="w", workflows=["wf"], port=1234)
    reloaded = account.load()
    assert reloaded.workers["w"].port == 1234
    assert reloaded.host_of("wf") is not None
    assert [p.name for p in account.root.iterdir() if p.name.startswith(".account.json")] == []
    with pytest.raises(RuntimeError), account.update() as data:
        data.workers.clear()
        raise RuntimeError("crash before the write")
    assert "w" in account.load().workers  # a failed update leaves the old file


def test_read_events_skips_a_partial_line(tmp_path: Path) -> None:
    account = LocalAccount(tmp_path / "local")
    account.append_event("deploy", worker="w")
    with account.events_path.open("a") as handle:
        handle.write('{"kind": "half')
    events, offset = account.read_events()
    assert [e["kind"] for e in events] == ["deploy"]
    assert offset < account.events_path.stat().st_size
    with account.events_path.open("a") as handle:
        handle.write('"}\n')
    more, _ = account.read_events(offset)
    assert [e["kind"] for e in more] == ["half"]


def test_drain_events_cursor_persists(tmp_path: Path) -> None:
    from director.targets.local import LocalTarget

    target = LocalTarget(tmp_path)
    target.account.append_event("deploy", worker="w")
    assert [e["kind"] for e in target.drain_events()] == ["deploy"]
    assert target.drain_events() == []
    target.account.append_event("delete", worker="w")
    assert [e["kind"] for e in LocalTarget(tmp_path).drain_events()] == ["delete"]


# --- the shim as a process, against a fake real wrangler ----------------------------------------------

FAKE_WRANGLER = r'''#!{python}
"""A stand-in for the real wrangler: logs argv, fakes dry-run bundles and a dev server."""
import json, os, socket, sys
args = sys.argv[1:]
with open(os.environ["FAKE_WRANGLER_LOG"], "a") as log:
    log.write(json.dumps(args) + "\n")
if args[:1] == ["--version"]:
    print("4.86.0")
elif args[:1] == ["deploy"] and "--dry-run" in args:
    if os.environ.get("FAKE_DRY_FAIL"):
        print("✘ [ERROR] Build failed with 1 error", file=sys.stderr)
        sys.exit(1)
    outdir = args[args.index("--outdir") + 1]
    os.makedirs(outdir, exist_ok=True)
    open(os.path.join(outdir, "index.js"), "w").write("export default {}\n")
    print("\n ⛅️ wrangler 4.86.0\n───────────────────\nTotal Upload: 0.01 KiB\n--dry-run: exiting now.")
elif args[:1] == ["dev"]:
    port = int(args[args.index("--port") + 1])
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))
    server.listen()
    print(f"[wrangler:info] Ready on http://127.0.0.1:{port}", flush=True)
    while True:
        server.accept()[0].close()
else:
    print("FAKE " + " ".join(args))
    sys.exit(int(os.environ.get("FAKE_RC", "0")))
'''


class Shim:
    """Runs the shim like the wrapper would, with a fake real wrangler."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.account = LocalAccount(tmp / "local")
        self.fake = tmp / "fake-wrangler"
        self.fake.write_text(FAKE_WRANGLER.replace("{python}", sys.executable))
        self.fake.chmod(0o755)
        self.log = tmp / "fake.log"
        self.log.touch()
        self.project = tmp / "project"
        self.project.mkdir()
        (self.project / "src").mkdir()
        (self.project / "src" / "index.js").write_text("export default {}\n")
        (self.project / "orders.jsonc").write_text(
            '{ "name": "orders-dev", "main": "src/index.js", "workers_dev": true, // comment\n'
            '  "workflows": [{ "name": "orders-wf-dev", "binding": "WF", "class_name": "C" },], }\n'
        )

    def run(self, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
        full_env = {
            **os.environ,
            "DIRECTOR_LOCAL_ACCOUNT": str(self.account.root),
            "DIRECTOR_REAL_WRANGLER": str(self.fake),
            "DIRECTOR_REAL_WRANGLER_VERSION": "4.86.0",
            "FAKE_WRANGLER_LOG": str(self.log),
            "CLOUDFLARE_API_TOKEN": "must-not-leak",
            **env,
        }
        full_env.pop("CI", None)
        return subprocess.run(
            [sys.executable, "-m", "director.targets.wrangler_shim", *argv],
            cwd=self.project,
            env=full_env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def real_calls(self) -> list[list[str]]:
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def pgids(self) -> list[int]:
        events, _ = self.account.read_events()
        return [e["pgid"] for e in events if e["kind"] == "session-start"]


@pytest.fixture
def shim(tmp_path: Path) -> Iterator[Shim]:
    harness = Shim(tmp_path)
    yield harness
    for pgid in harness.pgids():
        stop_group(pgid, grace=2.0)


def test_passthrough_is_exact(shim: Shim) -> None:
    result = shim.run("whoami", "--json", FAKE_RC="3")
    assert result.returncode == 3
    assert result.stdout == "FAKE whoami --json\n"
    assert shim.real_calls() == [["whoami", "--json"]]


def test_passthrough_drops_account_credentials(shim: Shim) -> None:
    probe = shim.tmp / "probe"
    probe.write_text(
        f"#!{sys.executable}\nimport os\nprint(os.environ.get('CLOUDFLARE_API_TOKEN', 'unset'))\n"
    )
    probe.chmod(0o755)
    result = shim.run("whoami", DIRECTOR_REAL_WRANGLER=str(probe))
    assert result.stdout == "unset\n"


def test_shim_refuses_to_run_itself_as_the_real_wrangler(shim: Shim) -> None:
    wrapper = shim.tmp / "wrapper"
    wrapper.write_text('#!/bin/sh\nexec python -m director.targets.wrangler_shim "$@"\n')
    result = shim.run("whoami", DIRECTOR_REAL_WRANGLER=str(wrapper))
    assert result.returncode == 1
    assert "Director's own wrapper" in result.stderr


def test_unavailable_discovery_commands(shim: Shim) -> None:
    for argv in (["d1", "info", "db"], ["r2", "bucket", "info", "b"], ["kv", "namespace", "list"]):
        result = shim.run(*argv)
        assert result.returncode == 1
        assert "not available on Director's local target" in result.stderr
    assert shim.real_calls() == []


def test_workflows_list_with_no_sessions(shim: Shim) -> None:
    result = shim.run("workflows", "list")
    assert result.returncode == 0
    assert "▲ [WARNING] There are no deployed Workflows in this account" in result.stderr


def test_named_workflow_without_session_is_not_found(shim: Shim) -> None:
    result = shim.run("workflows", "instances", "describe", "orders-wf-dev", "latest")
    assert result.returncode == 1
    assert "workflows.api.error.workflow.not_found [code: 10200]" in result.stderr
    assert f"/accounts/{shim.account.account_id}/workflows/orders-wf-dev/instances/" in result.stderr


def test_deployments_list_for_missing_worker(shim: Shim) -> None:
    result = shim.run("deployments", "list", "--name", "ghost")
    assert result.returncode == 1
    assert "This Worker does not exist on your account. [code: 10007]" in result.stderr
    assert "/workers/scripts/ghost/deployments) failed." in result.stderr


def test_delete_missing_worker_confirms_then_fails(shim: Shim) -> None:
    result = shim.run("delete", "--name", "ghost")
    assert result.returncode == 1
    assert "? Are you sure you want to delete ghost? This action cannot be undone." in result.stdout
    assert "🤖 Using fallback value in non-interactive context: yes" in result.stdout
    assert "This Worker does not exist on your account. [code: 10007]" in result.stderr


def test_no_banner_and_no_update_check_unless_the_operator_wants_them(shim: Shim) -> None:
    # The real wrangler prints ` ⛅️ wrangler 4.86.0 (update available …)` on every command after asking
    # the registry; under the local target it gets WRANGLER_HIDE_BANNER=true, and so does the shim's own.
    probe = shim.tmp / "probe"
    probe.write_text(
        f"#!{sys.executable}\nimport os\nprint(os.environ.get('WRANGLER_HIDE_BANNER', 'unset'))\n"
    )
    probe.chmod(0o755)
    with pytest.MonkeyPatch.context() as mp:  # Shim.run passes this process's environment on
        mp.delenv("WRANGLER_HIDE_BANNER", raising=False)
        assert shim.run("whoami", DIRECTOR_REAL_WRANGLER=str(probe)).stdout == "true\n"
        assert "⛅️" not in shim.run("delete", "--name", "ghost").stdout
    kept = shim.run("whoami", DIRECTOR_REAL_WRANGLER=str(probe), WRANGLER_HIDE_BANNER="false")
    assert kept.stdout == "false\n"
    shown = shim.run("delete", "--name", "ghost", WRANGLER_HIDE_BANNER="false")
    assert "\n ⛅️ wrangler 4.86.0\n" in shown.stdout


def test_deploy_dry_run_failure_is_relayed(shim: Shim) -> None:
    result = shim.run("deploy", "--config", "orders.jsonc", FAKE_DRY_FAIL="1")
    assert result.returncode == 1
    assert "Build failed" in result.stderr
    assert shim.account.load().workers == {}
    assert not any(p.name.startswith(".pending") for p in shim.account.builds_root.iterdir())


def test_deploy_list_route_redeploy_delete(shim: Shim) -> None:
    first = shim.run("deploy", "--config", "orders.jsonc", "--message", "one")
    assert first.returncode == 0, first.stderr
    assert "--dry-run: exiting now." not in first.stdout
    url = re.search(r"^  (http://127\.0\.0\.1:(\d+))$", first.stdout, re.M)
    assert url, first.stdout
    assert "  workflow: orders-wf-dev" in first.stdout
    assert re.search(r"^Current Version ID: [0-9a-f-]{36}$", first.stdout, re.M)
    assert "local target" in first.stderr
    record = shim.account.load().workers["orders-dev"]
    assert record.session_info().healthy
    assert record.deployments[0].message == "one"
    dev_call = next(c for c in shim.real_calls() if c[0] == "dev")
    assert dev_call[2] == "--no-bundle" and dev_call[1].endswith("index.js")  # the snapshot, not src/

    routed = shim.run("workflows", "instances", "describe", "orders-wf-dev", "latest")
    assert routed.stdout.strip().endswith(f"--local --port {url.group(2)}")

    listed = shim.run("workflows", "list")
    assert listed.stdout.strip() == f"FAKE workflows list --local --port {url.group(2)}"

    second = shim.run("deploy", "--config", "orders.jsonc", "--message", "two")
    assert second.returncode == 0, second.stderr
    assert f"  {url.group(1)}" in second.stdout  # same port on restart
    assert not group_members(record.pgid or 0)  # the first session is gone

    deployments = shim.run("deployments", "list", "--name", "orders-dev")
    assert deployments.returncode == 0
    assert deployments.stdout.count("Source:      Upload") == 2
    assert "Message:  two" in deployments.stdout

    deleted = shim.run("delete", "--config", "orders.jsonc")
    assert deleted.returncode == 0, deleted.stderr
    assert deleted.stdout.rstrip().endswith("Successfully deleted orders-dev")
    assert all(not group_members(pgid) for pgid in shim.pgids())
    gone = shim.run("deployments", "list", "--name", "orders-dev")
    assert gone.returncode == 1 and "does not exist on your account" in gone.stderr
    assert shim.account.load().tombstones[0]["name"] == "orders-dev"

    kinds = [e["kind"] for e in shim.account.read_events()[0]]
    assert kinds == [
        "session-start",
        "deploy",
        "session-stop",
        "session-start",
        "restart",
        "session-stop",
        "delete",
    ]


def test_deploy_without_workers_dev_prints_no_url(shim: Shim) -> None:
    config = shim.project / "orders.jsonc"
    config.write_text(config.read_text().replace('"workers_dev": true', '"workers_dev": false'))
    result = shim.run("deploy", "--config", "orders.jsonc")
    assert result.returncode == 0, result.stderr
    assert "http://" not in result.stdout
    assert "  workflow: orders-wf-dev" in result.stdout


def test_workflows_delete_hides_workflow_until_redeploy(shim: Shim) -> None:
    assert shim.run("deploy", "--config", "orders.jsonc").returncode == 0
    assert shim.run("workflows", "delete", "orders-wf-dev").returncode == 0
    assert "There are no deployed Workflows" in shim.run("workflows", "list").stderr
    assert shim.run("workflows", "describe", "orders-wf-dev").returncode == 1
    assert shim.run("deploy", "--config", "orders.jsonc").returncode == 0
    assert "FAKE workflows list" in shim.run("workflows", "list").stdout


def test_args_value_prefers_last() -> None:
    assert Args(argv=(), positionals=(), options={"x": ["a", True, "b"]}).value("x") == "b"


def test_delete_asks_on_a_terminal(shim: Shim) -> None:
    assert shim.run("deploy", "--config", "orders.jsonc").returncode == 0
    env = {
        **os.environ,
        "DIRECTOR_LOCAL_ACCOUNT": str(shim.account.root),
        "DIRECTOR_REAL_WRANGLER": str(shim.fake),
        "DIRECTOR_REAL_WRANGLER_VERSION": "4.86.0",
        "FAKE_WRANGLER_LOG": str(shim.log),
    }
    env.pop("CI", None)
    argv = ["-m", "director.targets.wrangler_shim", "delete", "--config", "orders.jsonc"]
    question = "Are you sure you want to delete orders-dev? This action cannot be undone."

    declined = pexpect.spawn(sys.executable, argv, cwd=str(shim.project), env=env, encoding="utf-8")
    declined.expect_exact(question, timeout=30)
    declined.sendline("n")
    declined.expect(pexpect.EOF, timeout=30)
    declined.close()
    assert declined.exitstatus == 0
    assert "orders-dev" in shim.account.load().workers  # nothing deleted

    accepted = pexpect.spawn(sys.executable, argv, cwd=str(shim.project), env=env, encoding="utf-8")
    accepted.expect_exact(question, timeout=30)
    accepted.sendline("")  # wrangler's default is yes
    accepted.expect_exact("Successfully deleted orders-dev", timeout=30)
    accepted.expect(pexpect.EOF, timeout=30)
    accepted.close()
    assert accepted.exitstatus == 0
    assert shim.account.load().workers == {}


def test_unsafe_worker_names_never_become_paths(shim: Shim) -> None:
    config = shim.project / "orders.jsonc"
    config.write_text(config.read_text().replace('"orders-dev"', '"../escape"'))
    result = shim.run("deploy", "--config", "orders.jsonc")
    assert result.returncode == 1
    assert "cannot host a Worker named '../escape'" in result.stderr
    deleted = shim.run("delete", "--name", "../../x", "--force")
    assert deleted.returncode == 1 and "does not exist on your account" in deleted.stderr
    assert not (shim.tmp / "x.lock").exists() and not (shim.account.root.parent / "x.lock").exists()

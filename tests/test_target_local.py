"""The local target: pinned-wrangler install (fakes, fast) and the seed plan end to end (real wrangler)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from director.errors import PrerequisiteError
from director.exec.processes import group_members, pid_alive
from director.targets import get_target
from director.targets import install as inst
from director.targets.local import SESSION_VAR, LocalAccount, LocalTarget, WorkerRecord, stop_group
from tests import forkserver
from tests.pristine import SEED
from tests.terminal import Term

ROOT = Path(__file__).resolve().parent.parent

# --- install (fast, with fake node/npm) -----------------------------------------------------------


def script(path: Path, body: str) -> Path:
    """An executable Python script (absolute shebang, so it needs nothing on PATH)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!{sys.executable}\n{body}")
    path.chmod(0o755)
    return path


FAKE_NPM = """import os, sys, time
time.sleep(float(os.environ.get("FAKE_NPM_SECONDS", "0")))
if os.environ.get("FAKE_NPM_FAIL"):
    print("npm ERR! network unreachable", file=sys.stderr)
    sys.exit(1)
assert sys.argv[1:] == ["install", "--no-audit", "--no-fund", "wrangler@4.86.0"], sys.argv
os.makedirs("node_modules/.bin")
with open("node_modules/.bin/wrangler", "w") as handle:
    handle.write("#!%s\\nprint('4.86.0')\\n" % sys.executable)
os.chmod("node_modules/.bin/wrangler", 0o755)
"""


@pytest.fixture
def fake_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH with only a fake node (v20.20.2) and a fake npm; the cache in tmp."""
    bin_dir = tmp_path / "tools"
    script(bin_dir / "node", "print('v20.20.2')\n")
    script(bin_dir / "npm", FAKE_NPM)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("DIRECTOR_CACHE", str(tmp_path / "cache"))
    return bin_dir


def test_cache_dir_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("DIRECTOR_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert inst.cache_dir() == tmp_path / "xdg" / "director"
    monkeypatch.setenv("DIRECTOR_CACHE", str(tmp_path / "mine"))
    assert inst.cache_dir() == tmp_path / "mine"
    assert inst.pinned_bin().parts[-4:] == ("wrangler-4.86.0", "node_modules", ".bin", "wrangler")


class Said:
    """A `Progress` that keeps what it was told: (message, ongoing)."""

    def __init__(self) -> None:
        self.said: list[tuple[str, bool]] = []

    def __call__(self, message: str, /, *, ongoing: bool = False) -> None:
        self.said.append((message, ongoing))

    def lines(self) -> list[str]:
        return [m for m, ongoing in self.said if not ongoing]


def test_installs_pinned_once_atomically(
    fake_tools: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_NPM_SECONDS", "1.2")  # long enough for the status to tick
    said = Said()
    found = inst.resolve_wrangler(said)
    assert (found.version, found.source) == ("4.86.0", "installed")
    assert found.path == tmp_path / "cache" / "wrangler-4.86.0" / "node_modules" / ".bin" / "wrangler"
    final = tmp_path / "cache" / "wrangler-4.86.0"
    # one line when it starts (why first), one when it is done; "using" only once it is installed
    assert said.lines()[0] == f"no wrangler on PATH; installing wrangler 4.86.0 into {final} (one time, ~15 s)"
    assert re.fullmatch(r"installed wrangler 4\.86\.0 in \d+ s; using it", said.lines()[1])
    assert len(said.lines()) == 2
    # the seconds in between are statuses, never lines
    ticks = [m for m, ongoing in said.said if ongoing]
    assert ticks and all(re.fullmatch(r"installing wrangler 4\.86\.0 … \d+ s", m) for m in ticks)
    assert said.said.index((said.lines()[1], False)) == len(said.said) - 1
    assert not list((tmp_path / "cache").glob(".tmp-*"))
    again = Said()
    assert inst.resolve_wrangler(again).source == "cache"
    assert again.said == [(f"no wrangler on PATH; using wrangler 4.86.0 ({final})", False)]


PROBE_PLAN = """# Wrangler probe

## 1. Probe  🟢

```bash
wrangler --version > version.txt
```

```bash
# ✔ wrangler answers
grep -q '4.86.0' version.txt && echo "wrangler answers" || { echo "no version"; exit 1; }
```

## Live State

```yaml
status: not-created
```
"""


@pytest.mark.slow  # two first-use installs through the real CLI (~10 s)
def test_the_cli_says_an_install_in_two_lines_and_counts_only_at_a_terminal(
    fake_tools: Path, tmp_path: Path, term: Callable[..., Term]
) -> None:
    # first use of --target local: the fake npm takes 2.2 s or more; the real one ~10-15 s
    plan = tmp_path / "probe.md"
    plan.write_text(PROBE_PLAN, encoding="utf-8")
    env = {
        **os.environ,
        "PATH": f"{fake_tools}{os.pathsep}/usr/bin{os.pathsep}/bin",  # fake node and npm first
        "FAKE_NPM_SECONDS": "2.2",
    }
    # in a log (a pipe): the start, the end, then the run; no line per second, nothing said before its time
    env["DIRECTOR_CACHE"] = str(tmp_path / "cache-plain")
    r = forkserver.run(
        [sys.executable, "-m", "director", "apply", str(plan), "--target", "local", "--non-interactive"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    before = r.stdout.split("director: starting", 1)[0].splitlines()
    final = tmp_path / "cache-plain" / "wrangler-4.86.0"
    assert before[0] == f"no wrangler on PATH; installing wrangler 4.86.0 into {final} (one time, ~15 s)"
    took = re.fullmatch(r"installed wrangler 4\.86\.0 in (\d+) s; using it", before[1])
    assert took and int(took.group(1)) >= 2, before
    assert len(before) == 2 and "… " not in r.stdout.split("director: starting", 1)[0]
    assert (final / "node_modules" / ".bin" / "wrangler").exists()
    # at a terminal: the same two lines, and between them a status counting the seconds on one line
    t = term(
        "apply", str(plan), "--target", "local", "--non-interactive", "--restart",
        env={"PATH": env["PATH"], "FAKE_NPM_SECONDS": "2.2", "DIRECTOR_CACHE": str(tmp_path / "cache-tty")},
    )  # fmt: skip
    assert t.finish(timeout=120) == 0, t.text()
    raw = t.raw.decode("utf-8", "replace")
    ticks = re.findall(r"installing wrangler 4\.86\.0 … (\d+) s\x1b\[0m\x1b\[1G\x1b\[2K", raw)
    assert len(ticks) >= 2 and ticks == sorted(ticks, key=int), raw[:600]  # rewritten in place, counting
    screen = t.text()
    assert "installing wrangler 4.86.0 …" not in screen  # the status is gone once installed
    assert screen.count("installed wrangler 4.86.0 in ") == 1 and "installing wrangler 4.86.0 into" in screen
    assert screen.index("installed wrangler 4.86.0") < screen.index("director: starting apply run")


@pytest.mark.slow  # two CLI runs at once (~5 s)
def test_two_directors_installing_at_once_install_once_and_both_run(fake_tools: Path, tmp_path: Path) -> None:
    # What the parallel suite does on a machine without the pin: two workers' first `--target local` runs
    # reach an empty cache together. One installs; the other waits for it and uses what it installed.
    script(fake_tools / "npm", FAKE_NPM + "open(os.environ['NPM_LOG'], 'a').write('install\\n')\n")
    env = {
        **os.environ, "PATH": f"{fake_tools}{os.pathsep}/usr/bin{os.pathsep}/bin", "FAKE_NPM_SECONDS": "2",
        "NPM_LOG": str(tmp_path / "npm.log"), "DIRECTOR_CACHE": str(tmp_path / "shared-cache"),
    }  # fmt: skip
    runs = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "probe.md").write_text(PROBE_PLAN, encoding="utf-8")
        argv = [sys.executable, "-m", "director", "apply", "probe.md", "--target", "local", "--non-interactive"]
        runs.append(forkserver.Popen(argv, cwd=tmp_path / name, env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True))  # fmt: skip
    outs = [p.communicate(timeout=180)[0] for p in runs]
    assert [p.returncode for p in runs] == [0, 0], outs
    assert (tmp_path / "npm.log").read_text().splitlines() == ["install"], outs  # npm ran once
    assert sum("installing wrangler 4.86.0 into" in o for o in outs) == 1, outs
    assert sum("using wrangler 4.86.0 (" in o for o in outs) == 1, outs
    assert sorted(p.name for p in (tmp_path / "shared-cache").iterdir()) == [".install.lock", "wrangler-4.86.0"]


def test_interrupted_install_is_not_mistaken_for_a_good_one(fake_tools: Path, tmp_path: Path) -> None:
    partial = tmp_path / "cache" / ".tmp-wrangler-4.86.0-999-dead" / "node_modules" / ".bin"
    partial.mkdir(parents=True)
    (partial / "wrangler").write_text("half written")
    found = inst.resolve_wrangler()
    assert found.source == "installed"
    assert not list((tmp_path / "cache").glob(".tmp-*"))


def test_failed_npm_install_leaves_nothing(
    fake_tools: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_NPM_FAIL", "1")
    with pytest.raises(PrerequisiteError) as caught:
        inst.resolve_wrangler()
    assert "npm ERR! network unreachable" in str(caught.value)
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == [".install.lock"]


def test_node_too_old_names_the_version(fake_tools: Path) -> None:
    script(fake_tools / "node", "print('v18.19.0')\n")
    with pytest.raises(PrerequisiteError) as caught:
        inst.resolve_wrangler()
    assert "Node.js 18.19.0 is too old" in str(caught.value)
    assert ">= 20.0.0" in str(caught.value)


def test_missing_node_and_npm(fake_tools: Path) -> None:
    (fake_tools / "npm").unlink()
    with pytest.raises(PrerequisiteError, match="npm is not on PATH"):
        inst.resolve_wrangler()
    (fake_tools / "node").unlink()
    with pytest.raises(PrerequisiteError, match=r"Node\.js is not on PATH"):
        inst.resolve_wrangler()


def test_path_wrangler_used_only_if_it_runs_and_is_new_enough(fake_tools: Path, tmp_path: Path) -> None:
    script(fake_tools / "wrangler", "print('4.70.0')\n")
    found, why = inst.find_path_wrangler()
    assert found is None and "predates" in why
    script(fake_tools / "wrangler", "import sys\nprint('Wrangler requires Node 22')\nsys.exit(1)\n")
    found, why = inst.find_path_wrangler()
    assert found is None and "Wrangler requires Node 22" in why
    script(fake_tools / "wrangler", "print('4.90.1')\n")
    found, _ = inst.find_path_wrangler()
    assert found is not None and (found.version, found.source) == ("4.90.1", "path")
    said = Said()
    assert inst.resolve_wrangler(said).source == "path"  # and the run says which wrangler it uses
    assert said.said == [(f"using wrangler 4.90.1 from PATH ({fake_tools / 'wrangler'})", False)]
    # Director's own wrapper on PATH is never taken for the real thing.
    found, _ = inst.find_path_wrangler(exclude=(fake_tools,))
    assert found is None


def test_local_block_environment(fake_tools: Path, tmp_path: Path) -> None:
    made = get_target("local", tmp_path / "state")
    assert isinstance(made, LocalTarget)
    env = made.block_environment()
    assert env.path_prepend == (str(tmp_path / "state" / "local" / "bin"),)
    assert env.env["WRANGLER_SEND_METRICS"] == "false"
    assert env.env["DIRECTOR_LOCAL_ACCOUNT"] == str(tmp_path / "state" / "local")
    wrapper = made.wrapper_path.read_text()
    assert wrapper.startswith("#!/bin/sh\n")
    assert "-m director.targets.wrangler_shim" in wrapper
    # The wrapper must never be resolved as the real wrangler.
    assert env.env["DIRECTOR_REAL_WRANGLER"] != str(made.wrapper_path)


# --- the seed plan end to end (real wrangler 4.86 + workerd) ------------------------------------------


def plan_section(heading: str) -> str:
    """The text of one `## …` section of the seed plan."""
    text = SEED.read_text(encoding="utf-8")
    start = text.index(f"\n## {heading}")
    end = text.find("\n## ", start + 1)
    return text[start:end]


def bash_blocks(heading: str) -> list[str]:
    """The bash blocks of a section, as written in the plan."""
    return re.findall(r"```bash\n(.*?)```", plan_section(heading), re.S)


def plan_config() -> str:
    """§2's config, as the plan shows it."""
    match = re.search(r"```jsonc\n(.*?)```", plan_section("2. Bindings"), re.S)
    assert match
    return match.group(1)


class Plan:
    """Runs the seed plan's own blocks through the local target's wrapper."""

    def __init__(self, tmp: Path) -> None:
        self.project = tmp / "project"
        self.project.mkdir()
        self.target = LocalTarget(tmp / "state")
        self.target.check_prerequisites()
        block_env = self.target.block_environment()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CLOUDFLARE_", "CF_"))}
        env.pop("CI", None)
        env.update(block_env.env)
        env["PATH"] = os.pathsep.join([*block_env.path_prepend, env.get("PATH", "")])
        self.env = env
        self.variables = bash_blocks("0. Variables")[0]

    def bash(
        self, block: str, *, prelude: str = "", timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        """One block in a fresh bash with §0 re-applied (Director restores the session the same way)."""
        return subprocess.run(
            ["bash", "-c", f"{self.variables}\n{prelude}\n{block}"],
            cwd=self.project,
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def ok(self, block: str, *, prelude: str = "", timeout: float = 120) -> str:
        """Run a block that must succeed; return stdout+stderr."""
        result = self.bash(block, prelude=prelude, timeout=timeout)
        output = result.stdout + result.stderr
        assert result.returncode == 0, output
        return output

    def session_pgids(self) -> list[int]:
        """Every dev session group the shim ever started in this account."""
        events, _ = self.target.account.read_events()
        return [e["pgid"] for e in events if e["kind"] == "session-start"]

    def leftovers(self) -> list[int]:
        """Live processes in any of those groups (zombies excluded)."""
        return [pid for pgid in self.session_pgids() for pid in group_members(pgid)]


@pytest.fixture(scope="module")
def real_wrangler() -> inst.Wrangler:
    """A real wrangler >= 4.79 (the cached/installed pin on Node 20)."""
    return inst.resolve_wrangler()


@pytest.fixture
def plan(tmp_path: Path, real_wrangler: inst.Wrangler) -> Iterator[Plan]:
    harness = Plan(tmp_path)
    yield harness
    # Whatever a failing test left behind: stop every group this account ever started.
    harness.target.stop_all()
    for pgid in harness.session_pgids():
        stop_group(pgid, grace=3.0)


def write_sources(plan: Plan, *, workers_dev: bool = True) -> None:
    """§1 by running the plan's own block (its heredoc writes the worker); §2 from the plan's jsonc."""
    plan.ok(bash_blocks("1. Workflow class")[0])
    assert "workflow class written" in plan.ok(bash_blocks("1. Workflow class")[1])
    config = plan_config()
    if not workers_dev:
        config = config.replace('"workers_dev": true', '"workers_dev": false')
    (plan.project / "orders.jsonc").write_text(config)


@pytest.mark.slow
def test_seed_plan_contract_and_teardown(plan: Plan) -> None:
    started = time.monotonic()
    write_sources(plan)
    assert "--dry-run: exiting now." in plan.ok(bash_blocks("2. Bindings")[0])

    deploy_block, registered_block = bash_blocks("3. Deploy")
    deploy_started = time.monotonic()
    deployed = plan.ok(deploy_block)
    deploy_s = time.monotonic() - deploy_started
    url_match = re.search(r"^  (http://127\.0\.0\.1:\d+)$", deployed, re.M)
    assert url_match, deployed  # workers_dev: true → the URL line, like real wrangler's workers.dev one
    url = url_match.group(1)
    assert "Uploaded orders-dev (" in deployed and "  workflow: orders-wf-dev" in deployed
    assert re.search(r"^Current Version ID: [0-9a-f-]{36}$", deployed, re.M)
    assert "workflow orders-wf-dev registered" in plan.ok(registered_block)

    trigger_block, event_block = bash_blocks("4. Acceptance verify")
    placeholder = '"https://${WORKER}.<subdomain>.workers.dev"'
    assert placeholder in trigger_block
    # Director realises §3's URL into this line; the test does the same with the printed one.
    http_trigger = trigger_block.replace(placeholder, f'"{url}"')
    for prelude, block in (("", http_trigger), ("export TRIGGER=cli", trigger_block)):
        parked = plan.ok(block, prelude=prelude)
        if not prelude:
            assert "front door: /status/:id answers" in parked
        for line in ("3a: parked on waitForEvent", "2a: reserve-inventory", "2b: earlier steps not re-run"):
            assert line in parked
        done = plan.ok(event_block, prelude=prelude)
        assert "3b: resumed → Completed" in done
        assert "1: output carries memoized value (reservedOnAttempt=2)" in done

    listed = plan.ok('command wrangler deployments list --name "$WORKER"')
    assert "Message:  Source=workflow.cloudflare.md PlanVersion=2026-07-05" in listed

    cleanup_block, verify_block = bash_blocks("Teardown")
    torn = plan.ok(cleanup_block)
    assert "Successfully deleted orders-dev" in torn
    verified = plan.ok(verify_block)
    assert "workflow gone" in verified
    # Real wrangler's answer for a missing Worker is the API's 10007 error, which contains neither
    # "not found" nor "no deployments": the plan's own check then says "inconclusive", as it would live.
    assert "worker check inconclusive" in verified
    gone = plan.bash('command wrangler deployments list --name "$WORKER"')
    assert gone.returncode == 1
    assert "This Worker does not exist on your account. [code: 10007]" in gone.stderr

    assert plan.leftovers() == []
    assert plan.target.sessions() == []
    print(f"\ndeploy to ready {deploy_s:.1f} s; whole plan run {time.monotonic() - started:.1f} s")


@pytest.mark.slow
def test_dead_session_is_drift_and_redeploy_heals(plan: Plan) -> None:
    write_sources(plan, workers_dev=False)
    deploy_block, registered_block = bash_blocks("3. Deploy")
    deployed = plan.ok(deploy_block)
    assert "http://" not in deployed  # workers_dev: false → no URL line
    assert "workflow orders-wf-dev registered" in plan.ok(registered_block)
    (session,) = plan.target.sessions()
    assert session.alive and session.healthy and session.pid is not None

    os.kill(session.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while pid_alive(session.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    (dead,) = plan.target.sessions()
    assert not dead.alive and not dead.healthy
    assert "registered" not in plan.bash(registered_block).stdout  # the plan's verify sees the drift

    plan.ok(deploy_block)
    (healed,) = plan.target.sessions()
    assert healed.alive and healed.healthy and healed.pid != session.pid
    assert healed.port == session.port  # the orphaned children were stopped, so the port came back
    assert "workflow orders-wf-dev registered" in plan.ok(registered_block)

    assert "Successfully deleted orders-dev" in plan.ok('command wrangler delete --config "$CONFIG"')
    assert plan.leftovers() == []
    kinds = [e["kind"] for e in plan.target.drain_events()]
    assert kinds.count("session-start") == 2 and kinds[-1] == "delete"


@pytest.mark.slow
def test_deploy_fails_exactly_like_real_wrangler(plan: Plan) -> None:
    write_sources(plan)
    config = plan.project / "orders.jsonc"
    good = config.read_text()
    deploy_block = bash_blocks("3. Deploy")[0]

    config.write_text(good.replace('"class_name": "OrderWorkflow"', '"class_name": "NoSuchWorkflow"'))
    wrong_class = plan.bash(deploy_block)
    assert wrong_class.returncode == 1
    assert "which are not exported in your entrypoint file: NoSuchWorkflow" in wrong_class.stderr

    config.write_text(good)
    source = plan.project / "src" / "orders-workflow.js"
    source.write_text(source.read_text() + "\nexport const broken = ;\n")
    syntax = plan.bash(deploy_block)
    assert syntax.returncode == 1
    assert "Build failed" in syntax.stdout + syntax.stderr

    assert plan.target.sessions() == [] and plan.session_pgids() == []  # nothing was started


def test_a_recorded_session_is_stopped_by_its_mark_never_by_a_group_id_another_program_took(tmp_path: Path) -> None:
    """The account file keeps a dev session's process group for later: by then (its group ended, or after a
    reboot) that id may be another program's. Only processes carrying the session's mark are signalled."""

    def group(mark: str | None) -> subprocess.Popen[bytes]:
        env = {"PATH": os.environ["PATH"], **({SESSION_VAR: mark} if mark else {})}
        # a leader and a child in a new session, as `wrangler dev` and its workerd
        return subprocess.Popen(["sh", "-c", "sleep 60 & exec sleep 60"], env=env, start_new_session=True)

    account = LocalAccount(tmp_path / "account")
    stranger, ours = group(None), group("api@0123")
    try:
        deadline = time.monotonic() + 30
        while len(group_members(ours.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        # a record whose group id is now a stranger's: with a mark, or (an older record) without one
        for mark in ("api@0123", None):
            rec = WorkerRecord(name="api", pid=stranger.pid, pgid=stranger.pid, proc_start="1", session_mark=mark)
            assert not account.stop_session(rec, reason="test")
            assert stranger.poll() is None and len(group_members(stranger.pid)) == 2
        rec = WorkerRecord(name="api", pid=ours.pid, pgid=ours.pid, proc_start="1", session_mark="api@0123")
        members = group_members(ours.pid)
        assert account.stop_session(rec, reason="test")
        assert ours.wait(timeout=30) is not None
        assert not any(pid_alive(p) for p in members)  # the leader and its child
        assert rec.pgid is None and rec.session_mark is None
    finally:
        for p in (stranger, ours):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()

"""`--target cloudflare` (the default) runs the plan's wrangler commands exactly as written.

A recording fake `wrangler` (and `curl`, for the http front door) sits first on PATH. It appends each
argv and cwd as one JSON line to a log and answers like wrangler would, from a small state file (deployed?
event sent?), so every block of the seed plan succeeds. The expected command list is derived from the plan
text: a reference runner executes the plan's own bash blocks with plain `bash -c` (observe → act →
verify per section, the order DESIGN.md prescribes for a first apply) against a second, identical fake,
and the two recordings must be equal.

Also: no wrangler on PATH is exit 6 with a hint, and the API token never lands anywhere Director writes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests import forkserver
from tests.jsonschemas import validated
from tests.pristine import SEED

# slow: end to end through the real CLI, many runs; CI runs it with the rest
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
PLAN_NAME = SEED.name
TOKEN = "test-token"
TIMEOUT_S = 120.0

FAKE_WRANGLER = r"""
import json, os, sys, uuid
from pathlib import Path

argv = sys.argv[1:]
with open(os.environ["FAKE_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps({"tool": "wrangler", "argv": argv, "cwd": os.getcwd()}) + "\n")
state_path = Path(os.environ["FAKE_STATE"])
state = json.loads(state_path.read_text()) if state_path.exists() else {}
def save():
    state_path.write_text(json.dumps(state))
def leak():
    if os.environ.get("FAKE_LEAK"):  # a careless tool echoing its credentials
        token = os.environ.get("CLOUDFLARE_API_TOKEN", "")
        print(f"debug: authenticating with token {token}")
        print(f"debug: Authorization: Bearer {token}", file=sys.stderr)

pos = [a for a in argv if not a.startswith("-")]
wf, worker = os.environ.get("WF", "?"), os.environ.get("WORKER", "?")
print("\n ⛅️ wrangler 4.86.0\n───────────────────")
if argv == ["--version"]:
    print("4.86.0")
elif pos[:1] == ["whoami"]:
    print("You are logged in with an API Token.")
elif pos[:1] == ["deploy"] and "--dry-run" in argv:
    print("Total Upload: 3.10 KiB / gzip: 1.05 KiB")
    print("Your Worker has access to the following bindings:")
    print(f"env.WF ({os.environ.get('CLASS', '?')})  Workflow")
    print("--dry-run: exiting now.")
elif pos[:1] == ["deploy"]:
    leak()
    state.update(deployed=True, wf_deleted=False, event=False)
    save()
    print(f"Uploaded {worker} (1.02 sec)")
    print(f"Deployed {worker} triggers (0.41 sec)")
    if os.environ.get("TRIGGER") == "http":
        print(f"  https://{worker}.example.workers.dev")
    print(f"  workflow: {wf}")
    print(f"Current Version ID: {uuid.UUID(int=1)}")
elif pos[:2] == ["workflows", "list"]:
    if state.get("deployed") and not state.get("wf_deleted"):
        print("Showing 1 workflow from page 1:")
        print(f"│ {wf} │ {worker} │ OrderWorkflow │")
    else:
        print("▲ [WARNING] There are no deployed Workflows in this account", file=sys.stderr)
elif pos[:2] == ["workflows", "trigger"]:
    print('🚀 Workflow instance "inst-1" has been queued successfully')
elif pos[:3] == ["workflows", "instances", "describe"]:
    print("Describing latest instance:")
    if state.get("event"):
        print("Status:                  ✅ Completed")
        print('    Output: "{\\"orderId\\":\\"A-1\\",\\"reservedOnAttempt\\":2,\\"status\\":\\"completed\\"}"')
    else:
        print("Status:                  ▶ Running")
        print("  reserve-inventory-1  🎯 Step")
        print("    │ ❌ Error   │ Error: transient (attempt 1) │")
        print("    │ ✅ Success │                              │")
        print("  await-approval-1  👀 Waiting for event")
elif pos[:3] == ["workflows", "instances", "send-event"]:
    state["event"] = True
    save()
    print(f'📤 The event with type "approval" was sent to the instance "inst-1" from {wf}')
elif pos[:3] == ["workflows", "instances", "list"]:
    print("│ Id     │ Status     │")
    print("│ inst-1 │ ✅ Completed │")
elif pos[:3] == ["workflows", "instances", "terminate"]:
    print('🥷 The instance "inst-1" from workflow "%s" was terminated successfully' % wf)
elif pos[:2] == ["workflows", "delete"]:
    state["wf_deleted"] = True
    save()
    print(f'✅ Workflow "{wf}" removed successfully.')
elif pos[:1] == ["delete"]:
    state.update(deployed=False)
    save()
    print(f"? Are you sure you want to delete {worker}? This action cannot be undone.")
    print("🤖 Using fallback value in non-interactive context: yes")
    print(f"Successfully deleted {worker}")
elif pos[:2] == ["deployments", "list"]:
    if state.get("deployed"):
        print("Created:     2026-07-05T10:00:00.000Z\nAuthor:      ops@example.com\nSource:      Upload")
    else:
        print("no deployments")
"""

FAKE_CURL = r"""
import json, os, sys
with open(os.environ["FAKE_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps({"tool": "curl", "argv": sys.argv[1:], "cwd": os.getcwd()}) + "\n")
print(json.dumps({"id": "inst-1", "status": "running"}))
"""


def _script(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!{sys.executable}\n{body}", encoding="utf-8")
    path.chmod(0o755)


def path_without_wrangler() -> str:
    """The test process's PATH minus every directory that holds a `wrangler`."""
    return os.pathsep.join(
        d
        for d in os.environ.get("PATH", "").split(os.pathsep)
        if d and not os.path.exists(os.path.join(d, "wrangler"))
    )


@dataclass
class Fakes:
    """A fake `wrangler` + `curl` and where they record (one log and one state per use)."""

    bin: Path
    log: Path
    state: Path

    @classmethod
    def make(cls, root: Path) -> Fakes:
        _script(root / "bin" / "wrangler", FAKE_WRANGLER)
        _script(root / "bin" / "curl", FAKE_CURL)
        return cls(root / "bin", root / "calls.jsonl", root / "state.json")

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CLOUDFLARE_", "CF_"))}
        env.update(
            PATH=f"{self.bin}{os.pathsep}{path_without_wrangler()}",
            FAKE_LOG=str(self.log),
            FAKE_STATE=str(self.state),
            CLOUDFLARE_API_TOKEN=TOKEN,
            CI="1",
            NO_COLOR="1",
            COLUMNS="200",
        )
        env.update(extra)
        return env

    def calls(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines()]


def director(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return forkserver.run(
        [sys.executable, "-m", "director", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


# --- the reference: the plan's blocks, read straight from its text, run with plain bash ---------------


def sections(text: str) -> dict[str, str]:
    """`## ` heading -> body (fenced code is skipped when looking for headings)."""
    out: dict[str, str] = {}
    heading: str | None = None
    body: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("## "):
            if heading is not None:
                out[heading] = "\n".join(body)
            heading, body = line[3:].strip(), []
        elif heading is not None:
            body.append(line)
    if heading is not None:
        out[heading] = "\n".join(body)
    return out


def bash_blocks(body: str) -> list[str]:
    return re.findall(r"^```bash\n(.*?)^```$", body, re.M | re.S)


def section(text: str, prefix: str) -> str:
    (body,) = [b for h, b in sections(text).items() if h.startswith(prefix)]
    return body


def is_verify(block: str) -> bool:
    """The plan marks its observation blocks with a leading `# ✔` comment."""
    return block.lstrip().startswith("# ✔")


def reference_calls(text: str, trigger: str, root: Path) -> list[dict[str, Any]]:
    """What a first apply then a teardown run, per DESIGN.md, executed by bash with the same fakes."""
    fakes = Fakes.make(root)
    workspace = root / "workspace"
    workspace.mkdir()
    env = fakes.env()
    variables = bash_blocks(section(text, "0. Variables"))[0] + f'\nexport TRIGGER="{trigger}"\n'
    realized: dict[str, str] = {}

    def run(block: str) -> str:
        for placeholder, value in realized.items():
            block = block.replace(placeholder, value)
        done = subprocess.run(
            ["bash", "-c", variables + block],
            cwd=workspace,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        return done.stdout + done.stderr

    def observe_act_verify(body: str, before_act: str = "") -> str:
        blocks = bash_blocks(body)
        verify = [b for b in blocks if is_verify(b)]
        out = "".join(run(b) for b in verify)  # observe first (never in sync on a fresh journal)
        # the plan's first act: its ✔ section's checks once before it, in the world that holds nothing yet
        # (docs/verify-semantics.md, "✔ sections"; the seed's §4 writes no file, so every block of it runs)
        out += "".join(run(b) for b in bash_blocks(before_act))
        out += "".join(run(b) for b in blocks if not is_verify(b))  # act
        return out + "".join(run(b) for b in verify)  # verify

    for b in bash_blocks(section(text, "Requires-discovery")):
        run(b)
    observe_act_verify(section(text, "1. "), before_act=section(text, "4. "))
    observe_act_verify(section(text, "2. "))
    deployed = observe_act_verify(section(text, "3. "))
    # §4's `URL="https://${WORKER}.<subdomain>.workers.dev"   # realized in §3`: the URL §3 printed.
    url = re.search(r"^\s+(https://\S+)$", deployed, re.M)
    if url:
        realized['"https://${WORKER}.<subdomain>.workers.dev"'] = f'"{url.group(1)}"'
    for b in bash_blocks(section(text, "4. ")):
        run(b)
    observe_act_verify(section(text, "Teardown"))
    return [normalized(c, str(workspace)) for c in fakes.calls()]


def normalized(call: dict[str, Any], workspace: str) -> dict[str, Any]:
    """A recorded call with the (run-specific) workspace path written as `<workspace>`."""
    return {"tool": call["tool"], "argv": [a.replace(workspace, "<workspace>") for a in call["argv"]]}


# --- tests -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("trigger", ["cli", "http"])
def test_cloudflare_target_runs_the_plans_commands_unchanged(tmp_path: Path, trigger: str) -> None:
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(SEED, project / PLAN_NAME)
    fakes = Fakes.make(tmp_path / "fakes")
    env = fakes.env()
    events = project / "events.jsonl"

    applied = director(
        project,
        env,
        "apply",
        PLAN_NAME,
        "--set",
        f"trigger={trigger}",
        "--auto-approve",
        "--non-interactive",
        "--plain",
        "--events",
        str(events),
    )
    assert applied.returncode == 0, applied.stdout[-4000:] + applied.stderr[-2000:]
    n_apply = len(fakes.calls())
    torn = director(
        project,
        env,
        "teardown",
        PLAN_NAME,
        "--approve",
        "teardown",
        "--non-interactive",
        "--plain",
        "--events",
        str(events),
    )
    # The seed's teardown verify exits 0 whatever it finds; here (this fake account answers "not found" for a
    # deleted Worker, as the plan's grep expects) both its lines take another path with the teardown than
    # observed before it: gone by contrast (docs/verify-semantics.md), never by the words "gone".
    assert torn.returncode == 0, torn.stdout[-4000:] + torn.stderr[-2000:]
    assert "unconfirmed" not in torn.stdout and "torn down" in torn.stdout

    workspace = str((project / ".director" / PLAN_NAME / "workspace").resolve())
    calls = fakes.calls()
    from_blocks = [normalized(c, workspace) for c in calls if c["cwd"] == workspace]
    # Director's own calls are read-only prerequisite probes, made before that invocation's first block.
    for run_calls in (calls[:n_apply], calls[n_apply:]):
        own = [c["argv"] for c in run_calls if c["cwd"] != workspace]
        assert own and all(a in (["--version"], ["whoami"]) for a in own), own
        assert [c["argv"] for c in run_calls[: len(own)]] == own

    expected = reference_calls(SEED.read_text(encoding="utf-8"), trigger, tmp_path / "reference")
    assert from_blocks == expected
    assert any(c["argv"][:1] == ["deploy"] and "--dry-run" not in c["argv"] for c in from_blocks)
    if trigger == "http":
        # §3's realized URL reached §4's front-door calls unchanged.
        assert ["-s", "https://orders-dev.example.workers.dev/status/inst-1"] in [
            c["argv"] for c in from_blocks
        ]

    text = (project / PLAN_NAME).read_text(encoding="utf-8")
    assert "status:        gone" in text
    assert_token_nowhere(project, [applied.stdout, applied.stderr, torn.stdout, torn.stderr], env)


def assert_token_nowhere(project: Path, outputs: list[str], env: dict[str, str]) -> None:
    """Not in the plan, any file Director wrote (journal + WAL, workspace, events), the audit, the output."""
    audit = director(project, env, "audit", PLAN_NAME, "--json")
    status = director(project, env, "status", PLAN_NAME, "--json")
    assert audit.returncode == 0 and status.returncode == 0, audit.stderr + status.stderr
    validated(audit.stdout)
    validated(status.stdout)
    shown = [*outputs, audit.stdout, audit.stderr, status.stdout, status.stderr]
    assert not [i for i, text in enumerate(shown) if TOKEN in text]
    journal = project / ".director" / PLAN_NAME / "journal.sqlite3"
    assert journal.exists()
    leaked = [str(p) for p in project.rglob("*") if p.is_file() and TOKEN.encode() in p.read_bytes()]
    assert leaked == []


def test_a_wrangler_that_prints_the_token_is_redacted_everywhere(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(SEED, project / PLAN_NAME)
    fakes = Fakes.make(tmp_path / "fakes")
    env = fakes.env(FAKE_LEAK="1")
    applied = director(
        project,
        env,
        "apply",
        PLAN_NAME,
        "--set",
        "trigger=cli",
        "--non-interactive",
        "--events",
        str(project / "events.jsonl"),
    )
    assert applied.returncode == 0, applied.stdout[-4000:] + applied.stderr[-2000:]
    assert "debug: authenticating with token ***" in applied.stdout  # shown, but masked
    assert_token_nowhere(project, [applied.stdout, applied.stderr], env)


def test_no_wrangler_on_path_exits_6_naming_it_and_suggesting_local(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(SEED, project / PLAN_NAME)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLOUDFLARE_", "CF_"))}
    env.update(PATH=path_without_wrangler(), CLOUDFLARE_API_TOKEN=TOKEN, CI="1", NO_COLOR="1", COLUMNS="200")
    assert shutil.which("wrangler", path=env["PATH"]) is None
    r = director(project, env, "apply", PLAN_NAME, "--non-interactive")
    out = r.stdout + r.stderr
    assert r.returncode == 6, out
    assert re.search(r"`?wrangler`? is not on PATH", out), out
    assert "--target local" in out
    assert TOKEN not in out
    assert (project / PLAN_NAME).read_text(encoding="utf-8") == SEED.read_text(encoding="utf-8")

"""A real Cloudflare family on `--target local` (real wrangler 4.86 + workerd), through the real CLI.

The seed (`workflow.cloudflare.md`, `TRIGGER=binding`) and its consumer (`checkout.cloudflare.md`: a Worker
that binds the seed's Workflow cross-script) are applied as one family, in whatever order the command line
gives them. Checked in the world, not in Director's word: the consumer's front door starts an instance
through its binding, and the Workflow's own `wrangler workflows instances list/describe` (the real wrangler,
against the dev session that serves the binding) shows it completed; the seed's teardown alone is refused
while the consumer is live, its session untouched; the family teardown stops both sessions (ports closed,
no process of the test's directory left).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from director.targets.install import resolve_wrangler
from director.targets.local import LocalTarget, stop_group
from tests.familyplans import events, of
from tests.jsonschemas import validated
from tests.pristine import PRISTINE
from tests.test_e2e_local import processes_of, wait_until

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
SEED, CONSUMER = "workflow.cloudflare.md", "checkout.cloudflare.md"
TIMEOUT_S = 420.0


class Family:
    """A temp directory with copies of both committed plans, and the CLI run against it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        for name in (SEED, CONSUMER):
            (root / name).write_text((PRISTINE / "plans" / name).read_text(encoding="utf-8"), encoding="utf-8")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("CLOUDFLARE_", "CF_", "DIRECTOR_"))}
        # The dev registry wrangler sessions share is per user by default: this test's sessions get their own.
        self.env.update(CI="1", NO_COLOR="1", COLUMNS="240", WRANGLER_SEND_METRICS="false",
                        WRANGLER_REGISTRY_PATH=str(root / "registry"))  # fmt: skip
        self.started: list[int] = []

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "director", *args],
            cwd=self.root, env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip
        self.started.append(proc.pid)
        try:
            out, err = proc.communicate(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            stop_group(proc.pid, grace=3.0)
            out, err = proc.communicate()
            raise AssertionError(f"director {' '.join(args)} did not finish:\n{out[-4000:]}\n{err[-2000:]}") from None
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    def sessions(self) -> dict[str, dict[str, Any]]:
        r = self.run("status", SEED, CONSUMER, "--json")
        assert r.returncode == 0, r.stderr
        doc = validated(r.stdout)
        return {s["name"]: s for p in doc["plans"] for s in p["sessions"]}

    def stop_everything(self) -> None:
        for name in (SEED, CONSUMER):
            state = self.root / ".director" / name
            if (state / "local").exists():
                with contextlib.suppress(Exception):
                    LocalTarget(state).stop_all()
        for line in processes_of(self.root):
            with contextlib.suppress(ProcessLookupError, PermissionError, ValueError):
                os.kill(int(line.split(":", 1)[0]), 9)


@pytest.fixture
def family(tmp_path: Path) -> Iterator[Family]:
    (tmp_path / "fam").mkdir()
    f = Family(tmp_path / "fam")
    try:
        yield f
    finally:
        f.stop_everything()


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1.0)
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_the_seed_and_its_consumer_as_a_family(family: Family) -> None:
    ev = family.root / "apply.jsonl"
    r = family.run("apply", CONSUMER, SEED, "--target", "local", "--set", "trigger=binding", "--auto-approve",
                   "--non-interactive", "--plain", "--events", str(ev))  # fmt: skip
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr
    evs = events(ev)
    assert evs[0]["type"] == "family.start" and evs[0]["plans"] == [SEED, CONSUMER]
    assert of(evs, SEED, "run.end")[-1]["ts"] <= of(evs, CONSUMER, "run.start")[0]["ts"]
    said = "".join(str(e["text"]) for e in of(evs, CONSUMER, "step.output"))
    m = re.search(r"1: instance ([0-9a-f-]{36}) started through the binding", said)
    assert m, said[-3000:]
    instance = m.group(1)
    # what the consumer's blocks received from the seed's Live State
    cfg = json.loads(re.sub(r"//[^\n]*", "", (family.root / ".director" / CONSUMER / "workspace" / "checkout.jsonc")
                            .read_text(encoding="utf-8")))  # fmt: skip
    assert cfg["workflows"] == [
        {"name": "orders-wf-dev", "binding": "ORDERS", "class_name": "OrderWorkflow", "script_name": "orders-dev"}
    ]
    # the Workflow's own record, asked of the real wrangler against the session that serves the binding
    sessions = family.sessions()
    assert set(sessions) == {"orders-dev", "checkout-dev"} and all(s["alive"] for s in sessions.values())
    port = sessions["checkout-dev"]["port"]
    real = str(resolve_wrangler(None).path)
    env = {**family.env, "PATH": os.environ.get("PATH", "")}
    listed = subprocess.run([real, "workflows", "instances", "list", "orders-wf-dev", "--local", "--port", str(port)],
                            capture_output=True, text=True, env=env, timeout=120, check=False)  # fmt: skip
    assert instance in listed.stdout, listed.stdout + listed.stderr
    described = subprocess.run([real, "workflows", "instances", "describe", "orders-wf-dev", instance, "--local",
                                "--port", str(port)], capture_output=True, text=True, env=env, timeout=120,
                               check=False)  # fmt: skip
    assert re.search(r"Status:\s+✅ Completed", described.stdout), described.stdout + described.stderr
    assert "till" in described.stdout, described.stdout  # the approval the consumer sent through the binding

    # the seed alone: refused while the consumer is live, nothing run, its session untouched
    r = family.run("teardown", SEED, "--target", "local", "--approve", "teardown", "--non-interactive", "--plain")
    assert r.returncode == 9, r.stdout + r.stderr
    assert f"{CONSUMER} (workflow) still requires" in r.stderr
    assert family.sessions()["orders-dev"]["pid"] == sessions["orders-dev"]["pid"]
    assert _port_open(sessions["orders-dev"]["port"])

    # the family: the consumer first, then the seed; both sessions gone from the machine
    ev = family.root / "teardown.jsonl"
    r = family.run("teardown", ".", "--target", "local", "--approve", "teardown", "--non-interactive", "--plain",
                   "--events", str(ev))  # fmt: skip
    # the seed's teardown verify cannot confirm on its own (docs/verify-semantics.md): 10, the world decides
    assert r.returncode in (0, 10), r.stdout[-6000:] + r.stderr
    evs = events(ev)
    assert of(evs, CONSUMER, "run.end")[-1]["ts"] <= of(evs, SEED, "run.start")[0]["ts"]
    assert family.sessions() == {}
    for s in sessions.values():
        wait_until(lambda s=s: not _port_open(s["port"]), 15, f"port {s['port']} to close")
    with contextlib.suppress(AssertionError):
        wait_until(lambda: not processes_of(family.root), 10, "processes to exit")
    assert processes_of(family.root) == []

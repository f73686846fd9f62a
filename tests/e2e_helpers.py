"""Shared by the example-plan tests: the plan list, the upstream fixture, the CLI driver, world probes.

Nothing here asks Director what happened in the world: the probes read files, sockets, /proc and tmux
directly. Director's own word is used only where the test is *about* Director (exit codes, `audit --json`).
"""

from __future__ import annotations

import hashlib
import os
import re
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests import forkserver
from tests.jsonschemas import validated
from tests.plainbash import kill_processes_under
from tests.pristine import EXAMPLES

ROOT = Path(__file__).resolve().parent.parent

#: The plans written as proof material (the last three for issue 24: each has a check that speaks only through
#: its messages and a failure-branch check), and the two examples that were there before them.
NEW_PLANS = (
    "node-service.local.md",
    "sqlite-report.local.md",
    "git-deploy.local.md",
    "venv-worker.local.md",
    "kv-service.local.md",
    "snapshot-job.local.md",
    "local-ca.local.md",
    "metrics-exporter.local.md",
    "log-pipeline.local.md",
    # issue 34: new domains and voices (a change ticket, terse, Italian and chatty)
    "mail-relay.local.md",
    "feature-flags.local.md",
    "battito.local.md",
)
OLD_PLANS = ("database.local.md", "static-site.local.md")

#: Example plans that bind a fixed port whatever their knobs (static-site serves on 8765 in every ENV), and
#: the xdist group of every test that applies one: those tests run on one worker, one after the other, so
#: that two never race for the port when the suite runs in parallel (tests/conftest.py).
FIXED_PORT_GROUPS = {"static-site.local.md": "port-8765"}


def plan_param(name: str) -> Any:
    """`name` as a test or fixture parameter, in the group of its fixed port if it has one."""
    group = FIXED_PORT_GROUPS.get(name)
    return pytest.param(name, marks=pytest.mark.xdist_group(group)) if group else name

CLI_TIMEOUT_S = 180.0


# --- the upstream the SQLite report plan discovers ----------------------------------------------------

SALES_ROWS = (
    # customer, amount_cents, currency, status
    ("acme", 12_000, "EUR", "paid"),
    ("acme", 3_050, "EUR", "paid"),
    ("bolt", 40_000, "EUR", "paid"),
    ("bolt", 9_999, "EUR", "refunded"),
    ("cider", 2_500, "EUR", "paid"),
    ("acme", 70_000, "USD", "paid"),
    ("dune", 15_500, "USD", "paid"),
    ("dune", 1_000, "USD", "pending"),
    ("cider", 8_800, "USD", "paid"),
)


def make_sales_db(workdir: Path) -> Path:
    """The shop's database, as its own plan would have left it: `upstream/sales.sqlite3` under `workdir`."""
    db = workdir / "upstream" / "sales.sqlite3"
    db.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(db) as c:
        c.execute(
            "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT NOT NULL, amount_cents INTEGER NOT NULL,"
            " currency TEXT NOT NULL, status TEXT NOT NULL)"
        )
        c.executemany(
            "INSERT INTO orders(customer, amount_cents, currency, status) VALUES (?, ?, ?, ?)", SALES_ROWS
        )
    c.close()
    return db


def expected_revenue(currency: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for customer, cents, cur, status in SALES_ROWS:
        if cur == currency and status == "paid":
            out[customer] = out.get(customer, 0) + cents
    return out


def setup_workdir(plan: str, workdir: Path) -> None:
    """What must exist before a plan is applied (only the report plan needs something: its upstream)."""
    workdir.mkdir(parents=True, exist_ok=True)
    if plan == "sqlite-report.local.md":
        make_sales_db(workdir)


# --- the plan file -----------------------------------------------------------------------------------


def split_live_state(text: str) -> tuple[str, str, str]:
    """(before, `## Live State` section, after): the ledger is the only part Director may rewrite."""
    start = text.index("\n## Live State\n")
    end = text.index("\n## ", start + 1)
    return text[:start], text[start:end], text[end:]


def outside_live_state(text: str) -> tuple[str, str]:
    before, _, after = split_live_state(text)
    return before, after


def yaml_field(live_state: str, key: str) -> str:
    m = re.search(rf"^{re.escape(key)}:\s*(.*?)\s*(?:#.*)?$", live_state, re.M)
    return m.group(1).strip().strip("'\"") if m else ""


# --- world probes ------------------------------------------------------------------------------------


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def identity(path: Path) -> tuple[int, int]:
    """(inode, mtime_ns): a file that was rewritten or re-created has a different identity."""
    st = path.stat()
    return st.st_ino, st.st_mtime_ns


def pid_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[:1] not in ([b"Z"], [b"X"])


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def read_pid(path: Path) -> int:
    return int(path.read_text().split()[0])


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as s:
        s.settimeout(1.0)
        return s.connect_ex((host, port)) == 0


def http_get(url: str, timeout: float = 3.0) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def wait_for(predicate: Any, timeout: float = 5.0, step: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(step)


# --- Director, through its CLI -------------------------------------------------------------------------


@dataclass
class Result:
    rc: int
    out: str

    def line(self, *needles: str) -> str:
        """The first output line containing any needle (the line that shows a cause), else the last line."""
        lines = [ln.strip() for ln in self.out.splitlines() if ln.strip()]
        for needle in needles:
            for ln in lines:
                if needle in ln:
                    return ln
        return lines[-1] if lines else ""

    def cause(self) -> str:
        return self.line("failed:", "✗", "refused", "drift:", "error", "inconclusive", "Error")


class Director:
    """`python -m director` against one plan copy, state dir and workdir inside the test's tmp dir."""

    def __init__(self, root: Path, plan_name: str) -> None:
        self.root = root
        self.plan = root / plan_name
        self.state = root / "state"
        self.work = root / "work"
        self.original = (EXAMPLES / plan_name).read_text(encoding="utf-8")
        root.mkdir(parents=True, exist_ok=True)
        self.plan.write_text(self.original, encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CLOUDFLARE_", "CF_", "TMUX"))}
        env.update(CI="1", NO_COLOR="1", COLUMNS="200")
        self.env = env

    @property
    def text(self) -> str:
        return self.plan.read_text(encoding="utf-8")

    def run(self, *args: str, timeout: float = CLI_TIMEOUT_S) -> Result:
        try:
            done = forkserver.run(
                [sys.executable, "-m", "director", *args], cwd=self.root, env=self.env, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True, timeout=timeout,
            )  # fmt: skip
        except subprocess.TimeoutExpired as e:  # its process group was killed
            out = e.stdout if isinstance(e.stdout, str) else ""
            return Result(124, out + f"\n[test] director {' '.join(args)} timed out after {timeout:.0f} s")
        return Result(done.returncode, done.stdout)

    def common(self) -> list[str]:
        return [str(self.plan.name), "--plain", "--state-dir", str(self.state), "--workdir", str(self.work)]

    def apply(self, sets: list[str], approvals: list[str]) -> Result:
        return self.run("apply", *self.common(), "--non-interactive", *sets, *approvals)

    def check(self) -> Result:
        """`check` takes no --set (it reads the inputs of the last run) and never prompts."""
        return self.run("check", *self.common())

    def teardown(self, sets: list[str]) -> Result:
        return self.run("teardown", *self.common(), "--non-interactive", *sets, "--approve", "teardown")

    def audit(self) -> dict[str, Any]:
        r = self.run("audit", self.plan.name, "--state-dir", str(self.state), "--json", timeout=60)
        assert r.rc == 0, r.out[-3000:]
        data: dict[str, Any] = validated(r.out)
        return data

    def last_run_steps(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The latest run and its steps, from `director audit --json`."""
        data = self.audit()
        run = max(data["runs"], key=lambda r: r["id"])
        return run, [s for s in data["steps"] if s["run_id"] == run["id"]]

    def acts_in_last_run(self) -> list[str]:
        """Act steps of the latest run, §0 excepted (the variable block is re-run by every new run)."""
        _, steps = self.last_run_steps()
        return [
            f"{s['step_key']}:{s['state']}" for s in steps if s["role"] == "act" and s["section_key"] != "0"
        ]

    def assert_only_live_state_changed(self) -> None:
        assert outside_live_state(self.text) == outside_live_state(self.original), (
            "the plan file changed outside ## Live State"
        )

    def cleanup(self) -> None:
        kill_processes_under(self.root)

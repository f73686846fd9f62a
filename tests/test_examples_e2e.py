"""Every example plan, end to end through the real CLI, judged by the real world — never by Director's word.

For each plan (those written as proof material and the two older examples), in a tmp copy of the plan with
its state dir and workdir under tmp_path, `--non-interactive --plain`, non-default knobs (`--set`) and the
approvals they make necessary (`--approve N`, `--approve teardown`), six ordered steps:

1. `apply` → exit 0; the world is up (port answers, process alive, files hold the non-default knob values,
   a git push deploys, the tmux session exists …), checked by this test itself;
2. `apply` again → exit 0 and nothing re-run: same pids, same inode/mtime of created files, and no act step
   in `director audit --json` since the previous step (§0, the variable block, excepted);
3. an out-of-band break done here (kill the process, delete a file, remove the hook, corrupt a setting)
   → `director check` exits 2;
4. `apply` → exit 0 and the world is up again;
   4b. (the plans of issue 24) a second break, one that trips a failure-branch check (`if …; then echo …;
   exit 1; fi` or `cond && echo … && exit 1`) → `check` exits 2, and `apply` heals it. Their step-3 break is
   one only a message-only check (exit 0 either way) can see: Director must read it by contrast;
5. `teardown --approve teardown` → exit 0; the world is really gone, a discovered upstream is byte-identical;
6. `teardown` again → exit 0, no act step ran, the world unchanged.

After every step the plan file is byte-identical outside `## Live State`. A step whose precondition failed
(the world never came up) is skipped with the reason; every failure message starts with the Director output
line that shows its cause. `tests/test_plans_plainbash.py` is the control: the same plans pass under plain bash.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import tarfile
import time
import tomllib
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.e2e_helpers import (
    NEW_PLANS,
    OLD_PLANS,
    Director,
    Result,
    cmdline,
    expected_revenue,
    http_get,
    identity,
    outside_live_state,
    pid_alive,
    plan_param,
    port_open,
    read_pid,
    setup_workdir,
    sha256,
    wait_for,
)
from tests.plainbash import blocks, processes_under
from tests.pristine import EXAMPLES

pytestmark = pytest.mark.slow


# --- the worlds: what each plan builds, seen from outside ------------------------------------------------


def _env_value(path: Path, key: str) -> str:
    """A `.env`/INI/nginx-style value: the text after `key=` / `key ` up to a comment or `;`."""
    for raw in path.read_text().splitlines():
        m = re.match(rf"^\s*{re.escape(key)}\s*[= ]\s*([^\s;#]+)", raw)
        if m:
            return m.group(1)
    raise AssertionError(f"{key} not in {path}:\n{path.read_text()}")


class World:
    """A plan's resources as the test sees them. `work` is Director's --workdir."""

    plan: ClassVar[str]
    sets: ClassVar[tuple[str, ...]] = ()
    approvals: ClassVar[tuple[str, ...]] = ()
    port: ClassVar[int | None] = None

    def __init__(self, work: Path) -> None:
        self.work = work
        self.memo: dict[str, Any] = {}

    def set_args(self) -> list[str]:
        return [a for s in self.sets for a in ("--set", s)]

    def approve_args(self) -> list[str]:
        return [a for n in self.approvals for a in ("--approve", n)]

    def up(self) -> None:  # raises AssertionError when the world is not up
        raise NotImplementedError

    def identity(self) -> dict[str, Any]:
        raise NotImplementedError

    def break_(self) -> str:
        raise NotImplementedError

    def healed(self) -> None:
        self.up()

    def gone(self) -> None:
        raise NotImplementedError

    def upstream(self) -> dict[str, str]:
        return {}


def _kill9(pid: int) -> None:
    """SIGKILL, then wait until the pid is reaped: a zombie still answers `kill -0` (init reaps orphans late)."""
    os.kill(pid, signal.SIGKILL)
    assert wait_for(lambda: not os.path.exists(f"/proc/{pid}"), 10), f"pid {pid} was not reaped after SIGKILL"


class NodeService(World):
    plan = "node-service.local.md"
    sets = ("deps=latest", "env=stg", "log=verbose")
    approvals = ("2",)  # §2 is 🔴 for DEPS=latest
    port = 18432

    @property
    def app(self) -> Path:
        return self.work / "greeter-stg"

    def up(self) -> None:
        env = self.app / "service.env"
        assert _env_value(env, "PORT") == "18432", env.read_text()
        assert _env_value(env, "GREETING") == "hello-stg", env.read_text()
        assert _env_value(env, "LOG_LEVEL") == "debug", env.read_text()
        deps = json.loads((self.app / "package.json").read_text()).get("dependencies", {})
        assert "ms" in deps, deps
        assert (self.app / "node_modules" / "ms" / "package.json").is_file()
        pid = read_pid(self.app / "greeter.pid")
        assert pid_alive(pid) and "server.js" in cmdline(pid), (pid, cmdline(pid))
        assert http_get("http://127.0.0.1:18432/healthz") == (200, "ok\n")
        code, body = http_get("http://127.0.0.1:18432/")
        assert code == 200 and json.loads(body)["greeting"] == "hello-stg", body
        assert http_get("http://127.0.0.1:18432/ms/90s")[0] == 200
        # LOG=verbose reached the process: it logs every request at debug level
        assert wait_for(lambda: "debug GET /ms/90s" in (self.app / "server.log").read_text(), 3)
        self.memo["pid"] = pid

    def identity(self) -> dict[str, Any]:
        files = ["server.js", "package.json", "service.env", "node_modules/ms/package.json", "greeter.pid"]
        return {"pid": read_pid(self.app / "greeter.pid"), **{f: identity(self.app / f) for f in files}}

    def break_(self) -> str:
        pid = read_pid(self.app / "greeter.pid")
        _kill9(pid)
        return f"SIGKILL node pid {pid}"

    def gone(self) -> None:
        assert not port_open(18432), "port 18432 still answers"
        assert not self.app.exists(), sorted(p.name for p in self.app.iterdir())
        for pid in (self.memo.get("pid"),):
            assert pid is None or not pid_alive(pid), pid


class SqliteReport(World):
    plan = "sqlite-report.local.md"
    sets = ("currency=usd", "export=outbox")
    approvals = ("4",)  # §4 is 🔴 for EXPORT=outbox

    @property
    def sales(self) -> Path:
        return self.work / "upstream" / "sales.sqlite3"

    @property
    def report(self) -> Path:
        return self.work / "tally" / "report.sqlite3"

    @property
    def csv(self) -> Path:
        return self.work / "outbox" / "tally-usd.csv"

    def up(self) -> None:
        sql = (self.work / "tally" / "report.sql").read_text()
        assert re.search(r"currency = 'USD'", sql) and "'tally-usd'" in sql, sql
        assert "currency = 'EUR'" not in sql, sql
        with sqlite3.connect(f"file:{self.report}?mode=ro", uri=True) as c:
            rows = dict(c.execute("SELECT customer, revenue_cents FROM revenue_by_customer").fetchall())
            meta = dict(c.execute("SELECT k, v FROM report_meta").fetchall())
        c.close()
        assert rows == expected_revenue("USD"), rows
        assert meta.get("currency") == "USD" and meta.get("report") == "tally-usd", meta
        assert self.csv.is_file() and (self.csv.stat().st_mode & 0o777) == 0o644, self.csv
        lines = self.csv.read_text().splitlines()
        top = max(expected_revenue("USD").items(), key=lambda kv: kv[1])[0]
        assert lines[0].strip() == "customer,orders,revenue_cents" and lines[1].startswith(top + ","), lines
        assert not (self.work / "tally" / "tally-usd.csv").exists()

    def identity(self) -> dict[str, Any]:
        return {p.name: identity(p) for p in (self.report, self.work / "tally" / "report.sql", self.csv)}

    def break_(self) -> str:
        self.report.unlink()
        return f"deleted {self.report.name}"

    def gone(self) -> None:
        assert not (self.work / "tally").exists(), "the report directory is still there"
        assert not self.csv.exists(), "the exported csv is still there"

    def upstream(self) -> dict[str, str]:
        return {"sales.sqlite3": sha256(self.sales) if self.sales.exists() else "MISSING"}


def _git(*args: str, cwd: Path | None = None) -> str:
    env = dict(os.environ)
    env.update(
        GIT_AUTHOR_NAME="e2e",
        GIT_AUTHOR_EMAIL="e2e@localhost",
        GIT_COMMITTER_NAME="e2e",
        GIT_COMMITTER_EMAIL="e2e@localhost",
        GIT_CONFIG_NOSYSTEM="1",
    )
    r = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, f"git {' '.join(args)}: {r.stderr}"
    return r.stdout.strip()


class GitDeploy(World):
    plan = "git-deploy.local.md"
    sets = ("branch=release", "log=full")

    @property
    def remote(self) -> Path:
        return self.work / "pushdeploy" / "site.git"

    @property
    def site(self) -> Path:
        return self.work / "pushdeploy" / "site-release"

    def _push_a_commit(self) -> None:
        """Clone, commit a new file, push to `release`: the hook must deploy it into the checkout."""
        n = self.memo.get("pushes", 0) + 1
        self.memo["pushes"] = n
        clone = self.work.parent / f"clone-{n}"
        _git("clone", "-q", "--branch", "release", str(self.remote), str(clone))
        (clone / f"e2e-{n}.txt").write_text(f"pushed by the e2e test, #{n}\n")
        _git("add", ".", cwd=clone)
        _git("commit", "-q", "-m", f"e2e push {n}", cwd=clone)
        sha = _git("rev-parse", "HEAD", cwd=clone)
        _git("push", "-q", "origin", "release", cwd=clone)
        assert (self.site / f"e2e-{n}.txt").read_text() == f"pushed by the e2e test, #{n}\n"
        assert (self.site / ".deployed-rev").read_text().strip() == sha
        assert f"commit {sha}" in (self.remote / "deploy.log").read_text(), "LOG=full: no stats in deploy.log"
        # a push to another branch is not deployed
        _git("push", "-q", "origin", f"HEAD:refs/heads/scratch-{n}", cwd=clone)
        assert (self.site / ".deployed-rev").read_text().strip() == sha

    def up(self) -> None:
        ini = self.remote / "deploy.ini"
        assert _git("config", "--file", str(ini), "deploy.branch") == "release", ini.read_text()
        assert _git("config", "--file", str(ini), "deploy.worktree") == "site-release", ini.read_text()
        assert _git("config", "--file", str(ini), "--bool", "log.verbose") == "true", ini.read_text()
        assert (
            _git("--git-dir", str(self.remote), "config", "--bool", "receive.denyNonFastForwards") == "true"
        )
        hook = self.remote / "hooks" / "post-receive"
        assert hook.is_file() and os.access(hook, os.X_OK)
        tip = _git("--git-dir", str(self.remote), "rev-parse", "refs/heads/release")
        assert (self.site / ".deployed-rev").read_text().strip() == tip
        self._push_a_commit()

    def identity(self) -> dict[str, Any]:
        hook = self.remote / "hooks" / "post-receive"
        files = (hook, self.remote / "deploy.ini", self.remote / "config", self.site / ".deployed-rev")
        return {str(p.relative_to(self.work)): identity(p) for p in files}

    def break_(self) -> str:
        (self.remote / "hooks" / "post-receive").unlink()
        return "removed hooks/post-receive"

    def gone(self) -> None:
        assert not (self.work / "pushdeploy").exists(), sorted(
            p.name for p in (self.work / "pushdeploy").iterdir()
        )


def _tmux(sock: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["tmux", "-S", str(sock), *args], capture_output=True, text=True, timeout=10)


class VenvWorker(World):
    plan = "venv-worker.local.md"
    sets = ("site_pkgs=system", "pace=fast", "env=stg")
    approvals = ("1",)  # §1 is 🔴 for SITE_PKGS=system

    @property
    def base(self) -> Path:
        return self.work / "ticker-stg"

    @property
    def sock(self) -> Path:
        return self.base / "tmux.sock"

    def _pane_pid(self) -> int:
        r = _tmux(self.sock, "list-panes", "-t", "ticker-stg", "-F", "#{pane_pid}")
        assert r.returncode == 0, r.stderr
        return int(r.stdout.split()[0])

    def _server_pid(self) -> int:
        found = [
            pid for pid, cmd in processes_under(self.base) if cmd.startswith("tmux") and str(self.sock) in cmd
        ]
        assert len(found) == 1, found
        return found[0]

    def _beats(self) -> tuple[int, str, float, int]:
        _, beats, name, interval, pid = (self.base / "heartbeat").read_text().split()
        return int(beats), name, float(interval), int(pid)

    def up(self) -> None:
        assert _tmux(self.sock, "has-session", "-t", "ticker-stg").returncode == 0, (
            "no tmux session ticker-stg"
        )
        cfg = (self.base / "venv" / "pyvenv.cfg").read_text()
        assert re.search(r"^include-system-site-packages\s*=\s*true$", cfg, re.M), cfg
        worker = tomllib.loads((self.base / "worker.toml").read_text())["worker"]
        assert worker["name"] == "ticker-stg" and float(worker["interval"]) == 0.2, worker
        pane = self._pane_pid()
        assert pid_alive(pane) and "worker.py" in cmdline(pane), cmdline(pane)
        b1, name, interval, pid = self._beats()
        time.sleep(0.7)
        b2, _, _, _ = self._beats()
        assert b2 >= b1 + 2, f"heartbeat advanced {b1} → {b2} in 0.7 s at PACE=fast"
        assert (name, interval, pid) == ("ticker-stg", 0.2, pane)
        self.memo["pids"] = [pane, self._server_pid()]

    def identity(self) -> dict[str, Any]:
        files = ("worker.py", "worker.toml", "venv/pyvenv.cfg", "venv/bin/python")
        return {
            "pane": self._pane_pid(),
            "tmux server": self._server_pid(),
            **{f: identity(self.base / f) for f in files},
        }

    def break_(self) -> str:
        pane = self._pane_pid()
        r = _tmux(self.sock, "kill-session", "-t", "ticker-stg")
        assert r.returncode == 0, r.stderr
        assert wait_for(lambda: not os.path.exists(f"/proc/{pane}"), 10)
        return "tmux kill-session -t ticker-stg"

    def gone(self) -> None:
        assert _tmux(self.sock, "has-session", "-t", "ticker-stg").returncode != 0, "tmux session still there"
        assert wait_for(lambda: not any(pid_alive(p) for p in self.memo.get("pids", [])), 5), (
            "worker/tmux alive"
        )
        assert not self.base.exists(), sorted(p.name for p in self.base.iterdir())


class KvService(World):
    plan = "kv-service.local.md"
    sets = ("env=stg", "persist=disk", "auth=open")
    approvals = ("4",)  # §4 is 🔴 for AUTH=open
    port = 18452

    @property
    def base(self) -> Path:
        return self.work / "cellar-stg"

    def _request(self, *lines: str) -> str:
        with socket.create_connection(("127.0.0.1", 18452), timeout=3) as s:
            f = s.makefile("rw")
            reply = ""
            for line in lines:
                f.write(line + "\n")
                f.flush()
                reply = f.readline().strip()
        return reply

    def up(self) -> None:
        conf = self.base / "kv.conf"
        assert _env_value(conf, "port") == "18452", conf.read_text()
        assert _env_value(conf, "persist") == "on", conf.read_text()
        assert _env_value(conf, "auth") == "off", conf.read_text()
        assert _env_value(conf, "snapshot") == "cellar-stg.json", conf.read_text()
        pid = read_pid(self.base / "kvd.pid")
        assert pid_alive(pid) and "kvd.py" in cmdline(pid), cmdline(pid)
        self.memo["pid"] = pid
        assert self._request("PING") == "PONG"
        if "value" not in self.memo:  # first time up: store a value of our own (AUTH=open: no secret)
            self.memo["value"] = "kept across restarts"
            assert self._request("SET e2e:note kept across restarts") == "OK"
        assert self._request("GET e2e:note") == "VALUE kept across restarts"
        snap = json.loads((self.base / "cellar-stg.json").read_text())
        assert snap.get("e2e:note") == "kept across restarts", snap

    def identity(self) -> dict[str, Any]:
        files = ("kvd.py", "kv.conf", "auth", "cellar-stg.json", "kvd.pid")
        return {"pid": read_pid(self.base / "kvd.pid"), **{f: identity(self.base / f) for f in files}}

    def break_(self) -> str:
        pid = read_pid(self.base / "kvd.pid")
        _kill9(pid)
        return f"SIGKILL kvd pid {pid}"

    def healed(self) -> None:
        self.up()  # includes GET e2e:note from the restarted server: PERSIST=disk really persisted

    def gone(self) -> None:
        assert not port_open(18452), "port 18452 still answers"
        assert "pid" not in self.memo or not pid_alive(self.memo["pid"])
        assert not self.base.exists(), sorted(p.name for p in self.base.iterdir())


class SnapshotJob(World):
    plan = "snapshot-job.local.md"
    sets = ("retain=long", "compress=none")

    @property
    def base(self) -> Path:
        return self.work / "keepsake"

    def _yaml(self, key: str) -> str:
        m = re.search(rf"^{key}:\s*([^\s#]+)", (self.base / "job.yaml").read_text(), re.M)
        assert m, (self.base / "job.yaml").read_text()
        return m.group(1)

    def up(self) -> None:
        assert self._yaml("keep") == "10" and self._yaml("compress") == "none"
        pid = read_pid(self.base / "job.pid")
        assert pid_alive(pid) and "job.sh" in cmdline(pid), cmdline(pid)
        self.memo.setdefault("pids", set()).add(pid)
        archive = self.base / "archive"
        assert wait_for(lambda: len(list(archive.glob("keepsake-*.tar"))) >= 2, 5), sorted(archive.iterdir())
        assert not list(archive.glob("*.tar.gz")), "COMPRESS=none still writes .tar.gz"
        newest = max(archive.glob("keepsake-*.tar"), key=lambda p: p.stat().st_mtime_ns)
        with tarfile.open(newest) as t:  # plain tar (no gzip) and restorable
            member = t.extractfile("notes/README.md")
            assert member is not None and member.read() == (self.base / "notes" / "README.md").read_bytes()

        def tick() -> int:
            return int((self.base / "last_run").read_text().split()[1])

        t0 = tick()
        assert wait_for(lambda: tick() > t0, 3), "the job stopped ticking"

    def identity(self) -> dict[str, Any]:
        files = ("job.sh", "job.yaml", "notes/README.md", "job.pid")
        return {"pid": read_pid(self.base / "job.pid"), **{f: identity(self.base / f) for f in files}}

    def break_(self) -> str:
        y = self.base / "job.yaml"
        y.write_text(re.sub(r"^keep:.*$", "keep: 99", y.read_text(), flags=re.M))
        self.memo["pid_before_break"] = read_pid(self.base / "job.pid")
        return "rewrote job.yaml with keep: 99"

    def healed(self) -> None:
        self.up()
        assert read_pid(self.base / "job.pid") == self.memo["pid_before_break"], "the job was restarted"

    def gone(self) -> None:
        assert not any(pid_alive(p) for p in self.memo.get("pids", ())), "the job is still running"
        assert not self.base.exists(), sorted(p.name for p in self.base.iterdir())


class Database(World):
    plan = "database.local.md"
    sets = ("env=test", "journal=rollback", "access=group")
    approvals = ("3",)  # §3 is 🔴 for ACCESS=group

    @property
    def db(self) -> Path:
        return self.work / ".ledger" / "ledger-test.sqlite3"

    def up(self) -> None:
        schema = (self.work / ".ledger" / "schema-test.sql").read_text()
        assert re.search(r"PRAGMA journal_mode = 'delete';", schema), schema
        assert "('env', 'test')" in schema, schema
        assert (self.db.stat().st_mode & 0o777) == 0o660, oct(self.db.stat().st_mode)
        with sqlite3.connect(f"file:{self.db}?mode=ro", uri=True) as c:
            tables = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            env = c.execute("SELECT v FROM meta WHERE k = 'env'").fetchone()
            mode = c.execute("PRAGMA journal_mode").fetchone()[0]
        c.close()
        assert {"entries", "meta"} <= tables and env == ("test",) and mode == "delete", (tables, env, mode)

    def identity(self) -> dict[str, Any]:
        # the database file itself is written by §4's acceptance (insert or replace) on every run: inode only
        return {
            "db inode": self.db.stat().st_ino,
            "schema": identity(self.work / ".ledger" / "schema-test.sql"),
        }

    def break_(self) -> str:
        self.db.unlink()
        return f"deleted {self.db.name}"

    def gone(self) -> None:
        assert not (self.work / ".ledger").exists(), sorted(p.name for p in (self.work / ".ledger").iterdir())


class StaticSite(World):
    plan = "static-site.local.md"
    sets = ("theme=dark", "env=stg")
    port = 8765

    @property
    def root(self) -> Path:
        return self.work / ".pamphlet-stg"

    def up(self) -> None:
        css = (self.root / "site.css").read_text()
        assert "background: #111111" in css and "color: #eeeeee" in css, css
        pid = read_pid(self.work / ".pamphlet-stg.pid")
        assert pid_alive(pid) and "http.server" in cmdline(pid), cmdline(pid)
        self.memo["pid"] = pid
        code, body = http_get("http://127.0.0.1:8765/")
        assert code == 200 and "<title>Pamphlet</title>" in body, (code, body[:200])
        code, served = http_get("http://127.0.0.1:8765/site.css")
        assert code == 200 and "#111111" in served

    def identity(self) -> dict[str, Any]:
        files = (self.root / "index.html", self.root / "site.css", self.work / ".pamphlet-stg.pid")
        return {"pid": read_pid(self.work / ".pamphlet-stg.pid"), **{p.name: identity(p) for p in files}}

    def break_(self) -> str:
        pid = read_pid(self.work / ".pamphlet-stg.pid")
        _kill9(pid)
        return f"SIGKILL http.server pid {pid}"

    def gone(self) -> None:
        assert not port_open(8765), "port 8765 still answers"
        assert "pid" not in self.memo or not pid_alive(self.memo["pid"])
        assert not self.root.exists() and not (self.work / ".pamphlet-stg.pid").exists()


# --- the plans of issue 24: each has a check that speaks only through its messages (exit 0 either way) and
# a failure-branch check (`if …; then echo …; exit 1; fi`, silent when it holds). `break_` is seen by the
# message-only check alone; `break_failure_branch` trips the failure branch (test_4b).


def _plain_bash_check(plan: str, heading: str, knobs: dict[str, str], cwd: Path) -> tuple[int, str]:
    """§0 (its knob defaults replaced by `knobs`) and the verify block of the section whose heading starts with
    `heading`, run by plain bash in Director's workdir: what the check says, without Director."""
    bs = blocks((EXAMPLES / plan).read_text(encoding="utf-8"))
    text = next(b.text for b in bs if b.kind == "variables")
    for var, value in knobs.items():
        text, n = re.subn(rf'\b{var}="[^"]*"', f'{var}="{value}"', text, count=1)
        assert n == 1, f"{var} has no default in §0"
    check = next(b.text for b in bs if b.section.startswith(heading) and b.role == "verify")
    r = subprocess.run(
        ["bash", "--noprofile", "--norc", "-c", text + "\n" + check],
        cwd=cwd, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    return r.returncode, r.stdout


class MessageOnlyWorld(World):
    """`message_check` names the section whose check speaks only through its messages."""

    message_check: ClassVar[str]

    def blind_break(self, do_break: Callable[[], str]) -> str:
        """Break the world with `do_break`, proving with plain bash that the check's exit status cannot see it
        (0 before, 0 after) while what it prints changes: only a reading by contrast can tell."""
        knobs = {k.upper(): v for k, v in (s.split("=", 1) for s in self.sets)}
        rc0, held = _plain_bash_check(self.plan, self.message_check, knobs, self.work)
        what = do_break()
        rc1, broken = _plain_bash_check(self.plan, self.message_check, knobs, self.work)
        assert (rc0, rc1) == (0, 0), (
            f"the message-only check exited {rc0} held, {rc1} broken:\n{held}\n{broken}"
        )
        assert held != broken, f"the check printed the same before and after '{what}':\n{held}"
        return what


def _openssl(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(["openssl", *args], capture_output=True, text=True, timeout=60)
    assert not check or r.returncode == 0, f"openssl {' '.join(args)}: {r.stdout}{r.stderr}"
    return r


def _days_left(cert: Path) -> float:
    end = _openssl("x509", "-in", str(cert), "-noout", "-enddate").stdout.strip().split("=", 1)[1]
    expires = time.mktime(time.strptime(end.replace(" GMT", ""), "%b %d %H:%M:%S %Y")) - time.timezone
    return (expires - time.time()) / 86400


class LocalCa(MessageOnlyWorld):
    plan = "local-ca.local.md"
    message_check = "4. "
    sets = ("algo=ec", "portee=joker", "duree=longue", "env=recette")
    approvals = ("4",)  # §4 is 🔴 for PORTEE=joker

    @property
    def base(self) -> Path:
        return self.work / "sceau-recette"

    def _chain_ok(self) -> bool:
        b = self.base
        r = _openssl("verify", "-CAfile", str(b / "racine.crt"), "-purpose", "sslserver", str(b / "serveur.crt"),
                     check=False)  # fmt: skip
        return r.returncode == 0

    def up(self) -> None:
        b = self.base
        cnf = (b / "sceau.cnf").read_text()
        assert re.search(r"^subjectAltName\s*=\s*DNS:\*\.recette\.sceau\.test\s", cnf, re.M), cnf
        assert re.search(r"^O\s*=\s*Sceau recette\s", cnf, re.M), cnf
        for key in ("racine.key", "serveur.key"):  # ALGO=ec reached both keys
            text = _openssl("pkey", "-in", str(b / "private" / key), "-noout", "-text").stdout
            assert "prime256v1" in text, f"{key} is not EC P-256"
            assert (b / "private" / key).stat().st_mode & 0o777 == 0o600
        assert (b / "private").stat().st_mode & 0o777 == 0o700
        assert (
            "CA:TRUE"
            in _openssl("x509", "-in", str(b / "racine.crt"), "-noout", "-ext", "basicConstraints").stdout
        )
        assert self._chain_ok(), "serveur.crt does not verify against racine.crt"
        # the trust store works as -CApath, and the wildcard (PORTEE=joker) covers a name of the environment
        _openssl("verify", "-CApath", str(b / "trust"), "-purpose", "sslserver",
                 "-verify_hostname", "api.recette.sceau.test", str(b / "serveur.crt"))  # fmt: skip
        days = _days_left(b / "serveur.crt")
        assert 395 < days <= 397.01, f"DUREE=longue: serveur.crt has {days:.1f} days"
        pub = _openssl("pkey", "-in", str(b / "private" / "serveur.key"), "-pubout").stdout
        assert pub == _openssl("x509", "-in", str(b / "serveur.crt"), "-noout", "-pubkey").stdout
        chain = (b / "chaine.pem").read_text()
        assert chain == (b / "serveur.crt").read_text() + (b / "racine.crt").read_text()

    def identity(self) -> dict[str, Any]:
        files = (
            "private/racine.key",
            "racine.crt",
            "private/serveur.key",
            "serveur.crt",
            "chaine.pem",
            "sceau.cnf",
        )
        return {f: identity(self.base / f) for f in files}

    def break_(self) -> str:
        return self.blind_break(self._self_signed)

    def _self_signed(self) -> str:
        """A self-signed serveur.crt: same key, name and validity. Only the chain check (messages) sees it."""
        b = self.base
        _openssl("req", "-x509", "-new", "-key", str(b / "private" / "serveur.key"), "-config", str(b / "sceau.cnf"),
                 "-extensions", "serveur", "-days", "397", "-out", str(b / "serveur.crt"))  # fmt: skip
        assert not self._chain_ok()
        return "replaced serveur.crt by a self-signed one (same key, name, 397 days)"

    def break_failure_branch(self) -> str:
        """serveur.crt re-signed by our root for 2 days: the chain holds, the expiry branch exits 1."""
        b = self.base
        _openssl("x509", "-req", "-in", str(b / "serveur.csr"), "-CA", str(b / "racine.crt"),
                 "-CAkey", str(b / "private" / "racine.key"), "-set_serial", "0x1234", "-days", "2",
                 "-extfile", str(b / "sceau.cnf"), "-extensions", "serveur", "-out", str(b / "serveur.crt"))  # fmt: skip
        assert self._chain_ok() and _days_left(b / "serveur.crt") < 3
        return "re-signed serveur.crt for 2 days"

    def gone(self) -> None:
        assert not self.base.exists(), sorted(p.name for p in self.base.iterdir())


class MetricsExporter(MessageOnlyWorld):
    plan = "metrics-exporter.local.md"
    message_check = "4. "
    sets = ("intervall=schnell", "umfang=erweitert", "umgebung=test")
    approvals = ("4",)  # §4 is 🔴 for UMFANG=erweitert
    port = 19111

    @property
    def base(self) -> Path:
        return self.work / "pegel-test"

    def _scrape(self) -> tuple[str, str]:
        with urllib.request.urlopen("http://127.0.0.1:19111/metrics", timeout=3) as r:
            assert r.status == 200
            return r.headers["Content-Type"], r.read().decode()

    def _metric(self, name: str) -> int:
        m = re.search(rf"^{name} (\d+)$", self._scrape()[1], re.M)
        assert m, f"{name} not scraped"
        return int(m.group(1))

    def _pids(self) -> tuple[int, int]:
        return read_pid(self.base / "sammler.pid"), read_pid(self.base / "exporter.pid")

    def up(self) -> None:
        ini = (self.base / "pegel.ini").read_text()
        for key, want in (("intervall", "1"), ("umfang", "erweitert"), ("port", "19111")):
            assert _env_value(self.base / "pegel.ini", key) == want, ini
        sammler, exporter = self._pids()
        assert pid_alive(sammler) and "sammler.sh" in cmdline(sammler), cmdline(sammler)
        assert pid_alive(exporter) and "exporter.py" in cmdline(exporter), cmdline(exporter)
        self.memo.setdefault("pids", set()).update({sammler, exporter})
        ctype, body = self._scrape()
        assert ctype == "text/plain; version=0.0.4; charset=utf-8", ctype
        assert re.search(r'^pegel_prozess_rss_bytes\{pid="\d+",comm="[^"]*"\} \d+$', body, re.M), body[:800]
        # INTERVALL=schnell: the collector's counter moves within a few seconds, and it measures what is there
        n0 = self._metric("pegel_sammler_laeufe_total")
        assert wait_for(lambda: self._metric("pegel_sammler_laeufe_total") > n0, 6), (
            "the collector is not counting"
        )
        files = len([p for p in (self.base / "daten").rglob("*") if p.is_file()])
        assert wait_for(lambda: self._metric("pegel_daten_dateien") == files, 6), (
            "pegel_daten_dateien is wrong"
        )

    def identity(self) -> dict[str, Any]:
        files = ("sammler.sh", "exporter.py", "pegel.ini", "sammler.pid", "exporter.pid")
        return {"pids": self._pids(), **{f: identity(self.base / f) for f in files}}

    def break_(self) -> str:
        return self.blind_break(self._kill_collector)

    def _kill_collector(self) -> str:
        """The collector dies; the exporter still serves its last file. Only the ✔/✗ list shows it."""
        sammler, exporter = self._pids()
        _kill9(sammler)
        self.memo["restarted"], self.memo["kept"] = (0, sammler), (1, exporter)
        assert self._metric("pegel_sammler_laeufe_total") >= 1  # the scrape still looks fine
        return f"SIGKILL the collector (pid {sammler})"

    def healed(self) -> None:
        self.up()
        pids = self._pids()
        (i, killed), (j, kept) = self.memo["restarted"], self.memo["kept"]
        assert pids[i] != killed and pids[j] == kept, f"{pids}: not exactly the killed process was restarted"

    def break_failure_branch(self) -> str:
        sammler, exporter = self._pids()
        _kill9(exporter)
        self.memo["restarted"], self.memo["kept"] = (1, exporter), (0, sammler)
        return f"SIGKILL the exporter (pid {exporter})"

    def gone(self) -> None:
        assert not port_open(19111), "port 19111 still answers"
        assert not any(pid_alive(p) for p in self.memo.get("pids", ())), (
            "the collector or exporter still runs"
        )
        assert not self.base.exists(), sorted(p.name for p in self.base.iterdir())


class LogPipeline(MessageOnlyWorld):
    plan = "log-pipeline.local.md"
    message_check = "5. "
    sets = ("layout=dated", "env=stg")

    @property
    def base(self) -> Path:
        return self.work / "runoff-stg"

    def _pids(self) -> tuple[int, int]:
        return read_pid(self.base / "run" / "emit.pid"), read_pid(self.base / "run" / "rotor.pid")

    def _manifest(self) -> list[str]:
        return (self.base / "archive" / "MANIFEST").read_text().splitlines()

    def up(self) -> None:
        conf = self.base / "runoff.conf"
        for key, want in (("layout", "dated"), ("keep", "0"), ("rotate_bytes", "1024")):
            assert _env_value(conf, key) == want, conf.read_text()
        emit, rotor = self._pids()
        assert pid_alive(emit) and "emit.sh" in cmdline(emit), cmdline(emit)
        assert pid_alive(rotor) and "rotor.sh" in cmdline(rotor), cmdline(rotor)
        self.memo.setdefault("pids", set()).update({emit, rotor})
        # the pipeline moves: a new shipment within 20 s, and the spool drains
        n0 = len(self._manifest())
        assert wait_for(lambda: len(self._manifest()) > n0, 20, 0.2), "nothing shipped in 20 s"
        spool = self.base / "spool"
        assert wait_for(lambda: len(list(spool.iterdir())) <= 2, 10, 0.2), sorted(
            p.name for p in spool.iterdir()
        )
        archive = self.base / "archive"
        shipped = sorted(archive.rglob("*.log.gz"))
        for f in shipped:  # LAYOUT=dated
            assert re.fullmatch(r"\d{4}/\d{2}/\d{2}/app-[^/]+\.log\.gz", str(f.relative_to(archive))), f
        listed = {}
        for line in self._manifest():
            digest, rel = line.split("  ", 1)
            listed[rel] = digest
        seqs: set[int] = set()
        for f in shipped:
            rel = str(f.relative_to(archive))
            if rel not in listed:  # shipped this instant: its MANIFEST line follows the rename
                continue
            assert listed[rel] == sha256(f), f"MANIFEST disagrees for {rel}"
            with gzip.open(f, "rt") as z:
                seqs |= {int(m) for m in re.findall(r" seq=(\d+) ", z.read())}
        # archived files are a prefix of the stream: every line from the first to the last, none lost
        assert seqs and seqs == set(range(1, max(seqs) + 1)), (
            f"gaps in the archive: {len(seqs)} of {max(seqs)}"
        )

    def identity(self) -> dict[str, Any]:
        files = ("bin/emit.sh", "bin/rotor.sh", "runoff.conf", "run/emit.pid", "run/rotor.pid")
        return {"pids": self._pids(), **{f: identity(self.base / f) for f in files}}

    def break_(self) -> str:
        return self.blind_break(self._kill_rotor)

    def _kill_rotor(self) -> str:
        """The rotor dies: the archive and the app look fine; only the [ok]/[warn] line shows it."""
        emit, rotor = self._pids()
        _kill9(rotor)
        self.memo["expect"] = (emit, None, rotor)
        return f"SIGKILL the rotor (pid {rotor})"

    def break_failure_branch(self) -> str:
        """rotor.sh loses its exec bit (the running loop does not care): the `[ ! -x … ] && echo … && exit 1`
        chain in the middle of §3's check trips."""
        rotor_sh = self.base / "bin" / "rotor.sh"
        rotor_sh.chmod(0o644)
        emit, rotor = self._pids()
        self.memo["expect"] = (emit, rotor, None)
        return "chmod -x bin/rotor.sh"

    def healed(self) -> None:
        self.up()
        emit, rotor = self._pids()
        want_emit, want_rotor, killed = self.memo["expect"]
        assert emit == want_emit, "the emitter was restarted"
        assert rotor != killed and (want_rotor is None or rotor == want_rotor), (
            "not exactly the killed loop restarted"
        )
        assert os.access(self.base / "bin" / "rotor.sh", os.X_OK)

    def gone(self) -> None:
        assert not any(pid_alive(p) for p in self.memo.get("pids", ())), "a loop still runs"
        assert not self.base.exists(), sorted(p.name for p in self.base.iterdir())


def _smtp(port: int, sender: str, rcpt: str = "qa@app.example") -> int:
    """Send one message through a relay: 0 when accepted, else the SMTP code that refused it."""
    import smtplib

    try:
        with smtplib.SMTP("127.0.0.1", port, timeout=5) as s:
            s.sendmail(sender, [rcpt], f"From: {sender}\r\nSubject: e2e\r\n\r\ne2e\r\n")
    except smtplib.SMTPSenderRefused as e:
        return int(e.smtp_code)
    except smtplib.SMTPRecipientsRefused as e:
        return int(next(iter(e.recipients.values()))[0])
    return 0


class MailRelay(World):
    """Issue 34: a change ticket's voice; a template in a language Director does not know, named by a
    variable, whose comma lists must be written whole; a ✔ section that speaks only through its messages."""

    plan = "mail-relay.local.md"
    sets = ("relay_port=2526", "senders=app+alerts", "env=qa")
    approvals = ("4",)  # §4 is 🔴 for SENDERS=app+alerts
    port = 2526

    @property
    def base(self) -> Path:
        return self.work / "chg4471-qa"

    def _spooled(self) -> int:
        return len(list((self.base / "spool" / "new").iterdir()))

    def up(self) -> None:
        cfg = (self.base / "relay.cfg").read_text()
        assert re.search(r"^listen\s*=\s*127\.0\.0\.1:2526\s", cfg, re.M), cfg
        # comma lists written whole: not the knob's value plus the tail of the template's example
        assert re.search(r"^allowed_senders\s*=\s*noreply@app\.example,alerts@app\.example\s", cfg, re.M), cfg
        assert re.search(r"^rcpt_domains\s*=\s*app\.example,qa\.app\.example\s", cfg, re.M), cfg
        assert pid_alive(read_pid(self.base / "relay.pid"))
        before = self._spooled()
        assert _smtp(2526, "alerts@app.example") == 0
        assert self._spooled() == before + 1
        assert _smtp(2526, "stranger@elsewhere.example") == 550
        assert _smtp(2526, "noreply@app.example", "ops@staging.app.example") == 550  # stg's domain is not qa's

    def identity(self) -> dict[str, Any]:
        return {
            "pid": read_pid(self.base / "relay.pid"),
            "relay.py": identity(self.base / "relay.py"),
            "relay.cfg": identity(self.base / "relay.cfg"),
        }

    def break_(self) -> str:
        cfg = self.base / "relay.cfg"
        cfg.write_text(re.sub(r"(?m)^(allowed_senders\s*=\s*)\S+", r"\1everyone@example.org", cfg.read_text()))
        return "edited relay.cfg's allow list out of band"

    def break_failure_branch(self) -> str:
        _kill9(read_pid(self.base / "relay.pid"))
        return "killed the relay"

    def gone(self) -> None:
        assert not self.base.exists(), sorted(p.name for p in self.base.iterdir())
        assert not port_open(2526)


class FeatureFlags(World):
    """Issue 34: a terse voice; a template named by a variable; a verdict printed by `awk`."""

    plan = "feature-flags.local.md"
    sets = ("rollout=all", "env=stg")
    approvals = ("3",)  # §3 is 🔴 for ROLLOUT=all
    port = 18081

    @property
    def base(self) -> Path:
        return self.work / "ff-stg"

    def up(self) -> None:
        flags = tomllib.loads((self.base / "www" / "flags.toml").read_text())
        assert flags["flags"]["checkout_v2"] == "all" and flags["meta"]["env"] == "stg", flags
        assert pid_alive(read_pid(self.base / "run" / "http.pid"))
        code, body = http_get("http://127.0.0.1:18081/flags.toml")
        assert code == 200 and tomllib.loads(body)["flags"]["checkout_v2"] == "all", body

    def identity(self) -> dict[str, Any]:
        return {
            "pid": read_pid(self.base / "run" / "http.pid"),
            "flags.toml": identity(self.base / "www" / "flags.toml"),
        }

    def break_(self) -> str:
        f = self.base / "www" / "flags.toml"
        f.write_text(f.read_text().replace('checkout_v2 = "all"', 'checkout_v2 = "off"'))
        return "switched checkout_v2 off by hand"

    def break_failure_branch(self) -> str:
        _kill9(read_pid(self.base / "run" / "http.pid"))
        return "killed the flags server"

    def gone(self) -> None:
        assert not self.base.exists(), sorted(p.name for p in self.base.iterdir())
        assert not port_open(18081)


class Battito(World):
    """Issue 34: another language (Italian, chatty); labels passed to a function that returns its check's
    status; the whole check inside `if ! (return 0 2>/dev/null)`; a ✔ section read by contrast."""

    plan = "battito.local.md"
    sets = ("cadenza=svelta", "modo=rumoroso", "ambiente=collaudo")
    approvals = ("4",)  # §4 is 🔴 for MODO=rumoroso

    @property
    def base(self) -> Path:
        return self.work / "battito-collaudo"

    def _beat(self) -> int:
        return int((self.base / "battito.ts").read_text())

    def up(self) -> None:
        conf = (self.base / "battito.conf").read_text()
        assert re.search(r"^intervallo\s*=\s*1\s", conf, re.M) and re.search(r"^registro\s*=\s*rumoroso\s", conf, re.M)
        assert pid_alive(read_pid(self.base / "battito.pid"))
        first = self._beat()
        assert wait_for(lambda: self._beat() > first, 10), "the heartbeat does not advance"
        assert time.time() - self._beat() < 5
        assert (self.base / "registro.log").stat().st_size > 0  # MODO=rumoroso

    def identity(self) -> dict[str, Any]:
        return {
            "pid": read_pid(self.base / "battito.pid"),
            "battito.sh": identity(self.base / "battito.sh"),
            "battito.conf": identity(self.base / "battito.conf"),
        }

    def break_(self) -> str:
        conf = self.base / "battito.conf"
        conf.write_text(re.sub(r"(?m)^(intervallo\s*=\s*)1", r"\g<1>7", conf.read_text()))
        return "set intervallo = 7 by hand"

    def break_failure_branch(self) -> str:
        _kill9(read_pid(self.base / "battito.pid"))
        return "killed the heartbeat loop"

    def gone(self) -> None:
        assert not self.base.exists(), sorted(p.name for p in self.base.iterdir())


WORLDS: dict[str, type[World]] = {
    w.plan: w
    for w in (
        NodeService,
        SqliteReport,
        GitDeploy,
        VenvWorker,
        KvService,
        SnapshotJob,
        Database,
        StaticSite,
        LocalCa,
        MetricsExporter,
        LogPipeline,
        MailRelay,
        FeatureFlags,
        Battito,
    )
}
assert set(WORLDS) == set(NEW_PLANS + OLD_PLANS)


# --- the flow ---------------------------------------------------------------------------------------------


@dataclass
class Flow:
    d: Director
    w: World
    flags: set[str] = field(default_factory=set)
    upstream0: dict[str, str] = field(default_factory=dict)
    ident: dict[str, Any] = field(default_factory=dict)

    def need(self, flag: str, why: str) -> None:
        if flag not in self.flags:
            pytest.skip(f"{self.w.plan}: {why}")

    def fail(self, step: str, r: Result | None, what: str) -> str:
        cause = f"director: {r.cause()}" if r is not None else ""
        tail = "\n".join(r.out.splitlines()[-25:]) if r is not None else ""
        return f"[{self.w.plan} step {step}] {what}\n  {cause}\n--- director output (tail) ---\n{tail}"

    def max_step_id(self) -> int:
        steps = self.d.audit()["steps"]
        return max((s["id"] for s in steps), default=0)

    def acts_since(self, step_id: int) -> list[str]:
        return [
            f"{s['step_key']}:{s['state']}"
            for s in self.d.audit()["steps"]
            if s["id"] > step_id and s["role"] == "act" and s["section_key"] != "0"
        ]

    def invariants(self, step: str, r: Result | None) -> None:
        before, after = self.d.original, self.d.text
        assert outside_live_state(after) == outside_live_state(before), self.fail(
            step, r, "the plan file changed outside ## Live State"
        )
        assert self.w.upstream() == self.upstream0, self.fail(step, r, "the upstream resource changed")


@pytest.fixture(
    scope="module", params=[plan_param(n) for n in WORLDS], ids=lambda p: str(p).removesuffix(".local.md")
)
def flow(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flow]:
    name: str = request.param
    root = tmp_path_factory.mktemp(name.removesuffix(".local.md"))
    d = Director(root, name)
    w = WORLDS[name](d.work)
    setup_workdir(name, d.work)
    f = Flow(d, w, upstream0=w.upstream())
    yield f
    d.cleanup()


def _port_free(port: int | None) -> None:
    """A port shared with other suites on this machine (8765): wait for it rather than collide."""
    if port is not None and not wait_for(lambda: not port_open(port), 30, 0.5):
        pytest.fail(f"port {port} is held by another process (not this test's)")


def test_1_apply_builds_the_world(flow: Flow) -> None:
    d, w = flow.d, flow.w
    _port_free(w.port)
    r = d.apply(w.set_args(), w.approve_args())
    flow.invariants("1", r)
    try:
        w.up()
        flow.flags.add("up")
    except (AssertionError, OSError, KeyError, ValueError) as exc:
        raise AssertionError(flow.fail("1", r, f"apply rc={r.rc}; the world is not up: {exc!r}")) from None
    assert r.rc == 0, flow.fail("1", r, f"apply exited {r.rc} although the world is up")


def test_2_apply_again_reruns_nothing(flow: Flow) -> None:
    flow.need("up", "step 1 did not bring the world up")
    d, w = flow.d, flow.w
    before = w.identity()
    last = flow.max_step_id()
    r = d.apply(w.set_args(), w.approve_args())
    flow.invariants("2", r)
    after = w.identity()
    changed = {k: (before[k], after.get(k)) for k in before if before[k] != after.get(k)}
    acts = flow.acts_since(last)
    assert r.rc == 0, flow.fail("2", r, f"second apply exited {r.rc}")
    assert not changed, flow.fail("2", r, f"the second apply touched the world: {changed}")
    assert not acts, flow.fail("2", r, f"act steps ran in the second apply: {acts}")


def test_3_out_of_band_break_is_drift(flow: Flow) -> None:
    flow.need("up", "step 1 did not bring the world up")
    d, w = flow.d, flow.w
    what = w.break_()
    flow.flags.add("broken")
    r = d.check()
    flow.invariants("3", r)
    assert r.rc == 2, flow.fail("3", r, f"after '{what}', check exited {r.rc}, not 2 (drift)")


def test_4_apply_heals(flow: Flow) -> None:
    flow.need("broken", "nothing was broken in step 3")
    d, w = flow.d, flow.w
    r = d.apply(w.set_args(), w.approve_args())
    flow.invariants("4", r)
    try:
        w.healed()
    except (AssertionError, OSError, KeyError, ValueError) as exc:
        raise AssertionError(
            flow.fail("4", r, f"apply rc={r.rc}; the world was not healed: {exc!r}")
        ) from None
    assert r.rc == 0, flow.fail("4", r, f"healing apply exited {r.rc} although the world is up")


def test_4b_failure_branch_break_is_drift(flow: Flow) -> None:
    """Plans with a failure-branch check (`if …; then echo …; exit 1; fi`, silent when it holds): a break that
    trips it is drift, and apply heals it. Step 3's break was seen by a message-only check alone."""
    breaker = getattr(flow.w, "break_failure_branch", None)
    if breaker is None:
        pytest.skip(f"{flow.w.plan}: no failure-branch break")
    flow.need("up", "step 1 did not bring the world up")
    d, w = flow.d, flow.w
    what = breaker()
    r = d.check()
    flow.invariants("4b", r)
    assert r.rc == 2, flow.fail("4b", r, f"after '{what}', check exited {r.rc}, not 2 (drift)")
    r = d.apply(w.set_args(), w.approve_args())
    flow.invariants("4b", r)
    try:
        w.healed()
    except (AssertionError, OSError, KeyError, ValueError) as exc:
        raise AssertionError(
            flow.fail("4b", r, f"apply rc={r.rc}; the world was not healed: {exc!r}")
        ) from None
    assert r.rc == 0, flow.fail("4b", r, f"healing apply exited {r.rc} although the world is up")


def test_5_teardown_removes_the_world_and_spares_upstream(flow: Flow) -> None:
    d, w = flow.d, flow.w
    r = d.teardown(w.set_args())
    flow.invariants("5", r)
    try:
        w.gone()
        flow.flags.add("gone")
    except (AssertionError, OSError, KeyError, ValueError) as exc:
        raise AssertionError(
            flow.fail("5", r, f"teardown rc={r.rc}; the world is not gone: {exc!r}")
        ) from None
    left = processes_under(d.root)
    assert not left, flow.fail("5", r, f"processes left: {left}")
    assert r.rc == 0, flow.fail("5", r, f"teardown exited {r.rc} although the world is gone")


def test_6_second_teardown_runs_nothing(flow: Flow) -> None:
    flow.need("gone", "step 5 did not remove the world")
    d, w = flow.d, flow.w
    work_before = sorted(str(p.relative_to(d.work)) for p in d.work.rglob("*"))
    last = flow.max_step_id()
    r = d.teardown(w.set_args())
    flow.invariants("6", r)
    acts = flow.acts_since(last)
    w.gone()
    assert sorted(str(p.relative_to(d.work)) for p in d.work.rglob("*")) == work_before
    assert r.rc == 0, flow.fail("6", r, f"second teardown exited {r.rc}")
    assert not acts, flow.fail("6", r, f"act steps ran in the second teardown: {acts}")

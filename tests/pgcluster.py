"""A throwaway PostgreSQL server for the tests and the benchmark: Debian's server binaries, a cluster in a
temp dir, a free loopback port, a non-superuser role for Director, stopped and deleted afterwards.

Where the binaries come from, in order: `DIRECTOR_PG_BINDIR`; the directory of an `initdb` on PATH;
the newest `/usr/lib/postgresql/<major>/bin` (Debian's `postgresql` package; `.ci/run` installs it when
it is missing). `initdb` and `postgres` refuse to run as root: as root, both run as the `postgres`
user (which Debian's package creates), else `nobody`, through `setpriv` (util-linux), in a temp dir
owned by that user.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg

ADMIN = "director_admin"  # the cluster's superuser (the tests' own, never Director's)
ROLE = "director"  # what Director connects as: LOGIN only, no superuser, no CREATEDB, no CREATEROLE


def find_bindir() -> Path | None:
    """The directory of PostgreSQL's server binaries, if any are installed."""
    env = os.environ.get("DIRECTOR_PG_BINDIR")
    if env and (Path(env) / "initdb").exists():
        return Path(env)
    on_path = shutil.which("initdb")
    if on_path:
        return Path(on_path).resolve().parent
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    return found[-1].parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# Started beside each cluster, in a session of its own: when the test process is gone without destroying
# its cluster (killed: SIGTERM or SIGKILL skip pytest's finalizers), the server is shut down and its
# directory deleted, so that no `postgres` outlives the tests that started it.
_WATCHDOG = r"""
import os, shutil, signal, sys, time
owner, root = int(sys.argv[1]), sys.argv[2]
while True:
    try:
        os.kill(owner, 0)
    except ProcessLookupError:
        break
    time.sleep(1)
try:
    with open(os.path.join(root, "data", "postmaster.pid")) as f:
        os.kill(int(f.readline()), signal.SIGQUIT)
    time.sleep(2)
except (OSError, ValueError):
    pass
shutil.rmtree(root, ignore_errors=True)
"""


class Cluster:
    """One `postgres` server process on 127.0.0.1; `start`, `restart`, `stop` (which deletes it all)."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.dir = Path(tempfile.mkdtemp(prefix="director-pg-"))
        self.data = self.dir / "data"
        self.log = self.dir / "server.log"
        self.port = _free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self._as: list[str] = []
        if os.geteuid() == 0:
            try:
                user = pwd.getpwnam("postgres")
            except KeyError:
                user = pwd.getpwnam("nobody")
            os.chown(self.dir, user.pw_uid, user.pw_gid)
            self._as = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups"]
        self._databases = 0
        self._watchdog = subprocess.Popen(
            [sys.executable, "-c", _WATCHDOG, str(os.getpid()), str(self.dir)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip

    def _run(self, *args: str) -> None:
        subprocess.run([*self._as, *args], check=True, capture_output=True, cwd=self.dir)

    def start(self) -> None:
        """initdb on first start, then the server; returns once it accepts connections."""
        if not self.data.exists():
            self._run(
                str(self.bindir / "initdb"), "-D", str(self.data), "-U", ADMIN, "--auth=trust",
                "-E", "UTF8", "--locale=C", "--no-sync",
            )  # fmt: skip
        log = open(self.log, "ab")  # noqa: SIM115 - handed to the server process
        try:
            self.proc = subprocess.Popen(
                [*self._as, str(self.bindir / "postgres"), "-D", str(self.data), "-k", str(self.dir),
                 "-p", str(self.port), "-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200",
                 # its dynamic shared memory in the data directory, not /dev/shm: deleted with it even after
                 # the watchdog's immediate shutdown (SIGQUIT), which leaves POSIX segments behind
                 "-c", "dynamic_shared_memory_type=mmap"],
                stdout=log, stderr=subprocess.STDOUT, cwd=self.dir, start_new_session=True,
            )  # fmt: skip
        finally:
            log.close()
        deadline = time.monotonic() + 60
        while True:
            try:
                psycopg.connect(self.admin_url(), connect_timeout=2).close()
                break
            except psycopg.OperationalError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"PostgreSQL did not start:\n{self.log.read_text()[-3000:]}") from None
                time.sleep(0.1)
        with psycopg.connect(self.admin_url(), autocommit=True) as c:
            if c.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (ROLE,)).fetchone() is None:
                c.execute(f"CREATE ROLE {ROLE} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE")

    def stop(self, mode: str = "fast") -> None:
        """Shut the server down (`fast`: sessions are ended, like a restart by an administrator)."""
        p, self.proc = self.proc, None
        if p is None or p.poll() is not None:
            return
        p.send_signal({"smart": signal.SIGTERM, "fast": signal.SIGINT, "immediate": signal.SIGQUIT}[mode])
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()

    def restart(self) -> None:
        """Stop (fast) and start again on the same port and data: every session is lost."""
        self.stop("fast")
        self.start()

    def destroy(self) -> None:
        """Stop the server and delete the cluster (and its watchdog)."""
        self.stop("fast")
        shutil.rmtree(self.dir, ignore_errors=True)
        self._watchdog.terminate()
        self._watchdog.wait()

    def admin_url(self, db: str = "postgres") -> str:
        """The superuser's URL (for the tests' own set-up only)."""
        return f"postgresql://{ADMIN}@127.0.0.1:{self.port}/{db}"

    def new_database(self, name: str | None = None) -> str:
        """A fresh database Director may use with the least rights (CONNECT, CREATE); its URL."""
        self._databases += 1
        name = name or f"t{self._databases}_{os.getpid()}"
        if not re.fullmatch(r"[a-z0-9_]+", name):
            raise ValueError(name)
        with psycopg.connect(self.admin_url(), autocommit=True) as c:
            c.execute(f"CREATE DATABASE {name}")
            c.execute(f"REVOKE ALL ON DATABASE {name} FROM PUBLIC")
            c.execute(f"GRANT CONNECT, CREATE ON DATABASE {name} TO {ROLE}")
        return f"postgresql://{ROLE}@127.0.0.1:{self.port}/{name}"

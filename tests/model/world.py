"""The truth, read from the world itself: files, listening sockets, /proc. Never from Director's word.

Each sandbox has a mark (`MODEL_TRIAL=<hex>`) in the environment of everything it starts -- Director, and so
every block and every server a block starts, and the servers the test itself restarts when it heals -- so
that its processes are found in /proc (and ended after the sequence) by that mark, never by name.
"""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from tests.model.plans import LISTENER, PlanSpec


@dataclass(frozen=True)
class Proc:
    pid: int
    comm: str
    argv: tuple[str, ...]
    env: dict[str, str]


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return b""


def alive(pid: int) -> bool:
    stat = _read(f"/proc/{pid}/stat")
    if not stat:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[:1] not in ([b"Z"], [b"X"])


def _zombie(pid: int) -> bool:
    """Dead but not reaped yet."""
    stat = _read(f"/proc/{pid}/stat")
    return bool(stat) and stat[stat.rfind(b")") + 2 :].split()[:1] == [b"Z"]


def marked(mark: str) -> list[Proc]:
    """Live processes (zombies aside) whose environment carries MODEL_TRIAL=<mark>."""
    needle = ours(mark)
    found = []
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        raw = _read(f"/proc/{entry}/environ")
        if needle not in raw or not alive(int(entry)):
            continue
        env = dict(item.split("=", 1) for item in raw.decode("utf-8", "replace").split("\0") if "=" in item)
        argv = tuple(a.decode("utf-8", "replace") for a in _read(f"/proc/{entry}/cmdline").split(b"\0") if a)
        comm = _read(f"/proc/{entry}/comm").decode(errors="replace").strip()
        found.append(Proc(int(entry), comm, argv, env))
    return found


def descendants(pid: int) -> list[int]:
    """Every live descendant of `pid`, read from /proc/<pid>/task/*/children (no full /proc scan)."""
    out: list[int] = []
    stack = [pid]
    while stack:
        p = stack.pop()
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for t in tasks:
            for c in _read(f"/proc/{p}/task/{t}/children").split():
                out.append(int(c))
                stack.append(int(c))
    return out


def is_block(pid: int) -> bool:
    """A process of a block Director runs (it carries the step marker), not a listener a block started."""
    if b"DIRECTOR_STEP=" not in _read(f"/proc/{pid}/environ"):
        return False
    argv = _read(f"/proc/{pid}/cmdline").split(b"\0")
    return not (b"-S" in argv and b"-" in argv)


def listeners(mark: str) -> list[tuple[Proc, str]]:
    """(process, NAME) of every live listener of the sandbox (`python3 -S - NAME [PORT]`)."""
    out = []
    for p in marked(mark):
        if "-S" in p.argv and "-" in p.argv:
            i = p.argv.index("-")
            if i + 1 < len(p.argv):
                out.append((p, p.argv[i + 1]))
    return out


def plan_processes(mark: str, plan_id: str) -> list[Proc]:
    """Processes carrying the plan's own step marker (DIRECTOR_PLAN=<plan file>@…)."""
    return [p for p in marked(mark) if p.env.get("DIRECTOR_PLAN", "").startswith(plan_id + "@")]


def port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(2.0)
        return s.connect_ex(("127.0.0.1", port)) == 0


def wait_blocks_gone(mark: str, timeout: float = 15.0) -> list[Proc]:
    """After Director died: wait for the blocks it ran (anything marked but a listener) to end; what is left."""
    deadline = time.monotonic() + timeout
    while True:
        left = [p for p in marked(mark) if p.comm != "python3" and "DIRECTOR_STEP" in p.env]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.02)


def signal_if(pid: int, needle: bytes, sig: int) -> bool:
    """Send `sig` to `pid` only if it is still a live process whose environment holds `needle`; pinned by a
    pidfd before its environment is read, so that a pid recycled meanwhile by another process never gets the
    signal. pid_max is 32,768 on this VM and a soak's workers fork thousands of processes a minute: a pid read
    from a pid file, or listed a moment ago, can already be another worker's `grep` or Director."""
    try:
        fd = os.pidfd_open(pid)
    except OSError:
        return False
    try:
        if needle not in _read(f"/proc/{pid}/environ") or not alive(pid):
            return False
        signal.pidfd_send_signal(fd, sig)
        return True
    except ProcessLookupError:
        return False
    finally:
        os.close(fd)


def ours(mark: str) -> bytes:
    """What the environment of every process of the sandbox with this mark holds."""
    return f"MODEL_TRIAL={mark}\0".encode()


def alive_ours(pid: int, mark: str) -> bool:
    """`pid` is a live process of the sandbox (not a pid another process took since)."""
    return ours(mark) in _read(f"/proc/{pid}/environ") and alive(pid)


def kill_marked_under(prefix: str) -> None:
    """SIGKILL every sandbox process whose act log (MODEL_OUT) is under `prefix` (a stopped soak worker's)."""
    needle = f"MODEL_OUT={prefix}".encode()
    for entry in os.listdir("/proc"):
        if entry.isdigit() and needle in _read(f"/proc/{entry}/environ"):
            signal_if(int(entry), needle, signal.SIGKILL)


def kill_all(mark: str) -> None:
    """End every process of the sandbox (after a sequence), each by its pid."""
    for _ in range(3):
        procs = marked(mark)
        if not procs:
            return
        for p in procs:
            signal_if(p.pid, ours(mark), signal.SIGKILL)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(alive(p.pid) for p in procs):
            time.sleep(0.02)


# -- the resources of one section, for one environment ---------------------------------------------------


@dataclass(frozen=True)
class Resource:
    """What section k left for one environment, as the world has it."""

    holds: bool  # what the section's verify would find
    value: str | None  # what its Live State key should say (None: nothing realized there)
    rev: str | None  # the `<res> rev N` line, if written
    pid: int | None = None  # a server's listener
    port: int | None = None


class World:
    """The sandbox's world: the workdir the plan's blocks run in, and its mark."""

    def __init__(self, spec: PlanSpec, work: Path, mark: str) -> None:
        self.spec, self.work, self.mark = spec, work, mark

    def base(self, env: str) -> Path:
        return self.work / f"{self.spec.svc}-{env}"

    def resource(self, k: int, env: str) -> Resource:
        s, res, base = self.spec.section(k), self.spec.resource(k), self.base(env)
        rev_path = base / f"{res}.rev"
        rev = rev_path.read_text().strip() if rev_path.exists() else None
        if s.kind == "file":
            conf, envf = base / f"{res}.conf", base / f"{res}.env"
            ok = conf.exists() and conf.read_text() == f"name={self.spec.svc}-{res}-{env}\n" and envf.exists()
            return Resource(ok, str(conf) if ok else None, rev)
        if s.kind == "server":
            pid = _int(base / f"{res}.pid")
            port = _int(base / f"{res}.port")
            ok = pid is not None and port is not None and alive(pid) and port_open(port)
            return Resource(ok, f"http://127.0.0.1:{port}/" if ok else None, rev, pid, port)
        if s.kind == "token":
            tok = base / f"{res}.token"
            data = tok.read_bytes() if tok.exists() else b""
            ok = bool(data)
            return Resource(ok, hashlib.sha256(data).hexdigest()[:12] if ok else None, rev)
        lst = base / f"{res}.list"
        ok = lst.exists() and lst.read_text() == f"{res} one\n{res} two\n"
        return Resource(ok, str(lst) if ok else None, rev)

    def leftovers(self) -> list[str]:
        """Everything of the plan that exists, in any environment: its directories and live listeners."""
        out = [f"directory {p.name}" for p in sorted(self.work.glob(f"{self.spec.svc}-*")) if p.exists()]
        out += [f"listener pid {p.pid} ({Path(name).name}, {Path(name).parent.name})"
                for p, name in listeners(self.mark)]  # fmt: skip
        return out

    def servers(self, k: int, env: str) -> list[int]:
        """Pids of the live listeners of section k's server in `env`."""
        name = str(self.base(env) / self.spec.resource(k))
        return [p.pid for p, n in listeners(self.mark) if n == name]

    def settle(self, envs: tuple[str, ...]) -> None:
        """Wait (10 s at most) until no server of the plan that has died is still a zombie. An operator's next
        command comes later than init reaps what a run or a break killed (this VM's init reaps on a 2 s
        timer), and a zombie's pid passes the plan's `kill -0` guard, under plain bash too."""
        deadline = time.monotonic() + 10
        for env in envs:
            for k in range(1, self.spec.n + 1):
                if self.spec.section(k).kind != "server":
                    continue
                pid = _int(self.base(env) / f"{self.spec.resource(k)}.pid")
                while pid is not None and _zombie(pid) and time.monotonic() < deadline:
                    time.sleep(0.01)

    # -- out-of-band changes (what an operator or a failure does behind Director's back) ------------------

    def break_(self, k: int, env: str) -> dict[str, bytes] | None:
        """Break section k's resource in `env`; what is needed to heal it (None: nothing there to break)."""
        s, res, base = self.spec.section(k), self.spec.resource(k), self.base(env)
        if s.kind == "server":
            pid, port = _int(base / f"{res}.pid"), _int(base / f"{res}.port")
            if pid is None or port is None or not signal_if(pid, ours(self.mark), signal.SIGTERM):
                return None  # dead, or its pid is another process's by now: nothing to break
            # Gone, not only dead: the listener is init's child by now, and an init that reaps on a timer (this
            # VM's polls every 2 s) keeps the zombie's pid, which the plan's `kill -0` guard takes for a live
            # server. A server that crashed behind Director's back is long reaped when the operator looks.
            deadline = time.monotonic() + 10
            while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
                time.sleep(0.01)
            return {"port": str(port).encode()}
        name = {"file": "conf", "token": "token", "list": "list"}[s.kind]
        path = base / f"{res}.{name}"
        if not path.exists() or (s.kind == "list" and not self.resource(k, env).holds):
            return None  # nothing there to break (a list broken already keeps what the first break took)
        saved = {name: path.read_bytes()}
        if s.kind == "list":
            path.write_text(f"{res} one\n")
        else:
            path.unlink()
        return saved

    def heal(self, k: int, env: str, saved: dict[str, bytes], env_vars: dict[str, str]) -> None:
        """Put back what `break_` took (a server: restarted by the test on its old port)."""
        s, res, base = self.spec.section(k), self.spec.resource(k), self.base(env)
        if not base.exists():
            return
        if s.kind != "server":
            ((name, data),) = saved.items()
            (base / f"{res}.{name}").write_bytes(data)
            return
        name = str(base / res)
        (base / f"{res}.port").unlink(missing_ok=True)
        src = self.work.parent / "listener.py"
        if not src.exists():
            src.write_text(LISTENER + "\n")
        # Through a shell that exits at once: the listener is nobody's child here (no zombie in this process).
        subprocess.run(
            ["sh", "-c", 'nohup python3 -S - "$1" "$2" <"$3" >>"$1.log" 2>&1 &', "heal", name,
             saved["port"].decode(), str(src)],
            env=env_vars, check=True, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while not (base / f"{res}.port").exists() and time.monotonic() < deadline:
            time.sleep(0.01)


def _int(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None

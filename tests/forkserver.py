"""`python -m director …` forked from an interpreter that has imported Director already, for the test suite.

Why (issue 37): the suite starts ~2,500 `director` processes; a small one spends ~250 ms of its ~400 ms of CPU
importing Python modules (typer, markdown-it, ruamel.yaml, tree-sitter, 125 dataclasses…), the same work each
time. Here each pytest worker starts one *server* that imports Director once and then forks a fresh process
per call. That process is the CLI as `python -m director ARGS` runs it: its own pid, its own descriptors 0, 1
and 2 (the caller's pipes, passed over a Unix socket) and no others, the caller's environment, working
directory and umask, `sys.path[0]` its directory, its command line in /proc (`_retitle`), new `sys.std*`
objects on its descriptors (encoding and errors as the interpreter chose them at start), `__main__` run by
runpy as `-m` runs it, then what the interpreter does on the way out: non-daemon threads joined, atexit
handlers, the streams flushed.

`run` has `subprocess.run`'s signature and result (CompletedProcess, TimeoutExpired after killing the
process, CalledProcessError with check=True, text decoded with universal newlines), and `Popen` returns an
object with `subprocess.Popen`'s interface (`pid` the CLI's own process, so a test's SIGKILL or SIGINT reaches
it; `poll`, `wait`, `communicate`, its pipes), so a call site changes `subprocess.` to `forkserver.`. Both use
a real exec (`subprocess` itself) whenever the fork could differ from one: a command that is not
`sys.executable -m director` (a prefix such as `setpriv`), an option it does not carry (`preexec_fn`,
`pass_fds`, …), an environment whose variables the interpreter reads at start (`PYTHON*`, `LANG`, `LC_ALL`,
`LC_CTYPE`) differ from the server's, or one that sets `DIRECTOR_TEST_EXEC=1` (the whole suite as it ran
before, set in the environment the tests pass down). A test that drives Director at a terminal starts it with
pexpect. tests/test_forkserver.py compares the two ways on the same calls, a SIGKILL mid-act and its resumed
run among them.

The server ends with the pytest worker that started it (at exit, or when it sees its parent gone); the
processes it forked end on their own, as `subprocess`'s children do.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import locale
import os
import select
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parent.parent
DIRECTOR = [sys.executable, "-m", "director"]
# Popen's keywords the fork carries (run's own, input, capture_output, timeout and check, it handles itself);
# any other means a real exec
_CARRIED = {"cwd", "env", "stdin", "stdout", "stderr", "text", "encoding", "errors", "universal_newlines",
            "start_new_session"}  # fmt: skip
_SET_AT_START = ("LANG", "LC_ALL", "LC_CTYPE")
# `DIRECTOR_TEST_EXEC=1` in a call's environment: a real exec (for the call, or the whole suite when set for it)
EXEC = "DIRECTOR_TEST_EXEC"
_STDIO = (0, 1, 2)
_ROOM = " " * 16384  # the server's last argument: room for a child's command line (`_retitle`)


def _at_start(env: dict[str, str]) -> dict[str, str]:
    """The variables the interpreter reads before any of Director's code runs."""
    return {k: v for k, v in env.items() if k.startswith("PYTHON") or k in _SET_AT_START}


# ---------------------------------------------------------------------------------------------- the caller


class _Server:
    def __init__(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="dt-forkserver-")
        self.sock = os.path.join(self.dir, "s")
        self.env = dict(os.environ)
        r, w = os.pipe()
        self.proc = subprocess.Popen(
            [sys.executable, "-c", f"import tests.forkserver as f; f.serve({self.sock!r}, {w})", _ROOM],
            cwd=ROOT, env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, pass_fds=[w],
        )  # fmt: skip
        os.close(w)
        with os.fdopen(r, "rb") as ready:
            said = ready.read()
        if said != b"ready":
            self.stop()
            raise RuntimeError(f"tests/forkserver.py: the server did not start ({said!r})")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


_server: _Server | None = None
_server_pid = 0  # the process that started it (a forked test process must not use its parent's)
_lock = threading.Lock()


def _the_server() -> _Server:
    global _server, _server_pid
    with _lock:
        if _server is None or _server_pid != os.getpid():
            _server = _Server()
            _server_pid = os.getpid()
            atexit.register(_server.stop)
        return _server


def _forks(cmd: Any, kw: dict[str, Any]) -> bool:
    if not isinstance(cmd, list | tuple) or list(cmd[:3]) != DIRECTOR:
        return False
    env = dict(os.environ if kw.get("env") is None else kw["env"])
    if set(kw) - _CARRIED or env.get(EXEC) == "1":
        return False
    return _at_start(env) == _at_start(_the_server().env)


def run(cmd: Any, *, input: Any = None, capture_output: bool = False, timeout: float | None = None,
        check: bool = False, **kw: Any) -> subprocess.CompletedProcess[Any]:  # fmt: skip
    """`subprocess.run(cmd, …)`; forked from the server when `cmd` is `python -m director …` (module doc).
    On a timeout the process is killed, and its process group with it when it has its own (start_new_session)."""
    if not _forks(cmd, kw):
        return subprocess.run(cmd, input=input, capture_output=capture_output, timeout=timeout, check=check, **kw)
    if capture_output:
        kw.update(stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if input is not None:
        kw["stdin"] = subprocess.PIPE
    with Forked(list(cmd), **kw) as p:
        try:
            out, err = p.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            p._kill_all()
            out, err = p.communicate()
            raise subprocess.TimeoutExpired(p.args, timeout or 0, output=out, stderr=err) from None
    done = subprocess.CompletedProcess(p.args, p.wait(), out, err)
    if check:
        done.check_returncode()
    return done


def Popen(cmd: Any, **kw: Any) -> subprocess.Popen[Any]:
    """`subprocess.Popen(cmd, **kw)`, or a `Forked` process (Popen's interface) when `cmd` is `python -m director …`."""
    if _forks(cmd, kw):
        return cast("subprocess.Popen[Any]", Forked(list(cmd), **kw))
    return subprocess.Popen(cmd, **kw)


class Forked:
    """A forked `python -m director …` with `subprocess.Popen`'s interface: `pid` is the CLI's process (signals
    go to it), `stdin`/`stdout`/`stderr` the caller's ends of its pipes, `poll`/`wait`/`communicate` as Popen's."""

    def __init__(self, cmd: list[str], *, cwd: Any = None, env: dict[str, str] | None = None, stdin: Any = None,
                 stdout: Any = None, stderr: Any = None, text: bool | None = None, encoding: str | None = None,
                 errors: str | None = None, universal_newlines: bool | None = None,
                 start_new_session: bool = False) -> None:  # fmt: skip
        self.args = cmd
        self.returncode: int | None = None
        self._group = start_new_session
        self._text = bool(text or universal_newlines or encoding or errors)
        self._encoding = encoding or locale.getpreferredencoding(False)
        self._errors = errors or "strict"
        self._got: dict[int, list[bytes]] = {}
        self._said = b""
        ours: list[int] = []  # descriptors opened here for the child, closed once it has them
        mine: dict[int, int] = {}  # the child's descriptor -> our end of its pipe

        def end(fd: int, spec: Any) -> int:
            if spec is None:
                return fd
            if spec == subprocess.DEVNULL:
                ours.append(os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY))
                return ours[-1]
            if spec == subprocess.PIPE:
                r, w = os.pipe()
                theirs, mine[fd] = (r, w) if fd == 0 else (w, r)
                ours.append(theirs)
                return theirs
            if spec == subprocess.STDOUT and fd == 2:
                return -1  # stderr goes where stdout goes
            return spec if isinstance(spec, int) else spec.fileno()

        fds = [end(0, stdin), end(1, stdout), end(2, stderr)]
        fds[2] = fds[1] if fds[2] == -1 else fds[2]
        umask = os.umask(0o22)
        os.umask(umask)
        request = {"argv": cmd[3:], "env": dict(os.environ if env is None else env), "umask": umask,
                   "cwd": os.path.abspath(os.fspath(cwd)) if cwd is not None else os.getcwd(),
                   "setsid": start_new_session}  # fmt: skip
        self._conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._conn.connect(_the_server().sock)
            socket.send_fds(self._conn, [json.dumps(request).encode() + b"\n"], fds)
        finally:
            for fd in ours:
                os.close(fd)
        self.pid = int(self._line(0, None))
        self.stdin = self._file(mine.get(0), "wb")
        self.stdout = self._file(mine.get(1), "rb")
        self.stderr = self._file(mine.get(2), "rb")

    def _file(self, fd: int | None, mode: str) -> Any:
        if fd is None:
            return None
        f = open(fd, mode)  # noqa: SIM115
        if not self._text:
            return f
        return io.TextIOWrapper(f, encoding=self._encoding, errors=self._errors, write_through=mode == "wb")

    def _line(self, n: int, timeout: float | None) -> bytes:
        """Line `n` the waiter sends (0: the pid, 1: the wait status); TimeoutExpired when it is not there yet."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._said.count(b"\n") <= n:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([self._conn], [], [], left)[0]:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            chunk = self._conn.recv(4096)
            if not chunk:
                raise RuntimeError(f"tests/forkserver.py: no wait status for {self.args!r} ({self._said!r})")
            self._said += chunk
        return self._said.split(b"\n")[n]

    def poll(self) -> int | None:
        if self.returncode is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.wait(0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self.returncode = os.waitstatus_to_exitcode(int(self._line(1, timeout)))
            self._conn.close()
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def _kill_all(self) -> None:
        """SIGKILL to its process group when it has its own (before its setsid, to it alone): `run`'s timeout."""
        if self.poll() is None:
            for send in (os.killpg, os.kill) if self._group else (os.kill,):
                with contextlib.suppress(ProcessLookupError):
                    send(self.pid, signal.SIGKILL)
                    return

    def communicate(self, input: Any = None, timeout: float | None = None) -> tuple[Any, Any]:
        """Popen.communicate: feed stdin, read stdout and stderr to their end, then wait; on a timeout what was
        read is kept for the next call."""
        deadline = None if timeout is None else time.monotonic() + timeout
        sel = selectors.DefaultSelector()
        data = b""
        if self.stdin is not None and not self.stdin.closed:
            self.stdin.flush()
            data = input.encode(self._encoding, self._errors) if isinstance(input, str) else (input or b"")
            if data:
                os.set_blocking(self.stdin.fileno(), False)
                sel.register(self.stdin.fileno(), selectors.EVENT_WRITE, self.stdin)
            else:
                self.stdin.close()
        for f in (self.stdout, self.stderr):
            if f is not None and not f.closed:
                self._got.setdefault(f.fileno(), [])
                sel.register(f.fileno(), selectors.EVENT_READ, f)
        with sel:
            while sel.get_map():
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise subprocess.TimeoutExpired(self.args, timeout or 0)
                for key, _ in sel.select(left):
                    if key.data is self.stdin:
                        try:
                            data = data[os.write(key.fd, data[:65536]):]
                        except BrokenPipeError:
                            data = b""
                        if not data:
                            sel.unregister(key.fd)
                            key.data.close()
                        continue
                    chunk = os.read(key.fd, 65536)
                    if chunk:
                        self._got[key.fd].append(chunk)
                    else:
                        sel.unregister(key.fd)
        got = [None if f is None else b"".join(self._got[f.fileno()]) for f in (self.stdout, self.stderr)]
        for f in (self.stdout, self.stderr):
            if f is not None:
                f.close()
        self.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return self._decoded(got[0]), self._decoded(got[1])

    def _decoded(self, data: bytes | None) -> Any:
        if data is None or not self._text:
            return data
        text = data.decode(self._encoding, self._errors)
        return text.replace("\r\n", "\n").replace("\r", "\n")  # as subprocess's universal newlines

    def __enter__(self) -> Forked:
        return self

    def __exit__(self, *exc: object) -> None:
        for f in (self.stdin, self.stdout, self.stderr):
            if f is not None and not f.closed:
                f.close()
        self.wait()


# ---------------------------------------------------------------------------------------------- the server


# The wrangler shim is wrangler, not Director: its own process (the local target puts it on PATH).
SHIM_MODULES = ("director.targets.wrangler_shim", "director.targets.shim")


def cli_modules() -> Iterator[str]:
    """Every module of Director's package the CLI's process may import: not `__main__` (importing it runs the
    CLI) nor the shim's."""
    import pkgutil

    import director

    for info in pkgutil.walk_packages(director.__path__, "director."):
        if not info.name.startswith(SHIM_MODULES) and info.name != "director.__main__":
            yield info.name


def serve(path: str, ready: int) -> None:
    """Import Director, then fork a process per request until the parent goes away."""
    import gc
    import importlib

    parent = os.getppid()
    for name in cli_modules():
        importlib.import_module(name)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    listener.settimeout(1.0)
    gc.collect()
    gc.freeze()  # the imported heap stays shared with every child, untouched
    os.write(ready, b"ready")
    os.close(ready)
    try:  # not an atexit handler: the CLI's processes run those, and are forked from here
        while os.getppid() == parent:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                _reap()
                continue
            with conn:
                msg, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
                while not msg.endswith(b"\n"):
                    msg += conn.recv(1 << 20)
                if os.fork() == 0:  # the waiter: forks the CLI's process, says its pid, then its wait status
                    listener.close()
                    _wait_on(conn, fds, json.loads(msg))
                for fd in fds:
                    os.close(fd)
            _reap()
    finally:
        shutil.rmtree(os.path.dirname(path), ignore_errors=True)


def _reap() -> None:
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def _wait_on(conn: socket.socket, fds: list[int], request: dict[str, Any]) -> None:
    try:
        pid = os.fork()
        if pid == 0:
            conn.close()
            _become_cli(fds, request)
        for fd in fds:
            os.close(fd)
        conn.sendall(f"{pid}\n".encode())
        _, status = os.waitpid(pid, 0)
        conn.sendall(f"{status}\n".encode())
    finally:
        os._exit(0)


def _become_cli(fds: list[int], request: dict[str, Any]) -> None:
    """The child: what `python -m director ARGV` is at the point its `__main__` runs, then runs it."""
    import atexit as _atexit
    import runpy

    code = 1
    try:
        for target, fd in zip(_STDIO, fds, strict=True):
            if fd != target:
                os.dup2(fd, target)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))  # only 0, 1 and 2, as subprocess's close_fds
        if request["setsid"]:
            os.setsid()
        os.chdir(request["cwd"])
        os.umask(request["umask"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.path[0] = os.getcwd()
        for fd, name in zip(_STDIO, ("stdin", "stdout", "stderr"), strict=True):
            stream = _stdio(fd, getattr(sys, f"__{name}__"))
            setattr(sys, name, stream)
            setattr(sys, f"__{name}__", stream)
        _retitle([sys.executable, "-m", "director", *request["argv"]])
        sys.argv = ["-m", *request["argv"]]
        try:
            runpy._run_module_as_main("director", alter_argv=True)  # type: ignore[attr-defined]
            code = 0
        except SystemExit as e:
            code = _exit_code(e.code)
        except BaseException:  # what the interpreter prints of an uncaught exception
            import traceback

            traceback.print_exc()
            code = 1
        threading._shutdown()  # type: ignore[attr-defined]
        _atexit._run_exitfuncs()
        for written in (sys.stdout, sys.stderr):
            try:
                if written is not None:
                    written.flush()
            except (OSError, ValueError):
                code = 120
    except BaseException:  # a fault of this module's, not of the CLI: said on the process's stderr
        import traceback

        os.write(2, ("tests/forkserver.py: " + traceback.format_exc()).encode())
    finally:
        os._exit(code)


def _retitle(argv: list[str]) -> None:
    """/proc/PID/cmdline says `python -m director ARGV`, as an exec's would (`ps`, `pgrep -f`, a block that finds
    Director by it): the argument strings are rewritten in place, in the room the server's last argument made
    (what setproctitle does; the kernel reads the command line from that memory)."""
    with open("/proc/self/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()  # fields 3… of proc(5)
    start, end = int(fields[45]), int(fields[46])  # arg_start, arg_end (fields 48 and 49)
    line = b"\0".join(os.fsencode(a) for a in argv)[: end - start - 1]
    with open("/proc/self/mem", "r+b", buffering=0) as mem:
        mem.seek(start)
        mem.write(line.ljust(end - start, b"\0"))


def _exit_code(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, int):
        return value & 0xFF
    print(value, file=sys.stderr)
    return 1


def _stdio(fd: int, like: Any) -> io.TextIOWrapper:
    """A standard stream as the interpreter opens it at start (Python/pylifecycle.c: create_stdio)."""
    raw = io.FileIO(fd, "rb" if fd == 0 else "wb", closefd=False)
    buffered = io.BufferedReader(raw) if fd == 0 else io.BufferedWriter(raw)
    unbuffered = bool(like.write_through)  # -u or PYTHONUNBUFFERED
    return io.TextIOWrapper(buffered, encoding=like.encoding, errors=like.errors, newline="\n",
                            line_buffering=not unbuffered and (os.isatty(fd) or fd == 2),
                            write_through=unbuffered)  # fmt: skip

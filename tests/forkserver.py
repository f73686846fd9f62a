"""`python -m director …` run to completion, forked from an interpreter that has imported Director already.

Why (issue 37): the suite starts ~2,500 `director` processes; a small one spends ~250 ms of its ~400 ms of CPU
importing Python modules (typer, markdown-it, ruamel.yaml, tree-sitter, 125 dataclasses…), the same work each
time. Here each pytest worker starts one *server* that imports Director once and then forks a fresh process
per call. That process is the CLI as `python -m director ARGS` runs it: its own pid, its own descriptors 0, 1
and 2 (the caller's pipes, passed over a Unix socket) and no others, the caller's environment, working
directory and umask, `sys.path[0]` its directory, new `sys.std*` objects on its descriptors (encoding and
errors as the interpreter chose them at start), `__main__` run by runpy as `-m` runs it, then what the
interpreter does on the way out: non-daemon threads joined, atexit handlers, the streams flushed.

`run` has `subprocess.run`'s signature and result (CompletedProcess, TimeoutExpired after killing the
process, CalledProcessError with check=True, text decoded with universal newlines), so a call site changes
`subprocess.run(` to `forkserver.run(`. It uses a real exec (`subprocess.run` itself) whenever the fork
could differ from one: a command that is not `sys.executable -m director` (a prefix such as `setpriv`),
an option it does not carry (`preexec_fn`, `pass_fds`, …), an environment whose variables the interpreter
reads at start (`PYTHON*`, `LANG`, `LC_ALL`, `LC_CTYPE`) differ from the server's, or one that sets
`DIRECTOR_TEST_EXEC=1` (a plan whose block finds Director by its command line: a fork's is the server's). A test that signals the process, or drives it at a terminal, starts it with `subprocess.Popen`
or pexpect as before (tests/test_forkserver.py compares the two ways on the same calls).

The server ends with the pytest worker that started it (at exit, or when it sees its parent gone); the
processes it forked end on their own, as `subprocess.run`'s children do.
"""

from __future__ import annotations

import atexit
import io
import json
import locale
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DIRECTOR = [sys.executable, "-m", "director"]
# run's keywords the fork carries; any other (or a value other than the default) means a real exec
_CARRIED = {"cwd", "env", "input", "capture_output", "stdin", "stdout", "stderr", "text", "timeout", "check",
            "encoding", "errors", "universal_newlines", "start_new_session"}  # fmt: skip
_SET_AT_START = ("LANG", "LC_ALL", "LC_CTYPE")
# in a call's environment: a real exec (a plan whose block finds Director by its command line, say)
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


def run(cmd: Any, **kw: Any) -> subprocess.CompletedProcess[Any]:
    """`subprocess.run(cmd, **kw)`; forked from the server when `cmd` is `python -m director …` (module doc)."""
    if not _forks(cmd, kw):
        return subprocess.run(cmd, **kw)
    return _call(list(cmd), **kw)


def _call(cmd: list[str], *, cwd: Any = None, env: dict[str, str] | None = None, input: Any = None,
          capture_output: bool = False, stdin: Any = None, stdout: Any = None, stderr: Any = None,
          text: bool | None = None, timeout: float | None = None, check: bool = False,
          encoding: str | None = None, errors: str | None = None, universal_newlines: bool | None = None,
          start_new_session: bool = False) -> subprocess.CompletedProcess[Any]:  # fmt: skip
    if capture_output:
        stdout = stderr = subprocess.PIPE
    if input is not None:
        stdin = subprocess.PIPE
    as_text = bool(text or universal_newlines or encoding or errors)
    ours: list[int] = []  # descriptors opened here for the child, closed once it has them
    mine: dict[int, int] = {}  # the child's descriptor -> our end of its pipe

    def end(fd: int, spec: Any) -> int:
        if spec is None:
            return fd
        if spec == subprocess.DEVNULL:
            new = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
            ours.append(new)
            return new
        if spec == subprocess.PIPE:
            r, w = os.pipe()
            theirs, here = (r, w) if fd == 0 else (w, r)
            ours.append(theirs)
            mine[fd] = here
            return theirs
        if spec == subprocess.STDOUT and fd == 2:
            return -1  # stderr goes where stdout goes
        return spec if isinstance(spec, int) else spec.fileno()

    fds = [end(0, stdin), end(1, stdout), end(2, stderr)]
    if fds[2] == -1:
        fds[2] = fds[1]
    umask = os.umask(0o22)
    os.umask(umask)
    request = {"argv": cmd[3:], "env": dict(os.environ if env is None else env),
               "cwd": os.path.abspath(os.fspath(cwd)) if cwd is not None else os.getcwd(), "umask": umask,
               "setsid": start_new_session}  # fmt: skip
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(_the_server().sock)
        socket.send_fds(conn, [json.dumps(request).encode() + b"\n"], fds)
    finally:
        for fd in ours:
            os.close(fd)
    out, status = _exchange(conn, mine, input, as_text, encoding, errors, timeout, cmd, start_new_session)
    res = [_decoded(out.get(1), as_text, encoding, errors), _decoded(out.get(2), as_text, encoding, errors)]
    if status is None:  # timed out
        raise subprocess.TimeoutExpired(cmd, timeout or 0, output=res[0], stderr=res[1])
    done = subprocess.CompletedProcess(cmd, os.waitstatus_to_exitcode(status), res[0], res[1])
    if check:
        done.check_returncode()
    return done


def _exchange(conn: socket.socket, mine: dict[int, int], input: Any, as_text: bool, encoding: str | None,
              errors: str | None, timeout: float | None, cmd: list[str], group: bool) -> tuple[dict[int, bytes], Any]:  # fmt: skip
    """Feed stdin, read stdout and stderr to their end, and the child's pid then its wait status. On a
    timeout the process is killed (its process group, when it has its own, as a caller of Popen would)."""

    def kill(pid: int) -> None:
        for send in ((os.killpg, os.kill) if group else (os.kill,)):  # the group, or the process before setsid
            try:
                send(pid, signal.SIGKILL)
                return
            except ProcessLookupError:
                pass

    data = input.encode(encoding or locale.getpreferredencoding(False), errors or "strict") if (
        as_text and isinstance(input, str)) else (input or b"")  # fmt: skip
    got: dict[int, list[bytes]] = {fd: [] for fd in mine if fd != 0}
    said = b""
    sel = selectors.DefaultSelector()
    for fd, here in mine.items():
        if fd == 0:
            os.set_blocking(here, False)
            sel.register(here, selectors.EVENT_WRITE, 0)
        else:
            sel.register(here, selectors.EVENT_READ, fd)
    sel.register(conn, selectors.EVENT_READ, -1)
    deadline = None if timeout is None else time.monotonic() + timeout
    pid = 0
    killed = False
    try:
        while sel.get_map():
            if deadline is not None and time.monotonic() >= deadline:
                if pid:
                    kill(pid)
                killed = True
                deadline = None
            events = sel.select(None if deadline is None else max(0.0, deadline - time.monotonic()))
            for key, _ in events:
                which = key.data
                if which == 0:
                    try:
                        n = os.write(key.fd, data[:65536])
                    except BrokenPipeError:
                        n = len(data)
                    data = data[n:]
                    if not data:
                        sel.unregister(key.fd)
                        os.close(key.fd)
                    continue
                chunk = conn.recv(4096) if which == -1 else os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fd)
                    if which != -1:
                        os.close(key.fd)
                elif which == -1:
                    said += chunk
                    lines = said.split(b"\n")
                    if not pid and len(lines) > 1 and lines[0]:
                        pid = int(lines[0])
                        if killed:
                            kill(pid)
                else:
                    got[which].append(chunk)
    finally:
        sel.close()
        conn.close()
        if 0 in mine and data:
            os.close(mine[0])
    lines = said.split(b"\n")
    if len(lines) < 3:
        raise RuntimeError(f"tests/forkserver.py: no exit status for {cmd!r} ({said!r})")
    status = int(lines[1])
    out = {fd: b"".join(parts) for fd, parts in got.items()}
    return out, (None if killed else status)


def _decoded(data: bytes | None, as_text: bool, encoding: str | None, errors: str | None) -> Any:
    if data is None or not as_text:
        return data
    text = data.decode(encoding or locale.getpreferredencoding(False), errors or "strict")
    return text.replace("\r\n", "\n").replace("\r", "\n")  # as subprocess's universal newlines


# ---------------------------------------------------------------------------------------------- the server


def serve(path: str, ready: int) -> None:
    """Import Director, then fork a process per request until the parent goes away."""
    import gc
    import importlib
    import pkgutil

    import director

    parent = os.getppid()
    for mod in pkgutil.walk_packages(director.__path__, "director."):
        # not `__main__` (it runs the CLI) nor the wrangler shim's modules (the shim is its own process)
        if not (mod.name.endswith("__main__") or ".shim" in mod.name or mod.name.endswith("wrangler_shim")):
            importlib.import_module(mod.name)
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

"""The session's bash: one job-control bash for the whole run, which runs each block as a subshell.

`SessionServer` starts `bash --noprofile --norc -c SERVER` as the leader of a new session. Its first
command opens a pseudo-terminal Director holds (the *session terminal*) and so makes it its controlling
terminal; then `set -m` turns job control on. It reads requests from a pipe -- a header `P S\\n`, then P
bytes of setup and S bytes of block -- and runs each as a foreground job,

    ( eval "$setup"; eval "$block" )

a forked subshell in its own process group that holds the terminal while it runs, and writes `X<status>\\n`
on its event pipe when the job ends. The setup's `eval` ends with a comment holding the `$_` the server
started with (its environment's `_`, else the path bash was started by; a newline there made a space), so
that, as after `bash -c`, a block's first `$_` is that, not the text of Director's setup. The whole server
program is one line, so that the block's `eval` runs on line 1: `$LINENO`, the trace and bash's messages
(`bash: line 3: …`) count the block's own lines, as `bash -c` does. The payloads are read with `read -N`
under `LC_ALL=C` (bytes, buffered reads).

The server's descriptor 2 is the session terminal opened read-only: bash uses it for job control
(`tcsetpgrp`), and its job reports ("Terminated", "Killed") are dropped instead of reaching a block's
output. Everything else a block needs is set up by the setup text `Shell` writes (its pty, stdin, the
trace pipe, the session). The server never changes its own state: each block starts from the same shell
and the session travels in the setup, so an `exit`, `set -e`, `readonly` or `unset` ends with its block.

Lifetime: the server exits when the request pipe closes (`close()`), and dies with Director: if Director is
killed, the session terminal hangs up, the kernel sends SIGHUP to the server (between blocks, that ends
it) and, as the session leader exits, to the foreground job (a running block). The server starts with
SIGHUP at its default action even when Director ignores it (`nohup`), so this holds there too. Jobs that
blocks left running in the background are in other process groups and are not touched, as from a terminal.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import struct
import subprocess
import termios
from collections.abc import Collection, Mapping, Sequence

from director.exec.processes import child_subreaper
from director.exec.wrappers import CAPTURE_FUNCTIONS

__all__ = ["SessionServer", "configure_pty"]

_SERVER = (
    '__director_0=${{_//$\'\\n\'/ }}; eval "$1"; set --; exec 2<{ctty} || exit 97; set -m; '
    "while read -r -u {ctl} __director_q __director_h __director_n; do "
    "__director_s=; "
    'IFS= LC_ALL=C read -r -N "$__director_h" -u {ctl} __director_p || break; '
    'if [ "$__director_n" != 0 ]; then '
    'IFS= LC_ALL=C read -r -N "$__director_n" -u {ctl} __director_s || break; fi; '
    '( eval "$__director_p"$\'\\n#\' "$__director_0"; eval "$__director_s" ); '
    'builtin printf \'X%s %s\\n\' "$__director_q" "$?" >&{ev}; '
    "done"
)


def _default_sighup() -> None:
    """In the server's child before exec: SIGHUP back to its default action, and the session's bash made
    a child subreaper (a block's orphans become its children: docs/processes.md). Only that, no locks."""
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    child_subreaper()


def _numbered_apart(fd: int, avoid: Collection[int]) -> int:
    """`fd`, or, if its number is one of `avoid`, a copy numbered above them all (`fd` closed)."""
    if fd not in avoid:
        return fd
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, max(avoid) + 1)
    os.close(fd)
    return moved


def configure_pty(fd: int, dimensions: tuple[int, int], *, echo: bool = False) -> None:
    """Terminal modes for a pty Director reads: no LF -> CRLF (output is what was written), echo as asked."""
    attrs = termios.tcgetattr(fd)
    attrs[1] &= ~termios.ONLCR
    if echo:
        attrs[3] |= termios.ECHO
    else:
        attrs[3] &= ~termios.ECHO
    termios.tcsetattr(fd, termios.TCSANOW, attrs)
    rows, cols = dimensions
    with contextlib.suppress(OSError):
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


class SessionServer:
    """The running bash of a session, its session terminal and the pipes to it."""

    def __init__(
        self,
        bash: str,
        env: Mapping[str, str],
        cwd: str,
        *,
        tty_fd: int | None,
        dimensions: tuple[int, int],
        avoid: Collection[int] = (),
    ) -> None:
        """Start the server (about 5 ms, once per run). `avoid`: descriptor numbers a block's setup opens
        at fixed numbers; the server's own descriptors never have them (they are numbered as Director's
        were free, which other threads' open files decide)."""
        self.ctty_master, self._ctty_slave = os.openpty()
        self.ctty = os.ttyname(self._ctty_slave)
        configure_pty(self._ctty_slave, dimensions)
        ctl_r, self.ctl_w = os.pipe()
        self.ev_r, self.ev_w_child = os.pipe()
        self.state_r, self.state_w_child = os.pipe()
        ctl_r, self.ev_w_child, self.state_w_child = (
            _numbered_apart(fd, avoid) for fd in (ctl_r, self.ev_w_child, self.state_w_child)
        )
        self.tty_fd = tty_fd
        keep = [ctl_r, self.ev_w_child, self.state_w_child] + ([tty_fd] if tty_fd is not None else [])
        program = _SERVER.format(ctty=self.ctty, ctl=ctl_r, ev=self.ev_w_child)
        functions = CAPTURE_FUNCTIONS
        try:
            self.proc = subprocess.Popen(
                [bash, "--noprofile", "--norc", "-c", program, "bash", functions],
                env=dict(env),
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=keep,
                start_new_session=True,
                # The session terminal's hangup must end the server and its running block when Director
                # dies, even when Director was started with SIGHUP ignored (`nohup director apply`, a
                # script's `&`): an ignored signal is inherited and bash cannot reset it.
                preexec_fn=_default_sighup,
            )
        except BaseException:
            for fd in (ctl_r, self.ctl_w, self.ev_r, self.ev_w_child, self.state_r, self.state_w_child):
                os.close(fd)
            self._close_own()
            raise
        os.close(ctl_r)
        os.close(self.ev_w_child)
        os.close(self.state_w_child)
        # The server's own descriptor numbers (a block's setup closes them, the capture reopens `state`).
        self.child_ctl, self.child_ev, self.child_state = ctl_r, self.ev_w_child, self.state_w_child
        self.pid = self.proc.pid
        for fd in (self.ev_r, self.state_r, self.ctty_master):
            os.set_blocking(fd, False)
        try:
            self.pidfd: int | None = os.pidfd_open(self.pid)
        except (AttributeError, OSError):
            self.pidfd = None  # old kernel: `alive()` polls instead
        self.ev_buf = b""
        self.closed = False

    def alive(self) -> bool:
        """Whether the server still runs (reaps it when not)."""
        return not self.closed and self.proc.poll() is None

    def death_signal(self) -> int:
        """The signal that ended the server (SIGHUP when it exited on its own)."""
        rc = self.proc.poll()
        return -rc if rc is not None and rc < 0 else int(signal.SIGHUP)

    def send(self, seq: int, setup: Sequence[bytes], block: bytes) -> None:
        """Write request `seq` (BrokenPipeError when the server is gone); `setup`, the parts of the block's
        setup, must not be empty. Written part by part, never joined: a session near its limit (16 MB,
        docs/limits.md) is not copied once more to be sent."""
        header = b"%d %d %d\n" % (seq, sum(len(p) for p in setup), len(block))
        for data in (header, *setup, block):
            view = memoryview(data)
            while view:
                n = os.write(self.ctl_w, view)
                view = view[n:]

    def events(self) -> list[bytes]:
        """Complete event lines read so far (`P<pid>`, `X<status>`); [] if none. EOFError at EOF."""
        while True:
            try:
                data = os.read(self.ev_r, 4096)
            except BlockingIOError:
                break
            if not data:
                if self.ev_buf:
                    break
                raise EOFError
            self.ev_buf += data
        *lines, self.ev_buf = self.ev_buf.split(b"\n")
        return lines

    def close(self, timeout_s: float = 2.0) -> None:
        """End the server: close its request pipe, wait briefly, kill it if it lingers (idempotent)."""
        if self.closed:
            return
        self.closed = True
        with contextlib.suppress(OSError):
            os.close(self.ctl_w)
        try:
            self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                os.killpg(self.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=timeout_s)
        for fd in (self.ev_r, self.state_r, self.pidfd):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._close_own()

    def _close_own(self) -> None:
        for fd in (self.ctty_master, self._ctty_slave):
            with contextlib.suppress(OSError):
                os.close(fd)

"""One block in flight: its pty, stdin and trace pipes, the wait for its end, its result (see `shell`)."""

from __future__ import annotations

import codecs
import contextlib
import os
import re
import select
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from director.errors import SessionTooLarge
from director.exec.capture import OutputCapture, TraceReader
from director.exec.markers import Marks
from director.exec.marks import STEP_VAR
from director.exec.processes import job_members, kill_job, waiting_reader_among
from director.exec.secrets import Redactor, StreamRedactor
from director.exec.server import SessionServer, configure_pty
from director.exec.session import SESSION_MAX_BYTES, SessionState, overflowing_name
from director.plan.bash import TraceEntry
from director.plan.source import whole_number

__all__ = ["BlockResult", "BlockRun", "Host", "Running"]

_READ_MAX = 1 << 20  # bytes read from a pty in one go: a fast writer must not make one huge chunk
_ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")


@dataclass(frozen=True)
class BlockResult:
    """What one block did."""

    exit_code: int | None  # bash's status; 128+N when killed by signal N; None if it never started
    output: str  # merged stdout/stderr, redacted, bounded
    duration_s: float
    state: SessionState  # after the block; unchanged when the state could not be captured
    timed_out: bool = False
    waited_for_input: bool = False
    signal: int | None = None  # the signal that ended the block, if any
    interrupted: bool = False  # ended by `Shell.stop()`
    # The commands bash traced (`run(trace=True)`), in memory only: values in them are redacted, and a
    # trace is never written anywhere. None when the block was not traced.
    trace: tuple[TraceEntry, ...] | None = None

    @property
    def ok(self) -> bool:
        """Exit status 0 and not stopped by Director."""
        return self.exit_code == 0 and not (self.timed_out or self.waited_for_input or self.interrupted)


def _too_large(name: str, marks: dict[str, str]) -> str:
    """Why the run stops after a block whose session passed `SESSION_MAX_BYTES`, naming the block by
    its step mark (`<plan>/<run>/<section>/<block>/<attempt>`, `director.exec.marks`) when it has one."""
    step = marks.get(STEP_VAR, "").split("/")
    where = "a block"
    if len(step) >= 5 and (block := whole_number(step[-2])) is not None:
        section = f"§{step[-3]}" if whole_number(step[-3]) is not None else f"the {step[-3]} section"
        where = f"{section}'s block {block + 1}"
    what = f" (at `{name}`)" if name else ""
    return (
        f"{where} left a session larger than {SESSION_MAX_BYTES >> 20} MiB{what}: Director carries at most "
        "that between blocks (docs/limits.md); keep large data in a file and pass its path"
    )


class Running:
    """The block in flight: what `stop()` needs from another thread or a signal handler."""

    def __init__(self) -> None:
        self.pid: int | None = None
        self.stop_requested = False


def _prompt(tail: str) -> str:
    """What a block waiting for input asks: its unfinished last line, else its last non-empty line."""
    text = _ANSI.sub("", tail).replace("\r\n", "\n")
    last = text.rsplit("\n", 1)[-1].rsplit("\r", 1)[-1]
    if last.strip():
        return last
    lines = [ln.rsplit("\r", 1)[-1] for ln in text.split("\n") if ln.strip()]
    return lines[-1] if lines else ""


class _Stream:
    """One pty Director reads: decoded and redacted chunk by chunk (a traced block's command marks taken
    out first, `director.exec.markers`)."""

    def __init__(self, fd: int, redactor: Redactor, marks: Marks | None = None) -> None:
        self.fd = fd
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.redact: StreamRedactor = redactor.stream()
        self.marks = marks
        self.open = True
        self.hup = False  # the last read said EIO while the block was still running (read again: `read`)

    def _text(self, data: bytes, final: bool = False) -> str:
        text = self.decoder.decode(data, final=final)
        if self.marks is not None:
            text = self.marks.feed(text) + (self.marks.flush() if final else "")
        return text

    def read(self, *, ended: bool = True) -> tuple[str, bool]:
        """(text available now, at most `_READ_MAX` bytes of it; still open). EOF closes it; so does EIO
        (every writer closed) once the block has ended (`ended`). While it runs, EIO only sets `hup`: a pty
        master can say EIO between two writes of a block that goes on writing (measured here, Linux 6.18
        under load: about one traced block in a thousand lost the rest of its output when that EIO closed
        the stream; `tests/test_pty_eio.py`), so the stream is read again until the block ends."""
        out: list[str] = []
        got = 0
        while self.open and got < _READ_MAX:
            try:
                data = os.read(self.fd, 65536)
            except (BlockingIOError, InterruptedError):
                self.hup = False
                break
            except OSError:
                if ended:
                    self.open = False
                else:
                    self.hup = True
                break
            if not data:
                self.open = False
                break
            got += len(data)
            out.append(self.redact.feed(self._text(data)))
        return "".join(out), self.open

    def flush(self) -> str:
        return self.redact.feed(self._text(b"", final=True)) + self.redact.flush()


class Host(Protocol):
    """What a block needs of its `Shell` (the session: its bash, settings, caches)."""

    workdir: Path
    redactor: Redactor
    _clock: Callable[[], float]
    _sleeper: Callable[[float], None]
    _probe_after: float
    _kill_grace: float
    _dimensions: tuple[int, int]
    _tty_fd: int | None
    _tty_name: str
    _wake_r: int
    _server: SessionServer | None
    _seq: int

    def _ensure_server(self) -> SessionServer: ...
    def _drop_server(self) -> None: ...
    def _setup(
        self, state: SessionState, cwd: str, blk: BlockRun, server: SessionServer
    ) -> tuple[bytes, bytes]: ...
    def _parse_state(self, raw: bytes | bytearray, before: SessionState) -> SessionState | None: ...


class BlockRun:
    """One block in flight: its pty, stdin and trace pipes, the wait for its end, its result."""

    def __init__(
        self,
        shell: Host,
        script: str,
        state: SessionState,
        timeout_s: float | None,
        on_output: Callable[[str], None] | None,
        on_waiting: Callable[[str], None] | None,
        cur: Running,
        trace: bool,
        kept: bool = False,
    ) -> None:
        self.sh = shell
        self.kept = kept  # the block cannot change the session: its capture is its status and directory
        self.script = script
        self.state = state
        self.timeout_s = timeout_s
        self.on_output = on_output
        self.on_waiting = on_waiting
        self.cur = cur
        self.trace = trace
        self.capture = OutputCapture()
        self.tail = ""  # the last output, for a waiting block's prompt
        self.pgid: int | None = None
        self.status: int | None = None  # from the server's X report
        self.seq = 0
        self.pts = ""
        self.stdin_r: int | None = None
        self.stdin_w: int | None = None
        self.trace_w: int | None = None
        self.master: int | None = None
        self.slave: int | None = None
        self.tracer: TraceReader | None = None
        self.marks_seen: Marks | None = Marks() if trace else None  # what a traced block's marks said
        self.state_buf = bytearray()
        self.overflow: str | None = None  # the capture passed SESSION_MAX_BYTES (at this variable)
        self.server_died = False
        self.streams: tuple[_Stream, ...] = ()
        self.waiting = False  # on_waiting was called and output has not resumed since
        self.forward_to: int | None = None  # the pty a waiting reader reads (interactive: keys go there)
        self.marks: dict[str, str] = {}  # what the block exports for all it starts (`director.exec.marks`)

    def emit(self, text: str) -> None:
        if text:
            self.capture.add(text)
            self.tail = (self.tail + text)[-2048:]
            if self.waiting:
                self.waiting = False
                self.forward_to = None
            if self.on_output is not None:
                self.on_output(text)

    # -- setup and teardown of the block's descriptors --------------------------------------------

    def run(self) -> BlockResult:
        start = self.sh._clock()
        cwd = self.state.cwd or str(self.sh.workdir)
        if not os.path.isdir(cwd):
            self.emit(f"[director] the session's working directory {cwd} no longer exists; block not run\n")
            return BlockResult(None, self.capture.text(), 0.0, self.state)
        with contextlib.suppress(OSError):
            os.read(self.sh._wake_r, 4096)  # forget wake-ups meant for an earlier block
        try:
            self._open()
            reason = self._start(cwd)
            if reason is None:
                reason = self._pump(start)
            self._finish_output()
        finally:
            self._close()
        return self._result(start, reason)

    def _open(self) -> None:
        self.master, self.slave = os.openpty()
        configure_pty(self.slave, self.sh._dimensions)
        self.pts = os.ttyname(self.slave)
        os.set_blocking(self.master, False)
        if self.sh._tty_fd is None:
            self.stdin_r, self.stdin_w = os.pipe()
        if self.trace:
            tr, self.trace_w = os.pipe()
            self.tracer = TraceReader(tr, self.sh.redactor, skip_eval=True)

    def _started(self) -> None:
        """The subshell opened its descriptors: Director's copies of the block's ends can go."""
        for name in ("slave", "stdin_r", "trace_w"):
            fd = getattr(self, name)
            if fd is not None:
                os.close(fd)
                setattr(self, name, None)

    def _close(self) -> None:
        self._started()
        for fd in (self.master, self.stdin_w):
            if fd is not None:
                os.close(fd)  # leftover writers now see EIO, leftover readers EOF
        self.master = self.stdin_w = None
        if self.tracer is not None:
            os.close(self.tracer.fd)

    # -- starting -----------------------------------------------------------------------------------

    def _start(self, cwd: str) -> str | None:
        """Send the block to the session's bash (started or restarted as needed)."""
        sh = self.sh
        payload = self.script.replace("\0", "").encode("utf-8", "surrogateescape")  # bash drops NULs
        for attempt in (1, 2):
            server = sh._ensure_server()
            self._discard_session_terminal(server)
            sh._seq += 1
            self.seq = sh._seq
            try:
                server.send(self.seq, sh._setup(self.state, cwd, self, server), payload)
                return None
            except BrokenPipeError:
                sh._drop_server()  # it died between blocks: start a new one
                if attempt == 2:
                    raise
        return None

    @staticmethod
    def _discard_session_terminal(server: SessionServer) -> None:
        """What reached the session terminal between blocks belongs to no block."""
        with contextlib.suppress(OSError):
            while os.read(server.ctty_master, 65536):
                pass

    # -- waiting for the end -----------------------------------------------------------------------

    def _events(self, server: SessionServer) -> None:
        try:
            lines = server.events()
        except EOFError:
            self.server_died = True
            return
        for line in lines:
            kind, _, rest = line.partition(b" ")
            if kind[:1] not in (b"P", b"X") or kind[1:] != str(self.seq).encode():
                continue  # a stale report (a block given up on earlier)
            if kind[:1] == b"P":
                self.pgid = self.cur.pid = int(rest)
                self._started()
            else:
                self.status = int(rest)

    def _read_state(self, server: SessionServer) -> None:
        """What the block's EXIT capture wrote so far; past `SESSION_MAX_BYTES` it is read and dropped
        (bash must finish writing), and what the capture was at is kept to say so (`_result`)."""
        with contextlib.suppress(BlockingIOError, OSError):
            while data := os.read(server.state_r, 65536):
                if self.overflow is not None:
                    continue
                self.state_buf += data
                if len(self.state_buf) > SESSION_MAX_BYTES:
                    self.overflow = overflowing_name(bytes(self.state_buf[:SESSION_MAX_BYTES]))
                    self.state_buf = bytearray()

    def _pump(self, start: float) -> str | None:
        """Stream output until the block ends; kill on timeout/stop/input wait. Returns why it killed."""
        sh = self.sh
        server = sh._server
        assert server is not None and self.master is not None
        out = _Stream(self.master, sh.redactor, self.marks_seen)
        tty = _Stream(server.ctty_master, sh.redactor)
        self.streams = (out, tty)
        poller = select.poll()
        for fd in (self.master, server.ctty_master, server.ev_r, server.state_r, sh._wake_r):
            poller.register(fd, select.POLLIN)
        if self.tracer is not None:
            poller.register(self.tracer.fd, select.POLLIN)
        if server.pidfd is not None:
            poller.register(server.pidfd, select.POLLIN)
        deadline = None if self.timeout_s is None else start + self.timeout_s
        self.last_output = start
        next_probe = start + sh._probe_after
        forwarding = False
        hung: list[_Stream] = []  # said EIO while the block runs: read on each turn, not polled (HUP spins)
        while True:
            now = sh._clock()
            reason: str | None = None
            if self.cur.stop_requested:
                reason = "stop"
            elif deadline is not None and now >= deadline:
                reason = "timeout"
                self.emit(
                    f"\n[director] timed out after {self.timeout_s:g}s; stopping the block's processes\n"
                )
            elif self.pgid is not None and now - self.last_output >= sh._probe_after and now >= next_probe:
                next_probe = now + 0.5
                reason = self._probe()
            if reason is not None:
                self._kill(server)
                return reason
            if self.status is not None or self.server_died:
                return None
            if self.forward_to is not None and not forwarding and sh._tty_fd is not None:
                poller.register(sh._tty_fd, select.POLLIN)
                forwarding = True
            elif self.forward_to is None and forwarding and sh._tty_fd is not None:
                poller.unregister(sh._tty_fd)
                forwarding = False
            wait_ms = 10 if hung else 250
            if deadline is not None and deadline - now < wait_ms / 1000:
                # compared first: a deadline centuries away (`--step-timeout 1e308`) is no int of ms
                wait_ms = max(0, int((deadline - now) * 1000) + 1)
            for stream in [s for s in hung if self._read_stream(s)]:
                hung.remove(stream)  # no EIO any more: polled again
                poller.register(stream.fd, select.POLLIN)
            for fd, _ev in poller.poll(wait_ms):
                if fd == out.fd or fd == tty.fd:
                    stream = out if fd == out.fd else tty
                    if not self._read_stream(stream):
                        poller.unregister(fd)
                        if stream.open:
                            hung.append(stream)
                elif fd == server.ev_r:
                    self._events(server)
                elif fd == server.state_r:
                    self._read_state(server)
                elif self.tracer is not None and fd == self.tracer.fd:
                    if not self.tracer.read():
                        poller.unregister(fd)
                elif fd == server.pidfd:
                    self._events(server)
                    if self.status is None:
                        self.server_died = not server.alive()
                elif fd == sh._tty_fd and self.forward_to is not None:
                    with contextlib.suppress(OSError):
                        os.write(self.forward_to, os.read(sh._tty_fd, 4096))
                elif fd == sh._wake_r:
                    with contextlib.suppress(OSError):
                        os.read(sh._wake_r, 4096)
            if server.pidfd is None and self.status is None and not server.alive():
                self._events(server)
                self.server_died = self.status is None

    def _read_stream(self, stream: _Stream) -> bool:
        """Read what one of the block's terminals holds while the block runs; whether it is still polled
        (neither closed nor saying EIO)."""
        text, still = stream.read(ended=False)
        if text:
            self.last_output = self.sh._clock()
            self.emit(text)
        return still and not stream.hup

    def _probe(self) -> str | None:
        """Whether the block waits for input: kill it (not interactive) or tell `on_waiting` (once)."""
        sh = self.sh
        server = sh._server
        assert self.pgid is not None and server is not None
        targets = {self.pts, server.ctty, "/dev/tty"}
        if self.stdin_w is not None:
            targets.add(f"pipe:[{os.fstat(self.stdin_w).st_ino}]")
        if sh._tty_fd is not None:
            targets.add(sh._tty_name)
        found = waiting_reader_among(job_members(self.pgid), targets)
        if found is None:
            self.waiting = False
            self.forward_to = None
            return None
        wpid, comm, what = found
        if sh._tty_fd is None:
            where = "the terminal" if what.startswith("/dev/") else "stdin"
            self.emit(
                f"\n[director] the block is waiting for keyboard input ({comm}, pid {wpid}, reads {where})"
                " but this run is not interactive; stopping it\n"
            )
            return "input"
        if not self.waiting:
            self.waiting = True
            if what == self.pts:
                self.forward_to = self.master
            elif what in (server.ctty, "/dev/tty"):
                self.forward_to = server.ctty_master
            if self.on_waiting is not None:
                self.on_waiting(_prompt(self.tail))
        return None

    def _kill(self, server: SessionServer) -> None:
        """Kill the block's processes and wait for its end report (output keeps flowing meanwhile)."""
        sh = self.sh

        def tick() -> None:
            self._events(server)
            self._read_state(server)
            self._drain_nowait()
            if self.status is None and not server.alive():
                self.server_died = True

        grace_end = sh._clock() + sh._kill_grace
        while self.pgid is None and self.status is None and not self.server_died:
            if sh._clock() >= grace_end:
                break
            tick()
            sh._sleeper(0.01)
        if self.pgid is not None:
            kill_job(
                self.pgid,
                alive=lambda: self.status is None and not self.server_died,
                grace_s=sh._kill_grace,
                clock=sh._clock,
                sleeper=sh._sleeper,
                tick=tick,
            )
        if self.status is None and not self.server_died:
            sh._drop_server()  # it never reported the block's end: never reuse it
            self.server_died = True

    def _drain_nowait(self) -> None:
        for stream in self.streams:
            text, _ = stream.read(ended=False)
            self.emit(text)

    def _finish_output(self) -> None:
        """After the block: the rest of its output (until EOF, or a short silence if a job holds the pty)."""
        server = self.sh._server
        if not self.streams:
            return
        out, tty = self.streams
        self._started()
        while out.open:
            r, _, _ = select.select([out.fd], [], [], 0.02)
            if not r:
                break
            text, _ = out.read()
            self.emit(text)
        text, _ = tty.read()
        self.emit(text + out.flush() + tty.flush())
        if server is not None and not server.closed:
            self._read_state(server)
        if self.tracer is not None:
            self.tracer.read()  # what is left; a detached job holding the pipe is not waited for

    def _result(self, start: float, reason: str | None) -> BlockResult:
        sh = self.sh
        new_state = self.state
        if self.status is not None and self.overflow is not None:
            raise SessionTooLarge(_too_large(self.overflow, self.marks))
        if self.status is not None:
            parsed = sh._parse_state(self.state_buf, self.state)
            self.state_buf = bytearray()  # read: not held while the rest of the step runs
            captured = parsed is not None
            if parsed is not None:
                new_state = parsed
            code: int | None = self.status
            sig = self.status - 128 if self.status > 128 and (reason is not None or not captured) else None
            if self.pgid is None:
                self.emit(f"[director] the block could not be started (status {self.status})\n")
        else:
            server = sh._server
            sig = server.death_signal() if server is not None else None
            if reason is None:
                self.emit(f"\n[director] the session's bash ended (signal {sig}); the block was stopped\n")
                if self.pgid is not None:
                    kill_job(self.pgid, alive=lambda: False, grace_s=sh._kill_grace, clock=sh._clock,
                             sleeper=sh._sleeper)  # fmt: skip
            sh._drop_server()
            code = None if sig is None else 128 + sig
        return BlockResult(
            exit_code=code,
            output=self.capture.text(),
            duration_s=max(0.0, sh._clock() - start),
            state=new_state,
            timed_out=reason == "timeout",
            waited_for_input=reason == "input",
            signal=sig,
            interrupted=reason == "stop",
            trace=self._trace(),
        )

    def _trace(self) -> tuple[TraceEntry, ...] | None:
        """What a traced block's xtrace and command marks saw; None, as for a block not traced, unless both
        reached the block's end: a check read from a trace with its end missing could take a path it never
        took (`director.plan.contrast`), so it is read as an untraced block is."""
        if self.tracer is None:
            return None
        entries = self.tracer.entries()
        marks = self.marks_seen
        if entries is None or (marks is not None and not marks.reached_end):
            return None
        return (*entries, *(marks.entries() if marks is not None else ()))

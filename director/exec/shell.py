"""Run plan blocks in one bash that lives for the whole run: each block is a subshell of it, under a pty.

The session's bash (`director.exec.server`) starts with the first block and ends with `close()` (or with
Director). Each block is a forked subshell of it, a foreground job in its own process group: `exit 1` or
`set -e` ends that subshell only, and a timeout or `stop()` kills the job's processes, never the server.
Nothing of a block's shell outlives it except the session, which flows in document order as a
`SessionState`: the block's setup (`director.exec.session.prelude`, sent through a pipe with the block)
restores it, and an `EXIT` trap writes it back through another pipe -- only the block's status and
directory when the caller says the block cannot change the session (`run(keeps_session=True)`, read by
`director.plan.bash.keeps_session`), which spares bash dumping every variable and function after it.
Nothing of the session is ever written to a file: requests, state and trace travel through pipes, and the
per-block pipes Director creates are opened by the subshell through `/proc/<director>/fd/N` (Linux). As in
a terminal session, `$$` is the session shell's pid in every block (`$BASHPID` is the block's).

Each block has its own pseudo-terminal as stdout and stderr (merged, no CR/LF translation), opened by
path; its `/dev/tty` is the session terminal (whatever a block writes there joins its output). When a
block ends, Director closes its pty: a job the block left in the background (`server &`, `nohup …`) lives
on (another process group, as under a terminal) and sees EIO if it writes there later, and EOF on stdin.

stdin. Interactive (and Director's stdin is a TTY): the block's stdin is the operator's terminal, so a
human can answer "Are you sure?". Otherwise stdin is a pipe that Director holds open and never writes:
tools see a non-TTY stdin and take their non-interactive paths, and a block that reads anyway blocks on
it. After `input_probe_after_s` without output, Director looks at the block's processes in /proc
(`director.exec.processes.job_members`): a thread whose `/proc/PID/task/TID/syscall` shows a read
(x86_64: 0, 17, 19; aarch64: 63, 65, 67) on that pipe, on the block's pty or the session terminal
(`/dev/tty`, which nobody types into) -- or, in an interactive run, on the operator's terminal -- is
waiting for input. Not interactive: the block's processes are killed and the result says
`waited_for_input`. Interactive: `on_waiting(prompt)` is called once per wait with the line the block
left unfinished (or its last line), the block keeps running, and what the operator types reaches it
(keystrokes typed while a block waits on a pty are passed to that pty). Readers that poll (epoll) are not
seen; they end at the block's timeout. `read -t N` counts as waiting too.

Killing (timeout, `stop()`, waiting for input) sends SIGTERM to the job's processes, then SIGKILL after
`kill_grace_s`, and waits until none is left (`director.exec.processes.kill_job`).

Output is decoded as UTF-8, redacted, streamed to `on_output` as it comes, and kept bounded: the first
16 KiB and the last 48 KiB with an elision marker (`director.exec.capture`).

Per-block cost: one fork of the session's bash, one pty, one or two pipes; no process is executed.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import stat
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Self

from director.errors import PrerequisiteError
from director.exec import markers, ulimits
from director.exec import marks as process_marks
from director.exec.block import BlockResult, BlockRun, Running
from director.exec.secrets import Redactor
from director.exec.server import SessionServer
from director.exec.session import SessionState, kept_cwd, parse_state_file, prelude, quote

__all__ = ["BlockResult", "SessionState", "Shell"]  # SessionState: what `Shell.run` takes and returns

_TRACE_FD = 61  # the descriptor a traced block's xtrace goes to (BASH_XTRACEFD)
# The lines of a capture that are per block: $BASHPID, and the step's marks (`director.exec.marks`).
_PER_BLOCK = re.compile(rb'declare -i BASHPID="[0-9]*"\n|declare -x DIRECTOR_(?:STEP|PROCESSES)="[^"\n]*"\n')
# The block's working directory, keeping OLDPWD as the session had it (set, or exported without a value).
_CD = (
    "if [[ -v OLDPWD ]]; then __director_o=$OLDPWD; builtin cd -- {d} || builtin exit 96;"
    " OLDPWD=$__director_o; else builtin cd -- {d} || builtin exit 96; builtin unset -v OLDPWD;"
    " builtin declare -x OLDPWD; fi; builtin unset -v __director_o"
)


def _digest_without_per_block_lines(raw: bytes | bytearray) -> bytes:
    """The digest of a capture without its per-block lines (`_PER_BLOCK`, the first three), taken piece by
    piece: a session near its limit is 16 MB, and is neither copied to drop those lines nor kept a second
    time to be compared with the next capture."""
    digest = hashlib.sha256()
    pos = 0
    with memoryview(raw) as view:
        for n, m in enumerate(_PER_BLOCK.finditer(raw)):
            if n == 3:
                break
            digest.update(view[pos : m.start()])
            pos = m.end()
        digest.update(view[pos:])
    return digest.digest()


_LEGACY_FILES = ("prelude.bash", "state", "block.bash")
_swept = False


def sweep_legacy_temp() -> None:
    """Remove what an older Director's shell left after a crash (once per process).

    Before the session's bash, each block's session went through `director-shell-*/prelude.bash` and
    `state` files in the temp directory (secrets in clear, 0644) that a SIGKILL left behind. Such files
    older than 10 minutes belong to no live run (a run reads them within milliseconds of writing them):
    they are removed, and so is their directory once empty and untouched for a day.
    """
    global _swept
    if _swept:
        return
    _swept = True
    now = time.time()
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    for base in {tempfile.gettempdir(), *([runtime] if runtime else [])}:
        try:
            entries = list(os.scandir(base))
        except OSError:
            continue
        for entry in entries:
            if not entry.name.startswith("director-shell-"):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
                if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
                    continue
                for name in _LEGACY_FILES:
                    path = os.path.join(entry.path, name)
                    with contextlib.suppress(FileNotFoundError):
                        if now - os.stat(path, follow_symlinks=False).st_mtime > 600:
                            os.unlink(path)
                if now - st.st_mtime > 86400:
                    os.rmdir(entry.path)  # only if empty
            except OSError:
                continue


def _export_marks(marks: Mapping[str, str]) -> str:
    """The setup line that gives a block (and all it starts) its marks, and unsets any other mark."""
    words = [
        f"builtin export {n}={quote(marks[n])}" if n in marks else f"builtin unset -v {n}"
        for n in sorted(process_marks.NAMES)
    ]
    return "; ".join(words) + "\n"


def _own_umask() -> str:
    """This process's umask as bash's `umask` prints it ("0022"), read without changing it (`os.umask`
    sets one to read one); "" when /proc does not say (Linux before 4.7)."""
    with contextlib.suppress(OSError), open("/proc/self/status", encoding="ascii", errors="replace") as f:
        for line in f:
            if line.startswith("Umask:"):
                return line.split()[1]
    return ""


def _default_dimensions() -> tuple[int, int]:
    try:
        size = os.get_terminal_size(1)
        return size.lines, size.columns
    except OSError:
        return 50, 160


class Shell:
    """Runs blocks in a shared session. One block at a time; `stop()` may come from anywhere."""

    def __init__(
        self,
        base_env: Mapping[str, str],
        workdir: str | os.PathLike[str],
        *,
        interactive: bool,
        path_prepend: Sequence[str] = (),
        redactor: Redactor | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleeper: Callable[[float], None] = time.sleep,
        bash: str = "bash",
        input_probe_after_s: float = 1.0,
        kill_grace_s: float = 2.0,
        dimensions: tuple[int, int] | None = None,
        marks: Mapping[str, str] | None = None,
        assigned: Collection[str] = frozenset(),
    ) -> None:
        """Prepare a session; the session's bash starts with the first block.

        `assigned`: the variables the plan's blocks assign, session state even when a block sets one to the
        value the operator's environment already held (`session.parse_state_file`).

        `marks`: environment variables (`director.exec.marks.NAMES`) every block exports for everything it
        starts, such as the plan's identity; `run(marks=…)` adds a step's.
        """
        if not os.path.isdir(f"/proc/{os.getpid()}/fd"):
            raise PrerequisiteError("Director runs blocks through /proc (Linux); /proc is not mounted here")
        self.workdir = Path(workdir)
        self.redactor = redactor or Redactor()  # replaceable between blocks as secrets are learned
        self.path_prepend = tuple(path_prepend)
        self._base_env = dict(base_env)
        self._assigned = frozenset(assigned)
        self._umask = _own_umask()  # what the session's bash inherits: no block's change (`parse_state_file`)
        self._limits = ulimits.inherited()  # the same for the resource limits
        self._clock = clock
        self._sleeper = sleeper
        self._probe_after = input_probe_after_s
        self._kill_grace = kill_grace_s
        self.marks = dict(marks or {})
        self._dimensions = dimensions or _default_dimensions()
        base_path = self._base_env.get("PATH", os.defpath)
        found = shutil.which(bash, path=base_path) or shutil.which(bash)
        if found is None:
            raise PrerequisiteError(f"bash not found (looked for {bash!r} on PATH)")
        self.bash = found
        self._env = dict(self._base_env)
        self._env["PATH"] = ":".join([*self.path_prepend, base_path]) if self.path_prepend else base_path
        self._env.pop("BASH_ENV", None)  # a block's setup gives its processes the operator's BASH_ENV back
        self._original_bash_env = self._base_env.get("BASH_ENV")
        # Functions the operator exported (`export -f`): any block may call one (`run`'s `keeps_session`)
        self._env_functions = any(k.startswith("BASH_FUNC_") for k in self._env)
        self._tty_fd: int | None = None
        self._tty_name = ""
        if interactive and os.isatty(0):
            self._tty_fd = os.dup(0)
            self._tty_name = os.readlink(f"/proc/self/fd/{self._tty_fd}")
        self.interactive = self._tty_fd is not None
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._current: Running | None = None
        self._lock = threading.Lock()  # one block at a time
        self._server: SessionServer | None = None
        self._holder: list[SessionServer | None] = [None]  # what the finalizer closes
        self._seq = 0
        self._prelude_state: SessionState | None = None  # the state `_prelude` restores (by identity)
        self._prelude_key: tuple[bool, int] | None = None
        self._prelude = b""
        self._last_key = b""  # the digest of the last capture parsed (`_digest_without_per_block_lines`)
        self._last_state: SessionState | None = None
        self._finalizer = weakref.finalize(
            self, Shell._cleanup, self._holder, (self._wake_r, self._wake_w, self._tty_fd)
        )

    @staticmethod
    def _cleanup(holder: list[SessionServer | None], fds: tuple[int | None, ...]) -> None:
        server = holder[0]
        if server is not None:
            server.close()
        for fd in fds:
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)

    def close(self) -> None:
        """End the session's bash and close descriptors (idempotent)."""
        self._finalizer()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @property
    def environment(self) -> dict[str, str]:
        """The environment every block's processes inherit (before the session and the step's marks)."""
        return dict(self._env)

    def inherits(self, name: str) -> bool:
        """Whether every block gets `name` from Director's own environment (not from the session)."""
        return name in self._base_env

    def inherited(self, name: str) -> str | None:
        """The value every block gets for `name` from Director's own environment, if any."""
        return self._base_env.get(name)

    def family_values(self) -> dict[str, str]:
        """What a plan's family passes every block (`DIRECTOR_PROVIDED_*`, `DIRECTOR_PROVIDER_STATE_DIRS`,
        docs/plan-format.md): values a block reads as its defaults, so a step's fingerprint reads them too."""
        return {k: v for k, v in self._base_env.items() if k.startswith("DIRECTOR_PROVIDE")}

    def initial_state(self) -> SessionState:
        """The session before the first block: nothing set, in the workdir."""
        return SessionState(cwd=str(self.workdir))

    def stop(self) -> None:
        """Kill the running block's processes (Ctrl-C); safe from another thread or a signal handler."""
        cur = self._current
        if cur is None:
            return
        cur.stop_requested = True
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"!")

    interrupt = stop

    @property
    def busy(self) -> bool:
        """Whether a block is running now."""
        return self._current is not None

    @property
    def kill_grace_s(self) -> float:
        """Seconds between SIGTERM and SIGKILL when Director stops processes."""
        return self._kill_grace

    @property
    def server_pid(self) -> int | None:
        """The pid of the session's bash (`$$` in every block), if it runs."""
        return self._server.pid if self._server is not None and self._server.alive() else None

    # -- running a block ------------------------------------------------------------------------

    def run(
        self,
        script: str,
        state: SessionState,
        *,
        timeout_s: float | None = None,
        on_output: Callable[[str], None] | None = None,
        trace: bool = False,
        on_waiting: Callable[[str], None] | None = None,
        keeps_session: bool = False,
        marks: Mapping[str, str] | None = None,
    ) -> BlockResult:
        """Run one block as a subshell of the session's bash, restoring `state` first.

        With `trace`, bash traces the block's commands (xtrace) into a pipe Director reads: the result's
        `trace` says which commands ran, how often (how verify blocks are judged, see `director.plan.verify`).
        In an interactive run, `on_waiting(prompt)` is called once each time the block starts waiting for
        the operator's input. `keeps_session` says the block cannot change the session
        (`director.plan.bash.keeps_session`): its subshell reports its status and directory only, not the
        whole session, and the result's state is `state` (in that directory). Ignored when Director's
        environment exports shell functions, which any block may call. `marks` (a step's identity, see
        `director.exec.marks`) are exported with the Shell's own for the block and all it starts; a mark
        given to neither is unset, so that none is inherited from Director's environment.
        """
        kept = keeps_session and not self._env_functions
        with self._lock:
            cur = Running()
            self._current = cur
            try:
                blk = BlockRun(self, script, state, timeout_s, on_output, on_waiting, cur, trace, kept)
                blk.marks = {**self.marks, **(marks or {})}
                return blk.run()
            finally:
                self._current = None

    def _ensure_server(self) -> SessionServer:
        server = self._server
        if server is not None and server.alive():
            return server
        if server is not None:
            server.close()
        sweep_legacy_temp()
        server = SessionServer(
            self.bash, {**self._env, "PWD": str(self.workdir)}, str(self.workdir),
            tty_fd=self._tty_fd, dimensions=self._dimensions, avoid=(_TRACE_FD, markers.FD),
        )  # fmt: skip
        self._server = self._holder[0] = server
        self._prelude_key = None
        return server

    def _drop_server(self) -> None:
        if self._server is not None:
            self._server.close(timeout_s=0.5)
        self._server = self._holder[0] = None

    def _setup(
        self, state: SessionState, cwd: str, blk: BlockRun, server: SessionServer
    ) -> tuple[bytes, bytes]:
        """The text a block's subshell runs before the block, in two parts: descriptors, start report and
        cwd, then the session (cached while the state is the same; sent as it is, never copied)."""
        dpid = os.getpid()
        if server.tty_fd is not None:
            stdin = f"0<&{server.tty_fd} {server.tty_fd}<&-"
        else:
            stdin = f"0</proc/{dpid}/fd/{blk.stdin_r}"
        trace_open = (
            f" {_TRACE_FD}>/proc/{dpid}/fd/{blk.trace_w} {markers.FD}>&1" if blk.trace_w is not None else ""
        )  # a traced block's command marks go to a copy of its terminal (`director.exec.markers`)
        head = (
            f"exec {stdin} 1<>{blk.pts} 2>&1 {server.child_ctl}<&- {server.child_state}>&-{trace_open}"
            " || builtin exit 97\n"
            f"__director_pid=$BASHPID; builtin printf 'P%s %s\\n' {blk.seq} \"$__director_pid\""
            f" >&{server.child_ev}; exec {server.child_ev}>&-\n"
            "builtin unset -v __director_q __director_h __director_n __director_p __director_0\n"
            + ("__director_kept=1\n" if blk.kept else "")
            + _export_marks(blk.marks)
            + _CD.format(d=quote(cwd))
            + "\n"
        )
        key = (blk.trace_w is not None, server.pid)
        if self._prelude_state is not state or self._prelude_key != key:
            self._prelude = prelude(
                state,
                state_file=f"/proc/{server.pid}/fd/{server.child_state}",
                original_bash_env=self._original_bash_env,
                path_prepend=self.path_prepend,
                trace_fd=_TRACE_FD if blk.trace_w is not None else None,
                define_capture=False,  # the session's bash has them
            )
            self._prelude_state, self._prelude_key = state, key
        return head.encode("utf-8", "surrogateescape"), self._prelude

    def _parse_state(self, raw: bytes | bytearray, before: SessionState) -> SessionState | None:
        """The session a block left (`before` in its last directory if it kept it); None if not captured."""
        cwd = kept_cwd(raw)
        if cwd is not None:
            return before if cwd == (before.cwd or str(self.workdir)) else replace(before, cwd=cwd)
        key = _digest_without_per_block_lines(raw)
        if key == self._last_key and self._last_state is not None:
            return self._last_state  # the session did not change: the same capture, byte for byte
        parsed = parse_state_file(
            raw, base_env=self._base_env, path_prepend=self.path_prepend, assigned=self._assigned,
            inherited_umask=self._umask, inherited_limits=self._limits,
        )  # fmt: skip
        if parsed is not None:
            self._last_key, self._last_state = key, parsed
        return parsed

"""Run plan blocks in bash, one pseudo-terminal per block, sharing one shell session (the only pexpect user).

Why one bash per block: `exit 1` (or `set -e`) then ends one block, not the session, and a block can
be killed with its whole process group without losing the session. The session (shell variables,
exports, functions, cwd) flows in document order through `SessionState`:

- Before a block, a generated *prelude* re-declares the session and arms an `EXIT` trap. It is
  sourced through `BASH_ENV` (non-interactive bash reads that file before the `-c` script), so the
  block's own line numbers in error messages stay right; the prelude unsets `BASH_ENV` at once so
  scripts the block starts do not source it.
- The trap writes `$PWD`, `declare -p`, `declare -f` and `declare -F` into a small state file,
  NUL-separated and ended by a terminator, which Director reads back; a missing or truncated file
  (the block `exec`ed, or was SIGKILLed) leaves the session unchanged. A block's own `trap … EXIT`
  is chained (a `trap` wrapper records it and the capture runs it after saving the state).
- Captured are the variables the blocks set: not bash's own (BASH*, PPID, RANDOM, LINENO…), not
  those inherited unchanged from the operator's environment, and `PATH` without Director's
  `path_prepend` entries (they are put first again on restore). Scalars keep their attributes
  (`-x`, `-i`, `-r`, `-l`, `-u`, `-n`); indexed and associative arrays flow as their `declare -p`
  statement. In POSIX mode (a block set POSIXLY_CORRECT) a block's own `trap … EXIT` replaces the
  capture: that block's changes are lost. Not carried: shell options (`set -e`, `shopt`), aliases,
  traps other than EXIT, unsetting an inherited variable. A job the block starts in the background
  (`server &`, `nohup server &`) outlives the block, as it outlives a script run from a terminal: the
  pty's session leader is a small job-control bash (`_LEADER`) that runs the block's bash as its
  foreground job, so the hang-up when the leader exits reaches no job of the block.

stdin. Interactive (and Director's stdin is a TTY): the block's stdin is the operator's terminal, so
a human can answer "Are you sure?". Otherwise stdin is a pipe that Director holds open and never
writes: tools see a non-TTY stdin and take their non-interactive paths, and a block that reads
anyway blocks on it. After `input_probe_after_s` without output, Director looks at the processes of
the block's session in /proc: a thread whose `/proc/PID/task/TID/syscall` shows a read (x86_64: 0,
17, 19; aarch64: 63, 65, 67) on a descriptor that is that pipe (`pipe:[inode]`) -- or the block's own
pseudo-terminal (`/dev/tty`, which nobody types into) -- is waiting for input that cannot come: the
block's processes are killed and the result says `waited_for_input`. Readers that poll (epoll) are
not seen; they end at the block's timeout. `read -t N` counts as waiting too. Without /proc (not
Linux) this probe is off.

Killing (timeout, `stop()`, waiting for input) sends SIGTERM to the block's process group and every
process of its session, then SIGKILL after `kill_grace_s`, and waits until none is left.

Output: stdout and stderr both go through the pty (merged, no CR/LF translation), are decoded as
UTF-8, redacted, streamed to `on_output` as they come, and kept bounded: the first 16 KiB and the
last 48 KiB with an elision marker.

Per-block cost: one `bash` spawn, one prelude file written, one state file read; no other process.
"""

from __future__ import annotations

import codecs
import contextlib
import fcntl
import json
import os
import platform
import re
import select
import shlex
import shutil
import signal
import struct
import tempfile
import termios
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import pexpect  # type: ignore[import-untyped]  # no stubs shipped

from director.errors import PrerequisiteError
from director.exec.secrets import Redactor
from director.plan import bash as bash_analysis
from director.plan.bash import TRACE_PS4, TraceEntry, parse_trace

OUTPUT_HEAD = 16 * 1024
OUTPUT_TAIL = 48 * 1024
_STATE_END = b"END"
_MAX_ARG = 100_000  # Linux caps one argv string at 128 KiB; longer blocks go through a file
_TIOCGPTN = 0x80045430  # Linux ioctl: number N of the pty slave /dev/pts/N

# Variables bash sets or computes itself: never session state.
_BASH_OWNED = frozenset(
    {
        "BASH", "BASHOPTS", "BASHPID", "COLUMNS", "COMP_WORDBREAKS", "DIRSTACK", "EPOCHREALTIME",
        "EPOCHSECONDS", "EUID", "FUNCNAME", "GROUPS", "HISTCMD", "HOSTNAME", "HOSTTYPE", "LINENO",
        "LINES", "MACHTYPE", "OPTARG", "OSTYPE", "PIPESTATUS", "PPID", "PWD", "RANDOM", "SECONDS",
        "SHELL", "SHELLOPTS", "SHLVL", "SRANDOM", "UID", "_",
    }
)  # fmt: skip
# Variables bash creates with a default value when the environment lacks them.
_BASH_DEFAULTS = {"IFS": " \t\n", "OPTIND": "1", "OPTERR": "1", "PS4": "+ ", "PS2": "> ", "TERM": "dumb"}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_READ_SYSCALLS = {"x86_64": {"0", "17", "19"}, "aarch64": {"63", "65", "67"}}.get(platform.machine(), set())

_PRELUDE_TAIL = r"""
__director_user_exit=
trap() {
    # Keep Director's EXIT capture armed: record the block's own EXIT handler, pass the rest on.
    if [[ $BASHPID != "$$" || $# -eq 0 || ${1-} == -[lp]* ]]; then builtin trap "$@"; return; fi
    [[ $1 == -- ]] && shift
    local __director_cmd __director_sig __director_keep=()
    if (( $# == 1 )); then __director_cmd=-; else __director_cmd=$1; shift; fi
    for __director_sig in "$@"; do
        case ${__director_sig^^} in
            EXIT|0|SIGEXIT)
                __director_user_exit=$__director_cmd
                [[ $__director_cmd == - ]] && __director_user_exit= ;;
            *) __director_keep+=("$__director_sig") ;;
        esac
    done
    (( ${#__director_keep[@]} == 0 )) || builtin trap -- "$__director_cmd" "${__director_keep[@]}"
}
__director_exit() {
    __director_rc=$?
    { builtin set +eux +o pipefail; } 2>/dev/null
    if [[ -n ${__director_traced-} && ${PS4-} == "$__director_trace_ps4" ]]; then
        # Tracing was Director's: give the session its own PS4 back before capturing it.
        if [[ -n $__director_ps4_set ]]; then PS4=$__director_ps4; else builtin unset PS4; fi
    fi
    builtin unset -f trap __director_exit
    {
        builtin printf '%s\0%s\0' "$__director_rc" "$PWD"
        builtin declare -p
        builtin printf '\0'
        builtin declare -f
        builtin printf '\0'
        builtin declare -F
        builtin printf '\0END\0'
    } >"$__director_state_file" 2>/dev/null
    if [[ -n $__director_user_exit ]]; then
        __director_setrc() { return "$1"; }
        __director_setrc "$__director_rc"
        builtin eval -- "$__director_user_exit"
    fi
}
builtin trap __director_exit EXIT
"""


# The pseudo-terminal's session leader: a job-control bash that runs the block's bash as its foreground job
# and takes the terminal back when it ends. When the leader exits, the kernel hangs up only the leader's own
# process group, so a job the block started in the background (`nohup server &`, `cmd &`) lives on, as it
# does when a script is run from a terminal -- instead of dying of SIGHUP before `nohup` could ignore it.
_LEADER = r"""set -m
trap : TERM INT HUP QUIT  # outlive the block's bash to report its status (a handler, not inherited)
__director_p=$__director_prelude; unset __director_prelude
if [ "$1" = -c ]; then BASH_ENV=$__director_p "$0" --noprofile --norc -c "$2" bash
else BASH_ENV=$__director_p "$0" --noprofile --norc "$2"; fi
"""


def _q(value: str) -> str:
    """Quote a value for bash (bare when it is safe as it is)."""
    return shlex.quote(value)


# -- session state -----------------------------------------------------------------------------


@dataclass(frozen=True)
class SessionState:
    """The shell session that flows from block to block."""

    variables: dict[str, str] = field(default_factory=dict)  # scalar values
    exported: frozenset[str] = frozenset()
    functions: str = ""  # `declare -f` text, plus `export -f NAME` lines
    cwd: str = ""  # "" means the Shell's workdir
    attributes: dict[str, str] = field(default_factory=dict)  # name -> declare flags besides x ("i", "r"…)
    arrays: dict[str, str] = field(default_factory=dict)  # name -> its `declare -a/-A …` statement

    def to_json(self) -> dict[str, Any]:
        """Plain JSON-able data (the journal's `session_json`)."""
        return {
            "variables": dict(sorted(self.variables.items())),
            "exported": sorted(self.exported),
            "functions": self.functions,
            "cwd": self.cwd,
            "attributes": dict(sorted(self.attributes.items())),
            "arrays": dict(sorted(self.arrays.items())),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | str) -> SessionState:
        """The state saved by `to_json` (a mapping or its JSON text)."""
        d: Mapping[str, Any] = json.loads(data) if isinstance(data, str) else data
        return cls(
            variables={str(k): str(v) for k, v in dict(d.get("variables") or {}).items()},
            exported=frozenset(str(x) for x in d.get("exported") or ()),
            functions=str(d.get("functions") or ""),
            cwd=str(d.get("cwd") or ""),
            attributes={str(k): str(v) for k, v in dict(d.get("attributes") or {}).items()},
            arrays={str(k): str(v) for k, v in dict(d.get("arrays") or {}).items()},
        )

    def persistable(self, is_secret: Callable[[str], bool]) -> SessionState:
        """A copy without secret-looking names (those stay in memory, never in the journal)."""
        return SessionState(
            variables={k: v for k, v in self.variables.items() if not is_secret(k)},
            exported=frozenset(k for k in self.exported if not is_secret(k)),
            functions=self.functions,
            cwd=self.cwd,
            attributes={k: v for k, v in self.attributes.items() if not is_secret(k)},
            arrays={k: v for k, v in self.arrays.items() if not is_secret(k)},
        )

    def secret_values(self, is_secret: Callable[[str], bool]) -> list[str]:
        """Values of the secret-named scalars (to extend a Redactor)."""
        return [v for k, v in self.variables.items() if is_secret(k) and v]


@dataclass(frozen=True)
class BlockResult:
    """What one block did."""

    exit_code: int | None  # bash's status; 128+N when killed by signal N; None if it never started
    output: str  # merged stdout/stderr, redacted, bounded
    duration_s: float
    state: SessionState  # after the block; unchanged when the state could not be captured
    timed_out: bool = False
    waited_for_input: bool = False
    signal: int | None = None  # the signal that ended bash, if any
    interrupted: bool = False  # ended by `Shell.stop()`
    # The commands bash traced (`run(trace=True)`), in memory only: values in them are redacted, and a
    # trace is never written anywhere. None when the block was not traced.
    trace: tuple[TraceEntry, ...] | None = None

    @property
    def ok(self) -> bool:
        """Exit status 0 and not stopped by Director."""
        return self.exit_code == 0 and not (self.timed_out or self.waited_for_input or self.interrupted)


# -- declare -p / state file parsing --------------------------------------------------------------

_ANSI_SIMPLE = {
    "a": b"\a", "b": b"\b", "e": b"\x1b", "E": b"\x1b", "f": b"\f", "n": b"\n", "r": b"\r",
    "t": b"\t", "v": b"\v", "\\": b"\\", "'": b"'", '"': b'"', "?": b"?",
}  # fmt: skip


def _enc(s: str) -> bytes:
    return s.encode("utf-8", "surrogateescape")


def _dec(b: bytes) -> str:
    return b.decode("utf-8", "surrogateescape")


def _parse_dq(text: str, i: int) -> tuple[str, int]:
    """Decode a bash double-quoted word starting at text[i] == '"'; returns (value, index after)."""
    out: list[str] = []
    i += 1
    while True:
        c = text[i]
        if c == '"':
            return "".join(out), i + 1
        if c == "\\" and text[i + 1] in '$`"\\\n':
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(c)
        i += 1


def _parse_ansi(text: str, i: int) -> tuple[str, int]:
    """Decode a bash $'…' word starting at text[i:i+2] == "$'"; returns (value, index after)."""
    out = bytearray()
    i += 2
    while True:
        c = text[i]
        if c == "'":
            return _dec(bytes(out)), i + 1
        if c != "\\":
            out += _enc(c)
            i += 1
            continue
        e = text[i + 1]
        i += 2
        if e in _ANSI_SIMPLE:
            out += _ANSI_SIMPLE[e]
        elif e in "01234567":
            j = i - 1
            while i < j + 3 and text[i] in "01234567":
                i += 1
            out.append(int(text[j:i], 8) & 0xFF)
        elif e in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[e]
            j = i
            while i < j + width and text[i] in "0123456789abcdefABCDEF":
                i += 1
            if i == j:
                out += _enc("\\" + e)
            elif e == "x":
                out.append(int(text[j:i], 16))
            else:
                out += _enc(chr(int(text[j:i], 16)))
        elif e == "c":
            out.append(ord(text[i]) & 0x1F)
            i += 1
        else:
            out += _enc("\\" + e)


def _skip_compound(text: str, i: int) -> int:
    """Index after the `( … )` array value starting at text[i] == '('."""
    i += 1
    while True:
        c = text[i]
        if c == ")":
            return i + 1
        if c == '"':
            _, i = _parse_dq(text, i)
        elif c == "$" and text[i + 1] == "'":
            _, i = _parse_ansi(text, i)
        elif c == "'":
            i = text.index("'", i + 1) + 1
        elif c == "\\":
            i += 2
        else:
            i += 1


def parse_declare_p(text: str) -> Iterator[tuple[str, str, str | None, str]]:
    """(name, flags, scalar value or None, the whole statement) for each `declare -p` line."""
    i, n = 0, len(text)
    while i < n:
        end_of_line = text.find("\n", i)
        if end_of_line < 0:
            end_of_line = n
        if not text.startswith("declare -", i):
            i = end_of_line + 1  # not ours to understand: skip the line
            continue
        sp = text.index(" ", i + 8)
        flags = text[i + 9 : sp].strip("-")
        j = sp + 1
        while j < n and text[j] not in "=\n":
            j += 1
        name = text[sp + 1 : j]
        value: str | None = None
        if j < n and text[j] == "=":
            k = j + 1
            if k < n and text[k] == '"':
                value, j = _parse_dq(text, k)
            elif text.startswith("$'", k):
                value, j = _parse_ansi(text, k)
            elif k < n and text[k] == "(":
                j = _skip_compound(text, k)
            else:
                j = text.find("\n", k)
                j = n if j < 0 else j
                value = text[k:j]
        yield name, flags, value, text[i:j]
        i = j + 1


def _parse_state_file(
    raw: bytes,
    *,
    base_env: Mapping[str, str],
    path_prepend: Sequence[str],
) -> SessionState | None:
    """The session captured by the EXIT trap, or None if the file is incomplete."""
    parts = raw.split(b"\0")
    if len(parts) < 7 or parts[5] != _STATE_END:
        return None
    cwd = _dec(parts[1])
    declared, functions, fnames = _dec(parts[2]), _dec(parts[3]), _dec(parts[4])
    variables: dict[str, str] = {}
    exported: set[str] = set()
    attributes: dict[str, str] = {}
    arrays: dict[str, str] = {}
    for name, flags, value, stmt in parse_declare_p(declared):
        if name in _BASH_OWNED or name.startswith(("BASH_", "__director")) or not _NAME.fullmatch(name):
            continue
        if "a" in flags or "A" in flags:
            arrays[name] = stmt
            continue
        if value is None:
            continue  # declared but unset: nothing to carry
        is_exported = "x" in flags
        if name == "PATH" and path_prepend:
            value = ":".join(p for p in value.split(":") if p not in path_prepend)
        if name in base_env:
            if base_env[name] == value and is_exported:
                continue  # inherited from the operator's environment, unchanged
        elif not is_exported and _BASH_DEFAULTS.get(name) == value:
            continue  # bash's own default
        variables[name] = value
        if is_exported:
            exported.add(name)
        extra = flags.replace("x", "")
        if extra:
            attributes[name] = extra
    exported_fns = [
        line.split()[-1]
        for line in fnames.splitlines()
        if line.startswith("declare -f") and "x" in line.split()[1]
    ]
    if exported_fns:
        functions += "".join(f"export -f {n}\n" for n in exported_fns)
    return SessionState(variables, frozenset(exported), functions, cwd, attributes, arrays)


def _prelude(
    state: SessionState,
    *,
    state_file: str,
    original_bash_env: str | None,
    path_prepend: Sequence[str],
    trace_fd: int | None = None,
) -> bytes:
    """The bash text that restores `state` and arms the EXIT capture."""
    out = ["# Director session prelude: generated, sourced through BASH_ENV before the block"]
    out.append("unset BASH_ENV" if original_bash_env is None else f"export BASH_ENV={_q(original_bash_env)}")
    out.append(f"__director_state_file={_q(state_file)}")
    # Arm the capture before restoring anything: a restored POSIXLY_CORRECT (posix mode forbids a
    # function named `trap`) or a broken restored function must not cost the block its capture.
    out.append(_PRELUDE_TAIL)
    for name, value in state.variables.items():
        if not _NAME.fullmatch(name):
            continue
        if name == "PATH" and path_prepend:
            value = ":".join([*path_prepend, value]) if value else ":".join(path_prepend)
        flags = state.attributes.get(name, "") + ("x" if name in state.exported else "")
        out.append(f"declare -{flags} {name}={_q(value)}" if flags else f"{name}={_q(value)}")
    out.extend(stmt for name, stmt in state.arrays.items() if _NAME.fullmatch(name))
    if state.functions:
        out.append(state.functions)
    if trace_fd is not None:
        # Last, so that nothing of the prelude is traced: the block's commands go to Director's pipe.
        out.append(f"__director_traced=1 __director_trace_ps4={_q(TRACE_PS4)}")
        out.append('__director_ps4_set=${PS4+x} __director_ps4=${PS4-}')
        out.append(f"BASH_XTRACEFD={trace_fd}; PS4=$__director_trace_ps4; set -x")
    return _enc("\n".join(out))


# -- process helpers --------------------------------------------------------------------------


def _session_members(leader: int) -> list[int]:
    """Live (non-zombie) processes whose session or process group is `leader`'s."""
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        # After ")": state, ppid, pgrp, session, …
        if fields[0] != b"Z" and (int(fields[2]) == leader or int(fields[3]) == leader):
            found.append(int(entry))
    return found


def _waiting_reader(leader: int, targets: set[str]) -> tuple[int, str, str] | None:
    """(pid, command, what) of a process of the block blocked reading one of `targets`, if any."""
    if not _READ_SYSCALLS:
        return None
    for pid in _session_members(leader):
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/syscall") as f:
                    parts = f.read().split()
                if len(parts) < 2 or parts[0] not in _READ_SYSCALLS:
                    continue
                target = os.readlink(f"/proc/{pid}/fd/{int(parts[1], 16)}")
            except (OSError, ValueError):
                continue
            if target in targets:
                try:
                    with open(f"/proc/{pid}/comm") as f:
                        comm = f.read().strip()
                except OSError:
                    comm = "?"
                return pid, comm, target
    return None


def _child_setup(stdin_fd: int | None) -> None:
    """Runs in the forked child before exec: stdin, signal dispositions, terminal modes."""
    if stdin_fd is not None:
        os.dup2(stdin_fd, 0)
    # Python ignores SIGPIPE (and SIG_IGN survives exec): give the block the defaults a shell has.
    for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT, signal.SIGQUIT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, ())
    # No echo (nobody types into the pty) and no LF -> CRLF, so captured output is what was written.
    attrs = termios.tcgetattr(1)
    attrs[1] &= ~termios.ONLCR
    attrs[3] &= ~termios.ECHO
    termios.tcsetattr(1, termios.TCSANOW, attrs)


class _Spawn(pexpect.spawn):  # type: ignore[misc]  # pexpect ships no type hints
    """pexpect.spawn that keeps some descriptors open in the child (ptyprocess closes all others)."""

    def __init__(self, *args: Any, pass_fds: Sequence[int] = (), **kwargs: Any) -> None:
        self._pass_fds = tuple(pass_fds)
        super().__init__(*args, **kwargs)

    def _spawnpty(self, args: Any, **kwargs: Any) -> Any:
        kwargs["pass_fds"] = self._pass_fds
        return super()._spawnpty(args, **kwargs)


class _Capture:
    """Keeps the first `head` and last `tail` bytes of a stream."""

    def __init__(self, head: int = OUTPUT_HEAD, tail: int = OUTPUT_TAIL) -> None:
        self._head_max, self._tail_max = head, tail
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, text: str) -> None:
        data = text.encode("utf-8", "surrogateescape")
        self.total += len(data)
        room = self._head_max - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > 2 * self._tail_max:
                del self.tail[: -self._tail_max]

    def text(self) -> str:
        tail = bytes(self.tail[-self._tail_max :])
        elided = self.total - len(self.head) - len(tail)
        head = bytes(self.head).decode("utf-8", "ignore")  # "ignore": a cut mid-character vanishes
        mid = f"\n…[{elided} bytes elided]…\n" if elided > 0 else ""
        return head + mid + tail.decode("utf-8", "ignore")


class _TraceReader:
    """Reads a block's xtrace pipe as it comes (a full pipe would stall the block) into bounded counts."""

    _KEEP = 1 << 20  # parse and aggregate whenever this much raw trace is buffered

    def __init__(self, fd: int, redactor: Redactor) -> None:
        self.fd = fd
        self._redactor = redactor
        self._buf = ""
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._counts: dict[tuple[int, str, str, str], int] = {}
        os.set_blocking(fd, False)

    def read(self) -> bool:
        """Read what is there; False at EOF."""
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return True
            except OSError:
                return False
            if not data:
                return False
            self._buf += self._decoder.decode(data)
            if len(self._buf) > self._KEEP:
                self._fold(final=False)

    def _fold(self, final: bool) -> None:
        text = self._buf
        if not final:
            cut = text.rfind("\x1e")
            # Keep the last (possibly incomplete) entry and its prefix for the next round.
            while cut > 0 and text[cut - 1] == "\x1e":
                cut -= 1
            if cut <= 0:
                return
            text, self._buf = text[:cut], text[cut:]
        else:
            self._buf = ""
        for e in parse_trace(text):
            rest = e.rest if len(self._counts) < 20_000 else ""
            key = (e.line, e.function, e.name, self._redactor.redact(rest[:500]))
            self._counts[key] = self._counts.get(key, 0) + e.count

    def entries(self) -> tuple[TraceEntry, ...]:
        """Everything read, folded into entries with counts."""
        self._buf += self._decoder.decode(b"", final=True)
        self._fold(final=True)
        return tuple(TraceEntry(ln, fn, name, rest, n) for (ln, fn, name, rest), n in self._counts.items())


class _Running:
    """The block in flight: what `stop()` needs from another thread or a signal handler."""

    def __init__(self) -> None:
        self.pid: int | None = None
        self.stop_requested = False


def _high_fd(fd: int) -> int:
    """`fd` moved to 3 or above: in the child, pty.fork puts the pty on 0-2 before we dup2 stdin."""
    if fd >= 3:
        return fd
    new = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    os.close(fd)
    return new


def _default_dimensions() -> tuple[int, int]:
    try:
        size = os.get_terminal_size(1)
        return size.lines, size.columns
    except OSError:
        return 50, 160


def _private_tmp() -> str:
    # Secrets pass through the prelude and state files: prefer the per-user tmpfs.
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = runtime if runtime and os.access(runtime, os.W_OK) else None
    return tempfile.mkdtemp(prefix="director-shell-", dir=base)


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
    ) -> None:
        """Prepare a session; nothing runs until `run`."""
        self.workdir = Path(workdir)
        self.redactor = redactor or Redactor()  # replaceable between blocks as secrets are learned
        self.path_prepend = tuple(path_prepend)
        self._base_env = dict(base_env)
        self._clock = clock
        self._sleeper = sleeper
        self._probe_after = input_probe_after_s
        self._kill_grace = kill_grace_s
        self._dimensions = dimensions or _default_dimensions()
        base_path = self._base_env.get("PATH", os.defpath)
        found = shutil.which(bash, path=base_path) or shutil.which(bash)
        if found is None:
            raise PrerequisiteError(f"bash not found (looked for {bash!r} on PATH)")
        self.bash = found
        self._env = dict(self._base_env)
        self._env["PATH"] = ":".join([*self.path_prepend, base_path]) if self.path_prepend else base_path
        self._original_bash_env = self._base_env.get("BASH_ENV")
        self._tty_fd: int | None = _high_fd(os.dup(0)) if interactive and os.isatty(0) else None
        self.interactive = self._tty_fd is not None
        self._tmp = _private_tmp()
        self._prelude_path = os.path.join(self._tmp, "prelude.bash")
        self._state_path = os.path.join(self._tmp, "state")
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._current: _Running | None = None
        self._lock = threading.Lock()  # one block at a time
        self._finalizer = weakref.finalize(
            self, Shell._cleanup, self._tmp, (self._wake_r, self._wake_w, self._tty_fd)
        )

    @staticmethod
    def _cleanup(tmp: str, fds: tuple[int | None, ...]) -> None:
        shutil.rmtree(tmp, ignore_errors=True)
        for fd in fds:
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)

    def close(self) -> None:
        """Remove the private temp dir and close descriptors (idempotent)."""
        self._finalizer()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def inherits(self, name: str) -> bool:
        """Whether every block gets `name` from Director's own environment (not from the session)."""
        return name in self._base_env

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

    # -- running a block ------------------------------------------------------------------------

    def run(
        self,
        script: str,
        state: SessionState,
        *,
        timeout_s: float | None = None,
        on_output: Callable[[str], None] | None = None,
        trace: bool = False,
    ) -> BlockResult:
        """Run one block in its own bash, restoring `state` first; returns its result and new state.

        With `trace`, bash traces the block's commands (xtrace) into a pipe Director reads: the result's
        `trace` says which commands ran, how often (how verify blocks are judged, see `director.plan.verify`).
        """
        with self._lock:
            cur = _Running()
            self._current = cur
            try:
                return self._run(script, state, timeout_s, on_output, cur, trace)
            finally:
                self._current = None

    def _run(
        self,
        script: str,
        state: SessionState,
        timeout_s: float | None,
        on_output: Callable[[str], None] | None,
        cur: _Running,
        trace: bool = False,
    ) -> BlockResult:
        start = self._clock()
        capture = _Capture()
        stream = self.redactor.stream()

        def emit(text: str) -> None:
            if text:
                capture.add(text)
                if on_output is not None:
                    on_output(text)

        cwd = state.cwd or str(self.workdir)
        if not os.path.isdir(cwd):
            emit(f"[director] the session's working directory {cwd} no longer exists; block not run\n")
            return BlockResult(None, capture.text(), 0.0, state)

        trace_r: int | None = None
        trace_w: int | None = None
        if trace:
            tr, tw = os.pipe()
            trace_r, trace_w = tr, _high_fd(tw)
            os.set_inheritable(trace_w, True)  # the block's bash writes it (BASH_XTRACEFD)
        with open(self._prelude_path, "wb") as f:
            f.write(
                _prelude(
                    state,
                    state_file=self._state_path,
                    original_bash_env=self._original_bash_env,
                    path_prepend=self.path_prepend,
                    trace_fd=trace_w,
                )
            )
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._state_path)  # a stale file must never pass for this block's state
        env = dict(self._env)
        env.pop("BASH_ENV", None)  # only the block's bash sources the prelude, never a leader
        env["PWD"] = cwd  # keeps the logical path (symlinks) the session had
        if len(script.encode("utf-8", "surrogateescape")) < _MAX_ARG:
            mode, payload = "-c", script
        else:
            payload = os.path.join(self._tmp, "block.bash")
            with open(payload, "wb") as f:
                f.write(_enc(script))
            mode = "-f"
        if bash_analysis.backgrounds(script):
            # Under the job-control leader, so that the block's background jobs outlive it (see `_LEADER`).
            env["__director_prelude"] = self._prelude_path
            argv = [self.bash, "--noprofile", "--norc", "-c", _LEADER, self.bash, mode, payload]
        else:
            env["BASH_ENV"] = self._prelude_path  # no job to protect: one bash is enough
            args = ["-c", payload, "bash"] if mode == "-c" else [payload]
            argv = [self.bash, "--noprofile", "--norc", *args]

        pipe_w: int | None = None
        if self._tty_fd is not None:
            stdin_fd = self._tty_fd
        else:
            r, pipe_w = os.pipe()
            stdin_fd = _high_fd(r)
        targets: set[str] = set()
        if pipe_w is not None:
            targets.add(f"pipe:[{os.fstat(stdin_fd).st_ino}]")
        with contextlib.suppress(OSError):
            os.read(self._wake_r, 4096)  # forget wake-ups meant for an earlier block

        child: Any = None
        pidfd: int | None = None
        tracer = _TraceReader(trace_r, self.redactor) if trace_r is not None else None
        stdin_open = pipe_w is not None  # our copy of the pipe's read end, closed once the child has it
        try:
            child = _Spawn(
                argv[0],
                argv[1:],
                env=env,
                cwd=cwd,
                echo=True,  # _child_setup turns echo off itself
                preexec_fn=lambda: _child_setup(stdin_fd),
                dimensions=self._dimensions,
                pass_fds=(stdin_fd,) if trace_w is None else (stdin_fd, trace_w),
            )
            if trace_w is not None:
                os.close(trace_w)  # the child has it: EOF once bash and its children are done
                trace_w = None
            child.ptyproc.delayafterclose = 0  # its default sleeps 0.1 s on every close
            child.ptyproc.delayafterterminate = 0
            if stdin_open:
                stdin_open = False
                os.close(stdin_fd)  # the child has it; we keep only the write end, never written
            pid: int = child.pid
            cur.pid = pid
            master: int = child.child_fd
            os.set_blocking(master, False)
            with contextlib.suppress(OSError):
                pts = struct.unpack("I", fcntl.ioctl(master, _TIOCGPTN, b"\0\0\0\0"))[0]
                targets.add(f"/dev/pts/{pts}")
            targets.add("/dev/tty")  # inside the block's session, /dev/tty is this pty
            try:
                pidfd = os.pidfd_open(pid)
            except (AttributeError, OSError):
                pidfd = None  # old kernel: poll for the exit instead

            decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
            reason = self._pump(
                child, master, pidfd, cur, timeout_s, targets, start, decoder, stream, emit, tracer
            )
            emit(stream.feed(decoder.decode(b"", final=True)) + stream.flush())
            if tracer is not None:
                tracer.read()  # what is left; a detached job holding the pipe is not waited for
        finally:
            if child is not None and child.isalive():
                self._kill_all(child.pid, child, None, lambda _t: None)  # on_output raised: never leak
            if child is not None:
                with contextlib.suppress(Exception):  # an unkillable (D-state) child: report, don't raise
                    child.close(force=True)
            if stdin_open:
                os.close(stdin_fd)
            if pidfd is not None:
                os.close(pidfd)
            if pipe_w is not None:
                os.close(pipe_w)  # leftover readers (nohup'ed jobs) now see EOF instead of hanging
            if trace_w is not None:
                os.close(trace_w)
            if trace_r is not None:
                os.close(trace_r)

        new_state = state
        try:
            with open(self._state_path, "rb") as sf:
                parsed = _parse_state_file(sf.read(), base_env=self._base_env, path_prepend=self.path_prepend)
            os.unlink(self._state_path)
            if parsed is not None:
                new_state = parsed
        except FileNotFoundError:
            pass
        for leftover in (self._prelude_path, os.path.join(self._tmp, "block.bash")):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(leftover)  # the prelude holds the session's secrets in clear

        sig: int | None = child.signalstatus
        code: int | None = child.exitstatus if sig is None else 128 + sig
        return BlockResult(
            exit_code=code,
            output=capture.text(),
            duration_s=max(0.0, self._clock() - start),
            state=new_state,
            timed_out=reason == "timeout",
            waited_for_input=reason == "input",
            signal=sig,
            interrupted=reason == "stop",
            trace=tracer.entries() if tracer is not None else None,
        )

    def _pump(
        self,
        child: Any,
        master: int,
        pidfd: int | None,
        cur: _Running,
        timeout_s: float | None,
        targets: set[str],
        start: float,
        decoder: codecs.IncrementalDecoder,
        stream: Any,
        emit: Callable[[str], None],
        tracer: _TraceReader | None = None,
    ) -> str | None:
        """Stream output until bash exits; kill on timeout/stop/input wait. Returns why it killed."""
        pid: int = child.pid
        poller = select.poll()
        poller.register(master, select.POLLIN)
        if tracer is not None:
            poller.register(tracer.fd, select.POLLIN)
        poller.register(self._wake_r, select.POLLIN)
        if pidfd is not None:
            poller.register(pidfd, select.POLLIN)
        deadline = None if timeout_s is None else start + timeout_s
        last_output = start
        next_probe = start + self._probe_after
        reason: str | None = None
        master_open = True

        def read_master() -> bool:
            """Read what is there; False at EOF (all slave ends closed)."""
            nonlocal last_output
            while True:
                try:
                    data = os.read(master, 65536)
                except BlockingIOError:
                    return True
                except OSError:  # EIO: the slave side is closed
                    return False
                if not data:
                    return False
                last_output = self._clock()
                emit(stream.feed(decoder.decode(data)))

        while True:
            now = self._clock()
            if reason is None:
                if cur.stop_requested:
                    reason = "stop"
                elif deadline is not None and now >= deadline:
                    reason = "timeout"
                    emit(f"\n[director] timed out after {timeout_s:g}s; stopping the block's processes\n")
                elif targets and now - last_output >= self._probe_after and now >= next_probe:
                    next_probe = now + 0.5
                    waiting = _waiting_reader(pid, targets)
                    if waiting is not None:
                        reason = "input"
                        wpid, comm, what = waiting
                        where = "the terminal" if what.startswith("/dev/") else "stdin"
                        emit(
                            f"\n[director] the block is waiting for keyboard input ({comm}, pid {wpid}, reads"
                            f" {where}) but this run is not interactive; stopping it\n"
                        )
                if reason is not None:
                    self._kill_all(pid, child, master if master_open else None, emit, stream, decoder)
                    return reason
            exited_event = False
            for fd, _ev in poller.poll(250 if pidfd is not None else 20):
                if fd == master and master_open:
                    master_open = read_master()
                    if not master_open:
                        poller.unregister(master)
                elif tracer is not None and fd == tracer.fd:
                    if not tracer.read():
                        poller.unregister(tracer.fd)
                elif fd == pidfd:
                    exited_event = True
                elif fd == self._wake_r:
                    with contextlib.suppress(OSError):
                        os.read(self._wake_r, 4096)
            if (exited_event or pidfd is None or not master_open) and not child.isalive():
                break
        if master_open:
            self._drain(master, emit, stream, decoder)
        return None

    def _drain(self, master: int, emit: Callable[[str], None], stream: Any, decoder: Any) -> None:
        """After bash exited: read the rest, until EOF or a short silence (a detached job holds the pty)."""
        while True:
            r, _, _ = select.select([master], [], [], 0.02)
            if not r:
                return
            try:
                data = os.read(master, 65536)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                return
            if not data:
                return
            emit(stream.feed(decoder.decode(data)))

    def _signal_all(self, leader: int, sig: int) -> None:
        with contextlib.suppress(OSError):
            os.killpg(leader, sig)
        for p in _session_members(leader):
            with contextlib.suppress(OSError):
                os.kill(p, sig)

    def _kill_all(
        self,
        leader: int,
        child: Any,
        master: int | None,
        emit: Callable[[str], None],
        stream: Any = None,
        decoder: Any = None,
    ) -> None:
        """SIGTERM the block's processes, SIGKILL after the grace period, wait until none is left."""
        self._signal_all(leader, signal.SIGTERM)
        term_at = self._clock()
        killed = False
        while True:
            if master is not None and stream is not None:
                self._drain_nowait(master, emit, stream, decoder)
            alive = child.isalive()
            if not alive and not _session_members(leader):
                break
            now = self._clock()
            if not killed and now - term_at >= self._kill_grace:
                self._signal_all(leader, signal.SIGKILL)
                killed = True
            elif killed and now - term_at >= self._kill_grace + 5.0:
                break  # unkillable (D state); give up rather than hang Director
            self._sleeper(0.01)
        if master is not None and stream is not None:
            self._drain(master, emit, stream, decoder)

    @staticmethod
    def _drain_nowait(master: int, emit: Callable[[str], None], stream: Any, decoder: Any) -> None:
        with contextlib.suppress(OSError):
            while data := os.read(master, 65536):
                emit(stream.feed(decoder.decode(data)))

"""The operator at the real CLI: `director` subprocesses in the sandbox, Ctrl-C and SIGKILL sent when a marker
appears (an act's log line, a file the act writes, a line of Director's output -- never after a bare sleep),
a gate answered at a pseudo-terminal, `approve` from another process, signed with a real `ssh-keygen` key.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pexpect

from tests import forkserver
from tests.model import world

DIRECTOR = [sys.executable, "-m", "director"]
TIMEOUT_S = 240.0  # a run that never ends is a finding (the invariant says so), never the verdict's clock

_GATE = re.compile(r"(?:GATE|DESTRUCTIVE) · (?:§(\d+)|(teardown))")
_LINE = re.compile(r"^(start|end) (\S+) base=(\S*)(?: seen=(\d+) ifs=(\S*) umask=(\d+) nofile=(\S+))?$")


@dataclass(frozen=True)
class ActLine:
    """One line an act wrote to $OUT/acts: `start 2 base=… seen=0 ifs=… umask=0022 nofile=1024` or `end 2 base=…`."""

    what: str  # "start" | "end"
    section: str  # "1", "2", …, "teardown"
    base: str
    seen: int | None = None
    ifs: str | None = None
    umask: str | None = None
    nofile: str | None = None


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return -1


def read_acts(path: Path) -> list[ActLine]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text(errors="replace").splitlines():
        m = _LINE.match(line.strip())
        if m:
            out.append(ActLine(m[1], m[2], m[3], int(m[4]) if m[4] else None, m[5], m[6], m[7]))
    return out


def _default_signals() -> None:
    """In the child, before exec: Ctrl-C and quit act as at a terminal, even when this process was started with
    them ignored (a background job, `nohup`), which a child would otherwise inherit."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)


def _bytes(x: object) -> bytes:
    return x if isinstance(x, bytes) else b""


def thaw(pids: list[int], mark: str) -> None:
    for pid in pids:
        world.signal_if(pid, world.ours(mark), signal.SIGCONT)


@dataclass(frozen=True)
class Kill:
    """Send `signal` once `at` happens in the invocation: an act of `section` starts (`act-start`) or ends
    (`act-end`), its act writes its `.rev` file (`mid`), or Director prints its n-th observe (`observe`) or
    verify (`verify`) line."""

    signal: str = "SIGKILL"  # "SIGKILL" | "SIGINT"
    at: str = "act-start"  # "act-start" | "act-end" | "mid" | "observe" | "verify"
    section: str = "1"  # a section key, "teardown", or (at="observe") the n-th observe line


@dataclass
class Outcome:
    """One invocation: its exit code (None: killed by the test's SIGKILL, or timed out), output, acts."""

    argv: list[str]
    rc: int | None
    output: str
    acts: list[ActLine]
    killed: str | None = None  # the signal the test sent, if it did
    timed_out: bool = False
    seconds: float = 0.0
    gate: str | None = None  # (pty) the section whose gate was answered
    left: list[str] = field(default_factory=list)  # block processes still running 15 s after a SIGKILL

    def started(self, key: str) -> bool:
        return any(a.what == "start" and a.section == key for a in self.acts)


class Operator:
    """Runs the CLI against one sandbox (its plan, state dir, workdir, act log, keys)."""

    def __init__(self, root: Path, plan: Path, mark: str) -> None:
        self.root, self.plan, self.mark = root, plan, mark
        self.state, self.work, self.out = root / "state", root / "work", root / "out"
        self.key = root / "keys" / "approver"
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("DIRECTOR_", "CLOUDFLARE_", "CF_", "TMUX"))
        }
        for k in ("ENV", "TIER", "SVC", "BASE", "OUT", "CI", "NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES"):
            env.pop(k, None)
        env.update(MODEL_OUT=str(self.out), MODEL_TRIAL=mark, COLUMNS="200")
        self.env = env

    def common(self) -> list[str]:
        return ["--plain", "--state-dir", str(self.state), "--workdir", str(self.work)]

    def acts(self) -> list[ActLine]:
        return read_acts(self.out / "acts")

    # -- keys ---------------------------------------------------------------------------------------------

    def make_key(self, allowed: bool) -> None:
        """An ed25519 key; with `allowed`, an allowed-signers file beside the plan lists it."""
        self.key.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "approver", "-f", str(self.key)],
            check=True, capture_output=True,
        )  # fmt: skip
        if allowed:
            pub = self.key.with_suffix(".pub").read_text().split()
            (self.plan.parent / ".director-allowed-signers").write_text(
                f"approver@example.com {pub[0]} {pub[1]}\n"
            )

    # -- plain invocations ----------------------------------------------------------------------------------

    def run(self, args: list[str], extra_env: dict[str, str] | None = None, kill: Kill | None = None,
            timeout: float = TIMEOUT_S) -> Outcome:  # fmt: skip
        """`director ARGS` (no terminal, CI=1); with `kill`, the signal sent when its moment comes."""
        env = {**self.env, "CI": "1", "NO_COLOR": "1", **(extra_env or {})}
        before = len(self.acts())
        argv = [*DIRECTOR, *args]
        started = time.monotonic()
        if kill is None:  # nothing to send it: run to its end (forked, tests/forkserver.py)
            return self._to_the_end(argv, env, before, started, timeout)
        t0 = time.time_ns()
        proc = subprocess.Popen(
            argv, cwd=self.root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=_default_signals,
        )  # fmt: skip
        chunks: list[bytes] = []
        assert proc.stdout is not None
        stdout = proc.stdout
        reader = threading.Thread(
            target=lambda: chunks.extend(iter(lambda: stdout.readline(), b"")), daemon=True
        )
        reader.start()
        sent = None
        frozen: list[int] = []
        deadline = started + timeout
        while kill is not None and proc.poll() is None and time.monotonic() < deadline:
            if self._due(kill, before, t0, chunks):
                sig = signal.SIGKILL if kill.signal == "SIGKILL" else signal.SIGINT
                frozen = self.freeze_blocks(proc.pid)
                try:
                    if sig == signal.SIGINT:
                        os.killpg(proc.pid, sig)  # what a terminal's Ctrl-C does: the foreground group
                    else:
                        os.kill(proc.pid, sig)  # a crash: Director alone
                    sent = kill.signal
                except ProcessLookupError:
                    pass
                break
            time.sleep(0.002)
        timed_out = False
        try:
            proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        thaw(frozen, self.mark)
        reader.join(timeout=30)
        left: list[str] = []
        if sent == "SIGKILL" or timed_out:
            left = [f"{p.pid} ({p.comm})" for p in world.wait_blocks_gone(self.mark)]
        rc = proc.returncode
        out = b"".join(chunks).decode("utf-8", "replace")
        return Outcome(argv, None if rc == -signal.SIGKILL else rc, out, self.acts()[before:], sent, timed_out,
                       time.monotonic() - started, left=left)  # fmt: skip

    def _to_the_end(self, argv: list[str], env: dict[str, str], before: int, started: float,
                    timeout: float) -> Outcome:  # fmt: skip
        timed_out = False
        try:
            done = forkserver.run(argv, cwd=self.root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, start_new_session=True, timeout=timeout)  # fmt: skip
            rc, out = (None if done.returncode == -signal.SIGKILL else done.returncode), done.stdout
        except subprocess.TimeoutExpired as e:  # its process group was killed
            timed_out, rc, out = True, None, e.stdout
        left = [f"{p.pid} ({p.comm})" for p in world.wait_blocks_gone(self.mark)] if timed_out else []
        return Outcome(argv, rc, _bytes(out).decode("utf-8", "replace"), self.acts()[before:], None, timed_out,
                       time.monotonic() - started, left=left)  # fmt: skip

    def _due(self, kill: Kill, before: int, t0: int, chunks: list[bytes]) -> bool:
        if kill.at in ("observe", "verify"):  # the n-th such line: its act (if any) ended, its outcome journaled
            n = int(kill.section) if kill.section.isdigit() else 1
            return b"".join(chunks).count(f"▶ {kill.at} block".encode()) >= n
        if (
            kill.at == "mid"
        ):  # a file the act writes: a server's port file (its act is waiting for it), or .rev
            files = [*self.work.glob(f"*/{kill.section}.port"), *self.work.glob(f"*/{kill.section}.rev")]
            return any(_mtime(p) >= t0 for p in files)
        new = self.acts()[before:]
        what = "start" if kill.at == "act-start" else "end"
        return any(a.what == what and a.section == kill.section for a in new)

    def read(self, args: list[str]) -> Outcome:
        """A read-only command (`output`, `status`) through the CLI's entry point in this process, as
        tests/fuzzplans.py runs `show` and `lint`: the same code as `director ARGS` without an interpreter's
        start-up (two of them after every step otherwise). It only reads the plan and the journal."""
        from director.cli import main

        buf = io.StringIO()
        started = time.monotonic()
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            try:
                main(args)
                rc = 0
            except SystemExit as e:
                rc = e.code if isinstance(e.code, int) else 1
        return Outcome([*DIRECTOR, *args], rc, buf.getvalue(), [], seconds=time.monotonic() - started)

    # -- at a terminal: answer a gate, then Ctrl-C ----------------------------------------------------------

    def gate_then_ctrl_c(self, args: list[str], when: str, timeout: float = TIMEOUT_S) -> Outcome:
        """`director ARGS` at a pseudo-terminal: at the first gate prompt type its word, then Ctrl-C at once
        (`when="at-once"`) or once the gated act has started (`when="act-start"`)."""
        env = {k: v for k, v in self.env.items() if k not in ("CI", "NO_COLOR")}
        env["TERM"] = "xterm-256color"
        before = len(self.acts())
        started = time.monotonic()
        child: pexpect.spawn[bytes] = pexpect.spawn(DIRECTOR[0], [*DIRECTOR[1:], *args], cwd=str(self.root),
                                                    env=env, dimensions=(50, 200), timeout=timeout,
                                                    preexec_fn=_default_signals)  # fmt: skip
        assert child.pid is not None
        seen = b""
        gate: str | None = None
        sent: str | None = None
        timed_out = False
        try:
            i = child.expect([rb"Type (\S+) to ", pexpect.EOF], timeout=timeout)
            seen += _bytes(child.before) + _bytes(child.after)
            if i == 0:
                word = child.match.group(1).decode()  # type: ignore[union-attr]
                m = _GATE.findall(seen.decode("utf-8", "replace"))
                gate = (m[-1][0] or m[-1][1]) if m else None
                child.sendline(word)
                frozen: list[int] = []
                if when == "act-start" and gate is not None:
                    deadline = time.monotonic() + timeout
                    while child.isalive() and time.monotonic() < deadline:
                        if any(a.what == "start" and a.section == gate for a in self.acts()[before:]):
                            frozen = self.freeze_blocks(child.pid)
                            break
                        try:
                            seen += child.read_nonblocking(65536, timeout=0.001)
                        except pexpect.TIMEOUT:
                            pass
                        except pexpect.EOF:
                            break
                if child.isalive():
                    child.sendintr()
                    sent = "SIGINT"
                child.expect(pexpect.EOF, timeout=timeout)
                seen += _bytes(child.before)
                thaw(frozen, self.mark)
        except pexpect.TIMEOUT:
            timed_out = True
        finally:
            child.close(force=True)
        rc = child.exitstatus if child.exitstatus is not None else None
        return Outcome([*DIRECTOR, *args], rc, seen.decode("utf-8", "replace"), self.acts()[before:],
                       sent, timed_out, time.monotonic() - started,
                       gate=gate)  # fmt: skip

    def freeze_blocks(self, director: int) -> list[int]:
        """SIGSTOP the block Director runs (and what it forked), so that the signal about to be sent lands while
        the act is where its marker says: the timing is the marker's, not the machine's load. Director
        sends SIGCONT with the SIGTERM that stops a block (docs/processes.md); `thaw` continues the rest.
        Found by walking Director's descendants (fast), each checked for the step marker; listeners left be."""
        frozen: list[int] = []
        for _ in range(2):  # a second pass: what the block forked while the first one ran
            for pid in world.descendants(director):
                if pid in frozen or not world.is_block(pid):
                    continue
                if world.signal_if(pid, world.ours(self.mark), signal.SIGSTOP):
                    frozen.append(pid)
        return frozen

    def cleanup(self) -> None:
        world.kill_all(self.mark)
        shutil.rmtree(self.root, ignore_errors=True)

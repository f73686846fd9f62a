"""The CLI at a pseudo-terminal, read as an operator's screen shows it (pexpect + the pyte emulator)."""

from __future__ import annotations

import os
import re
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pexpect
import pyte

ROWS, COLS = 40, 140
TIMEOUT = 30.0  # generous: a loaded 2-core machine; every wait ends as soon as the screen shows what it needs


class Term:
    """The CLI at a pseudo-terminal of ROWS x COLS, its output fed to an emulated screen."""

    def __init__(
        self,
        args: list[str],
        cwd: Path,
        out: Path,
        env: dict[str, str] | None = None,
        size: tuple[int, int] | None = None,  # (rows, columns); ROWS x COLS by default
    ) -> None:
        e = {
            k: v
            for k, v in os.environ.items()
            if k not in ("CI", "NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES", "TERM")
        }
        e.update({"TERM": "xterm-256color", "COUNTER_OUT": str(out)})
        e.update(env or {})
        rows, cols = size or (ROWS, COLS)
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.raw = b""
        # no encoding: the child's output is bytes, fed as they come to pyte's ByteStream
        self.child: pexpect.spawn[bytes] = pexpect.spawn(
            sys.executable, ["-m", "director", *args], cwd=str(cwd), env=e, dimensions=(rows, cols)
        )
        self.eof = False

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display).rstrip()

    def _pump(self, wait: float) -> None:
        if self.eof:
            return
        try:
            data = self.child.read_nonblocking(65536, timeout=wait)
        except pexpect.TIMEOUT:
            return
        except pexpect.EOF:
            self.eof = True
            return
        self.raw += data
        self.stream.feed(data)

    def wait(self, what: str | re.Pattern[str] | Callable[[str], object], timeout: float = TIMEOUT) -> str:
        """Read until the screen shows `what` (a substring, a regex or a predicate); return the screen."""
        if isinstance(what, str):
            ok: Callable[[str], object] = lambda s: what in s  # noqa: E731
        elif isinstance(what, re.Pattern):
            ok = what.search
        else:
            ok = what
        deadline = time.monotonic() + timeout
        while True:
            screen = self.text()
            if ok(screen):
                return screen
            if self.eof or time.monotonic() > deadline:
                raise AssertionError(f"screen never showed {what!r} (eof={self.eof}):\n{screen}")
            self._pump(0.1)

    def send(self, line: str) -> None:
        self.child.sendline(line)

    def finish(self, timeout: float = TIMEOUT) -> int:
        """Read to the end; the exit code."""
        deadline = time.monotonic() + timeout
        while not self.eof:
            if time.monotonic() > deadline:
                raise AssertionError(f"the command did not end:\n{self.text()}")
            self._pump(0.2)
        self.child.close()
        assert self.child.exitstatus is not None, f"killed by signal {self.child.signalstatus}"
        return int(self.child.exitstatus)

    def kill(self) -> None:
        """Never leave a process behind: SIGTERM lets Director stop its block and journal; then force."""
        if self.child.isalive():
            self.child.kill(signal.SIGTERM)
            for _ in range(50):
                if not self.child.isalive():
                    break
                time.sleep(0.1)
            self.child.terminate(force=True)
        self.child.close(force=True)

    def seen(self) -> str:
        """Everything printed so far, control sequences removed (what scrolled off the screen too)."""
        return re.sub(
            r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[()][0-~]",
            "",
            self.raw.decode("utf-8", "replace"),
        )

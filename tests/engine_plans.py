"""Small plans written the way their authors write them (servers on a free port, files, exported values),
and the real CLI to run them: shared by the tests of issue 32's engine items.

Every process a test starts carries `SOAK_TRIAL=<mark>` in its environment, so whatever a plan left running
is found and killed by that mark at the end (never by name). The world is read directly: a port that
listens, a file that is there, a pid that runs.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from tests import forkserver
from tests.faults import marked_alive

HEAD = """\
# {title}

> Self-executing Markdown, written for Director's tests the way a runbook author writes one.

## 🤖 Director prompt

You are the Director. Execute this plan:
- Observe-before-act; verify each step before advancing (verified frontier)
- Stop at every 🔴 GATE and 💥 for human "go"

```
Legend  🟢 create · 🟡 config · 🔴 GATE (human go) · 💥 destructive (human go) · ⏳ wait · ✔ verify
```

## Intent

{title}.
"""

# A free loopback port, as an author writes it inline.
FREE_PORT = (
    "python3 -c 'import socket; s=socket.socket(); s.bind((\"127.0.0.1\", 0)); print(s.getsockname()[1])'"
)

# Kills the Director process running the block (its nearest ancestor running `-m director`) when the test
# armed it (`$KILL_ARM` exists): the block is "running when Director died".
KILL_IF_ARMED = (
    'if [ -e "$KILL_ARM" ]; then rm -f "$KILL_ARM"; p=$PPID; '
    'while [ "$p" -gt 1 ] && ! tr "\\0" " " < /proc/$p/cmdline | grep -q -- "-m director"; '
    'do p=$(ps -o ppid= -p "$p" | tr -d " "); done; [ "$p" -gt 1 ] && kill -9 "$p"; sleep 5; fi'
)

# Kills the Director process running the block (its nearest ancestor running `-m director`) once per
# marker file: the block is "running when Director died".
KILL_DIRECTOR_ONCE = (
    '[ -e "$WORK/{m}" ] || {{ touch "$WORK/{m}"; p=$PPID; '
    'while [ "$p" -gt 1 ] && ! tr "\\0" " " < /proc/$p/cmdline | grep -q -- "-m director"; '
    'do p=$(ps -o ppid= -p "$p" | tr -d " "); done; [ "$p" -gt 1 ] && kill -9 "$p"; sleep 5; }}'
)


def serve(directory: str, portvar: str = "PORT") -> str:
    """Bash that starts `python3 -m http.server` on a free port for `directory` (a shell path, `$WORK/a`),
    records port and pid there, and waits until it answers."""
    d = f'"{directory}"'
    return f"""\
{portvar}="$({FREE_PORT})"
nohup python3 -m http.server "${portvar}" --bind 127.0.0.1 --directory {d} \\
  > {d}/server.log 2>&1 < /dev/null &
echo $! > {d}/pid
echo "${portvar}" > {d}/port
for i in $(seq 600); do curl -fsS "http://127.0.0.1:${portvar}/" >/dev/null 2>&1 && break; sleep 0.1; done
echo "serving on http://127.0.0.1:${portvar}/"
"""


@dataclass
class World:
    """One test's directory, its process mark, and the real CLI."""

    root: Path
    mark: str = field(default_factory=lambda: uuid.uuid4().hex)
    env: dict[str, str] = field(default_factory=dict)

    def director(
        self, *args: str, env: dict[str, str] | None = None, timeout: float = 240
    ) -> subprocess.CompletedProcess[str]:
        """The real CLI, non-interactive (no terminal, CI set)."""
        e = dict(os.environ)
        e.update({"CI": "1", "NO_COLOR": "1", "SOAK_TRIAL": self.mark, **self.env, **(env or {})})
        return forkserver.run(
            [sys.executable, "-m", "director", *args],
            cwd=self.root,
            env=e,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def alive(self) -> list[str]:
        return marked_alive(self.mark)


def listening(port: int) -> bool:
    """Whether something accepts connections on 127.0.0.1:port (the world, not Director's word)."""
    with socket.socket() as s:
        s.settimeout(2.0)
        return s.connect_ex(("127.0.0.1", port)) == 0


def answers(port: int, needle: str, timeout: float = 60.0) -> bool:
    """Whether http://127.0.0.1:port/ serves a page containing `needle` (retried while it starts)."""
    import urllib.request

    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as r:
                return needle in r.read().decode()
        except OSError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.2)


def pid_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def said(r: subprocess.CompletedProcess[str]) -> str:
    return r.stdout + r.stderr

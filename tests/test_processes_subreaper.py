"""Issue 34, class 7: processes a step leaves are found by what they cannot erase (docs/processes.md).

A daemon that double-forks and then writes its title over `argv` *and* the environment (as `setproctitle`
does), compiled here with the machine's gcc, and a job started with a cleaned environment (`env -i`) whose
starting block has ended: neither carries Director's marks any more. The session's bash is a child
subreaper, so both stay its descendants while the run lasts, and each step's end records them (pid and
start time) in the journal. Through the real CLI: `status --json` lists both, and a teardown that forgets
to stop them is not `gone` (exit 3, naming them); once they are stopped, the teardown completes.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from director.exec.processes import pid_alive
from tests import forkserver

pytestmark = pytest.mark.slow

DAEMON_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
extern char **environ;
int main(int argc, char **argv) {
    if (argc < 2) return 2;
    char pidfile[4096], tmp[4200];
    snprintf(pidfile, sizeof pidfile, "%s", argv[1]);
    snprintf(tmp, sizeof tmp, "%s.tmp", pidfile);
    if (fork() != 0) {                       /* the caller's process: wait until the daemon is up */
        for (int i = 0; i < 1000 && access(pidfile, F_OK) != 0; i++) usleep(10000);
        return access(pidfile, F_OK) == 0 ? 0 : 1;
    }
    setsid();
    if (fork() != 0) _exit(0);               /* double fork: the daemon is an orphan */
    /* a new title over argv and the environment, as setproctitle does: no DIRECTOR_* is left */
    char *start = argv[0], *end = argv[argc - 1] + strlen(argv[argc - 1]);
    for (char **e = environ; *e; e++) if (*e + strlen(*e) > end) end = *e + strlen(*e);
    memset(start, 0, (size_t)(end - start));
    strcpy(start, "probe-daemon: serving");
    prctl(PR_SET_NAME, "probed", 0, 0, 0);
    FILE *f = fopen(tmp, "w");
    if (!f) _exit(1);
    fprintf(f, "%d\n", getpid());
    fclose(f);
    rename(tmp, pidfile);
    for (;;) pause();
}
"""


def _compile(tmp: Path) -> Path:
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("needs gcc to build the title-rewriting daemon")
    src, exe = tmp / "probe-daemon.c", tmp / "probe-daemon"
    src.write_text(DAEMON_C)
    subprocess.run([gcc, "-O1", "-o", str(exe), str(src)], check=True, capture_output=True, timeout=120)
    return exe


PLAN = """\
# Probe daemons

## 0. Variables

```bash
export W="{w}"
export DAEMON="{daemon}"
```

## 1. Title-rewriting daemon  🟢

```bash
"$DAEMON" "$W/probed.pid"
```
```bash
# ✔ daemon up
kill -0 "$(cat "$W/probed.pid")" || {{ echo "daemon down"; exit 1; }}
```

## 2. Sleeper without an environment  🟢

```bash
nohup env -i /bin/sleep 600 >/dev/null 2>&1 &
echo $! > "$W/sleeper.pid"
```
```bash
# ✔ sleeper up
kill -0 "$(cat "$W/sleeper.pid")" || {{ echo "sleeper down"; exit 1; }}
```

## Live State

```yaml
status:        not-created
last_action:   —
last_verified: —
```

## Teardown (observe-first, resumable)  💥

```bash
rm -f "$W/probed.pid" "$W/sleeper.pid"
```
```bash
# ✔ pid files gone
[ ! -e "$W/probed.pid" ] && [ ! -e "$W/sleeper.pid" ] || {{ echo "still there"; exit 1; }}
```
"""


def _director(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd, plan, *rest = args
    full = [cmd, plan, "--state-dir", str(tmp / "state"), *rest]
    if cmd != "status":
        full += ["--plain", "--workdir", str(tmp)]
    env = {**os.environ, "CI": "1", "NO_COLOR": "1", "COLUMNS": "200"}
    return forkserver.run([sys.executable, "-m", "director", *full], cwd=tmp, env=env, capture_output=True,
                          text=True, timeout=180, stdin=subprocess.DEVNULL)  # fmt: skip


def _stop(pid: int) -> None:
    if pid_alive(pid):
        os.kill(pid, signal.SIGKILL)
        for _ in range(500):
            if not pid_alive(pid):
                return
            time.sleep(0.01)


def test_daemons_that_erased_their_marks_are_the_plans(tmp_path: Path) -> None:
    daemon = _compile(tmp_path)
    w = tmp_path / "w"
    w.mkdir()
    plan = tmp_path / "plan.md"
    plan.write_text(PLAN.format(w=w, daemon=daemon), encoding="utf-8")
    pids: list[int] = []
    try:
        r = _director(tmp_path, "apply", str(plan), "--non-interactive")
        assert r.returncode == 0, r.stdout + r.stderr
        pids = [int((w / n).read_text()) for n in ("probed.pid", "sleeper.pid")]
        probed, sleeper = pids
        # what they did to themselves: no mark left in /proc
        for pid in pids:
            assert b"DIRECTOR_" not in Path(f"/proc/{pid}/environ").read_bytes()
        assert Path(f"/proc/{probed}/comm").read_text().strip() == "probed"
        s = _director(tmp_path, "status", str(plan), "--json")
        assert s.returncode == 0, s.stdout + s.stderr
        listed = {p["pid"]: p for p in json.loads(s.stdout)["processes"]}
        assert {probed, sleeper} <= set(listed), s.stdout
        assert listed[probed]["command"] == "probed" and listed[probed]["section"] == "1"
        assert listed[sleeper]["section"] == "2"
        # a teardown that forgets to stop them is not gone
        t = _director(tmp_path, "teardown", str(plan), "--non-interactive", "--approve", "teardown")
        assert t.returncode == 3, t.stdout + t.stderr
        assert f"pid {probed} (probed)" in t.stdout and f"pid {sleeper} (sleep)" in t.stdout, t.stdout
        for pid in pids:
            _stop(pid)
        t = _director(tmp_path, "teardown", str(plan), "--non-interactive", "--approve", "teardown")
        assert t.returncode == 0, t.stdout + t.stderr
    finally:
        for pid in pids:
            _stop(pid)


def test_a_subreaper_adopts_what_a_child_orphans(tmp_path: Path) -> None:
    """The mechanism itself: a process made a child subreaper before exec adopts a double-forked orphan."""
    from director.exec.processes import child_subreaper, descendants

    r, wfd = os.pipe()
    proc = subprocess.Popen(
        ["bash", "-c", f"(setsid sleep 30 >/dev/null 2>&1 & echo $! >&{wfd}); sleep 30"],
        pass_fds=(wfd,), preexec_fn=child_subreaper, env={**os.environ, "PS4": "+ "},
    )  # fmt: skip
    os.close(wfd)
    try:
        orphan = int(os.read(r, 64).decode().split()[0])

        def parent() -> int:
            with open(f"/proc/{orphan}/stat") as f:
                return int(f.read().rsplit(")", 1)[1].split()[1])

        for _ in range(3000):  # until the subshell that started it has ended
            if parent() == proc.pid:
                break
            time.sleep(0.01)
        assert parent() == proc.pid  # adopted by the subreaper, not by init
        assert any(d.pid == orphan for d in descendants(proc.pid)), descendants(proc.pid)
    finally:
        os.close(r)
        for d in descendants(proc.pid):
            _stop(d.pid)
        proc.kill()
        proc.wait()

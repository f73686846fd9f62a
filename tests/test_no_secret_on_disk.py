"""Secrets never on disk, even after a SIGKILL (issue 14, point 1), and a killed Director leaves no process.

The session (which holds the secrets blocks set) travels between Director and the session's bash through
pipes only. The test SIGKILLs Director while a block runs with a secret in the session, then searches every
file under the temp directory Director used, its state directory and its work directory for the value; a
file an older Director left there (`director-shell-*/prelude.bash`, 0644, never cleaned) is removed by the
next run.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from director.exec.processes import pid_alive
from tests import forkserver
from tests.planmaker import CounterPlan, Step, write_plan

pytestmark = pytest.mark.slow

MINT = 'export API_TOKEN="tok-$(printf %s "$OUT" | sha256sum | cut -c1-24)"; printf %s "$API_TOKEN" > "$OUT/.token"'
HOLD = 'echo "$$ $BASHPID" > "$OUT/pids"; [ -f "$OUT/go-on" ] || sleep 60'  # the session holds API_TOKEN


def _files(*roots: Path) -> list[Path]:
    found = []
    for root in roots:
        for dirpath, _dirs, names in os.walk(root):
            found += [Path(dirpath) / n for n in names]
    return found


def _holding(value: bytes, *roots: Path) -> list[str]:
    hits = []
    for f in _files(*roots):
        if f.is_file() and not f.is_symlink() and value in f.read_bytes():
            hits.append(str(f))
    return hits


def _wait_dead(pid: int, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while pid_alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _ignore_sighup() -> None:
    signal.signal(signal.SIGHUP, signal.SIG_IGN)


# `nohup director apply …` (or a script's background job) starts Director with SIGHUP ignored, and an
# ignored signal is inherited: the session's bash must still die with Director (found by a clean-clone run
# started under nohup: a block outlived its SIGKILLed Director).
@pytest.mark.parametrize("sighup", ["default", "ignored"])
def test_sigkill_mid_block_leaves_no_secret_in_tmp_state_or_workdir_and_no_process(
    tmp_path: Path, sighup: str
) -> None:
    out, tmp, runtime = tmp_path / "out", tmp_path / "tmp", tmp_path / "run-user"
    for d in (out, tmp, runtime):
        d.mkdir()
    runtime.chmod(0o700)
    # What an older Director left behind after a SIGKILL: a session prelude with a secret, world-readable.
    legacy = tmp / "director-shell-abc123"
    legacy.mkdir(mode=0o700)
    (legacy / "prelude.bash").write_text("declare -x KV_API_TOKEN=legacy-secret-0123456789\n")
    (legacy / "prelude.bash").chmod(0o644)
    old = time.time() - 2 * 86400  # untouched for two days
    os.utime(legacy / "prelude.bash", (old, old))
    os.utime(legacy, (old, old))

    plan = write_plan(tmp_path, CounterPlan([Step(extra=MINT), Step(extra=HOLD), Step()]))
    env = {**os.environ, "COUNTER_OUT": str(out), "CI": "1", "NO_COLOR": "1",
           "TMPDIR": str(tmp), "XDG_RUNTIME_DIR": str(runtime)}  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "director", "apply", str(plan)],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        preexec_fn=_ignore_sighup if sighup == "ignored" else None,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not (out / "pids").exists() or not (out / "pids").read_text().strip():
            assert proc.poll() is None, "Director ended before §2 ran"
            assert time.monotonic() < deadline, "§2 never started"
            time.sleep(0.05)
        time.sleep(0.2)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    token = (out / ".token").read_bytes()
    assert token.startswith(b"tok-") and len(token) > 20
    server, block = (int(x) for x in (out / "pids").read_text().split())
    assert server != block, "$$ is the session's bash, $BASHPID the block's subshell"
    for pid, what in ((block, "the block"), (server, "the session's bash")):
        if not _wait_dead(pid):
            os.kill(pid, signal.SIGKILL)
            pytest.fail(f"{what} (pid {pid}) outlived a SIGKILLed Director")

    state = tmp_path / ".director"
    assert state.is_dir()
    # The state directory holds the workdir (`.director/<plan>/workspace`); the token file is the test's own.
    assert _holding(token, tmp, runtime, state) == []
    assert not legacy.exists(), "the next run removed what a dead (older) run left"

    (out / "go-on").touch()
    r = forkserver.run(
        [sys.executable, "-m", "director", "apply", str(plan)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    assert _holding(token, tmp, runtime, state) == []

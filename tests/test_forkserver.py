"""tests/forkserver.py runs `python -m director` as a real exec does: the same calls both ways, in twin
directories, give the same exit code, output, plan file and world (the files the plan's blocks wrote)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests import forkserver
from tests.planmaker import CounterPlan, Step, write_plan

DIRECTOR = [sys.executable, "-m", "director"]
ROOT = Path(__file__).resolve().parent.parent


def _both(tmp: Path, calls: Callable[[Callable[..., Any], Path], list[Any]]) -> tuple[list[Any], list[Any]]:
    """`calls(run, dir)` made with a real exec in one directory, then forked in its twin."""
    execd, forked = tmp / "exec", tmp / "fork"
    execd.mkdir()
    forked.mkdir()
    return calls(subprocess.run, execd), calls(forkserver.run, forked)


def _same(a: Any, b: Any, dirs: tuple[Path, Path]) -> None:
    def norm(v: Any) -> Any:
        if isinstance(v, subprocess.CompletedProcess):
            return (v.returncode, norm(v.stdout), norm(v.stderr))
        if isinstance(v, list | tuple):
            return [norm(x) for x in v]
        if isinstance(v, bytes):
            v = v.decode("utf-8", "replace")
        if isinstance(v, str):  # the directory, and the clock (times, durations, run ids derived from them)
            for d in dirs:
                v = v.replace(str(d), "<dir>")
            return re.sub(r"\d+", "9", re.sub(r"\b[0-9a-f]{6,}\b", "<hash>", v))  # content names <dir>
        return v

    assert norm(a) == norm(b)


def _env(out: Path, **more: str) -> dict[str, str]:
    return {**os.environ, "COUNTER_OUT": str(out), "CI": "1", "NO_COLOR": "1", "COLUMNS": "120", **more}


def test_a_plan_applied_looked_at_and_torn_down_is_the_same_forked(tmp_path: Path) -> None:
    def calls(run: Callable[..., Any], d: Path) -> list[Any]:
        plan = write_plan(d, CounterPlan([Step(), Step(marker="🔴"), Step()]))
        env = _env(d / "out")
        got: list[Any] = []
        for args in (["apply", "counter.md", "--non-interactive"],  # stops at the gate
                     ["apply", "counter.md", "--non-interactive", "--auto-approve"],
                     ["status", "counter.md"], ["audit", "counter.md"], ["check", "counter.md"],
                     ["teardown", "counter.md", "--approve", "teardown"]):  # fmt: skip
            got.append(run([*DIRECTOR, *args], cwd=d, env=env, capture_output=True, text=True, timeout=120))
        got.append(plan.read_text(encoding="utf-8"))
        got.append(sorted(p.name for p in (d / "out").iterdir()))
        got.append((d / "out" / "acts").read_text())
        return got

    execd, forked = _both(tmp_path, calls)
    _same(execd, forked, (tmp_path / "exec", tmp_path / "fork"))
    assert execd[1].returncode == 0 and "s3" in execd[-1], execd[1]  # the comparison compared a real run


def test_streams_encodings_bytes_and_input_are_as_subprocess_gives_them(tmp_path: Path) -> None:
    def calls(run: Callable[..., Any], d: Path) -> list[Any]:
        write_plan(d, CounterPlan([Step(marker="🔴")]))
        env = _env(d / "out")
        log = d / "log"
        got: list[Any] = [
            run([*DIRECTOR, "--version"], capture_output=True),  # bytes
            run([*DIRECTOR, "--help"], capture_output=True, text=True, env={**env, "COLUMNS": "70"}),
            run([*DIRECTOR, "show", "nowhere.md"], cwd=d, capture_output=True, text=True),
            run([*DIRECTOR, "lint", str(ROOT / "tests/plans/bad/unknown-marker.md")], capture_output=True, text=True),
            # a gate, stdin a pipe (no terminal): what is typed there is not a go
            run([*DIRECTOR, "apply", "counter.md"], cwd=d, env=env, input="go\n", capture_output=True, text=True),
            run([*DIRECTOR, "show", "counter.md"], cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, encoding="utf-8"),
        ]  # fmt: skip
        with log.open("w") as f:
            got.append(run([*DIRECTOR, "status", "counter.md"], cwd=d, env=env, stdout=f, stderr=f))
        got.append(log.read_text())
        with pytest.raises(subprocess.CalledProcessError) as e:
            run([*DIRECTOR, "show", "nowhere.md"], cwd=d, capture_output=True, check=True)
        got.append(e.value.returncode)
        return got

    execd, forked = _both(tmp_path, calls)
    _same(execd, forked, (tmp_path / "exec", tmp_path / "fork"))
    assert execd[0].stdout.startswith(b"director ") and execd[2].returncode == 64, execd[:3]


def test_umask_environment_and_set_reach_the_blocks_as_they_do_an_exec(tmp_path: Path) -> None:
    def calls(run: Callable[..., Any], d: Path) -> list[Any]:
        plan = write_plan(d, CounterPlan([Step()]))
        old = os.umask(0o077)
        try:
            r = run([*DIRECTOR, "apply", "counter.md", "--non-interactive", "--set", "MODE=b"],
                    cwd=d, env=_env(d / "out", MODE="a"), capture_output=True, text=True, timeout=120)  # fmt: skip
        finally:
            os.umask(old)
        made = d / "out" / "s1"
        return [r, plan.read_text(encoding="utf-8"), oct(made.stat().st_mode) if made.exists() else None]

    execd, forked = _both(tmp_path, calls)
    _same(execd, forked, (tmp_path / "exec", tmp_path / "fork"))
    assert execd[2] == oct(0o100600) and "value-1-b" in execd[1], execd  # umask and --set reached the block


def test_a_timeout_kills_the_process_and_raises_as_subprocess_does(tmp_path: Path) -> None:
    write_plan(tmp_path, CounterPlan([Step(marker="🔴")]))
    t0 = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired) as e:  # waits for a receipt that never comes
        forkserver.run([*DIRECTOR, "apply", "counter.md", "--non-interactive", "--wait-for-approval", "600"],
                       cwd=tmp_path, env=_env(tmp_path / "out"), capture_output=True, text=True, timeout=3)  # fmt: skip
    assert time.monotonic() - t0 < 60
    assert not (tmp_path / "out" / "s1").exists() and isinstance(e.value.stdout, str)
    assert "awaiting" in e.value.stdout or "wait" in e.value.stdout, e.value.stdout
    assert _working_in(tmp_path) == [], "the killed run's process is still there"


def _working_in(d: Path) -> list[str]:
    """The processes whose working directory is `d`."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{pid}/cwd") == str(d):
                found.append(Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " "))
        except OSError:
            pass
    return found


def test_what_a_fork_cannot_carry_is_a_real_exec() -> None:
    env = dict(os.environ)
    assert forkserver._forks(DIRECTOR, {"env": env})
    assert not forkserver._forks(DIRECTOR, {"env": {**env, "LC_ALL": "C"}})  # the interpreter reads it at start
    assert not forkserver._forks(DIRECTOR, {"env": {**env, "PYTHONUTF8": "1"}})
    assert not forkserver._forks(DIRECTOR, {"env": {**env, forkserver.EXEC: "1"}})
    assert not forkserver._forks(DIRECTOR, {"preexec_fn": os.setpgrp})
    assert not forkserver._forks(["setpriv", *DIRECTOR], {})
    assert not forkserver._forks([sys.executable, "-c", "pass"], {})


def test_a_run_killed_mid_act_then_resumed_is_the_same_forked(tmp_path: Path) -> None:
    """`forkserver.Popen`: its pid is the CLI's process; SIGKILLed while an act runs, then resumed."""

    def calls(run: Callable[..., Any], d: Path) -> list[Any]:
        popen = subprocess.Popen if run is subprocess.run else forkserver.Popen
        once = '[ -e "$OUT/slept" ] || { touch "$OUT/slept"; sleep 60; }'  # the first attempt waits to be killed
        plan = write_plan(d, CounterPlan([Step(), Step(extra=once), Step()]))
        env = _env(d / "out")
        # not a pipe: the killed act's `sleep` would hold it open (each way alike) until the resumed run stops it
        p = popen([*DIRECTOR, "apply", "counter.md"], cwd=d, env=env, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while "s2" not in _read(d / "out" / "acts") and time.monotonic() < deadline:
            time.sleep(0.02)
        assert p.poll() is None and "s2" in _read(d / "out" / "acts")
        p.kill()
        killed = p.wait(timeout=60)
        again = run([*DIRECTOR, "apply", "counter.md"], cwd=d, env=env, capture_output=True, text=True, timeout=120)
        return [killed, again, _read(d / "out" / "acts"), plan.read_text(encoding="utf-8")]

    execd, forked = _both(tmp_path, calls)
    _same(execd, forked, (tmp_path / "exec", tmp_path / "fork"))
    assert execd[0] == -9 and execd[1].returncode == 0 and execd[2].split().count("s2") == 2, execd


def _read(p: Path) -> str:
    return p.read_text() if p.exists() else ""

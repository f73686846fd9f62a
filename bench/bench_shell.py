"""Per-block overhead of `Shell.run` over raw `bash -c` (with --journal: the journal's commit cost too).

Usage: .venv/bin/python bench/bench_shell.py [-n 200] [--journal]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from director.exec.shell import Shell
from director.state.journal import Journal
from director.state.lifecycle import RunState, StepState


def bench_shell(n: int) -> None:
    """Median wall time per trivial block, through Shell.run and as raw `bash -c`."""
    block = "echo $i; X=$((X+1))"
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ)
        raw: list[float] = []
        for i in range(n):
            t = time.perf_counter()
            subprocess.run(
                ["bash", "--noprofile", "--norc", "-c", block],
                env={**env, "i": str(i)},
                cwd=tmp,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                check=True,
            )
            raw.append(time.perf_counter() - t)
        shelled: list[float] = []
        with Shell(env, tmp, interactive=False) as sh:
            state = sh.initial_state()
            for i in range(n):
                t = time.perf_counter()
                res = sh.run(f"i={i}; {block}", state)
                shelled.append(time.perf_counter() - t)
                assert res.exit_code == 0 and res.output == f"{i}\n", res
                state = res.state
            assert state.variables["X"] == str(n), state.variables.get("X")
    m_raw, m_sh = statistics.median(raw), statistics.median(shelled)
    print(f"blocks: {n} trivial blocks ({block!r})")
    print(f"raw bash -c     median {m_raw * 1000:7.2f} ms")
    print(f"Shell.run       median {m_sh * 1000:7.2f} ms")
    print(f"ratio           {m_sh / m_raw:7.2f}x")
    print(f"overhead/block  {(m_sh - m_raw) * 1000:7.2f} ms (target <= 8 ms)")


def bench_journal(n: int) -> None:
    """Median cost of one durable commit (step_started / step_finished) on this machine's disk."""
    with tempfile.TemporaryDirectory(dir=os.getcwd()) as tmp, Journal.open(Path(tmp) / "j.db") as j:
        rid = j.create_run("apply", "plan.md", "local", "bench", {})
        j.transition(rid, RunState.RUNNING)
        commits: list[float] = []
        session = {"variables": {"X": "1"}, "exported": [], "functions": "", "cwd": tmp}
        for i in range(n):
            t = time.perf_counter()
            sid = j.step_started(rid, f"1/{i}", "1", i, "act", "f" * 64)
            commits.append(time.perf_counter() - t)
            t = time.perf_counter()
            j.step_finished(sid, StepState.SUCCEEDED, 0, 0.01, "out\n", session)
            commits.append(time.perf_counter() - t)
        assert j.integrity_check() == "ok"
    p90 = sorted(commits)[int(len(commits) * 0.9)]
    print(
        f"journal commit  median {statistics.median(commits) * 1000:7.2f} ms "
        f"(p90 {p90 * 1000:.2f} ms; WAL, synchronous=FULL, {len(commits)} commits)"
    )


def main() -> None:
    """Run the benchmarks."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("-n", type=int, default=200, help="blocks (and journal steps) to run")
    ap.add_argument("--journal", action="store_true", help="also measure the journal's per-commit cost")
    args = ap.parse_args()
    bench_shell(args.n)
    if args.journal:
        bench_journal(args.n)


if __name__ == "__main__":
    main()

"""Where the test suite's CPU goes: per test file (the pytest worker's own CPU and its children's), and how
much of it is `director` processes the tests start, by command.

The suite is CPU-bound on this 2-core machine (issue 37: the README's test command <= 12 minutes), so its
wall time follows its CPU; this says which part to cut. It runs the README's pytest command (`-n 6`, or
`-n N`) with two small hooks put on PYTHONPATH for that run only: a pytest plugin that records each test's
CPU (`resource.getrusage`, the worker itself and the children it reaped) and a `sitecustomize` that makes
every `director` process (console script or `python -m director`, an interpreter's or one tests/forkserver.py
forked) append its own CPU at exit, and which of the two it was. Nothing of
Director or of the tests is changed; a process killed by SIGKILL (the crash sweeps) records nothing.

Usage: .venv/bin/python bench/suite_cpu.py [-n 6] [--top 30] [pytest args…, e.g. tests/test_exit_codes.py]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.scaleplan import load  # noqa: E402

PLUGIN = '''\
import json, os, resource, time
import pytest

_out = None


def _cpu():
    s = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime, c.ru_utime + c.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    global _out
    if _out is None:
        _out = open(os.path.join(os.environ["SUITE_CPU_DIR"], f"tests-{os.getpid()}.jsonl"), "a")
    s0, c0 = _cpu()
    t0 = time.monotonic()
    yield
    s1, c1 = _cpu()
    row = {"id": item.nodeid, "self": s1 - s0, "kids": c1 - c0, "wall": time.monotonic() - t0}
    _out.write(json.dumps(row) + "\\n")
    _out.flush()
'''

SITECUSTOMIZE = '''\
import atexit, os, sys, time


def _record():
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    name = getattr(spec, "name", "") or os.path.basename(sys.argv[0] if sys.argv else "")
    if name not in ("director.__main__", "director"):
        return
    command = next((a for a in sys.argv[1:] if not a.startswith("-")), "-")
    how = "forked" if "tests.forkserver" in sys.modules else "exec"  # tests/forkserver.py's, or not
    line = f"{os.getpid()} {command} {time.process_time():.4f} {how}\\n".encode()
    path = os.path.join(os.environ["SUITE_CPU_DIR"], "director.log")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


if os.environ.get("SUITE_CPU_DIR"):
    atexit.register(_record)
'''


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=6, help="pytest-xdist workers (the README's command: 6)")
    ap.add_argument("--top", type=int, default=30, help="test files to list")
    args, rest = ap.parse_known_args()
    work = Path(tempfile.mkdtemp(prefix="suite-cpu-"))
    try:
        (work / "suite_cpu_plugin.py").write_text(PLUGIN, encoding="utf-8")
        (work / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
        env = dict(os.environ, SUITE_CPU_DIR=str(work))
        env["PYTHONPATH"] = os.pathsep.join([str(work), *filter(None, [os.environ.get("PYTHONPATH")])])
        argv = [sys.executable, "-m", "pytest", "-q", "-n", str(args.n), "-p", "suite_cpu_plugin",
                "-p", "no:cacheprovider", *rest]  # fmt: skip
        load_before = load()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        done = subprocess.run(
            argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        wall = time.monotonic() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        report(work, done, wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime,
               load_before, args)  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report(work: Path, done: subprocess.CompletedProcess[str], wall: float, cpu: float,
           load_before: str, args: argparse.Namespace) -> None:  # fmt: skip
    tail = done.stdout.strip().splitlines()[-1:] or ["(no output)"]
    rows = [json.loads(line) for f in work.glob("tests-*.jsonl") for line in f.read_text().splitlines()]
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average before {load_before}, "
          f"after {load()}")  # fmt: skip
    print(f"pytest -n {args.n}: exit {done.returncode}; {tail[0]}")
    for line in done.stdout.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            print(f"  {line}")
    share = cpu / wall / (os.cpu_count() or 1)
    print(f"wall {wall / 60:.1f} min; CPU {cpu / 60:.1f} min (all processes), {share:.0%} of the cores")
    own = sum(r["self"] for r in rows)
    kids = sum(r["kids"] for r in rows)
    print(f"per test: {len(rows)} tests; the workers' own CPU {own / 60:.1f} min, "
          f"their children's {kids / 60:.1f} min")  # fmt: skip
    log = work / "director.log"
    procs = [line.split() for line in log.read_text().splitlines()] if log.exists() else []
    total = sum(float(p[2]) for p in procs)
    print(f"director processes: {len(procs)}, {total / 60:.1f} min CPU ({total / cpu:.0%} of the run's), "
          f"{total / max(1, len(procs)) * 1000:.0f} ms each on average")  # fmt: skip
    for how in ("exec", "forked"):
        mine = [float(p[2]) for p in procs if p[3:] == [how]]
        each = sum(mine) / max(1, len(mine)) * 1000
        print(f"  {how:<10} {len(mine):5d} runs  {sum(mine):7.1f} s CPU  {each:5.0f} ms each")
    by_command: dict[str, list[float]] = collections.defaultdict(list)
    for p in procs:
        by_command[p[1]].append(float(p[2]))
    for command, cpus in sorted(by_command.items(), key=lambda kv: -sum(kv[1]))[:10]:
        each = sum(cpus) / len(cpus) * 1000
        print(f"  {command:<10} {len(cpus):5d} runs  {sum(cpus):7.1f} s CPU  {each:5.0f} ms each")
    by_file: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
    for r in rows:
        f = by_file[r["id"].split("::")[0]]
        f[0] += r["self"]
        f[1] += r["kids"]
        f[2] += r["wall"]
        f[3] += 1
    print(f"\nthe {args.top} test files with the most CPU (own + children), seconds:")
    for name, (s, k, w, n) in sorted(by_file.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))[: args.top]:
        print(f"  {s + k:7.1f} (own {s:6.1f}, children {k:6.1f})  wall {w:7.1f}  {int(n):5d} tests  {name}")


if __name__ == "__main__":
    main()

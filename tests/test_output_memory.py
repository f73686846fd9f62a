"""Director's memory does not grow with the length of a line a block prints (issue 27), real CLI.

A block prints one 100 MB line (no newline until its end). Director's own peak resident set is read from
the kernel (`VmHWM` of /proc/self/status, taken as the Director process exits) and must stay under
100 MB; what the journal keeps of the output is bounded too, with an elision marker.

Not `getrusage(RUSAGE_SELF).ru_maxrss`: Linux carries the high-water mark of the address space a process
had before `exec` into it, so a Director started from a pytest process that has grown to 300 MB over a
full suite "peaks" at 300 MB before it reads a byte. `VmHWM` belongs to the address space `exec` made.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.planmaker import CounterPlan, Step, director, write_plan

pytestmark = pytest.mark.slow

LINE = 100_000_000

# `python -m director ARGS`, then the process's own peak RSS (KiB, VmHWM) on stderr as it exits.
_MEASURED = (
    "import atexit, runpy, sys\n"
    "def peak():\n"
    "    with open('/proc/self/status') as f:\n"
    "        hwm = next(ln.split()[1] for ln in f if ln.startswith('VmHWM:'))\n"
    "    print('PEAK_RSS_KIB', hwm, file=sys.stderr)\n"
    "atexit.register(peak)\n"
    "sys.argv[0] = 'director'\n"
    "runpy.run_module('director', run_name='__main__', alter_sys=True)\n"
)


def test_a_100_mb_line_leaves_director_under_100_mb(tmp_path: Path, out: Path) -> None:
    body = f"head -c {LINE} /dev/zero | tr '\\0' x; echo; echo after-the-line"
    plan = write_plan(tmp_path, CounterPlan([Step(extra=body)]))
    env = {**os.environ, "COUNTER_OUT": str(out), "CI": "1", "NO_COLOR": "1"}
    r = subprocess.run(
        [sys.executable, "-c", _MEASURED, "apply", str(plan)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    peak_kib = int(r.stderr.rsplit("PEAK_RSS_KIB", 1)[1].split()[0])
    print(f"Director's peak RSS with a {LINE // 1_000_000} MB line: {peak_kib / 1024:.1f} MB")  # pytest -s
    assert peak_kib < 100 * 1024, f"Director peaked at {peak_kib / 1024:.0f} MB"
    # The line was read whole (the block's next line came through) and shown bounded.
    assert "after-the-line" in r.stdout and "characters not shown]…" in r.stdout
    assert len(r.stdout) < 1_000_000
    # The journal keeps a bounded excerpt of the output, saying how much it left out.
    audit = json.loads(director("audit", str(plan), "--json", cwd=tmp_path, out=out).stdout)
    [act] = [s for s in audit["steps"] if s["role"] == "act" and s["section_key"] == "1"]
    assert len(act["output"]) < 70_000 and "bytes elided]…" in act["output"]
    assert act["output"].rstrip().endswith("after-the-line")

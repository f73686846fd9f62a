"""A fleet check: `director check DIR` of N plans whose observations take about a second each, against the
slowest member's own `director check`, timed side by side (A B A B …) in one run.

    .venv/bin/python bench/bench_family.py                 # 10 plans, 5 pairs (farm-bench when on PATH)
    .venv/bin/python bench/bench_family.py -n 20 --runs 7 --observe 1.0
    .venv/bin/python bench/bench_family.py --no-farm       # time the pairs here instead of with farm-bench

The plans are written into a temp directory (tests/familyplans.py: real bash, one `sleep` in each
observation), applied once as a family, then checked. The target (issue 28): the family's check takes at
most 1.5x the slowest member's own check, the ratio taken pair by pair and quoted as the median, with the
load average. Everything it made is removed at the end.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.familyplans import member  # noqa: E402

TARGET = 1.5


def _director(*args: str) -> list[str]:
    return [sys.executable, "-m", "director", *args]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIRECTOR_")}
    env.update(CI="1", NO_COLOR="1")
    return env


def _wall(argv: list[str], cwd: Path) -> float:
    started = time.monotonic()
    r = subprocess.run(argv, cwd=cwd, env=_env(), capture_output=True, text=True, check=False)
    took = time.monotonic() - started
    if r.returncode != 0:
        raise SystemExit(f"{shlex.join(argv)} exited {r.returncode}:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    return took


def _farm(a: list[str], b: list[str], runs: int, cwd: Path) -> tuple[float, float, float]:
    """(A wall median, B wall median, A/B wall median) from farm-bench's paired report."""
    argv = ["farm-bench", "-n", str(runs), "--timeout", "900", "--vs", shlex.join(b), "--", *a]
    r = subprocess.run(argv, cwd=cwd, env=_env(), capture_output=True, text=True, check=False)
    print(r.stdout, end="")
    medians = {}
    for label in ("A wall s", "B wall s", "A/B wall"):
        m = re.search(rf"^{re.escape(label)}\s+(\S+)\s+(\S+)\s+(\S+)", r.stdout, re.M)
        if m is None:
            raise SystemExit(f"farm-bench printed no {label!r} line:\n{r.stdout}{r.stderr}")
        medians[label] = float(m.group(2))
    return medians["A wall s"], medians["B wall s"], medians["A/B wall"]


def _pairs(a: list[str], b: list[str], runs: int, cwd: Path) -> tuple[float, float, float]:
    """The same pairing, timed here: one warm-up each, then A B A B …; medians."""
    _wall(a, cwd), _wall(b, cwd)
    ta, tb, ratios = [], [], []
    for _ in range(runs):
        x, y = _wall(a, cwd), _wall(b, cwd)
        ta.append(x)
        tb.append(y)
        ratios.append(x / y)
    return statistics.median(ta), statistics.median(tb), statistics.median(ratios)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=10, help="plans in the fleet (default 10)")
    ap.add_argument("--runs", type=int, default=5, help="timed pairs (default 5)")
    ap.add_argument("--observe", type=float, default=1.0, help="seconds an observation sleeps (default 1.0)")
    ap.add_argument("--no-farm", action="store_true", help="time the pairs here, not with farm-bench")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="bench-family-"))
    try:
        fleet = tmp / "fleet"
        fleet.mkdir()
        for i in range(1, args.n + 1):
            name = f"m{i:02d}"
            (fleet / f"{name}.md").write_text(member(name, observe_sleep=args.observe), encoding="utf-8")
        load_before = os.getloadavg()
        _wall(_director("apply", str(fleet), "--non-interactive"), tmp)
        # the slowest member's own check: each member once, the slowest taken
        own = {p: _wall(_director("check", str(p)), tmp) for p in sorted(fleet.glob("*.md"))}
        slowest = max(own, key=lambda p: own[p])
        a = _director("check", str(fleet))
        b = _director("check", str(slowest))
        use_farm = not args.no_farm and shutil.which("farm-bench") is not None
        fam, one, ratio = (_farm if use_farm else _pairs)(a, b, args.runs, tmp)
        load_after = os.getloadavg()
        print()
        print(f"fleet: {args.n} plans, each observation sleeps {args.observe:.1f} s; {args.runs} pairs "
              f"({'farm-bench' if use_farm else 'timed here'}), medians")  # fmt: skip
        print(f"  family check (A)            {fam:6.2f} s")
        print(f"  slowest member's check (B)  {one:6.2f} s   ({slowest.name}; one pass each: "
              f"{min(own.values()):.2f}-{max(own.values()):.2f} s)")  # fmt: skip
        verdict = "PASS" if ratio <= TARGET else "FAIL"
        print(f"  A/B, pair by pair           {ratio:6.2f}    target <= {TARGET}: {verdict}")
        before, after = (" ".join(f"{x:.2f}" for x in load) for load in (load_before, load_after))
        print(f"  load average before {before}, after {after} ({os.cpu_count()} CPUs)")
        return 0 if ratio <= TARGET else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())

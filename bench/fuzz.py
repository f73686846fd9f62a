"""The fuzzed-plan property at length: ≥ 10,000 damaged plans through the reader and the CLI, and ≥ 1,000
plans with a damaged Live State through `apply` (tests/fuzzplans.py says what is checked); and plans with
fuzzed structure -- nesting, fences, control characters, surrogates, Live State YAML aliases and depth --
through every reading command (`--structure`) and through plan/check/apply/teardown (`--structure-run`)
(tests/fuzzstructure.py).

A failure stops the run with hypothesis' smallest example; otherwise the outcomes are counted, with the
median and the slowest example's time.

Usage: .venv/bin/python bench/fuzz.py [-n 10000] [--apply 1000] [--structure 2000] [--structure-run 200]
       [--seed N]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.fuzzplans import check_apply, check_plan, ledger_mutated_plans, mutated_plans  # noqa: E402
from tests.fuzzstructure import check_read, check_run, structured_plans  # noqa: E402


def run(
    name: str, n: int, strategy: st.SearchStrategy[bytes], check: Callable[[bytes, Path], str], at: int
) -> Counter[str]:
    outcomes: Counter[str] = Counter()
    times: list[float] = []
    started = time.monotonic()

    @seed(at)
    @settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def prop(data: bytes) -> None:
        with tempfile.TemporaryDirectory() as d:
            t0 = time.monotonic()
            outcomes[check(data, Path(d) / "fuzzed.md")] += 1
            times.append(time.monotonic() - t0)
        done = sum(outcomes.values())
        if done % 1000 == 0:
            print(f"  {name}: {done} examples, {time.monotonic() - started:.0f} s", flush=True)

    prop()
    total = sum(outcomes.values())
    spent = time.monotonic() - started
    times.sort()
    median, slowest = (1000 * times[len(times) // 2], 1000 * times[-1]) if times else (0.0, 0.0)
    print(
        f"{name}: {total} examples in {spent:.0f} s (median {median:.0f} ms, slowest {slowest:.0f} ms), "
        f"0 failures: {dict(outcomes)}"
    )
    return outcomes


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=10_000, help="damaged plans read and shown (default 10,000)")
    ap.add_argument("--apply", type=int, default=1_000, help="damaged ledgers applied (default 1,000)")
    ap.add_argument("--structure", type=int, default=2_000, help="fuzzed structure, reading commands")
    ap.add_argument("--structure-run", type=int, default=200, help="fuzzed structure, plan…teardown")
    ap.add_argument("--seed", type=int, default=int(time.time()))
    args = ap.parse_args()
    print(f"seed {args.seed}, load average {os.getloadavg()[0]:.1f}")
    if args.n:
        run("read/show/lint", args.n, mutated_plans(), check_plan, args.seed)
    if args.apply:
        run("apply", args.apply, ledger_mutated_plans(), check_apply, args.seed)
    at = args.seed
    if args.structure:
        run("structure: show/lint/status/output", args.structure, structured_plans(), check_read, at)
    if args.structure_run:
        run("structure: plan/check/apply/teardown", args.structure_run, structured_plans(), check_run, at)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

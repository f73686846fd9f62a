"""The fuzzed-plan property at length: ≥ 10,000 damaged plans through the reader and the CLI, and ≥ 1,000
plans with a damaged Live State through `apply` (tests/fuzzplans.py says what is checked).

A failure stops the run with hypothesis' smallest example; otherwise the outcomes are counted.

Usage: .venv/bin/python bench/fuzz.py [-n 10000] [--apply 1000] [--seed N]
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


def run(
    name: str, n: int, strategy: st.SearchStrategy[bytes], check: Callable[[bytes, Path], str], at: int
) -> Counter[str]:
    outcomes: Counter[str] = Counter()
    started = time.monotonic()

    @seed(at)
    @settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def prop(data: bytes) -> None:
        with tempfile.TemporaryDirectory() as d:
            outcomes[check(data, Path(d) / "fuzzed.md")] += 1
        done = sum(outcomes.values())
        if done % 1000 == 0:
            print(f"  {name}: {done} examples, {time.monotonic() - started:.0f} s", flush=True)

    prop()
    total = sum(outcomes.values())
    spent = time.monotonic() - started
    each = 1000 * spent / max(total, 1)
    print(f"{name}: {total} examples in {spent:.0f} s ({each:.0f} ms each): {dict(outcomes)}")
    return outcomes


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=10_000, help="damaged plans read and shown (default 10,000)")
    ap.add_argument("--apply", type=int, default=1_000, help="damaged ledgers applied (default 1,000)")
    ap.add_argument("--seed", type=int, default=int(time.time()))
    args = ap.parse_args()
    print(f"seed {args.seed}, load average {os.getloadavg()[0]:.1f}")
    if args.n:
        run("read/show/lint", args.n, mutated_plans(), check_plan, args.seed)
    if args.apply:
        run("apply", args.apply, ledger_mutated_plans(), check_apply, args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

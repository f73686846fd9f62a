"""Two first `director apply` of a fresh plan started together, many times (tests/race.py; the suite runs
20 pairs in tests/test_first_runs.py): how many pairs failed (an exit other than 0 and 5, an act run twice,
an unsound journal), and the exit codes seen.

Usage: .venv/bin/python bench/race_first_runs.py [--pairs 170] [--hard-links] [--together]
(`--together`: each process waits for the other right before creating the journal, tests/barrier.)
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.race import first_runs  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=170)
    ap.add_argument("--hard-links", action="store_true", help="the second applies a hard link of the plan")
    ap.add_argument("--together", action="store_true", help="both held until both create the journal")
    ns = ap.parse_args()
    names = ("counter.md", "copy.md") if ns.hard_links else ("counter.md", "counter.md")
    codes: collections.Counter[tuple[int, int]] = collections.Counter()
    failed: list[str] = []
    t0 = time.monotonic()
    for i in range(ns.pairs):
        with tempfile.TemporaryDirectory(prefix="race-first-runs-") as tmp:
            pair = first_runs(Path(tmp), names, together=ns.together)
        codes[tuple(sorted(pair.codes))] += 1  # type: ignore[index]
        if not pair.ok:
            why = next((e.strip().splitlines()[-1] for e in pair.errors if e.strip()), "")
            failed.append(f"pair {i}: exit {pair.codes}, acts {pair.acts}, {pair.integrity}: {why}")
            print(failed[-1], flush=True)
    how = "hard links" if ns.hard_links else "one name"
    took, load = time.monotonic() - t0, os.getloadavg()[0]
    print(f"{ns.pairs} pairs ({how}) in {took:.0f} s, load {load:.2f}: {len(failed)} failed", end="")
    print(f"; exit codes {dict(codes)}")


if __name__ == "__main__":
    main()

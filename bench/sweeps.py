"""The suite's sweeps at their whole length (tests/sweeps.py): what the suite runs a bounded part of.

  contrast   every mined check's whole life through the CLI (tests/test_verify_contrast.py), 262 checks;
             the suite lives through the first check of each class
  corpus     every written idiom's whole life through the CLI (tests/test_verify_corpus.py), 62 idioms;
             the suite lives through the first idiom of each class (and proves every idiom's verdict)
  crash      the SIGKILL sweeps of tests/test_crash.py, five episodes each on SQLite and PostgreSQL;
             the suite runs the first two of the same seeded sequence

The randomized soak has a bench of its own with its table (`bench/soak.py -n 200`); the fuzzed plans too
(`bench/fuzz.py`).

Usage: .venv/bin/python bench/sweeps.py [--only contrast|corpus|crash] [-n WORKERS]
It runs pytest with DIRECTOR_SWEEPS=long on those tests, in parallel (pytest-xdist, `-n auto` unless
given), and prints pytest's summary with the time it took and the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SWEEPS = {
    "contrast": ["tests/test_verify_contrast.py::test_mined_checks_through_their_life"],
    "corpus": ["tests/test_verify_corpus.py::test_director_apply_check_teardown"],
    "crash": [
        "tests/test_crash.py::test_sigkill_anywhere_never_reruns_a_finished_act_and_the_run_completes",
        "tests/test_crash.py::test_sigkill_anywhere_on_postgresql_never_reruns_a_finished_act",
    ],
}


def load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", choices=sorted(SWEEPS), help="one sweep (default: all)")
    ap.add_argument("-n", default="auto", help="pytest-xdist workers (default auto)")
    ns = ap.parse_args()
    tests = SWEEPS[ns.only] if ns.only else [t for ts in SWEEPS.values() for t in ts]
    env = {**os.environ, "DIRECTOR_SWEEPS": "long"}
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", ns.n, "--durations=10"]
    argv += tests
    print(f"load average {load()}\n+ DIRECTOR_SWEEPS=long {' '.join(argv[1:])}", flush=True)
    t = time.monotonic()
    rc = subprocess.run(argv, cwd=ROOT, env=env, check=False).returncode
    print(f"{time.monotonic() - t:.0f} s; load average at the end {load()}")
    return rc


if __name__ == "__main__":
    sys.exit(main())

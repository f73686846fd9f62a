"""The randomized SIGKILL soak, long version: ≥ 200 trials over the three soak plans, one table.

Each trial applies a plan in a fresh directory, SIGKILLs Director or the bash of the block it runs once
or twice at random moments (in the "server" plan, the first kill inside the act that starts a `setsid`
server), applies once more without interference, tears the plan down, and checks the invariants of
tests/faults.py after every invocation and at the end (no process of the plan alive after the teardown,
read in /proc). The table counts, per plan and kill pattern, the trials that broke each invariant (0
everywhere is the goal).

Usage: .venv/bin/python bench/soak.py [-n 200] [--seed N] [--keep DIR]
  --keep DIR   move every trial that broke an invariant there, for a post-mortem
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import faults  # noqa: E402

SHORT = {
    "completes": "completes",
    "acts-once": "acts once",
    "plan-outside-ls": "plan text",
    "live-state-parses": "LS parses",
    "journal-sound": "journal",
    "no-traceback": "no trace",
    "no-temp-file": "no temp",
    "no-secret": "no secret",
    "no-shell-temp": "shell tmp",
    "no-secret-shell": "shell secret",
    "orphan-stopped": "orphan stopped",
    "tears-down": "tears down",
    "no-process-left": "no process",
}
INVARIANTS = (*faults.INVARIANTS, *faults.TEARDOWN_INVARIANTS)


def table(results: list[faults.TrialResult]) -> str:
    groups: dict[tuple[str, str], list[faults.TrialResult]] = defaultdict(list)
    for r in results:
        groups[(r.plan, " + ".join(r.kinds))].append(r)
    head = ["plan", "kills", "trials", "landed", "runs", "orphans", *(SHORT[i] for i in INVARIANTS)]
    head.append("s/trial")
    rows = [head, ["---"] * len(head)]

    def row(plan: str, kinds: str, rs: list[faults.TrialResult]) -> list[str]:
        landed = sum(len(r.landed) for r in rs)
        aimed = sum(len(r.kinds) for r in rs)
        return [
            plan,
            kinds,
            str(len(rs)),
            f"{landed}/{aimed}",
            str(sum(r.invocations for r in rs)),
            str(sum(len(r.orphans) for r in rs)),  # servers a kill inside the act left, each to be stopped
            *(str(sum(1 for r in rs if i in r.violations)) for i in INVARIANTS),
            f"{sum(r.seconds for r in rs) / len(rs):.1f}",
        ]

    for (plan, kinds), rs in sorted(groups.items()):
        rows.append(row(plan, kinds, rs))
    rows.append(row("**all**", "", results))
    return "\n".join("| " + " | ".join(r) + " |" for r in rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", "--trials", type=int, default=200)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--keep", type=Path, default=None)
    args = ap.parse_args()
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    root = Path(tempfile.mkdtemp(prefix="director-soak-"))

    def progress(i: int, r: faults.TrialResult) -> None:
        bad = sorted(r.violations)
        mark = f"  BROKE {', '.join(bad)}: {r.violations[bad[0]][0][:300]}" if bad else ""
        print(
            f"trial {i + 1}/{args.trials} {r.plan} {'+'.join(r.kinds)} landed {len(r.landed)}{mark}",
            flush=True,
        )

    try:
        results = faults.soak(
            root, args.trials, args.seed, tuple(faults.PLANS), teardown=True, keep=args.keep,
            progress=progress,
        )  # fmt: skip
    finally:
        shutil.rmtree(root, ignore_errors=True)
    load = os.getloadavg()
    print()
    print(
        f"{len(results)} trials, seed {args.seed}, {time.monotonic() - started:.0f} s, "
        f"{datetime.now():%Y-%m-%d}, load average {load[0]:.1f}/{load[1]:.1f}"
    )
    print()
    print(table(results))
    broken = [r for r in results if r.violations]
    return 1 if broken else 0


if __name__ == "__main__":
    raise SystemExit(main())

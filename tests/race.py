"""Two `director apply` started together, through the real CLI: the engine behind tests/test_first_runs.py
and bench/race_first_runs.py (the same pairs, at length)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tests import forkserver
from tests.planmaker import CounterPlan, Step, write_plan

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Pair:
    """What two concurrent applies of a fresh plan did."""

    codes: tuple[int, int]
    errors: tuple[str, str]
    acts: list[str]  # every act that ran, in order (`$OUT/acts`)
    integrity: str  # `PRAGMA integrity_check` of the journal afterwards

    @property
    def ok(self) -> bool:
        """One applied (0); the other applied too after it (0, finding everything in sync) or was told
        that the plan is being applied (5); each act ran once; the journal is sound."""
        return (
            0 in self.codes
            and set(self.codes) <= {0, 5}
            and sorted(self.acts) == sorted(set(self.acts))
            and self.integrity == "ok"
        )


BARRIER = Path(__file__).resolve().parent / "barrier"  # a sitecustomize: tests/barrier/sitecustomize.py


def _env(out: Path, barrier: Path | None) -> dict[str, str]:
    env = {**os.environ, "COUNTER_OUT": str(out), "CI": "1", "NO_COLOR": "1"}
    if barrier is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(BARRIER), env.get("PYTHONPATH", "")) if p)
        env["DIRECTOR_TEST_BARRIER"] = str(barrier)
    return env


def first_runs(tmp: Path, plans: tuple[str, str] = ("counter.md", "counter.md"), *, together: bool = False) -> Pair:
    """A fresh plan in `tmp`, applied twice at once (as `plans[0]` and `plans[1]`: one file, or two names
    of one file); both are started before either is waited for. `together`: each waits for the other
    right before it opens the journal for the first time (tests/barrier), so both create it at once."""
    out = tmp / "out"
    out.mkdir()
    barrier = tmp / "barrier" if together else None
    if barrier is not None:
        barrier.mkdir()
    write_plan(tmp, CounterPlan([Step(), Step()]), plans[0])
    if plans[1] != plans[0]:
        os.link(tmp / plans[0], tmp / plans[1])
    procs = [
        forkserver.Popen(
            [sys.executable, "-m", "director", "apply", name],
            cwd=tmp,
            env=_env(out, barrier),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in plans
    ]
    errors: list[str] = []
    deadline = time.monotonic() + 300
    for p in procs:
        try:
            _, err = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            _, err = p.communicate()
        errors.append(err)
    acts_file = out / "acts"
    acts = acts_file.read_text().split() if acts_file.exists() else []
    journals = sorted(tmp.glob(".director/*/journal.sqlite3"))
    integrity = "ok"
    for j in journals:
        r = subprocess.run(["sqlite3", str(j), "PRAGMA integrity_check"], capture_output=True, text=True)
        integrity = r.stdout.strip() if r.stdout.strip() != "ok" else integrity
    return Pair((procs[0].returncode, procs[1].returncode), (errors[0], errors[1]), acts, integrity)

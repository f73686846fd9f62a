"""No work of an apply grows with the square of the plan (issue 37).

The real CLI applies generated plans of N and 4N sections, an act and a verify each (`tests/scaleplan.py`),
under cProfile. What is compared is how often each function of Director's pure and engine layers calls
each function (its own or Python's: `str.isdigit` counts when a label list re-reads every label): counts,
not times, so the verdict does not depend on the machine's load. Work done once a section grows 4x; work
that reads the whole plan once a section grows 16x. Before this issue, `plan.bash.effects.creates` ran
over every act block of the plan after every section (through `ledger.cells.discovered_vars`), and a
run's summary re-read every section it had applied after each one.

The ledger write limiter (`run.context.LEDGER_FREE_S`: writes between sections stop once they took a
second and more than a tenth of the run) is time-based: it is lifted in the profiled process, so that
every write happens at both sizes whatever the load. `bench/bench_scale.py` times 200, 2,000 and 10,000
sections and reports their peak memory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from director.ledger import cells
from director.ledger.splice import LedgerUpdate, apply_update
from director.plan.model import LabelRanges
from director.plan.parse import parse
from director.plan.reparse import reparse_live_state
from tests.pristine import SEED
from tests.scaleplan import write_plan

SMALL = 40  # 80 blocks: more than the syntax-tree cache holds (64), as at 4x
LARGE = 4 * SMALL
# Linear work grows by LARGE / SMALL = 4; work over the whole plan once a section by 16.
GROWTH_LIMIT = 8.0
SLACK = 40  # calls: a handful of time-driven ones (the lease's heartbeat) vary with the load

# The profiled CLI: `main` under cProfile with the ledger limiter lifted; writes caller -> callee counts.
_PROFILED = r"""
import cProfile, json, sys
import director.run.context as context
from director.cli import main
context.LEDGER_FREE_S = float("inf")
out = sys.argv.pop(1)
prof = cProfile.Profile()
code = 0
try:
    prof.runcall(main)
except SystemExit as e:
    code = e.code
# From the profiler's own entries, not `pstats`: two functions with one label (the two comprehensions of
# `a = [...] or [...]` start on the same line) are summed, where `pstats` keeps one of them, which one
# depending on where they lie in memory (this test failed 1 run in 3 on a count it had dropped at random).
def label(code):
    return f"~:0({code})" if isinstance(code, str) else f"{code.co_filename}:{code.co_firstlineno}({code.co_name})"
edges = {}
for entry in prof.getstats():
    for sub in entry.calls or ():
        key = f"{label(entry.code)} -> {label(sub.code)}"
        edges[key] = edges.get(key, 0) + sub.callcount - sub.reccallcount
with open(out, "w") as f:
    json.dump(edges, f)
sys.exit(code)
"""

ROOT = Path(__file__).resolve().parent.parent
# The layers whose calls must not grow faster than the plan: the pure reading of a plan, the ledger, the
# engine (the shell's I/O loop in `exec/` polls as often as the machine's speed makes it).
COUNTED = tuple(str(ROOT / "director" / d) + os.sep for d in ("plan", "ledger", "run"))


def _edges(tmp: Path, n: int) -> dict[str, int]:
    d = tmp / f"n{n}"
    d.mkdir()
    write_plan(d / "p.md", n)
    out = d / "edges.json"
    env = {**os.environ, "CI": "1", "NO_COLOR": "1"}
    r = subprocess.run(
        [sys.executable, "-c", _PROFILED, str(out), "apply", "p.md", "--plain", "--non-interactive"],
        cwd=d, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    edges: dict[str, int] = json.loads(out.read_text())
    return {k: v for k, v in edges.items() if k.startswith(COUNTED)}


def test_no_call_of_an_apply_grows_with_the_square_of_the_plan(tmp_path: Path) -> None:
    small, large = _edges(tmp_path, SMALL), _edges(tmp_path, LARGE)
    assert sum(large.values()) > 2 * sum(small.values()), "the larger plan did not run its sections"
    grown = {
        edge: (small.get(edge, 0), calls)
        for edge, calls in large.items()
        if calls > GROWTH_LIMIT * small.get(edge, 0) + SLACK
    }
    worst = sorted(grown.items(), key=lambda kv: -kv[1][1])[:10]
    assert not grown, f"calls at {SMALL} → {LARGE} sections (more than {GROWTH_LIMIT:g}x):\n" + "\n".join(
        f"  {a} → {b}  {edge.replace(str(ROOT) + os.sep, '')}" for edge, (a, b) in worst
    )


# --- what the index and the summary keep are what a whole reading gives -------------------------------


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.integers(0, 12).map(lambda n: f"§{n}"), st.sampled_from(["discovery", "§01"]))))
def test_label_ranges_built_a_label_at_a_time_say_what_the_whole_list_says(labels: list[str]) -> None:
    ranges = LabelRanges()
    for i, label in enumerate(labels):
        ranges.add(label)
        assert str(ranges) == _label_list_by_hand(labels[: i + 1])
        assert bool(ranges) == bool(labels[: i + 1])


def _label_list_by_hand(labels: list[str]) -> str:
    """The list read whole, as `label_list` did before: runs of consecutive numbers closed as they end."""
    out: list[str] = []
    run: list[int] = []

    def close() -> None:
        out.extend([f"§{run[0]}–§{run[-1]}"] if len(run) >= 3 else [f"§{n}" for n in run])
        run.clear()

    for label in labels:
        digits = label[1:]
        if label.startswith("§") and digits.isdigit() and digits == str(int(digits)):
            if run and int(digits) != run[-1] + 1:
                close()
            run.append(int(digits))
        else:
            close()
            out.append(label)
    close()
    return ", ".join(out)


def test_the_discovery_index_survives_a_ledger_write_and_equals_a_fresh_reading() -> None:
    plan = parse(SEED.read_text(encoding="utf-8"), str(SEED))
    names = cells.discovered_vars(plan)
    assert names and plan.derived["discovered_vars"] == tuple(names)
    update = LedgerUpdate(yaml={"status": "live"}, kv={}, checks={})
    again = reparse_live_state(plan, apply_update(plan, update))
    assert again is not None and again.derived is plan.derived  # the Live State re-read shares the index
    fresh = parse(again.source, str(SEED))
    assert fresh.derived == {} and cells.discovered_vars(fresh) == names

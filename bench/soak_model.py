"""The model-based test of Director at length (issue 32): generated plans, generated operator sequences, every
promise after every step -- until N steps have run.

Each worker runs rounds of hypothesis's search (tests/model: plan generator, operator actions, world model,
invariants) with its own seeds. A broken promise is shrunk by hypothesis to a minimal plan and sequence,
printed, and from then on *known*: the same invariant broken again in a plan and sequence that carry every
feature of the shrunk example (its "culprits": a readonly verify, a SIGKILL, a teardown…) is counted, not
shrunk again, and the sequence goes on; the same invariant broken without them is a new finding.

Usage:
  .venv/bin/python bench/soak_model.py --steps 20000 --seed 32 --workers 2 [--max-actions 10] [--examples 25]
      [--report FILE] [--log FILE] [--keep-failed DIR]

Prints, as it goes and at the end: sequences run, steps (and how many were spent shrinking), steps/second,
the load average, and every failure with its shrunk example. Exit 1 if any promise broke.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import shutil
import signal
import sys
import tempfile
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, Phase, assume, given, settings  # noqa: E402
from hypothesis import seed as hseed  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.model import world  # noqa: E402
from tests.model.actions import Action, features, sequences  # noqa: E402
from tests.model.driver import run_sequence  # noqa: E402
from tests.model.invariants import Violation  # noqa: E402
from tests.model.plans import PlanSpec, plan_specs  # noqa: E402


@dataclass
class Finding:
    invariant: str
    culprits: list[str]
    example: str  # the shrunk spec, actions and signing, as Python
    detail: str
    worker: int
    round: int
    found_after_steps: int  # steps this worker had run (search and shrinking) when it was found
    found_after_sequences: int
    flaky: bool  # hypothesis could not replay the shrunk example: a timing-dependent failure


@dataclass
class Tally:
    sequences: int = 0
    steps: int = 0
    shrink_steps: int = 0
    errors: list[str] = field(default_factory=list)


#: Promises whose breaking stops every apply of the plan (a verify that always fails its second run, say).
BLOCKING = ("a_sound_plan_applies", "teardown_completes")
#: Features of the plan itself (the others, `Teardown`, `set_env`…, are of the operator's sequence).
PLAN_FEATURES = {"assigns", "readonly", "secret_var", "shares_var", "tier", "acceptance", "signing",
                 "kind", "gate", "verify", "knobs"}  # fmt: skip


class Round:
    """One round of search: hypothesis's test, counting steps, telling known findings from new ones."""

    def __init__(self, tally: Tally, share: int, base: Path, known: Any,
                 again: dict[str, int], queue: Any, index: int) -> None:  # fmt: skip
        self.tally, self.share, self.base, self.known, self.again = tally, share, base, known, again
        self.queue, self.index = queue, index
        self.log: Path | None = None
        self.keep: Path | None = None  # where a violation's sandbox is copied (`--keep-failed`)
        self.failing = False
        self.last: dict[str, tuple[PlanSpec, list[Action], bool, str, frozenset[str]]] = {}

    def is_known(self, v: Violation, feats: frozenset[str]) -> bool:
        for name, culprits in self.known:
            if name == v.invariant and frozenset(culprits) <= feats:
                label = f"{name} {sorted(culprits)}"
                self.again[label] = self.again.get(label, 0) + 1
                return True
        return False

    def count(self, _i: int, _a: Action) -> None:
        self.tally.steps += 1
        if self.failing:
            self.tally.shrink_steps += 1

    def blocked(self, feats: frozenset[str]) -> bool:
        """Whether a known finding makes this plan unable to apply at all (its culprits are all plan features
        and its promise is that a sound plan applies): such a plan can teach nothing new, so it is skipped."""
        return any(
            name in BLOCKING and frozenset(c) <= feats and all(x.split(":")[0] in PLAN_FEATURES for x in c)
            for name, c in self.known
        )

    def test(self, spec: PlanSpec, actions: list[Action], signing: bool) -> None:
        assume(self.tally.steps < self.share or self.failing)  # this worker's share has run: skip the rest
        feats = features(spec, actions, signing)
        assume(self.failing or not self.blocked(feats))
        root = self.base / f"s{self.tally.sequences}"
        self.tally.sequences += 1
        record: dict[str, Any] = {
            "worker": self.index, "seq": self.tally.sequences, "features": sorted(feats),
            "actions": len(actions), "steps_before": self.tally.steps,
        }  # fmt: skip
        try:
            keep = None
            if self.keep is not None and not self.failing:  # a finding's first run, not its shrinking
                keep = self.keep / f"w{self.index}-{root.name}"  # the sandbox's own name
            run_sequence(
                spec, actions, root, signing, on_step=self.count, known=lambda v: self.is_known(v, feats),
                keep=keep,
            )
        except Violation as v:
            self.failing = True
            self.last[v.invariant] = (spec, actions, signing, v.detail, feats)
            record["raised"] = v.invariant
            raise
        except Exception as e:
            record["error"] = repr(e)[:300]
            raise
        finally:
            shutil.rmtree(root, ignore_errors=True)
            record["ran"] = self.tally.steps - record["steps_before"]
            if self.log is not None:
                with open(self.log, "a") as f:
                    f.write(json.dumps(record) + "\n")
            self.queue.put(("progress", self.index, asdict(self.tally), 0.0, os.getloadavg()))


def worker(index: int, args: argparse.Namespace, queue: Any, known: Any) -> None:
    """Rounds of search until this worker's share of the steps has run; every event onto `queue`."""
    signal.signal(signal.SIGTERM, _stop_worker)
    # Hypothesis stops shrinking after 5 minutes; a step here takes seconds, so a finding would keep most of
    # its unshrunk noise. Its (internal) limit, raised for this script only.
    from hypothesis.internal.conjecture import engine

    engine.MAX_SHRINKING_SECONDS = args.shrink_seconds
    share = args.steps // args.workers + (1 if index < args.steps % args.workers else 0)
    tally = Tally()
    again: dict[str, int] = {}
    base = Path(tempfile.mkdtemp(prefix=f"soak-model-{index}-"))
    _BASE.append(base)
    started = time.monotonic()
    rnd = 0
    try:
        while tally.steps < share:
            # what any worker found so far is known; read once a round, so that a round's shrinking is not
            # disturbed by a finding of another worker arriving halfway
            r = Round(tally, share, base, list(known), again, queue, index)
            r.log, r.keep = args.log, args.keep_failed
            prop = settings(
                max_examples=args.examples, deadline=None, database=None, derandomize=False,
                suppress_health_check=list(HealthCheck), phases=[Phase.generate, Phase.shrink],
                report_multiple_bugs=True,
            )(hseed(args.seed * 1_000_003 + index * 10_007 + rnd)(
                given(spec=plan_specs(), actions=sequences(args.max_actions), signing=st.booleans())(r.test)
            ))  # fmt: skip
            try:
                prop()
            except BaseException as e:  # one or several findings (an ExceptionGroup when several)
                flaky = "Flaky" in type(e).__name__
                for x in _flatten(e):
                    if not isinstance(x, Violation):
                        text = "".join(traceback.format_exception(x))[-3000:]
                        tally.errors.append(text)
                        queue.put(("error", index, text))
                        continue
                    spec, actions, signing, detail, feats = r.last.get(
                        x.invariant, (None, [], False, x.detail, frozenset())
                    )
                    known.append((x.invariant, sorted(feats)))
                    example = _example(spec, actions, signing)
                    f = Finding(
                        x.invariant,
                        sorted(feats),
                        example,
                        detail,
                        index,
                        rnd,
                        tally.steps,
                        tally.sequences,
                        flaky,
                    )
                    queue.put(("finding", asdict(f)))
            rnd += 1
    finally:
        shutil.rmtree(base, ignore_errors=True)
        queue.put(("again", index, again))
        queue.put(("done", index, asdict(tally), time.monotonic() - started))


_BASE: list[Path] = []  # this worker's directory (its sandboxes are under it)


def _exit(_sig: int, _frame: object) -> None:
    raise SystemExit(1)


def _stop_worker(_sig: int, _frame: object) -> None:
    """Stopped: end the processes of this worker's sandboxes (their MODEL_OUT is under its directory), remove
    the directory, leave. (Hypothesis would take a SystemExit raised in a test for a finding.)"""
    for base in _BASE:
        world.kill_marked_under(str(base))
        shutil.rmtree(base, ignore_errors=True)
    os._exit(1)


def _flatten(e: BaseException) -> list[BaseException]:
    if isinstance(e, BaseExceptionGroup):
        return [y for x in e.exceptions for y in _flatten(x)]
    return [e]


def _example(spec: PlanSpec | None, actions: list[Action], signing: bool) -> str:
    return f"spec={spec!r},\nactions={actions!r},\nsigning={signing!r}"


def collect(queue: Any, workers: int, started: float, findings: list[dict[str, Any]],
            tallies: dict[int, dict[str, Any]], again: dict[int, dict[str, int]],
            loads: list[tuple[float, float, float]]) -> None:  # fmt: skip
    """Print what the workers report until every one is done."""
    done, last = 0, 0.0
    while done < workers:
        msg = queue.get()
        if msg[0] == "finding":
            findings.append(msg[1])
            f = msg[1]
            head = f"=== FOUND [{f['invariant']}] by worker {f['worker']}"
            flaky = " (flaky: its replay did not fail)" if f["flaky"] else ""
            print(f"\n{head} after {f['found_after_steps']} steps ({f['found_after_sequences']} sequences); "
                  f"culprits {f['culprits']}{flaky}", flush=True)  # fmt: skip
            print(f"{f['example']}\n{f['detail'][:2500]}\n", flush=True)
        elif msg[0] == "progress":
            tallies[msg[1]] = msg[2]
            loads.append(msg[4])
            wall = time.monotonic() - started
            if wall - last >= 60:
                last = wall
                steps = sum(t["steps"] for t in tallies.values())
                seqs = sum(t["sequences"] for t in tallies.values())
                print(f"[{wall:7.0f}s] steps {steps} ({steps / wall:.2f}/s), sequences {seqs}, "
                      f"findings {len(findings)}, load {msg[4][0]:.1f}", flush=True)  # fmt: skip
        elif msg[0] == "error":
            print(f"\n=== TEST ERROR in worker {msg[1]} (the test's own bug):\n{msg[2]}\n", flush=True)
        elif msg[0] == "again":
            again[msg[1]] = msg[2]
        elif msg[0] == "done":
            tallies[msg[1]] = msg[2]
            done += 1


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=20000)
    p.add_argument("--seed", type=int, default=32)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--max-actions", type=int, default=10, help="the longest operator sequence")
    p.add_argument("--examples", type=int, default=150, help="sequences per round of search")
    p.add_argument("--shrink-seconds", type=int, default=1800, help="how long hypothesis may shrink one")
    p.add_argument(
        "--log", type=Path, help="append one JSON line per sequence run here (what ran, what broke)"
    )
    p.add_argument("--report", type=Path, help="write the findings and figures as JSON here")
    p.add_argument(
        "--keep-failed", type=Path,
        help="copy the sandbox of each violation's first run here (plan, journal, world), for a post-mortem",
    )  # fmt: skip
    args = p.parse_args()
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    manager = ctx.Manager()
    known = manager.list()  # (invariant, culprits) found so far, by any worker
    procs = [ctx.Process(target=worker, args=(i, args, queue, known)) for i in range(args.workers)]
    started = time.monotonic()
    for proc in procs:
        proc.start()
    findings: list[dict[str, Any]] = []
    tallies: dict[int, dict[str, Any]] = {}
    again: dict[int, dict[str, int]] = {}
    loads: list[tuple[float, float, float]] = []
    signal.signal(signal.SIGTERM, _exit)
    stopped = False
    try:
        collect(queue, len(procs), started, findings, tallies, again, loads)
    except (KeyboardInterrupt, SystemExit):
        stopped = True
        for proc in procs:
            proc.terminate()  # each worker ends its sequence's processes and removes its files
    for proc in procs:
        proc.join()
    manager.shutdown()
    if stopped:
        print("\nstopped before the steps were spent: the figures below are for what ran")
    wall = time.monotonic() - started
    steps = sum(t["steps"] for t in tallies.values())
    summary = {
        "sequences": sum(t["sequences"] for t in tallies.values()),
        "steps": steps,
        "shrink_steps": sum(t["shrink_steps"] for t in tallies.values()),
        "wall_s": round(wall, 1),
        "steps_per_s": round(steps / wall, 3) if wall else 0.0,
        "load_avg_median_1m": sorted(x[0] for x in loads)[len(loads) // 2] if loads else None,
        "load_at_end": os.getloadavg(),
        "findings": findings,
        "seen_again": again,
        "errors": [e for t in tallies.values() for e in t["errors"]],
    }
    print("\n== summary ==")
    print(json.dumps({k: v for k, v in summary.items() if k not in ("findings", "errors")}, indent=2))
    for f in findings:
        print(
            f"- [{f['invariant']}] culprits {f['culprits']} (worker {f['worker']}, "
            f"after {f['found_after_steps']} steps)"
        )
    for e in summary["errors"]:
        print("test error:", e)
    if args.report:
        args.report.write_text(json.dumps(summary, indent=2, default=str))
    return 1 if findings or summary["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())

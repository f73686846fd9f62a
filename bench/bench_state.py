"""The state backends side by side: SQLite beside the plan against PostgreSQL (`--state-url`), one run.

Interleaved, so both see the same machine load:

  1. per-block overhead   a plan of N (200) trivial 🟢 sections through `director apply`: (wall - the same
                          bodies in a bash loop) / N, and from the journal the in-run time per step and
                          the gap between two steps (the engine's journal commits)
  2. resume               a plan of M (1,000) 🟢 sections + a 🔴 gate: after the first apply stops at the
                          gate, `apply --approve` resumes; run.start → the gated block's start is the
                          time to decide to skip M finished steps; plus the whole resume's wall time
  3. journal alone        one step's two durable commits (`step_started` + `step_finished`), K times,
                          through the `StateStore` of each backend

and the ratio PostgreSQL / SQLite of each. The server: `--state-url URL` (a database the role may
create the `director` schema in), else a throwaway cluster from Debian's binaries (tests/pgcluster.py),
on loopback, deleted at the end; fsync and synchronous_commit at their defaults (on) on both sides.

Usage: .venv/bin/python bench/bench_state.py [-n 200] [--resume-steps 1000] [--repeat 3] [--state-url URL]
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_apply import audit, bash_loop, director, events, make_plan, median, ts  # noqa: E402

BACKENDS = ("sqlite", "postgresql")


@contextmanager
def server(url: str | None) -> Iterator[tuple[str, object | None]]:
    """(a database URL factory seed, the throwaway cluster if one was started)."""
    if url:
        yield url, None
        return
    from tests.pgcluster import Cluster, find_bindir

    bindir = find_bindir()
    if bindir is None:
        raise SystemExit("no PostgreSQL server binaries (apt-get install postgresql), and no --state-url")
    cluster = Cluster(bindir)
    try:
        cluster.start()
        yield "", cluster
    finally:
        cluster.destroy()


class Urls:
    """A fresh database per measurement (throwaway cluster), or the one given."""

    def __init__(self, given: str, cluster: object | None) -> None:
        self.given, self.cluster = given, cluster

    def new(self) -> str:
        if self.cluster is not None:
            return self.cluster.new_database()  # type: ignore[attr-defined, no-any-return]
        return self.given


def use(backend: str, urls: Urls) -> None:
    """Point the CLI runs that follow at a backend (bench_apply's `director()` passes os.environ on)."""
    os.environ.pop("DIRECTOR_STATE_URL", None)
    if backend == "postgresql":
        os.environ["DIRECTOR_STATE_URL"] = urls.new()


def trivial(n: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bench-state-") as tmp:
        d = Path(tmp)
        bodies = make_plan(d / "p.md", n)
        bash = bash_loop(bodies, d)
        rc, wall, _, out = director(d, "apply", "p.md", "--plain", "--non-interactive")
        assert rc == 0, out[-3000:]
        steps = [s for s in audit(d, "p.md")["steps"] if s["role"] == "act"]
        assert len(steps) == n, len(steps)
        on_pg = "DIRECTOR_STATE_URL" in os.environ
        assert on_pg != (d / ".director" / "p.md" / "journal.sqlite3").exists(), "not the backend asked for"
        in_run = ts(steps[-1]["finished_at"]) - ts(steps[0]["started_at"])
        gaps = [ts(b["started_at"]) - ts(a["finished_at"]) for a, b in itertools.pairwise(steps)]
        spans = [ts(s["finished_at"]) - ts(s["started_at"]) - s["duration_s"] for s in steps]
    return {
        "overhead": (wall - bash) / n,
        "in_run": in_run / n,
        "gap": median(gaps),
        "around": median(spans),
        "wall": wall,
    }


def resume(m: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bench-state-resume-") as tmp:
        d = Path(tmp)
        make_plan(d / "p.md", m, gate=True)
        rc, first, _, out = director(d, "apply", "p.md", "--plain", "--non-interactive")
        assert rc == 4, (rc, out[-3000:])
        ev = d / "resume.jsonl"
        rc, wall, epoch, out = director(
            d, "apply", "p.md", "--plain", "--non-interactive", "--approve", str(m + 1), "--events", str(ev)
        )
        assert rc == 0, out[-3000:]
        evs = events(ev)
        (start,) = [e for e in evs if e["type"] == "run.start"]
        starts = [e for e in evs if e["type"] == "step.start"]
        assert [e["section"] for e in starts] == [str(m + 1)], "a finished step ran again"
        return {
            "decide": ts(starts[0]["ts"]) - ts(start["ts"]),
            "spawn_to_block": ts(starts[0]["ts"]) - epoch,
            "resume": wall,
            "first": first,
        }


def journal_only(k: int, backend: str, urls: Urls) -> float:
    """Median seconds of one step's two durable commits."""
    from director.state.journal import Journal
    from director.state.pgjournal import PgJournal
    from director.state.store import StateStore

    with tempfile.TemporaryDirectory(prefix="bench-state-j-") as tmp:
        store: StateStore
        if backend == "sqlite":
            store = Journal.open(Path(tmp) / "j.sqlite3")
        else:
            store = PgJournal.open(urls.new(), "bench")
        with store:
            rid = store.create_run("apply", "p.md", "none", "bench", {})
            times = []
            for i in range(k):
                t = time.perf_counter()
                sid = store.step_started(rid, f"{i}/0", str(i), 0, "act", "fp")
                store.step_finished(sid, "succeeded", 0, 0.001, "ok", {"variables": {"I": str(i)}})
                times.append(time.perf_counter() - t)
    return median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=200, help="trivial blocks (default 200)")
    ap.add_argument("--resume-steps", type=int, default=1000, help="finished steps to resume over")
    ap.add_argument("--repeat", type=int, default=3, help="repetitions of each measurement (median)")
    ap.add_argument("--commits", type=int, default=500, help="steps in the journal-only measurement")
    ap.add_argument("--state-url", help="an existing PostgreSQL database (default: a throwaway cluster)")
    ns = ap.parse_args()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load}")
    with server(ns.state_url) as (given, cluster):
        urls = Urls(given, cluster)
        if cluster is not None:
            print(f"PostgreSQL: throwaway cluster from {cluster.bindir} on 127.0.0.1 (TCP), fsync on")  # type: ignore[attr-defined]
        res: dict[str, dict[str, list[float]]] = {b: {} for b in BACKENDS}

        def add(backend: str, values: dict[str, float]) -> None:
            for key, v in values.items():
                res[backend].setdefault(key, []).append(v)

        for _ in range(ns.repeat):
            for b in BACKENDS:  # interleaved: both backends see the same load
                use(b, urls)
                add(b, trivial(ns.n))
                use(b, urls)
                add(b, resume(ns.resume_steps))
                os.environ.pop("DIRECTOR_STATE_URL", None)
                add(b, {"commit_pair": journal_only(ns.commits, b, urls)})
    rows = (
        ("per-block overhead (wall - bash) / n", "overhead", 1000, "ms"),
        ("  in run, per step (first start → last end)", "in_run", 1000, "ms"),
        ("  between two steps (engine + commits)", "gap", 1000, "ms"),
        ("  around a block (started→finished - block)", "around", 1000, "ms"),
        (f"resume over {ns.resume_steps}: run.start → first block", "decide", 1, "s"),
        ("resume: spawn → first block", "spawn_to_block", 1, "s"),
        ("resume: whole run", "resume", 1, "s"),
        (f"first apply ({ns.resume_steps} blocks, to the gate)", "first", 1, "s"),
        ("journal alone: step_started + step_finished", "commit_pair", 1000, "ms"),
    )
    print(f"\n== {ns.n} trivial blocks, resume over {ns.resume_steps} steps; median of {ns.repeat} runs ==")
    print(f"{'':48} {'SQLite':>10} {'PostgreSQL':>11} {'ratio':>7}")
    for label, key, scale, unit in rows:
        s, p = median(res["sqlite"][key]) * scale, median(res["postgresql"][key]) * scale
        print(f"{label:48} {s:8.3f}{unit:>2} {p:9.3f}{unit:>2} {p / s:6.2f}x")
    print(f"\nload average at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()

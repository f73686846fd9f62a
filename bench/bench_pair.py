"""Director against plain bash, paired in one run: the 200-section act + verify plan (`tests/scaleplan.py`)
applied by `director apply`, and the same observe / act / verify work done by one `bash -c` a section.
A third leg, the *floor*, runs the same three blocks a section through Director's `Shell.run` alone (the
verifies traced, as Director judges them) and nothing else: no plan, journal, verdict, event or Live State.
No apply can be faster than its floor, so floor / bash says how much of the target the block mechanism
itself leaves (a fork of the session's bash per block, a pty, the trace and command marks a verdict reads).
A fourth leg runs the floor's blocks in bash alone (`mechanism_script`: Director's own setup text, capture
and marks, in job-control subshells of one bash, with no Python and no pty): floor / that leg is what
Director's side of a block costs, that leg / bash what the design costs in bash itself.

The four alternate (Director, bash, floor, bash alone, Director, …), each in a fresh directory, `--repeat`
times after one warm-up round; the figures are medians, with each ratio taken round by round (so a drift of
the machine's speed hits both sides), and the load average before and after. `--profile` adds one Director
run under cProfile and says where its time went, by part. `--blocks` adds the floor by kind of block (the
act, the verify untraced and traced): per block, the wall time through `Shell.run`, the CPU Director spent
and the CPU bash spent, against the CPU of the same text run in bash alone as a bare subshell and as a
`bash -c`.

Usage: .venv/bin/python bench/bench_pair.py [-n 200] [--repeat 5] [--profile] [--blocks]
Target (issue 37): Director / bash <= 2.0x wall, median of 5.
"""

from __future__ import annotations

import argparse
import os
import pstats
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

from tests import scaleplan  # noqa: E402
from tests.scaleplan import env, load  # noqa: E402

TARGET = 2.0


def timed(argv: list[str], cwd: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of one process and what it waited for (os.wait4)."""
    t = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed in {cwd}")
    return wall, usage.ru_utime + usage.ru_stime


def director_run(n: int, profile: Path | None = None) -> tuple[float, float]:
    d = Path(tempfile.mkdtemp(prefix="bench-pair-"))
    try:
        scaleplan.write_plan(d / "p.md", n)
        pre = ["-m", "cProfile", "-o", str(profile)] if profile else []
        argv = [sys.executable, *pre, "-m", "director", "apply", "p.md", "--plain", "--non-interactive"]
        return timed(argv, d)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def floor_run(n: int) -> tuple[float, float]:
    d = Path(tempfile.mkdtemp(prefix="bench-pair-"))
    try:
        return timed([sys.executable, str(Path(__file__).resolve()), "--floor-child", str(n)], d)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def floor_child(n: int) -> None:
    """The floor, in the current directory: per section the observe verify, the act when it failed, and the
    verify again, each one `Shell.run` (verifies traced; every block keeps the session, as in this plan)."""
    from director.exec.shell import Shell

    with Shell(env(), os.getcwd(), interactive=False) as sh:
        state = sh.initial_state()
        for i in range(1, n + 1):
            if sh.run(scaleplan.verify(i), state, trace=True, keeps_session=True).exit_code == 0:
                continue
            if sh.run(scaleplan.act(i), state, keeps_session=True).exit_code != 0:
                raise SystemExit(f"act {i} failed")
            if sh.run(scaleplan.verify(i), state, trace=True, keeps_session=True).exit_code != 0:
                raise SystemExit(f"verify {i} failed")


def mechanism_script(n: int, cwd: str) -> str:
    """The blocks of the floor run by bash alone: per section the observe verify, the act when it failed and
    the verify again, each a job-control subshell of one bash that evals Director's own setup for it
    (`session.prelude`, the EXIT capture, a traced verify's command marks and xtrace) -- with no Python, no
    pty (output, marks and trace go to /dev/null) and no pipes read; the blocks run in `cwd`. What a runner
    of this design cannot avoid paying in bash; the floor's excess over it is Director's side of a block."""
    from director.exec import markers
    from director.exec.session import SessionState, prelude, quote
    from director.exec.shell import _CD, _export_marks
    from director.exec.wrappers import CAPTURE_FUNCTIONS

    def setup(trace: bool) -> str:
        text = prelude(
            SessionState(cwd=cwd), state_file="/dev/null", original_bash_env=None, path_prepend=(),
            trace_fd=61 if trace else None, define_capture=False,
        ).decode()  # fmt: skip
        head = 'exec 0</dev/null\n__director_pid=$BASHPID; builtin printf P%s "$__director_pid" >/dev/null\n'
        cd = _CD.format(d=quote(cwd))
        return f"{head}__director_kept=1\n{_export_marks({})}{cd}\n{text}"

    lines = [CAPTURE_FUNCTIONS, f"exec 61>/dev/null {markers.FD}>/dev/null", "set -m"]
    lines.append(f"__director_v={quote(setup(True))}; __director_a={quote(setup(False))}")
    for i in range(1, n + 1):
        verify = f'( eval "$__director_v"; eval {quote(scaleplan.verify(i))} ) >/dev/null 2>&1'
        act = f'( eval "$__director_a"; eval {quote(scaleplan.act(i))} ) >/dev/null 2>&1'
        lines.append(f"{verify} || {{ {act}; {verify}; }}")
    return "\n".join(lines) + "\n"


def mechanism_run(n: int) -> tuple[float, float]:
    d = Path(tempfile.mkdtemp(prefix="bench-pair-"))
    try:
        (d / "blocks.sh").write_text(mechanism_script(n, str(d)))
        return timed(["bash", "--noprofile", "--norc", "blocks.sh"], d)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def bash_run(n: int) -> tuple[float, float]:
    d = Path(tempfile.mkdtemp(prefix="bench-pair-"))
    try:
        scaleplan.write_bash(d / "loop.sh", n)
        return timed(["bash", "loop.sh"], d)
    finally:
        shutil.rmtree(d, ignore_errors=True)


# The floor by kind of block: each kind's `Shell.run` (in a child, its own session's bash, so that what bash
# spent is reaped and counted apart from what Director spent), and the same block texts in bash alone.
KINDS = (("act", scaleplan.act, False), ("verify, untraced", scaleplan.verify, False),
         ("verify, traced", scaleplan.verify, True))  # fmt: skip


def kind_child(kind: int, n: int) -> None:
    """`n` blocks of one kind through `Shell.run`, in the current directory (the act's files are there for a
    verify); prints wall, Director's CPU and bash's CPU (the session's bash and all it reaped), seconds."""
    from director.exec.shell import Shell

    _, text, traced = KINDS[kind]
    t0, wall = os.times(), time.perf_counter()
    with Shell(env(), os.getcwd(), interactive=False) as sh:
        state = sh.initial_state()
        for i in range(1, n + 1):
            if sh.run(text(i), state, trace=traced, keeps_session=True).exit_code != 0:
                raise SystemExit(f"{KINDS[kind][0]} {i} failed")
    wall, t1 = time.perf_counter() - wall, os.times()
    own = t1.user + t1.system - t0.user - t0.system
    print(wall, own, t1.children_user + t1.children_system - t0.children_user - t0.children_system)


def by_kind(n: int) -> None:
    """Where the floor goes, per block: each kind through `Shell.run`, against the same text run in bash
    alone as a bare subshell `( … )` of one bash (the mechanism without Director's setup, pty, trace or
    marks) and as one `bash -c` (what the bash leg pays)."""
    d = Path(tempfile.mkdtemp(prefix="bench-pair-"))
    rows = []
    try:
        for k, (label, text, _) in enumerate(KINDS):
            argv = [sys.executable, str(Path(__file__).resolve()), "--kind-child", str(k), str(n)]
            out = subprocess.run(argv, cwd=d, env=env(), stdin=subprocess.DEVNULL, capture_output=True,
                                 text=True, check=True).stdout.split()  # fmt: skip
            wall, own, bash = (float(x) for x in out)
            (d / "sub.sh").write_text("".join(f"( {text(i)} )\n" for i in range(1, n + 1)))
            (d / "c.sh").write_text("".join(f"bash -c {shlex.quote(text(i))}\n" for i in range(1, n + 1)))
            _, sub = timed(["bash", "--noprofile", "--norc", "sub.sh"], d)
            _, c = timed(["bash", "--noprofile", "--norc", "c.sh"], d)
            rows.append((label, wall, own, bash, sub, c))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    ms = 1000 / n
    print(f"\n== the floor by kind of block, {n} blocks each, per block (ms; CPU is user + sys) ==")
    print(f"  {'block':18} {'Shell.run wall':>14} {'Director cpu':>13} {'bash cpu':>9} {'bare ( ) cpu':>13} "
          f"{'bash -c cpu':>12}")  # fmt: skip
    for label, wall, own, bash, sub, c in rows:
        cells = f"{wall * ms:14.2f} {own * ms:13.2f} {bash * ms:9.2f} {sub * ms:13.2f} {c * ms:12.2f}"
        print(f"  {label:18} {cells}")


# Where an apply's time goes, by the functions that stand for each part (cumulative seconds; the parts
# overlap where one calls another, so they are said, not summed).
PARTS = (
    ("the whole apply (cli.main)", "director/cli.py", "main"),
    ("imports before main", None, None),
    ("waiting on bash (poll)", "~", "<method 'poll' of 'select.poll' objects>"),
    ("a block: Shell.run (fork, pty, capture)", "director/exec/shell.py", "run"),
    ("journal statements (sqlite3 execute)", "~", "<method 'execute' of 'sqlite3.Connection' objects>"),
    ("journal commits (sqlite3 commit)", "~", "<method 'commit' of 'sqlite3.Connection' objects>"),
    ("parse the plan", "director/plan/parse.py", "parse"),
    ("lint before apply", "director/commands/lintgate.py", "refuse_lint_errors"),
    ("Live State writes", "director/run/context.py", "write_ledger"),
    ("events (the plain lines, --events)", "director/run/events.py", "emit"),
    ("verdicts (judge a verify block)", "director/run/steps.py", "judge_block"),
)


def breakdown(prof: Path) -> None:
    stats = pstats.Stats(str(prof)).stats  # type: ignore[attr-defined]
    total = max(v[3] for v in stats.values())
    found: dict[str, tuple[int, float]] = {}
    for (file, _, name), (_, nc, _, ct, _) in stats.items():
        for label, f, fn in PARTS:
            if f is not None and name == fn and (file == f or file.endswith(f)):
                n0, t0 = found.get(label, (0, 0.0))
                found[label] = (n0 + nc, t0 + ct)
    main = found.get(PARTS[0][0], (0, 0.0))[1]
    found[PARTS[1][0]] = (1, total - main)
    print(f"\n== where one Director run's time goes (cProfile, {total:.2f} s in all; profiling inflates "
          f"Python's share) ==")  # fmt: skip
    for label, _, _ in PARTS:
        if label in found:
            n, t = found[label]
            print(f"  {label:44} {t:7.3f} s  {t / total * 100:5.1f} %  ({n} calls)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=200, help="sections (default 200)")
    ap.add_argument("--repeat", type=int, default=5, help="counted pairs (default 5)")
    ap.add_argument("--profile", action="store_true", help="one more Director run under cProfile: by part")
    ap.add_argument("--blocks", action="store_true", help="then the floor by block kind, vs bash alone")
    ap.add_argument("--floor-child", type=int, metavar="N", help=argparse.SUPPRESS)
    ap.add_argument("--kind-child", type=int, nargs=2, metavar=("KIND", "N"), help=argparse.SUPPRESS)
    ns = ap.parse_args()
    if ns.floor_child is not None:
        floor_child(ns.floor_child)
        return
    if ns.kind_child is not None:
        kind_child(*ns.kind_child)
        return
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load()}")
    e = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "director")], env=e, check=True)
    private = tempfile.mkdtemp(prefix="bench-pair-")
    os.environ["TMPDIR"] = private
    tempfile.tempdir = None
    try:
        director_run(ns.n), bash_run(ns.n), floor_run(ns.n), mechanism_run(ns.n)  # warm-up
        rows: list[tuple[float, ...]] = []
        for _ in range(ns.repeat):
            dw, dc = director_run(ns.n)
            bw, bc = bash_run(ns.n)
            fw, fc = floor_run(ns.n)
            mw, mc = mechanism_run(ns.n)
            rows.append((dw, dc, bw, bc, fw, fc, mw, mc))
        print(f"\n== {ns.n} sections, an act and a verify each: {ns.repeat} rounds, medians ==")
        med = [statistics.median(r[i] for r in rows) for i in range(8)]
        ratios = [r[0] / r[2] for r in rows]
        cpu_ratios = [r[1] / r[3] for r in rows]
        floors = [r[4] / r[2] for r in rows]
        mechanisms = [r[6] / r[2] for r in rows]
        for label, wall, cpu in (
            ("director apply", med[0], med[1]),
            ("bash -c a section", med[2], med[3]),
            ("floor: Shell.run", med[4], med[5]),
            ("blocks, bash alone", med[6], med[7]),
        ):
            print(f"  {label:18} wall {wall:7.3f} s  cpu {cpu:7.3f} s   {wall / ns.n * 1000:6.2f} ms/section")
        print(f"  ratio director / bash: wall {statistics.median(ratios):.2f}x "
              f"(pairs {', '.join(f'{r:.2f}' for r in ratios)}), cpu {statistics.median(cpu_ratios):.2f}x   "
              f"target <= {TARGET}x wall")  # fmt: skip
        print(f"  ratio floor / bash:    wall {statistics.median(floors):.2f}x "
              f"(pairs {', '.join(f'{r:.2f}' for r in floors)}): the blocks alone")  # fmt: skip
        print(f"  ratio bash alone / bash: wall {statistics.median(mechanisms):.2f}x "
              f"(pairs {', '.join(f'{r:.2f}' for r in mechanisms)}): no Python, no pty")  # fmt: skip
        print(f"  per section over bash: {(med[0] - med[2]) / ns.n * 1000:.2f} ms wall "
              f"(over the floor: {(med[0] - med[4]) / ns.n * 1000:.2f} ms)")  # fmt: skip
        if ns.profile:
            prof = Path(private) / "apply.prof"
            director_run(ns.n, prof)
            breakdown(prof)
        if ns.blocks:
            by_kind(ns.n)
    finally:
        shutil.rmtree(private, ignore_errors=True)
    print(f"\nload average at the end: {load()}")


if __name__ == "__main__":
    main()

"""Linear scale: `director apply` of generated plans of 200, 2,000 and 10,000 sections (an act and a verify
each, `tests/scaleplan.py`), through the real CLI; time per section and the Director process's peak RSS at
each size.

Usage: .venv/bin/python bench/bench_scale.py [--sizes 200,2000,10000] [--profile DIR]
Targets: time per section at 2,000 and 10,000 within 1.3x of the 200-section figure; peak RSS < 150 MB.

Peak RSS is `ru_maxrss` of the apply as `wait4` reports it: the kernel's high-water mark (VmHWM) of the
Director process, or of a descendant it reaped if one grew larger (its bash children stay at a few MB).
`--profile DIR` runs each apply under cProfile instead (slower; times not comparable) and writes
DIR/apply-N.prof: the functions whose calls grow faster than N are the ones to look at
(`python -m pstats DIR/apply-N.prof`).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import scaleplan  # noqa: E402
from tests.scaleplan import env, load  # noqa: E402

PER_SECTION_LIMIT = 1.3  # x the smallest size's time per section
RSS_LIMIT_MB = 150


def apply(cwd: Path, profile: Path | None) -> tuple[int, float, float, float]:
    """(exit code, wall s, CPU s, peak RSS MB) of one `director apply` (os.wait4: that process)."""
    pre = ["-m", "cProfile", "-o", str(profile)] if profile is not None else []
    t = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, *pre, "-m", "director", "apply", "p.md", "--plain", "--non-interactive"],
        cwd=cwd, env=env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def compile_bytecode() -> None:
    """Compile Director's bytecode first, as `pip install` does (see bench_apply.compile_bytecode)."""
    e = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "director")], env=e, check=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="200,2000,10000", help="section counts (default 200,2000,10000)")
    ap.add_argument("--profile", type=Path, help="run under cProfile, writing DIR/apply-N.prof")
    ns = ap.parse_args()
    sizes = [int(x) for x in ns.sizes.split(",")]
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load()}")
    compile_bytecode()
    if ns.profile:
        ns.profile.mkdir(parents=True, exist_ok=True)
    print(f"{'sections':>9} {'plan':>8} {'wall':>9} {'per section':>12} {'x first':>8} {'cpu/section':>12} "
          f"{'peak RSS':>9}  load")  # fmt: skip
    first: float | None = None
    ok = True
    for n in sizes:
        d = Path(tempfile.mkdtemp(prefix="bench-scale-"))
        try:
            scaleplan.write_plan(d / "p.md", n)
            size_mb = (d / "p.md").stat().st_size / 1024 / 1024
            prof = ns.profile.resolve() / f"apply-{n}.prof" if ns.profile else None
            rc, wall, cpu, peak = apply(d, prof)
            if rc != 0:
                print(f"{n:9d}: director apply exited {rc}")
                return 1
        finally:
            shutil.rmtree(d, ignore_errors=True)
        per = wall / n
        first = first if first is not None else per
        ratio = per / first
        ok = ok and peak < RSS_LIMIT_MB and (ratio <= PER_SECTION_LIMIT or ns.profile is not None)
        print(f"{n:9d} {size_mb:6.2f}MB {wall:8.2f}s {per * 1000:9.2f} ms {ratio:7.2f}x "
              f"{cpu / n * 1000:9.2f} ms {peak:7.1f}MB  {load()}")  # fmt: skip
    print(f"targets: per section within {PER_SECTION_LIMIT}x of the first size; peak RSS < {RSS_LIMIT_MB} MB:"
          f" {'met' if ok else 'NOT met'}")
    print(f"load average at the end: {load()}")
    return 0 if ok else 3


if __name__ == "__main__":
    sys.exit(main())

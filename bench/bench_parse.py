"""Parser benchmark: the seed plan, generated plans of 500/1,000/5,000 sections, and CLI start-up.

Run:  .venv/bin/python bench/bench_parse.py [--repeat N]

Targets: seed ≤ 20 ms (median); 5,000 sections ≤ 1.5 s with a flat per-section cost (linear growth);
`director --help` within 1.5× of `python -c "import typer"` (needs cli.py to import heavy modules lazily).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from director.plan.parse import parse  # noqa: E402  (after the path tweak, so the bench runs from a checkout)

SEED = ROOT / "plans" / "workflow.cloudflare.md"

SECTION = """## {n}. Step {n} — `out/step-{n}.json`  {marker}

> → Live State: STEP_{n} written.

```bash {{retries=2 backoff=constant delay=1s}}
mkdir -p out && printf '%s\\n' "step {n}" > "out/step-{n}.txt"
```
```json
{{ "step": {n}, "env": "dev" }}   // = ${{ENV}}
```
```bash
# ✔ step {n} written
grep -q "step {n}" "out/step-{n}.txt" && echo "{n}: step {n} written" || {{ echo "{n}: missing"; exit 1; }}
```

"""

HEAD = """# Generated plan with {count} sections

## Provisioning Inputs

| # | Question | Options (closed enum) | Default | Sets | Gates |
|---|----------|-----------------------|---------|------|-------|
| 1 | Exposure? | `public` / `private` | `private` | `EXPOSE` | gates |
| 2 | Environment | `dev` / `prod` | `dev` | `ENV` | names |

## 0. Variables

```bash
export EXPOSE="private" ENV="dev"
```

"""

TAIL = """## Live State

```yaml
status: not-created   # generated
```

| key | value |
|-----|-------|
| STEP_1 | `out/step-1.json` |

| ✔ check | expected | observed | result |
|---------|----------|----------|--------|
| step 1 written | yes | | |

## Teardown  💥

```bash
rm -rf out
```
```bash
# ✔ out removed
[ ! -e out ] && echo "out removed" || { echo "out still there"; exit 1; }
```
"""


def generate(count: int) -> str:
    """A plan of `count` numbered sections, each with an act, a template and a verify block."""
    markers = ["🟢", "🟡", "🔴 *(`EXPOSE=public` — outward)*  /  🟡 *(`private`)*", "⏳"]
    body = "".join(SECTION.format(n=n, marker=markers[n % len(markers)]) for n in range(1, count + 1))
    return HEAD.format(count=count) + body + TAIL


def timed(fn: object, repeat: int) -> list[float]:
    """Wall times in seconds of `repeat` calls."""
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()  # type: ignore[operator]
        out.append(time.perf_counter() - t0)
    return out


def startup(cmd: list[str], repeat: int) -> float:
    """Median wall time of a process start (one warm-up run first: disk cache, .pyc)."""
    subprocess.run(cmd, capture_output=True, check=False, cwd=ROOT)
    return statistics.median(
        timed(lambda: subprocess.run(cmd, capture_output=True, check=False, cwd=ROOT), repeat)
    )


def main() -> None:
    """Print the numbers, one line each."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15, help="runs per measurement (median reported)")
    args = ap.parse_args()

    seed = SEED.read_text(encoding="utf-8")
    parse(seed)  # warm-up: imports, markdown-it instance, regex caches
    t = statistics.median(timed(lambda: parse(seed), args.repeat))
    print(
        f"seed plan ({len(seed.splitlines())} lines): median {t * 1000:.1f} ms over {args.repeat} runs "
        f"(target ≤ 20 ms) {'OK' if t <= 0.020 else 'SLOW'}"
    )

    for count in (500, 1_000, 5_000):
        text = generate(count)
        runs = max(3, args.repeat // (count // 500 + 1))
        t = statistics.median(timed(lambda text=text: parse(text), runs))  # type: ignore[misc]
        plan = parse(text)
        assert len([s for s in plan.sections if s.number]) == count
        target = " (target ≤ 1.5 s) " + ("OK" if t <= 1.5 else "SLOW") if count == 5_000 else ""
        print(
            f"{count:>5} sections ({len(text.splitlines()):>6} lines): median {t:.3f} s over {runs} runs, "
            f"{t / count * 1e6:.0f} µs/section{target}"
        )

    runs = max(5, args.repeat // 2)
    typer_t = startup([sys.executable, "-c", "import typer"], runs)
    help_t = startup([sys.executable, "-m", "director", "--help"], runs)
    ratio = help_t / typer_t
    print(
        f"start-up: python -c 'import typer' {typer_t * 1000:.0f} ms, director --help {help_t * 1000:.0f} ms "
        f"→ {ratio:.2f}× (target ≤ 1.5×) {'OK' if ratio <= 1.5 else 'SLOW'}"
    )


if __name__ == "__main__":
    main()

"""Plans written for the engine tests: no wrangler, real bash, side-effect counters in $OUT.

Every act block appends its section's name to `$OUT/acts`, so a test proves how many times each act
block really ran by counting lines; verify blocks only read.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tests import forkserver

HEADER = """\
# Counter — a plan written for Director's tests

> Self-executing Markdown for tests: every act block appends to `$OUT/acts`.

## 🤖 Director prompt

You are the Director. Execute this plan:
- Observe-before-act; verify each step before advancing (verified frontier)
- Stop at every 🔴 GATE and 💥 for human "go"

```
Legend  🟢 create · 🟡 config · 🔴 GATE (human go) · 💥 destructive (human go) · ⏳ wait · ✔ verify
```

## Intent

**Acceptance contract:**
1. **Chain complete** — every step ran once and the chain holds.

## Provisioning Inputs

| # | Question | Options (closed enum) | Default | Sets | Gates |
|---|----------|-----------------------|---------|------|-------|
| 1 | Mode | `a` / `b` | `a` | `MODE` | §2 gate severity |

## 0. Variables

```bash
export MODE="a"
export OUT="${COUNTER_OUT:-$PWD/out}"
export NAME="chain-${MODE}"
mkdir -p "$OUT"
```
"""

SECTION = """\
## {i}. Step {i}  {marker}

```{info}
echo "s{i}" >> "$OUT/acts"
{extra}
touch "$OUT/s{i}"
export V{i}="value-{i}-$MODE"
```
```bash
# ✔ s{i} exists
[ -f "$OUT/s{i}" ] && echo "s{i} present" || {{ echo "s{i} missing"; exit 1; }}
```
> → Live State: V{i}
"""

FOOTER = """\
## {n}. Acceptance  ✔

```bash
[ "$(cat "$OUT/acts" | sort -u | wc -l)" -ge {steps} ] && echo "1: chain holds" || {{ echo "1: chain broken"; exit 1; }}
```

## Live State

```yaml
status:        not-created      # template
last_action:   —
last_verified: —
resolved_inputs: {{ mode: a }}   # comment kept
```

| key   | value (filled on apply) |
|-------|-------------------------|
| NAME  | `chain-${{MODE}}` (the chain) |
{kv}

| ✔ check         | expected            | observed | result |
|-----------------|---------------------|----------|--------|
| chain complete  | every step ran once | —        | —      |
{rows}

## Teardown (observe-first, resumable)  💥

```bash
echo "td" >> "$OUT/teardown-acts"
rm -f "$OUT"/s[0-9]*
```
```bash
# ✔ verify teardown — nothing left
ls "$OUT"/s[0-9]* >/dev/null 2>&1 && {{ echo "still present"; exit 1; }} || echo "all gone"
```
"""


@dataclass
class Step:
    """One numbered section of the counter plan."""

    marker: str = "🟢"
    extra: str = ""
    info: str = "bash"


@dataclass
class CounterPlan:
    steps: list[Step] = field(default_factory=lambda: [Step(), Step(), Step()])

    def text(self) -> str:
        parts = [HEADER]
        for i, st in enumerate(self.steps, start=1):
            parts.append(SECTION.format(i=i, marker=st.marker, extra=st.extra, info=st.info))
        n = len(self.steps) + 1
        kv = "\n".join(f"| V{i}    | `${{V{i}}}` |" for i in range(1, n))
        rows = "\n".join(
            f"| s{i} exists       | s{i} present        | —        | —      |" for i in range(1, n)
        )
        parts.append(FOOTER.format(n=n, steps=len(self.steps), kv=kv, rows=rows))
        return "\n".join(parts)


def write_plan(tmp: Path, plan: CounterPlan, name: str = "counter.md") -> Path:
    path = tmp / name
    path.write_text(plan.text(), encoding="utf-8")
    return path


def director(
    *args: str, cwd: Path, out: Path, timeout: float = 120, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the real CLI (non-interactive: no terminal, CI set)."""
    e = dict(os.environ)
    e.update({"COUNTER_OUT": str(out), "CI": "1", "NO_COLOR": "1"})
    if env:
        e.update(env)
    return forkserver.run(
        [sys.executable, "-m", "director", *args],
        cwd=cwd,
        env=e,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def acts(out: Path, name: str = "acts") -> list[str]:
    p = out / name
    return p.read_text().split() if p.exists() else []

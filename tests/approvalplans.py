"""Small plans for the approval tests: §0 sets values, §1 (🟢) prepares, §2 (🔴) is the gated act.

Through the real CLI with a real allowed-signers file and real `ssh-keygen` keys: an approval is given
for §2, then something the act can read is changed (never §2's text), and the next apply must ask again.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests import forkserver

PLAN = """\
# Closure — a plan written for Director's approval tests

> Self-executing Markdown for tests: §2 is gated.

## 0. Variables

```bash
export OUT="${{COUNTER_OUT:-$PWD/out}}"
mkdir -p "$OUT"
{var0}
```

## 1. Setup  🟢

```bash
{setup}
touch "$OUT/setup"
```
```bash
# ✔ set up
[ -f "$OUT/setup" ] && echo "set up" || {{ echo "not set up"; exit 1; }}
```

## 2. Act  🔴

```bash{fence}
{act}
touch "$OUT/acted"
```
```bash
# ✔ acted
[ -f "$OUT/acted" ] && echo "acted" || {{ echo "not acted"; exit 1; }}
```

## Live State

```yaml
status:        not-created      # template
last_action:   —
last_verified: —
```

| key   | value (filled on apply) |
|-------|-------------------------|
| OUT   | `${{OUT}}` |

## Teardown  💥

```bash
rm -f "$OUT/acted" "$OUT/setup"
```
```bash
# ✔ gone
[ ! -f "$OUT/acted" ] && echo "gone" || {{ echo "still there"; exit 1; }}
```
"""

SIGNERS = ".director-allowed-signers"


def plan_text(var0: str = "", setup: str = ":", act: str = ":", fence: str = "") -> str:
    return PLAN.format(var0=var0, setup=setup, act=act, fence=fence)


def key(tmp: Path, name: str) -> Path:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(tmp / name)], check=True)
    return tmp / name


def signer_line(principal: str, k: Path) -> str:
    kind, blob = k.with_name(k.name + ".pub").read_text().split()[:2]
    return f"{principal} {kind} {blob}"


def cli(
    *args: str, cwd: Path, out: Path, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """The real CLI, non-interactive (CI set), with `$COUNTER_OUT`."""
    e = dict(os.environ)
    e.update({"COUNTER_OUT": str(out), "CI": "1", "NO_COLOR": "1"})
    e.update(env or {})
    return forkserver.run(
        [sys.executable, "-m", "director", *args], cwd=cwd, env=e, capture_output=True, text=True, timeout=timeout
    )

"""Small plans that make families for the tests and the bench: real bash, real files, nothing else.

Each member's act writes a mark file in its workspace holding every `DIRECTOR_PROVIDED_*` value its blocks
received (what its providers realized), so a test reads from the file, not from Director, what reached it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests import forkserver
from tests.jsonschemas import validated


def member(
    name: str,
    *,
    provides: str | None = None,
    requires: str = "nothing",
    sleep: float = 0.0,
    observe_sleep: float = 0.0,
    fail: bool = False,
    gate: bool = False,
) -> str:
    """A plan called `name` that provides `provides` (default `<name>(MARK)`) and requires `requires` (the
    prose after **Requires**, e.g. "`base(MARK)` (`base.md`)"); its act sleeps `sleep` s, its observation
    `observe_sleep` s; `fail` makes the act fail, `gate` makes §1 a 🔴 gate."""
    provided = provides or f"`{name}(MARK)`"
    marker = "🔴" if gate else "🟢"
    failing = "exit 7  # this member fails\n" if fail else ""
    observe = f"sleep {observe_sleep}\n" if observe_sleep else ""
    return f"""\
# {name} — a member of a test family

> **Provides / Requires**: **Provides** {provided}. **Requires** {requires}.

## 0. Variables

```bash
export MARK="$PWD/mark-{name}"
```

## 1. Mark  {marker}

```bash
sleep {sleep}
{failing}env | grep '^DIRECTOR_PROVIDED_' | sort > "$MARK"
```
```bash
# ✔ the mark is there
{observe}[ -f "$MARK" ] && echo "mark present"
```

## Live State

```yaml
status:        not-created
last_action:   —
last_verified: —
```

| key  | value (filled on apply) |
|------|-------------------------|
| MARK | `${{MARK}}` |

| ✔ check      | expected        | observed | result |
|--------------|-----------------|----------|--------|
| mark present | the file exists |          |        |

## Teardown (observe-first, resumable)  💥

```bash
rm -f "$MARK"
```
```bash
# ✔ the mark is gone
[ ! -e "$MARK" ] && echo "mark gone"
```
"""


def write(directory: Path, name: str, **kw: Any) -> Path:
    path = directory / f"{name}.md"
    path.write_text(member(name, **kw), encoding="utf-8")
    return path


def mark(directory: Path, name: str) -> Path:
    """Where member `name` (a plan beside the others in `directory`) writes its mark."""
    return directory / ".director" / f"{name}.md" / "workspace" / f"mark-{name}"


def received(directory: Path, name: str) -> dict[str, str]:
    """The `DIRECTOR_PROVIDED_*` values member `name`'s act received (read from its mark file)."""
    text = mark(directory, name).read_text(encoding="utf-8")
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def director(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """The real CLI, non-interactive."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIRECTOR_")}
    env.update({"CI": "1", "NO_COLOR": "1"})
    return forkserver.run(
        [sys.executable, "-m", "director", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def events(path: Path) -> list[dict[str, Any]]:
    """The `--events` stream, every line checked against its schema."""
    return [validated(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def of(evs: list[dict[str, Any]], plan: str, type_: str) -> list[dict[str, Any]]:
    return [e for e in evs if e.get("plan") == plan and e["type"] == type_]


def audit_kinds(directory: Path, plan: str) -> list[str]:
    r = director("audit", plan, "--json", cwd=directory)
    assert r.returncode == 0, r.stderr
    return [e["kind"] for e in json.loads(r.stdout)["events"]]

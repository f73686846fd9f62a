"""Check-table rows fed by structure, through the real CLI: knob alternatives and session functions.

A restore drill runbook (written for these tests, in the style of a backup team's): its acceptance item 2
is checked by `2a` for one backend and `2b` for the other, in the two branches of one `if` chosen by a knob;
item 3 is checked by a helper function §0 defines and the contract block calls. Both rows must show ✅
after an apply with either knob value; the world (the restored copy) is checked by the test.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import forkserver

PLAN = """\
# Restore drill — nightly dump

## Intent

Prove every night that yesterday's dump restores.

**Acceptance:**
1. **Dump present** — the dump file exists and is not empty.
2. **Restore works** — the dump restores into a scratch copy (file or SQLite, per backend).
3. **Drill logged** — the drill wrote its log line.

## 🤖 Director prompt

- Observe-before-act; verify each step before advancing (verified frontier)

```
Legend  🟢 create · 🟡 config · 🔴 GATE (human go) · 💥 destructive (human go) · ⏳ wait · ✔ verify
```

## Provisioning Inputs

| # | Question | Options (closed enum) | Default | Sets | Gates |
|---|----------|-----------------------|---------|------|-------|
| 1 | Where does the dump restore to? | `file` / `sqlite` | `file` | `BACKEND` | §2 |

## 0. Variables

```bash
export BACKEND="file"
export DRILL="$PWD/drill"
logged() { grep -q "restored" "$DRILL/drill.log" 2>/dev/null || { echo "3: no drill log"; exit 1; }; echo "3: drill logged"; }
```

## 1. Dump  🟢

```bash
mkdir -p "$DRILL"
printf 'create table t(a);\\ninsert into t values (42);\\n' > "$DRILL/dump.sql"
```
```bash
# ✔ dump present
[ -s "$DRILL/dump.sql" ] && echo "1: dump present ($(wc -l < "$DRILL/dump.sql") lines)"
```

## 2. Restore drill  ✔

```bash
if [ "$BACKEND" = file ]; then
  cp "$DRILL/dump.sql" "$DRILL/restored.sql" && echo "2a: restored to a file" || { echo "2a: copy failed"; exit 1; }
else
  rm -f "$DRILL/restored.db"
  sqlite3 "$DRILL/restored.db" < "$DRILL/dump.sql" && [ "$(sqlite3 "$DRILL/restored.db" 'select a from t')" = 42 ] \\
    && echo "2b: restored into sqlite" || { echo "2b: restore failed"; exit 1; }
fi
echo "restored $(date +%s)" >> "$DRILL/drill.log"
logged
```

## Live State

```yaml
status: not-created
```

| ✔ check | expected | observed | result |
|---|---|---|---|
| dump present | non-empty | — | — |
| restore works | restores | — | — |
| drill logged | one line a drill | — | — |
"""


def _apply(tmp: Path, *sets: str) -> subprocess.CompletedProcess[str]:
    args = ["apply", str(tmp / "drill.md"), "--plain", "--non-interactive", "--state-dir", str(tmp / "st")]
    args += ["--workdir", str(tmp)]
    for s in sets:
        args += ["--set", s]
    env = {**os.environ, "CI": "1", "NO_COLOR": "1"}
    return forkserver.run(
        [sys.executable, "-m", "director", *args], cwd=tmp, env=env, capture_output=True, text=True, timeout=120
    )


def _rows(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for ln in text.splitlines():
        cells = [c.strip() for c in ln.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0] in ("dump present", "restore works", "drill logged"):
            out[cells[0]] = cells[3]
    return out


@pytest.mark.parametrize("backend", ["file", "sqlite"])
def test_alternatives_and_a_session_function_feed_their_rows(tmp_path: Path, backend: str) -> None:
    (tmp_path / "drill.md").write_text(PLAN, encoding="utf-8")
    r = _apply(tmp_path, f"backend={backend}")
    assert r.returncode == 0, r.stdout + r.stderr
    restored = tmp_path / "drill" / ("restored.sql" if backend == "file" else "restored.db")
    assert restored.exists()  # the world: the branch the knob chose really ran
    assert "restored" in (tmp_path / "drill" / "drill.log").read_text()
    rows = _rows((tmp_path / "drill.md").read_text(encoding="utf-8"))
    assert all(v.startswith("✅") for v in rows.values()) and len(rows) == 3, rows

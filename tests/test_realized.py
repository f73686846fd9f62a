"""Realized values come from the run that established them (after the act) and follow re-observation."""

from __future__ import annotations

from pathlib import Path

from tests.planmaker import director

PLAN = """\
# Pin — a plan whose verify block realizes the installed version

## 0. Variables

```bash
export OUT="${COUNTER_OUT:-$PWD/out}"
export WANT="2.1.0"
mkdir -p "$OUT"
```

## 1. Install  🟢

```bash
echo "install" >> "$OUT/acts"
echo "$WANT" > "$OUT/version"
```
```bash
# ✔ the wanted version is installed
DEP="dep@$(cat "$OUT/version" 2>/dev/null || echo none)"   # → Live State: DEP
[ "$DEP" = "dep@$WANT" ] && echo "installed $DEP" || { echo "found $DEP"; exit 1; }
```

## Live State

```yaml
status:        not-created
last_action:   —
```

| key | value (filled on apply) |
|-----|-------------------------|
| DEP | `—` (installed package) |
"""


def _dep(plan: Path) -> str:
    line = next(ln for ln in plan.read_text().splitlines() if ln.startswith("| DEP"))
    return line.split("|")[2].strip()


def test_a_value_a_verify_block_realizes_is_the_one_after_the_act(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "version").write_text("1.0.0-ini\n")  # what the observation before the act sees
    plan = tmp_path / "pin.md"
    plan.write_text(PLAN, encoding="utf-8")
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert _dep(plan).startswith("`dep@2.1.0`"), plan.read_text()

    # Changed out of band, then healed: the realized value is re-read when the section verifies again.
    (out / "version").write_text("0.9.9\n")
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0 and _dep(plan).startswith("`dep@2.1.0`")
    assert (out / "acts").read_text().splitlines() == ["install", "install"]

    # The plan's wanted version changes: the next apply re-installs and the ledger follows.
    plan.write_text(plan.read_text().replace('WANT="2.1.0"', 'WANT="2.2.0"'), encoding="utf-8")
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0 and _dep(plan).startswith("`dep@2.2.0`"), plan.read_text()

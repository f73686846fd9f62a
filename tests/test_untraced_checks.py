"""Checks whose run leaves no whole trace -- the block turns tracing off (`set +x`, `{ set +x; } 2>/dev/null`)
-- through the real CLI. Their path is not known, so a check that exits 0 whatever it finds is judged as one
never seen in a known world: never confirmed by an act that did not change it, never "already gone" before
a teardown. The truth is the test's: plain bash, and the files on disk."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.test_contrast_issue34 import director


def fenced(text: str, after: str) -> str:
    """The body of the first fenced block after the line `after`."""
    return text.split(after + "\n", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]


def check_body(text: str, title: str) -> str:
    """The check `# ✔ <title>`: its block after that comment."""
    return text.split(f"# ✔ {title}\n", 1)[1].split("```", 1)[0]


SOFT_PLAN = """\
# Nightly snapshot rotation

## 0. Variables

```bash
export SNAP_DIR="$PWD/snapshots"
mkdir -p "$SNAP_DIR"
```

## 1. Rotate the snapshots  🟡

```bash
touch "$SNAP_DIR/rotated-$(date +%Y%m%d)"
```
```bash
# ✔ retention report
{ set +x; } 2>/dev/null
if ls "$SNAP_DIR"/archive-* >/dev/null 2>&1; then echo "archive present"; else echo "no archive yet"; fi
```

## Live State

```yaml
status: not-created
```

| ✔ check | expected | observed | result |
|---|---|---|---|
| retention report | archive present | — | — |
"""


HIDE = ["{ set +x; } 2>/dev/null", "set +x"]


def plain_bash(*blocks: str, env: dict[str, str]) -> list[tuple[int, str]]:
    """Each block's (status, stdout) under plain bash, one after another."""
    out = []
    for block in blocks:
        p = subprocess.run(["bash", "-c", block], env={**os.environ, **env}, capture_output=True, text=True,
                           check=False)  # fmt: skip
        out.append((p.returncode, p.stdout))
    return out


@pytest.mark.parametrize("hide", HIDE)
def test_a_soft_check_that_hides_its_trace_is_not_confirmed_by_an_act_that_did_not_change_it(
    tmp_path: Path, hide: str
) -> None:
    """The check prints the same line before and after the act (plain bash says so) and exits 0 either way:
    no act made it hold. Director once read the missing trace as a path the act had changed (or the if/else
    line as a pass line) and wrote `✅` beside `expected: archive present, observed: no archive yet`."""
    text = SOFT_PLAN.replace("{ set +x; } 2>/dev/null", hide)
    plan = tmp_path / "rotation.md"
    plan.write_text(text, encoding="utf-8")
    check = check_body(text, "retention report")
    act = fenced(text, "## 1. Rotate the snapshots  🟡")
    (tmp_path / "truth").mkdir()
    seen = plain_bash(check, act, check, env={"SNAP_DIR": str(tmp_path / "truth")})
    assert seen[0] == seen[2] == (0, "no archive yet\n"), seen  # the act changes nothing the check reads
    r = director(tmp_path, "apply", plan)
    assert r.returncode == 10, r.stdout + r.stderr  # unconfirmed (docs/exit-codes), never "verified"
    assert "verified §1" not in r.stdout and "unconfirmed" in r.stdout, r.stdout
    assert "| retention report | archive present | no archive yet | ⚠ inconclusive" in plan.read_text(), plan.read_text()


BUCKET_PLAN = """\
# Scratch bucket

## 0. Variables

```bash
export BUCKET="$PWD/bucket"
```

## 1. Create the bucket  🟢

```bash
mkdir -p "$BUCKET" && touch "$BUCKET/.created"
```
```bash
# ✔ bucket exists
[ -f "$BUCKET/.created" ] && echo "bucket exists" || { echo "bucket missing"; exit 1; }
```

## Live State

```yaml
status: not-created
```

| ✔ check | expected | observed | result |
|---|---|---|---|
| bucket exists | bucket exists | — | — |

## Teardown  💥

```bash
rm -rf "$BUCKET"
```
```bash
# ✔ verify teardown
{ set +x; } 2>/dev/null
[ -d "$BUCKET" ] && echo "bucket still there" || echo "bucket gone"
```
"""


@pytest.mark.parametrize("hide", HIDE)
def test_a_teardown_check_that_hides_its_trace_never_says_already_gone(tmp_path: Path, hide: str) -> None:
    """Before the teardown the bucket is there and the check says so, exit 0. Read by the position of its
    line alone, that once passed -- "already gone: nothing to delete" -- and the bucket stayed. A teardown
    is never "already gone" on structure alone: the destructive block runs and the bucket is gone, the
    check (which exits 0 either way) unconfirmed."""
    text = BUCKET_PLAN.replace("{ set +x; } 2>/dev/null", hide)
    plan = tmp_path / "bucket.md"
    plan.write_text(text, encoding="utf-8")
    r = director(tmp_path, "apply", plan)
    assert r.returncode == 0, r.stdout + r.stderr
    bucket = tmp_path / "bucket"
    assert (bucket / ".created").is_file()
    check = check_body(text, "verify teardown")
    assert plain_bash(check, env={"BUCKET": str(bucket)}) == [(0, "bucket still there\n")]  # present, exit 0
    r = director(tmp_path, "teardown", plan, "--approve", "teardown")
    assert not bucket.exists(), r.stdout + r.stderr
    assert "already gone" not in r.stdout, r.stdout
    assert r.returncode == 10, r.stdout + r.stderr

"""Issue 32, found by the model's soak (seed 51): a success that no check ever confirmed is no evidence that
a section holds. When its check after the act was inconclusive, and the next observation cannot tell either,
the act runs again (behind its gate, when it has one) -- as the plan would under plain bash -- instead of
`in sync -- unchanged since its last success` with exit 0 over a broken world that no apply ever heals.

Through the real CLI; the world (the list's lines, how often the act ran) is read from the files.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine_plans import KILL_IF_ARMED, World, said

pytestmark = pytest.mark.slow

PLAN = """\
# Crawl queue

## 0. Variables

```bash
export Q="$CRAWL_DIR/queue"
mkdir -p "$Q"
```

## 1. Seed the queue  {marker}

```bash
printf '%s\\n' "https://a.example/" "https://b.example/" > "$Q/seeds.list"
echo x >> "$CRAWL_DIR/acts"
[ ! -e "$CRAWL_DIR/kill.req" ] || mv "$CRAWL_DIR/kill.req" "$KILL_ARM"  # the test's: die in the verify
```
```bash
# ✔ the queue is seeded
{kill}
n=$(find "$Q" -name '*.list' -exec cat {{}} + | wc -l)
if [ "$n" -eq 2 ]; then echo "queue has both seeds"; else echo "queue has $n seeds"; fi
```

## Live State

```yaml
status: not-created
last_action: —
```
"""


def _world(tmp: Path, marker: str) -> tuple[World, Path]:
    w = World(tmp, env={"CRAWL_DIR": str(tmp), "KILL_ARM": str(tmp / "kill.arm")})
    plan = tmp / "crawl.md"
    plan.write_text(PLAN.format(marker=marker, kill=KILL_IF_ARMED), encoding="utf-8")
    return w, plan


def _died_in_the_verify_then_lost_a_seed(w: World, plan: Path, tmp: Path, *approve: str) -> None:
    """The first apply dies (SIGKILL) in §1's verify, after its act finished; a seed is lost out of band;
    the resumed apply does not run the finished act again and cannot confirm §1 (its check takes the path
    it took before the act): *unconfirmed*, exit 10."""
    (tmp / "kill.req").touch()
    r = w.director("apply", *_args(plan, tmp), *approve)
    assert r.returncode == -9 and _acts(tmp) == 1 and len(_seeds(tmp)) == 2, said(r)
    (tmp / "queue" / "seeds.list").write_text("https://a.example/\n")
    r = w.director("apply", *_args(plan, tmp), *approve)
    assert r.returncode == 10 and "unconfirmed" in said(r), said(r)
    assert _acts(tmp) == 1, said(r)  # promise 1: a finished act is not run again


def _acts(tmp: Path) -> int:
    p = tmp / "acts"
    return len(p.read_text().split()) if p.exists() else 0


def _seeds(tmp: Path) -> list[str]:
    return (tmp / "queue" / "seeds.list").read_text().split()


def _args(plan: Path, tmp: Path) -> list[str]:
    # the verify's `rm -f` of the kill switch is the test's, not the plan's (lint: gated-verify-acts)
    return [str(plan), "--plain", "--non-interactive", "--state-dir", str(tmp / "state"),
            "--ignore-lint-errors"]  # fmt: skip


def test_an_unconfirmed_success_then_a_check_that_cannot_tell_runs_the_act_again(tmp_path: Path) -> None:
    w, plan = _world(tmp_path, "🟢")
    _died_in_the_verify_then_lost_a_seed(w, plan, tmp_path)
    r = w.director("plan", str(plan), "--plain", "--state-dir", str(tmp_path / "state"))
    assert "will apply" in said(r) and "never confirmed" in said(r), said(r)  # `plan` says what apply does
    r = w.director("apply", *_args(plan, tmp_path))
    out = said(r)
    assert _acts(tmp_path) == 2, out  # the act ran again, as it would under plain bash
    assert len(_seeds(tmp_path)) == 2, out  # and the world is healed
    assert "never confirmed" in out, out
    assert r.returncode == 0, out  # its check took another path after the act: confirmed
    r = w.director("apply", *_args(plan, tmp_path))
    assert r.returncode == 0 and _acts(tmp_path) == 2, said(r)  # now in sync, on evidence


def test_a_gated_unconfirmed_section_asks_again_rather_than_claiming_in_sync(tmp_path: Path) -> None:
    w, plan = _world(tmp_path, "🔴")
    _died_in_the_verify_then_lost_a_seed(w, plan, tmp_path, "--approve", "1")
    r = w.director("apply", *_args(plan, tmp_path))
    out = said(r)
    assert r.returncode == 4 and "awaiting approval" in out, out  # exit 4: the gate waits for a human go
    assert _acts(tmp_path) == 1 and len(_seeds(tmp_path)) == 1, out  # nothing ran without a go
    r = w.director("apply", *_args(plan, tmp_path), "--approve", "1")
    assert r.returncode == 0 and _acts(tmp_path) == 2 and len(_seeds(tmp_path)) == 2, said(r)

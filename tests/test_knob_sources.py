"""Issue 32 item 3: `--set` (and the interview) win over the operator's environment, or the run is refused
before anything is built. Through the real CLI; what was built is read from the disk.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine_plans import HEAD, World, said

pytestmark = pytest.mark.slow

INPUTS = """\
## Provisioning Inputs

| # | Question | Options (closed enum) | Default | Sets | Gates |
|---|----------|-----------------------|---------|------|-------|
| 1 | Environment | `dev` / `prod` | `dev` | `ENV` | every resource name |

"""

BODY = """\
## 1. The app's directory  🟢

```bash
mkdir -p "$WORK/$APP"
echo "env=$ENV" > "$WORK/$APP/env"
```
```bash
# ✔ the app's directory is there
grep -qx "env=$ENV" "$WORK/$APP/env" && echo "$APP ready" || { echo "$APP missing"; exit 1; }
```
> → Live State: APP

## Live State

```yaml
status: not-created
last_action: —
```

| key | value (filled on apply) |
|-----|-------------------------|
| APP | `orders-${ENV}` (the app) |

## Teardown (observe-first, resumable)  💥

```bash
rm -rf "$WORK/$APP"
```
```bash
# ✔ gone
[ ! -e "$WORK/$APP" ] && echo "$APP gone" || { echo "$APP still there"; exit 1; }
```
"""


def _plan(world: World, zero: str) -> Path:
    plan = world.root / "app.md"
    plan.write_text(HEAD.format(title="An app") + "\n" + INPUTS + "## 0. Variables\n\n```bash\n" + zero
                    + "\n```\n\n" + BODY)  # fmt: skip
    world.env["WORK_DIR"] = str(world.root / "work")
    return plan


def _built(world: World) -> list[str]:
    work = world.root / "work"
    return sorted(p.name for p in work.iterdir()) if work.exists() else []


def test_a_knob_section_0_never_assigns_is_a_lint_error_and_apply_refuses_it(world: World) -> None:
    plan = _plan(world, 'export WORK="$WORK_DIR"\nexport APP="orders-${ENV}"')
    r = world.director("lint", str(plan))
    assert r.returncode == 1 and "knob-not-set" in r.stdout and "error" in r.stdout, said(r)
    r = world.director("apply", str(plan), "--set", "env=prod", env={"ENV": "dev"})
    assert r.returncode == 65 and "knob-not-set" in r.stderr, said(r)
    assert _built(world) == []  # nothing was built: not the environment's dev, nor anything else


def test_a_knob_section_0_sets_only_when_unset_loses_to_nothing_the_run_is_refused(world: World) -> None:
    # §0 assigns ENV (lint is satisfied) but only when the environment did not: the blocks would see dev
    plan = _plan(world, 'export WORK="$WORK_DIR"\n[ -n "${ENV:-}" ] || ENV="dev"\nexport APP="orders-${ENV}"')
    r = world.director("apply", str(plan), "--set", "env=prod", env={"ENV": "dev"})
    assert r.returncode == 65 and "ENV=prod" in r.stderr and "ENV=dev" in r.stderr, said(r)
    assert _built(world) == []
    r = world.director("plan", str(plan), "--set", "env=prod", env={"ENV": "dev"})
    assert r.returncode == 65, said(r)  # plan says what apply would do: refuse


def test_set_wins_over_the_environment_when_section_0_assigns_the_knob(world: World) -> None:
    plan = _plan(world, 'export WORK="$WORK_DIR"\nexport ENV="${ENV:-dev}"\nexport APP="orders-${ENV}"')
    r = world.director("apply", str(plan), "--set", "env=prod", env={"ENV": "dev"})
    assert r.returncode == 0, said(r)
    assert _built(world) == ["orders-prod"]
    assert (world.root / "work" / "orders-prod" / "env").read_text() == "env=prod\n"

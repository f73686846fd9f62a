"""Issue 32 item 5: a changed input that changes what a plan's resources are called is a replacement: the
gate and `plan` say so and what happens to the old one, the Live State lists it, and teardown removes every
identity the journal says exists -- not only today's inputs'. Through the real CLI; the servers, ports and
directories are read directly.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from director.plan.parse import parse_file
from tests.engine_plans import HEAD, World, answers, listening, pid_alive, said, serve

pytestmark = pytest.mark.slow

PLAN = f"""\
## Provisioning Inputs

| # | Question | Options (closed enum) | Default | Sets | Gates |
|---|----------|-----------------------|---------|------|-------|
| 1 | Environment | `dev` / `stg` | `dev` | `ENV` | every resource name |

## 0. Variables

```bash
export ENV="dev"
export SVC="orders"
export APP="${{SVC}}-${{ENV}}"
export WORK="$WORK_DIR"
export SITE="$WORK/$APP"
```

## 1. The site  🟢

```bash
mkdir -p "$SITE"
echo "<h1>$APP</h1>" > "$SITE/index.html"
```
```bash
# ✔ the site is written
grep -q "$APP" "$SITE/index.html" && echo "$APP written" || {{ echo "$APP missing"; exit 1; }}
```

## 2. Serve it  {{marker}}

```bash
{serve("$SITE")}```
```bash
# ✔ it answers
PORT="$(cat "$SITE/port")"
URL="http://127.0.0.1:$PORT/"
curl -fsS "$URL" | grep -q "$APP" && echo "$APP up at $URL" || {{ echo "$APP down"; exit 1; }}
```
> → Live State: URL

## Live State

```yaml
status: not-created
last_action: —
```

| key | value (filled on apply) |
|-----|-------------------------|
| APP | `${{SVC}}-${{ENV}}` (the app) |
| URL | `—` (where it answers) |

## Teardown (observe-first, resumable)  💥

```bash
[ -f "$SITE/pid" ] && kill "$(cat "$SITE/pid")" 2>/dev/null
rm -rf "$SITE"
```
```bash
# ✔ the app is gone
[ ! -e "$SITE" ] && echo "$APP gone" || {{ echo "$APP still there"; exit 1; }}
```
"""


def _plan(world: World, marker: str = "🟢") -> Path:
    plan = world.root / "orders.md"
    plan.write_text(HEAD.format(title="Orders") + "\n" + PLAN.replace("{marker}", marker))
    world.env["WORK_DIR"] = str(world.root / "work")
    return plan


def _server(world: World, app: str) -> tuple[int, int]:
    site = world.root / "work" / app
    return int((site / "port").read_text()), int((site / "pid").read_text())


def _yaml(plan: Path) -> dict[str, object]:
    ls = parse_file(str(plan)).live_state
    assert ls is not None
    return dict(ls.data)


def test_a_changed_input_replaces_and_teardown_removes_every_identity(world: World) -> None:
    plan = _plan(world)
    assert world.director("apply", str(plan)).returncode == 0
    dev_port, dev_pid = _server(world, "orders-dev")
    assert answers(dev_port, "orders-dev")

    r = world.director("plan", str(plan), "--set", "env=stg")
    assert "replace: APP orders-dev → orders-stg (-/+)" in r.stdout, said(r)
    assert "director teardown` removes it" in r.stdout, said(r)
    r = world.director("apply", str(plan), "--set", "env=stg")
    assert r.returncode == 0, said(r)
    assert "replace: APP orders-dev → orders-stg" in r.stdout, said(r)
    stg_port, stg_pid = _server(world, "orders-stg")
    assert answers(stg_port, "orders-stg") and answers(dev_port, "orders-dev")  # the old one was left
    also = _yaml(plan).get("also_exists")
    assert isinstance(also, list) and len(also) == 1 and "APP=orders-dev (env=dev)" in str(also[0]), also

    r = world.director("teardown", str(plan), "--approve", "teardown")
    assert r.returncode == 0, said(r)
    for port, pid in ((dev_port, dev_pid), (stg_port, stg_pid)):
        assert not pid_alive(pid) and not listening(port)
    assert not (world.root / "work" / "orders-dev").exists()
    assert not (world.root / "work" / "orders-stg").exists()
    data = _yaml(plan)
    assert str(data["status"]).startswith("gone") and data.get("also_exists") == "none", data
    # nothing is left to remove: a second teardown finds it all gone
    r = world.director("teardown", str(plan), "--approve", "teardown")
    assert r.returncode == 0, said(r)


def test_the_gate_of_a_replacing_section_says_what_is_left(world: World) -> None:
    plan = _plan(world, "🔴")
    assert world.director("apply", str(plan), "--approve", "2").returncode == 0
    r = world.director("apply", str(plan), "--set", "env=stg")
    assert r.returncode == 4, said(r)  # §2 waits at its gate
    r = world.director("plan", str(plan), "--set", "env=stg", "--section", "2")
    assert "replace: APP orders-dev → orders-stg (-/+)" in r.stdout, said(r)
    r = world.director("teardown", str(plan), "--set", "env=dev", "--approve", "teardown")
    assert r.returncode == 0, said(r)
    assert not (world.root / "work" / "orders-dev").exists()
    assert not (world.root / "work" / "orders-stg").exists()


def test_director_approve_releases_each_identity_s_teardown_gate_in_turn(world: World) -> None:
    plan = _plan(world)
    assert world.director("apply", str(plan)).returncode == 0
    assert world.director("apply", str(plan), "--set", "env=stg").returncode == 0
    servers = [_server(world, "orders-dev"), _server(world, "orders-stg")]
    for _ in range(2):  # one 💥 gate per identity, each approved from another process
        r = world.director("teardown", str(plan))
        assert r.returncode == 4, said(r)
        a = world.director("approve", str(plan), "teardown", "--yes")
        assert a.returncode == 0, said(a)
    r = world.director("teardown", str(plan))
    assert r.returncode == 0, said(r)
    for port, pid in servers:
        assert not pid_alive(pid) and not listening(port)

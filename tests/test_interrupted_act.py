"""Issue 32 item 1: an act that was running when Director died runs again (what it started stopped first),
and memory of a success never survives a teardown; realized values follow the run that realized them.

Through the real CLI; the world (which port answers, which server still runs) is read directly.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from director.plan.parse import parse_file
from tests.engine_plans import HEAD, KILL_IF_ARMED, World, answers, listening, pid_alive, said, serve

pytestmark = pytest.mark.slow

PLAN = f"""\
## 0. Variables

```bash
export WORK="$WORK_DIR"
```

## 1. Write the site  🟢

```bash
mkdir -p "$WORK"
echo "<h1>hello</h1>" > "$WORK/index.html"
```
```bash
# ✔ the site is written
grep -q hello "$WORK/index.html" && echo "site written" || {{ echo "site missing"; exit 1; }}
```

## 2. Serve it  🟢

```bash
{serve("$WORK")}{KILL_IF_ARMED}
```
```bash
# ✔ the site answers
PORT="$(cat "$WORK/port")"
URL="http://127.0.0.1:$PORT/"
curl -fsS "$URL" | grep -q hello && echo "site up at $URL" || {{ echo "site down"; exit 1; }}
```
> → Live State: URL

## Live State

```yaml
status: not-created
last_action: —
```

| key | value (filled on apply) |
|-----|-------------------------|
| URL | `—` (the site) |

## Teardown (observe-first, resumable)  💥

```bash
[ -f "$WORK/pid" ] && kill "$(cat "$WORK/pid")" 2>/dev/null
rm -rf "$WORK"
```
```bash
# ✔ nothing left
[ ! -e "$WORK" ] && echo "site gone" || {{ echo "site still there"; exit 1; }}
```
"""


def _url(plan: Path) -> str:
    ls = parse_file(str(plan)).live_state
    assert ls is not None
    return next(r.value for r in ls.kv_rows if r.key == "URL")


def test_apply_teardown_apply_killed_in_an_act_then_apply_runs_that_act_again(world: World) -> None:
    plan = world.root / "site.md"
    plan.write_text(HEAD.format(title="A site") + "\n" + PLAN)
    work, arm = world.root / "work", world.root / "arm"
    world.env.update({"WORK_DIR": str(work), "KILL_ARM": str(arm)})
    assert world.director("apply", str(plan)).returncode == 0
    first = int((work / "port").read_text())
    assert answers(first, "hello")
    r = world.director("teardown", str(plan), "--approve", "teardown")
    assert r.returncode == 0, said(r)
    assert not work.exists() and not listening(first)

    arm.touch()
    r = world.director("apply", str(plan))
    assert r.returncode == -signal.SIGKILL, said(r)  # Director died in §2's act, after its server started
    killed_port, killed_pid = int((work / "port").read_text()), int((work / "pid").read_text())
    assert answers(killed_port, "hello")  # what the interrupted act started runs (nobody knows its URL)

    r = world.director("apply", str(plan))
    assert r.returncode == 0, said(r)
    assert "unchanged since its last success" not in r.stdout.split("§2 Serve it")[-1], r.stdout
    port = int((work / "port").read_text())
    assert answers(port, "hello")
    # the interrupted attempt's server was stopped before the act ran again
    assert not pid_alive(killed_pid) and (port == killed_port or not listening(killed_port))
    # Live State and `output` say what exists: the URL of the server that runs now
    assert _url(plan).startswith(f"`http://127.0.0.1:{port}/`"), _url(plan)
    out = world.director("output", str(plan), "URL", "--raw")
    assert out.returncode == 0 and out.stdout == f"http://127.0.0.1:{port}/", said(out)


def test_a_teardown_voids_the_memory_of_successes_before_it(world: World) -> None:
    plan = world.root / "site.md"
    plan.write_text(HEAD.format(title="A site") + "\n" + PLAN)
    work = world.root / "work"
    world.env.update({"WORK_DIR": str(work), "KILL_ARM": str(world.root / "arm")})
    assert world.director("apply", str(plan)).returncode == 0
    assert world.director("teardown", str(plan), "--approve", "teardown").returncode == 0
    # the world comes back out of band, as it was before the teardown: the observation passes, but the
    # journal's success is from before the teardown, so no section is "unchanged since its last success"
    work.mkdir()
    (work / "index.html").write_text("<h1>hello</h1>\n")
    r = world.director("plan", str(plan))
    assert "§1" in r.stdout and "torn down since its last success" in r.stdout, said(r)
    r = world.director("apply", str(plan))
    assert r.returncode == 0, said(r)
    assert "unchanged since its last success" not in r.stdout.split("── §1")[-1].split("── §2")[0], r.stdout
    port = int((work / "port").read_text())
    assert answers(port, "hello") and _url(plan).startswith(f"`http://127.0.0.1:{port}/`")


def _killed_in_an_act_that_runs_again(world: World) -> tuple[Path, Path, int]:
    """A site applied, its server dead out of band, then an apply in which §2 acts again and Director dies
    (SIGKILL) after the act started its new server: (plan, work directory, that server's pid)."""
    plan = world.root / "site.md"
    plan.write_text(HEAD.format(title="A site") + "\n" + PLAN)
    work, arm = world.root / "work", world.root / "arm"
    world.env.update({"WORK_DIR": str(work), "KILL_ARM": str(arm)})
    assert world.director("apply", str(plan)).returncode == 0
    os.kill(int((work / "pid").read_text()), signal.SIGKILL)  # the server dies out of band
    arm.touch()
    r = world.director("apply", str(plan))
    assert r.returncode == -signal.SIGKILL, said(r)  # §2 acts again and Director dies in it
    killed_pid = int((work / "pid").read_text())
    assert answers(int((work / "port").read_text()), "hello")
    return plan, work, killed_pid


def test_a_restart_is_no_way_around_an_interrupted_act(world: World) -> None:
    plan, work, killed_pid = _killed_in_an_act_that_runs_again(world)
    r = world.director("apply", str(plan), "--restart")  # a new run, not a resumed one
    assert r.returncode == 0, said(r)
    port = int((work / "port").read_text())
    assert answers(port, "hello") and not pid_alive(killed_pid)
    assert _url(plan).startswith(f"`http://127.0.0.1:{port}/`"), _url(plan)


def test_a_run_cancelled_by_a_teardown_leaves_no_process_of_its_interrupted_act_behind(world: World) -> None:
    """Found by the model-based soak (seed 46): Director died in §2's act after the act had started its
    server; a teardown then stopped at its 💥 gate (it cancelled that apply run); the next apply ran §2's act
    again without stopping what the interrupted attempt had started (or, its check passing, kept the dead
    server's URL as "unchanged since its last success")."""
    plan, work, killed_pid = _killed_in_an_act_that_runs_again(world)
    r = world.director("teardown", str(plan))  # no approval: it stops at its gate, the apply run cancelled
    assert r.returncode == 4, said(r)
    assert pid_alive(killed_pid) and work.exists()  # the teardown removed nothing
    r = world.director("apply", str(plan))
    assert r.returncode == 0, said(r)
    port = int((work / "port").read_text())
    assert answers(port, "hello") and not pid_alive(killed_pid), said(r)
    assert _url(plan).startswith(f"`http://127.0.0.1:{port}/`"), _url(plan)


TORN = f"""\
## 0. Variables

```bash
export WORK="$WORK_DIR"
```

## 1. Write the site and its cache  🟢

```bash
mkdir -p "$WORK"
echo "<h1>hello</h1>" > "$WORK/index.html"
echo "cached" > "$WORK.cache"
```
```bash
# ✔ the site is written
grep -q hello "$WORK/index.html" && echo "site written" || {{ echo "site missing"; exit 1; }}
```

## Live State

```yaml
status: not-created
last_action: —
```

## Teardown (observe-first, resumable)  💥

```bash
rm -rf "$WORK"
{KILL_IF_ARMED}
rm -f "$WORK.cache"
```
```bash
# ✔ the site is gone
[ ! -e "$WORK" ] && echo "site gone" || {{ echo "site still there"; exit 1; }}
```
"""


def test_a_teardown_killed_in_its_act_runs_that_act_again_though_its_check_already_passes(
    world: World,
) -> None:
    # the teardown's check looks at the site only; the act's later command (the cache) never ran: the next
    # teardown must run the act again, not take the passing check for "already gone" (the soak's finding)
    plan = world.root / "site.md"
    plan.write_text(HEAD.format(title="A site") + "\n" + TORN)
    work, arm = world.root / "work", world.root / "arm"
    cache = world.root / "work.cache"
    world.env.update({"WORK_DIR": str(work), "KILL_ARM": str(arm)})
    assert world.director("apply", str(plan)).returncode == 0
    assert cache.exists()
    arm.touch()
    r = world.director("teardown", str(plan), "--approve", "teardown")
    assert r.returncode == -signal.SIGKILL, said(r)  # Director died in the act, after `rm -rf "$WORK"`
    assert not work.exists() and cache.exists()
    r = world.director("teardown", str(plan), "--approve", "teardown")
    assert r.returncode == 0, said(r)
    assert not cache.exists(), said(r)
    assert "already gone" not in r.stdout, said(r)


TOKEN = f"""\
## 0. Variables

```bash
export WORK="$WORK_DIR"
```

## 1. Mint the token  🟢

```bash
mkdir -p "$WORK"
head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \\n' > "$WORK/token"
```
```bash
{KILL_IF_ARMED}
chmod 600 "$WORK/token"
```
```bash
# ✔ the token is minted
if [ -s "$WORK/token" ]; then echo "token present"; else echo "token missing"; fi
```

## Live State

```yaml
status: not-created
last_action: —
```
"""


def test_an_act_killed_after_it_made_its_change_is_judged_against_the_world_before_its_first_attempt(
    world: World,
) -> None:
    # the check exits 0 whatever it finds (a message only): it is judged by contrast with what it printed
    # before the act. The killed attempt already minted the token, so what the resumed run observes is the
    # world after; the before is the observation the run made before its first attempt (the soak's finding)
    plan = world.root / "token.md"
    plan.write_text(HEAD.format(title="A token") + "\n" + TOKEN)
    work, arm = world.root / "work", world.root / "arm"
    world.env.update({"WORK_DIR": str(work), "KILL_ARM": str(arm)})
    arm.touch()
    r = world.director("apply", str(plan))
    assert r.returncode == -signal.SIGKILL, said(r)
    assert (work / "token").stat().st_size > 0  # the first block ran
    r = world.director("apply", str(plan))
    assert r.returncode == 0, said(r)  # not 10 (unconfirmed: "the same path before and after the act")
    assert "✓ applied" in r.stdout, said(r)


STALE = f"""\
## 0. Variables

```bash
export WORK="$WORK_DIR"
```

## 1. Serve the site  🟢

```bash
mkdir -p "$WORK"
echo "<h1>hello</h1>" > "$WORK/index.html"
{serve("$WORK")}```
```bash
# ✔ the site answers
curl -fsS "http://127.0.0.1:$PORT/" | grep -q hello && echo "site up" || {{ echo "site down"; exit 1; }}
```

## 2. Write the robots file  🟢

```bash
echo "User-agent: *" > "$WORK/robots.txt"
```
```bash
{KILL_IF_ARMED}
```
```bash
# ✔ robots file written
[ -s "$WORK/robots.txt" ] && echo "robots written" || {{ echo "robots missing"; exit 1; }}
```

## 3. The site serves its robots file  ✔

```bash
curl -fsS "http://127.0.0.1:$PORT/robots.txt" | grep -q User-agent && echo "robots served" || {{ echo "no robots on $PORT"; exit 1; }}
```

## Live State

```yaml
status: not-created
last_action: —
```
"""


def test_a_step_finished_before_a_resume_gives_back_what_it_changed_not_the_session_it_saw(world: World) -> None:
    # §2's first act block finished in the run's first invocation, when §1's server was on its first port;
    # the server then died, and the resumed run started it again on a new port. Skipping §2's finished block
    # must give the session back what that block changed (nothing), not the whole session it ended in: the
    # old PORT (the soak's finding: the ✔ section then probed the dead port, exit 3)
    plan = world.root / "site.md"
    plan.write_text(HEAD.format(title="A site") + "\n" + STALE)
    work, arm = world.root / "work", world.root / "arm"
    world.env.update({"WORK_DIR": str(work), "KILL_ARM": str(arm)})
    arm.touch()
    r = world.director("apply", str(plan))
    assert r.returncode == -signal.SIGKILL, said(r)  # Director died in §2's second act block
    first_port, first_pid = int((work / "port").read_text()), int((work / "pid").read_text())
    os.kill(first_pid, signal.SIGKILL)  # the server dies behind Director's back
    while pid_alive(first_pid):
        time.sleep(0.05)
    r = world.director("apply", str(plan))
    assert r.returncode == 0, said(r)
    port = int((work / "port").read_text())
    assert port != first_port and answers(port, "hello") and "robots served" in r.stdout, said(r)

"""Issue 32 items 6 and 4: every run of a block sees the session as plain bash's document order has it, and a
check's extra runs (the observation before an act, a resumed run's observations) leave no trace.

Through the real CLI, with plans written the way authors write them; the world (a port that answers, a
file, the number of times an act really ran) is read directly.
"""

from __future__ import annotations

import re
import signal
import subprocess
from pathlib import Path

import pytest

from director.plan.parse import parse_file
from tests.engine_plans import FREE_PORT, HEAD, KILL_DIRECTOR_ONCE, World, answers, listening, said, serve

pytestmark = pytest.mark.slow


def _write(world: World, title: str, body: str, kv: str, teardown: str) -> Path:
    plan = world.root / "plan.md"
    world.env["WORK_DIR"] = str(world.root / "work")
    plan.write_text(
        HEAD.format(title=title)
        + "\n## 0. Variables\n\n```bash\nexport WORK=\"$WORK_DIR\"\nmkdir -p \"$WORK\"\n```\n\n"
        + body
        + "\n## Live State\n\n```yaml\nstatus: not-created\nlast_action: —\n```\n\n"
        + "| key | value (filled on apply) |\n|-----|-------------------------|\n"
        + kv
        + "\n\n## Teardown (observe-first, resumable)  💥\n\n"
        + teardown
    )
    return plan


_STOP_SERVERS = """\
```bash
for f in "$WORK"/pid "$WORK"/*/pid; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null; done
rm -rf "$WORK"
```
```bash
# ✔ nothing left
[ ! -e "$WORK" ] && echo "work gone" || { echo "work still there"; exit 1; }
```
"""


def _verdict(stdout: str, n: int) -> str:
    """A section's verdict in the run's closing table (`  §1 Write the page  ✓ in sync  0.1s  …`)."""
    m = re.search(rf"^  §{n} .*?(✓ in sync|✓ applied|✗ failed)", stdout, re.M)
    return m.group(1)[2:] if m else ""


def _kv(plan: Path) -> dict[str, str]:
    ls = parse_file(str(plan)).live_state
    assert ls is not None
    return {r.key: r.value for r in ls.kv_rows}


# ------------------------------------------------------------------- a verify that says `readonly`

READONLY = f"""\
## 1. Write the page  🟢

```bash
printf '<h1>hello</h1>\\n' > "$WORK/index.html"
```
```bash
# ✔ the page says hello
set -euo pipefail
readonly PAGE="$WORK/index.html"
grep -q hello "$PAGE" && echo "page says hello" || {{ echo "page missing"; exit 1; }}
```

## 2. Serve it  🟢

```bash
cp "$PAGE" "$WORK/served.html"   # PAGE: what §1's verify set, as under plain bash
{serve("$WORK")}```
```bash
# ✔ the page answers
PORT="$(cat "$WORK/port")"
curl -fsS "http://127.0.0.1:$PORT/served.html" | grep -q hello && echo "page up" || {{ echo "page down"; exit 1; }}
```
> → Live State: PORT
"""


def test_a_verify_that_says_readonly_runs_before_and_after_its_act_and_hands_its_value_on(world: World) -> None:
    plan = _write(world, "A page served", READONLY, "| PORT | `—` |", _STOP_SERVERS)
    r = world.director("apply", str(plan))
    assert r.returncode == 0, said(r)  # the observation before §1's act left no readonly PAGE behind
    port = int((world.root / "work" / "port").read_text())
    assert answers(port, "hello")
    assert _kv(plan)["PORT"] == f"`{port}`"
    # in sync: each check runs once, as an observation, in the session the sections before it left
    r = world.director("apply", str(plan))
    assert r.returncode == 0 and _verdict(r.stdout, 1) == _verdict(r.stdout, 2) == "in sync", said(r)
    # the server dies: §2 acts again, reading the PAGE §1's verify handed on (§1 itself is in sync)
    pid = int((world.root / "work" / "pid").read_text())
    import os

    os.kill(pid, signal.SIGKILL)
    r = world.director("apply", str(plan))
    assert r.returncode == 0, said(r)
    new = int((world.root / "work" / "port").read_text())
    assert answers(new, "hello") and _kv(plan)["PORT"] == f"`{new}`"


# ------------------------------------------------- a verify that sets what its (gated) act reads

GATED = f"""\
## 1. Serve the site  🔴

```bash
mkdir -p "$WORK/site"
echo "<h1>hello</h1>" > "$WORK/site/index.html"
echo "act saw PORT=${{PORT-unset}}" >> "$WORK/act-saw"
{serve("$WORK/site")}```
```bash
# ✔ the site answers
PORT="$(cat "$WORK/site/port" 2>/dev/null || true)"
URL="http://127.0.0.1:${{PORT}}/"
curl -fsS "$URL" | grep -q hello && echo "site up at $URL" || {{ echo "site down"; exit 1; }}
```
> → Live State: URL
"""


def test_approve_from_another_process_releases_a_gate_whose_verify_sets_what_its_act_reads(
    world: World,
) -> None:
    plan = _write(world, "A site behind a gate", GATED, "| URL | `—` |", _STOP_SERVERS)
    for attempt in range(2):
        r = world.director("apply", str(plan))
        assert r.returncode == 4, said(r)  # waits at §1's gate (no terminal)
        a = world.director("approve", str(plan), "1", "--yes")
        assert a.returncode == 0, said(a)
        r = world.director("apply", str(plan))
        assert r.returncode == 0, said(r)  # the receipt is for exactly what apply computes
        port = int((world.root / "work" / "site" / "port").read_text())
        assert answers(port, "hello")
        assert _kv(plan)["URL"] == f"`http://127.0.0.1:{port}/`"
        # plain bash runs the act first, never an observation: the act never saw the verify's PORT
        assert (world.root / "work" / "act-saw").read_text().split("\n")[attempt] == "act saw PORT=unset"
        if attempt == 0:
            import os

            os.kill(int((world.root / "work" / "site" / "pid").read_text()), signal.SIGKILL)
            assert not listening(port) or not answers(port, "hello", timeout=1)


PICKED = f"""\
## 1. Pick a port  🟢

```bash
mkdir -p "$WORK/site"
echo "<h1>hello</h1>" > "$WORK/site/index.html"
{FREE_PORT} > "$WORK/port"
```
```bash
# ✔ a port is picked
PORT="$(cat "$WORK/port" 2>/dev/null || true)"
[ -n "$PORT" ] && echo "port $PORT picked" || {{ echo "no port"; exit 1; }}
```

## 2. Serve on it  🔴

```bash
nohup python3 -m http.server "$PORT" --bind 127.0.0.1 --directory "$WORK/site" > "$WORK/server.log" 2>&1 < /dev/null &
echo $! > "$WORK/pid"
for i in $(seq 600); do curl -fsS "http://127.0.0.1:$PORT/" >/dev/null 2>&1 && break; sleep 0.1; done
```
```bash
# ✔ the site answers on the picked port
curl -fsS "http://127.0.0.1:$PORT/" | grep -q hello && echo "site up on $PORT" || {{ echo "site down"; exit 1; }}
```
"""


def test_approve_hashes_what_an_in_sync_section_before_the_gate_handed_on(world: World) -> None:
    plan = _write(world, "A site on a picked port", PICKED, "| PORT | `—` |", _STOP_SERVERS)
    r = world.director("apply", str(plan), "--approve", "2")
    assert r.returncode == 0, said(r)
    port = int((world.root / "work" / "port").read_text())
    assert answers(port, "hello")
    import os

    os.kill(int((world.root / "work" / "pid").read_text()), signal.SIGKILL)
    r = world.director("apply", str(plan))
    assert r.returncode == 4 and _verdict(r.stdout, 1) == "in sync", said(r)  # §1 adopted PORT, §2 waits
    assert world.director("approve", str(plan), "2", "--yes").returncode == 0
    r = world.director("apply", str(plan))
    assert r.returncode == 0, said(r)
    assert answers(port, "hello")


# ------------------------------------------------------ a later verify's IFS, on a resumed run

REPLICAS = f"""\
## 1. Two replicas  🟢

```bash
mkdir -p "$WORK/a" "$WORK/b"
echo "replica a" > "$WORK/a/index.html"
echo "replica b" > "$WORK/b/index.html"
{serve("$WORK/a", "PORT_A")}{serve("$WORK/b", "PORT_B")}echo "$PORT_A $PORT_B" > "$WORK/ports"
echo started >> "$WORK/replica-starts"
```
```bash
# ✔ both replicas answer
read -ra PORTS < "$WORK/ports"
[ "${{#PORTS[@]}}" -eq 2 ] || {{ echo "expected 2 ports, read ${{#PORTS[@]}}"; exit 1; }}
for p in "${{PORTS[@]}}"; do
  curl -fsS "http://127.0.0.1:$p/" >/dev/null || {{ echo "replica on $p down"; exit 1; }}
done
echo "both replicas answer"
```

## 2. Hosts file  🟢

```bash
printf '%s\\n' "replica a" "replica b" > "$WORK/hosts"
```
```bash
# ✔ two hosts listed
IFS=$'\\n'
names=($(cat "$WORK/hosts"))
[ "${{#names[@]}}" -eq 2 ] && echo "2 hosts listed" || {{ echo "hosts broken: ${{#names[@]}}"; exit 1; }}
```

## 3. Announce  🟢

```bash
{KILL_DIRECTOR_ONCE.format(m="killed-in-3")}
echo announced > "$WORK/announced"
```
```bash
# ✔ announced
[ -f "$WORK/announced" ] && echo "announced" || {{ echo "not announced"; exit 1; }}
```
"""


def test_a_later_verify_s_ifs_never_reaches_an_earlier_section_s_check_on_resume(world: World) -> None:
    plan = _write(world, "Two replicas", REPLICAS, "| PORTS | `—` |", _STOP_SERVERS)
    r = world.director("apply", str(plan))
    assert r.returncode == -signal.SIGKILL, said(r)  # Director died in §3's act
    r = world.director("apply", str(plan))
    assert r.returncode == 0, said(r)
    # §1 was observed in the session document order has before it: in sync, its act never ran again
    assert (world.root / "work" / "replica-starts").read_text().split() == ["started"]
    assert _verdict(r.stdout, 1) == "in sync", r.stdout
    a, b = (world.root / "work" / "ports").read_text().split()
    assert answers(int(a), "replica a") and answers(int(b), "replica b")


# ---------------------------------------------- a verify that sets a secret-named variable itself

SECRET = f"""\
## 1. Database credentials  🟢

```bash
umask 077
python3 -c 'import secrets; print(secrets.token_hex(16))' > "$WORK/db-password"
```
```bash
# ✔ a password is set
DB_PASSWORD="$(cat "$WORK/db-password")"
[ "${{#DB_PASSWORD}}" -eq 32 ] && echo "password set" || {{ echo "no password"; exit 1; }}
```

## 2. App  🟢

```bash
{KILL_DIRECTOR_ONCE.format(m="killed-in-2")}
echo ready > "$WORK/app"
```
```bash
# ✔ the app is ready
[ -f "$WORK/app" ] && echo "app ready" || {{ echo "app missing"; exit 1; }}
```
"""


def test_a_verify_that_sets_its_own_secret_is_not_refused_on_resume(world: World) -> None:
    plan = _write(world, "Credentials", SECRET, "| APP | `—` |", _STOP_SERVERS)
    r = world.director("apply", str(plan))
    assert r.returncode == -signal.SIGKILL, said(r)  # Director died in §2's act
    password = (world.root / "work" / "db-password").read_text().strip()
    r = world.director("apply", str(plan))
    assert r.returncode == 0, said(r)
    assert "previous process" not in said(r)
    assert (world.root / "work" / "app").read_text() == "ready\n"
    assert (world.root / "work" / "db-password").read_text().strip() == password  # §1 never re-ran
    assert password not in plan.read_text() and password not in said(r)


# ------------------------------------------- a pushd in one section, its popd in a later one, as in one script

CHECKOUT = """\
## 1. Enter the release checkout  🟡

```bash
mkdir -p "$WORK/release"
pushd "$WORK/release" >/dev/null
```
```bash
# ✔ the checkout is there
[ -d "$WORK/release" ] && echo "checkout there" || { echo "no checkout"; exit 1; }
```

## 2. Build the artifact  🟢

```bash
echo "built" > artifact
```
```bash
# ✔ the artifact is built
[ -s "$WORK/release/artifact" ] && echo "artifact built" || { echo "no artifact"; exit 1; }
```

## 3. Back to where the plan started  🟡

```bash
popd >/dev/null
```
```bash
# ✔ out of the checkout
[ "$PWD" != "$WORK/release" ] && echo "left the checkout" || { echo "still in the checkout"; exit 1; }
```
"""


def test_a_pushd_in_one_section_pops_in_a_later_one_in_this_run_and_when_it_is_in_sync(world: World) -> None:
    """As in one bash script, `popd` in §3 returns from the `pushd` of §1 -- in the run that pushed, and in a
    later run where §1 is in sync (its change to the session, the directory stack with it, replayed)."""
    plan = _write(world, "A release build", CHECKOUT, "", _STOP_SERVERS)
    r = world.director("apply", str(plan))
    assert r.returncode == 0, said(r)
    assert (world.root / "work" / "release" / "artifact").read_text() == "built\n"
    r = world.director("apply", str(plan))
    verdicts = [_verdict(r.stdout, n) for n in (1, 2, 3)]
    assert r.returncode == 0 and verdicts == ["in sync", "in sync", "applied"], said(r)


# ------------------------------------------------- the umask a section set holds for the sections after it

PRIVATE = """\
## 1. Keep what the plan writes private  🟡

```bash
umask 077
touch "$WORK/private-mode-set"
```
```bash
# ✔ private mode is set up
[ -f "$WORK/private-mode-set" ] && echo "private mode set up" || { echo "not set up"; exit 1; }
```

## 2. Write the token file  🟢

```bash
echo "not-a-real-token" > "$WORK/token"
```
```bash
# ✔ the token file is there
[ -s "$WORK/token" ] && echo "token written" || { echo "no token"; exit 1; }
```
"""


def test_a_umask_a_section_set_holds_for_later_sections_in_this_run_and_when_it_is_in_sync(world: World) -> None:
    """As in one bash script, the files a later section makes get the umask an earlier one set -- in the run
    that set it, and in a later run where that section is in sync (its change to the session replayed)."""
    probe = world.root / "plain"
    probe.mkdir()
    script = 'umask 077\necho "not-a-real-token" > token\nstat -c %a token\n'
    plain = subprocess.run(["bash", "-c", script], cwd=probe, capture_output=True, text=True, check=True).stdout
    assert plain == "600\n"
    plan = _write(world, "A private token", PRIVATE, "", _STOP_SERVERS)
    token = world.root / "work" / "token"
    r = world.director("apply", str(plan))
    assert r.returncode == 0, said(r)
    assert f"{token.stat().st_mode & 0o777:o}\n" == plain
    token.unlink()
    r = world.director("apply", str(plan))
    assert r.returncode == 0 and _verdict(r.stdout, 1) == "in sync" and _verdict(r.stdout, 2) == "applied", said(r)
    assert f"{token.stat().st_mode & 0o777:o}\n" == plain


# ------------------------------------------- the open-files limit a section raised holds for the sections after it

LIMITS = """\
## 1. Let the load generator hold many connections  🟡

```bash
ulimit -S -n 512
touch "$WORK/limits-set"
```
```bash
# ✔ the limits are set up
[ -f "$WORK/limits-set" ] && echo "limits set up" || { echo "not set up"; exit 1; }
```

## 2. Record what the generator may open  🟢

```bash
bash -c 'ulimit -S -n' > "$WORK/nofile"
```
```bash
# ✔ the generator's limit is recorded
[ -s "$WORK/nofile" ] && echo "recorded $(cat "$WORK/nofile")" || { echo "nothing recorded"; exit 1; }
```
"""


def test_a_limit_a_section_set_holds_for_later_sections_in_this_run_and_when_it_is_in_sync(world: World) -> None:
    """As in one bash script, what a later section starts inherits the `ulimit` an earlier one set -- in the
    run that set it, and in a later run where that section is in sync (its change to the session replayed)."""
    script = 'ulimit -S -n 512\nbash -c "ulimit -S -n"\n'
    plain = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True).stdout
    assert plain == "512\n"
    plan = _write(world, "Many connections", LIMITS, "", _STOP_SERVERS)
    recorded = world.root / "work" / "nofile"
    r = world.director("apply", str(plan))
    assert r.returncode == 0, said(r)
    assert recorded.read_text() == plain
    recorded.unlink()
    r = world.director("apply", str(plan))
    assert r.returncode == 0 and _verdict(r.stdout, 1) == "in sync" and _verdict(r.stdout, 2) == "applied", said(r)
    assert recorded.read_text() == plain

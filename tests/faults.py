"""A randomized SIGKILL soak through the real CLI: the engine behind tests/test_soak.py and bench/soak.py.

A trial copies one of the soak plans into a fresh directory and runs `director apply` on it up to twice
with a SIGKILL landing at a random moment -- of Director itself or of the bash running the current block
-- then applies once more without interference. After every invocation and at the end, it checks:

  completes          the last apply exits 0 and Live State says `live`
  acts-once          an act the journal holds as finished is never started again
  plan-outside-ls    the plan's text outside `## Live State` is byte-identical to what was written
  live-state-parses  the plan parses and still has its Live State (after every invocation, killed or not)
  journal-sound      the journal passes `PRAGMA integrity_check`
  no-traceback       no invocation printed a traceback or exited with an undocumented code
  no-temp-file       no `*.director-tmp` anywhere under the plan's directory (plan, state, workspace)
  no-secret          neither the environment's secret nor a secret a block minted appears in any file under
                     the state directory, the workspace, the temp directory or in the plan
  no-shell-temp      nothing left in the trial's temp directory (TMPDIR) once the last apply ended
  no-secret-shell    the same as no-secret, inside the shell's own temp directories (`director-shell-*`)

The last two guard the shell (issue 14 point 1): the session travels through pipes, never a file.
Every process a trial starts carries `SOAK_TRIAL=<id>` in its environment; whatever survives the trial
(an orphaned block) is killed by that mark, never by name.

With `teardown=True` (issue 27) each trial ends with `director teardown`, and three more invariants hold:

  orphan-stopped     the server a killed attempt of the "server" plan's act left running (its pid file,
                     read right after the kill) no longer runs once the next apply has run the act again
  tears-down         the teardown exits 0 and Live State says `gone`
  no-process-left    no process carrying the trial's mark is alive after the teardown (read in /proc,
                     zombies aside): nothing the plan started outlived it

In trials of the "server" plan the first kill is aimed inside the act that starts the server: it lands
once the server answers, during the act's last two seconds.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import secrets
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from director.errors import ExitCode, PlanError
from director.plan.parse import parse
from tests import forkserver

ROOT = Path(__file__).resolve().parent.parent

INVARIANTS = (
    "completes",
    "acts-once",
    "plan-outside-ls",
    "live-state-parses",
    "journal-sound",
    "no-traceback",
    "no-temp-file",
    "no-secret",
    "no-shell-temp",
    "no-secret-shell",
)

_PROMPT = """\
## 🤖 Director prompt

You are the Director. Execute this plan:
- Observe-before-act; verify each step before advancing (verified frontier)
- Stop at every 🔴 GATE and 💥 for human "go"

```
Legend  🟢 create · 🟡 config · 🔴 GATE (human go) · 💥 destructive (human go) · ⏳ wait · ✔ verify
```
"""


def _act(key: str, body: str, sleep: str) -> str:
    """An act block that logs its start and end in $OUT/acts and sleeps in between (kills land inside)."""
    return f'```bash\necho "start:{key}" >> "$OUT/acts"\n{body}\nsleep {sleep}\necho "end:{key}" >> "$OUT/acts"\n```\n'


def _mint(name: str, where: str) -> str:
    """A block body that mints a secret, keeps it (outside everything checked) and prints it."""
    return (
        f'export {name}="pw-$(od -An -N12 -tx1 /dev/urandom | tr -d " \\n")"; echo "${name}" >> "$OUT/minted"; '
        f'printf "%s" "${name}" | sha256sum | cut -c1-16 > "{where}"; echo "minted ${name}"'
    )


_MINT_LINK = _act("3", _mint("LINK_PASSWORD", "$LINKS/minted"), "0.2")
_MINT_CRED = _act("3", _mint("DB_PASSWORD", "$APP/cred"), "0.4")

# Plan "chain": five 🟢 sections; §2 uses the environment's secret (and prints it), §3 mints one.
CHAIN = f"""\
# Chain — a plan for Director's fault-injection soak

> Self-executing Markdown: every act block logs to `$OUT/acts`; nothing here touches anything outside.

{_PROMPT}
## Intent

**Acceptance contract:**
1. **Chain complete** — every link exists.

## Provisioning Inputs

| # | Question | Options (closed enum) | Default | Sets | Gates |
|---|----------|-----------------------|---------|------|-------|
| 1 | Size | `small` / `large` | `small` | `SIZE` | the links' content |

## 0. Variables

```bash
export SIZE="small"
export OUT="${{SOAK_OUT:?}}"
export LINKS="$PWD/links"
```

## 1. Links directory  🟢

{_act("1", 'mkdir -p "$LINKS"', "0.2")}
```bash
# ✔ links directory present
[ -d "$LINKS" ] && echo "links directory present" || {{ echo "no links directory"; exit 1; }}
```

## 2. Token link  🟢

{_act("2", 'printf "%s" "$API_TOKEN" | sha256sum | cut -c1-16 > "$LINKS/token"; echo "using token $API_TOKEN"', "0.3")}
```bash
# ✔ token link present
[ -s "$LINKS/token" ] && echo "token link present" || {{ echo "no token link"; exit 1; }}
```
> → Live State: TOKEN_SUM

## 3. Minted link  🟢

{_MINT_LINK}
```bash
# ✔ minted link present
[ -s "$LINKS/minted" ] && echo "minted link present" || {{ echo "no minted link"; exit 1; }}
```

## 4. Size link  🟢

{_act("4", 'echo "$SIZE" > "$LINKS/size"; export SIZE_LINK="$LINKS/size"', "0.4")}
```bash
# ✔ size link present
[ -s "$LINKS/size" ] && echo "size link present" || {{ echo "no size link"; exit 1; }}
```
> → Live State: SIZE_LINK

## 5. Last link  🟢

{_act("5", 'date +%s > "$LINKS/last"', "0.1")}
```bash
# ✔ last link present
[ -s "$LINKS/last" ] && echo "last link present" || {{ echo "no last link"; exit 1; }}
```

## 6. Acceptance  ✔

```bash
[ "$(ls "$LINKS" | wc -l)" -ge 4 ] && echo "1: chain complete" || {{ echo "1: chain broken"; exit 1; }}
```

## Live State

```yaml
status:        not-created      # template
last_action:   —
last_verified: —
resolved_inputs: {{ size: small }}
```

| key       | value (filled on apply) |
|-----------|-------------------------|
| SIZE_LINK | `$PWD/links/size` |
| TOKEN_SUM | — |

| ✔ check             | expected   | observed | result |
|---------------------|------------|----------|--------|
| chain complete      | five links | —        | —      |

## Teardown (observe-first, resumable)  💥

```bash
rm -rf "$LINKS"
```
```bash
# ✔ links gone
[ ! -e "$LINKS" ] && echo "links gone" || {{ echo "links still there"; exit 1; }}
```
"""

# Plan "gated": a regenerated file template, a 🔴 gate that mints a secret, a block reading the env secret.
GATED = f"""\
# Gated — a plan for Director's fault-injection soak

> Self-executing Markdown: a settings file regenerated from the knobs, a gated credential, a token user.

{_PROMPT}
## Intent

**Acceptance contract:**
1. **Configured** — the settings file says the mode.

## Provisioning Inputs

| # | Question | Options (closed enum) | Default | Sets | Gates |
|---|----------|-----------------------|---------|------|-------|
| 1 | Mode | `fast` / `safe` | `fast` | `MODE` | `mode` in `app.yaml` |

## 0. Variables

```bash
export MODE="fast"
export OUT="${{SOAK_OUT:?}}"
export APP="$PWD/app"
export CONF="$APP/app.yaml"
```

## 1. App directory  🟢

{_act("1", 'mkdir -p "$APP"', "0.3")}
```bash
# ✔ app directory present
[ -d "$APP" ] && echo "app directory present" || {{ echo "no app directory"; exit 1; }}
```

## 2. Settings — `${{APP}}/app.yaml`  🟡

```yaml
# app.yaml — regenerated from the knobs
name: gated
mode: fast      # = ${{MODE}}
```
```bash
# ✔ settings written
grep -q "^mode: $MODE" "$CONF" && echo "settings written" || {{ echo "settings wrong"; exit 1; }}
```

## 3. Credentials  🔴

{_MINT_CRED}
```bash
# ✔ credentials present
[ -s "$APP/cred" ] && echo "credentials present" || {{ echo "no credentials"; exit 1; }}
```

## 4. Token user  🟢

{_act("4", 'printf "%s" "$API_TOKEN" | sha256sum | cut -c1-16 > "$APP/token"; echo "token: $API_TOKEN"', "0.3")}
```bash
# ✔ token in use
[ -s "$APP/token" ] && echo "token in use" || {{ echo "no token"; exit 1; }}
```

## 5. Acceptance  ✔

```bash
grep -q "^mode: $MODE" "$CONF" && echo "1: configured" || {{ echo "1: not configured"; exit 1; }}
```

## Live State

```yaml
status:        not-created
last_action:   —
last_verified: —
resolved_inputs: {{ mode: fast }}
```

| key  | value (filled on apply) |
|------|-------------------------|
| CONF | `$PWD/app/app.yaml` |

| ✔ check    | expected             | observed | result |
|------------|----------------------|----------|--------|
| configured | the mode in app.yaml | —        | —      |

## Teardown (observe-first, resumable)  💥

```bash
rm -rf "$APP"
```
```bash
# ✔ app gone
[ ! -e "$APP" ] && echo "app gone" || {{ echo "app still there"; exit 1; }}
```
"""

# Plan "server" (issue 27): §2's act starts a server with `setsid … &` on a fixed port and records its pid
# in a file; the teardown stops the recorded one. An attempt killed after the server started leaves it
# running: unless Director stops it before the act runs again, the next server cannot bind the port (the
# verify checks the recorded pid), and the teardown leaves the first one behind.
SERVER = f"""\
# Server — a plan for Director's fault-injection soak

> Self-executing Markdown: a local HTTP server started in the background, stopped by the teardown.

{_PROMPT}
## Intent

**Acceptance contract:**
1. **Serving** — the recorded server answers on its port.

## 0. Variables

```bash
export OUT="${{SOAK_OUT:?}}"
export PORT="${{SOAK_PORT:?}}"
export PY="${{SOAK_PYTHON:-python3}}"
export RUN="$PWD/run"
```

## 1. Run directory  🟢

{_act("1", 'mkdir -p "$RUN"', "0.1")}
```bash
# ✔ run directory present
[ -d "$RUN" ] && echo "run directory present" || {{ echo "no run directory"; exit 1; }}
```

## 2. Server  🟢

```bash
echo "start:2" >> "$OUT/acts"
setsid "$PY" -m http.server "$PORT" --bind 127.0.0.1 >"$RUN/server.log" 2>&1 </dev/null &
echo "$!" > "$RUN/server.pid"
for _ in $(seq 1 400); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.05; done
touch "$OUT/server-started"
sleep 2
echo "end:2" >> "$OUT/acts"
```
```bash
# ✔ the recorded server answers
if kill -0 "$(cat "$RUN/server.pid")" 2>/dev/null && (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
  echo "the recorded server answers"
else
  echo "the recorded server is down"; exit 1
fi
```

## 3. Acceptance  ✔

```bash
(exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && echo "1: serving" || {{ echo "1: not serving"; exit 1; }}
```

## Live State

```yaml
status:        not-created
last_action:   —
last_verified: —
```

| ✔ check | expected              | observed | result |
|---------|-----------------------|----------|--------|
| serving | the server answers    | —        | —      |

## Teardown (observe-first, resumable)  💥

```bash
pid="$(cat "$RUN/server.pid" 2>/dev/null)"
if [ -n "$pid" ] && kill "$pid" 2>/dev/null; then
  for _ in $(seq 1 400); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
fi
rm -rf "$RUN"
```
```bash
# ✔ server gone
if [ ! -e "$RUN" ] && ! (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
  echo "server gone"
else
  echo "server still there"; exit 1
fi
```
"""

PLANS: dict[str, tuple[str, tuple[str, ...]]] = {
    "chain": (CHAIN, ()),
    "gated": (GATED, ("--auto-approve",)),
    "server": (SERVER, ()),
}
# The soak's plans before issue 27 (tests/test_soak.py keeps to them; "server" has its own test).
SOAK_PLANS = ("chain", "gated")
TEARDOWN_INVARIANTS = ("orphan-stopped", "tears-down", "no-process-left")

# Exit codes an uninterrupted invocation may end with here (a killed block fails its act: 3).
_EXPECTED = {int(ExitCode.OK), int(ExitCode.STEP_FAILED)}
_DOCUMENTED = {int(c) for c in ExitCode}


@dataclass
class TrialResult:
    """What one trial did and which invariants it broke (invariant -> what was seen)."""

    plan: str
    kinds: tuple[str, ...]  # what each kill aimed at: "director" or "bash"
    landed: list[str] = field(default_factory=list)  # the kills that hit a live process
    invocations: int = 0
    seconds: float = 0.0
    orphans: list[int] = field(default_factory=list)  # servers a kill inside the "server" act left running
    violations: dict[str, list[str]] = field(default_factory=dict)

    def violate(self, invariant: str, what: str) -> None:
        self.violations.setdefault(invariant, []).append(what)


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def _comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def block_bash(director_pid: int) -> int | None:
    """The bash running the current block: the subshell the session's bash (Director's bash child) forked
    for it; the session's bash itself between blocks."""
    for child in _children(director_pid):
        if _comm(child) == "bash":
            inner = [g for g in _children(child) if _comm(g) == "bash"]
            return inner[-1] if inner else child
    return None


def _environ(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "X"


def marked_alive(mark: str) -> list[str]:
    """`pid (comm)` of every live process (zombies aside) whose environment carries SOAK_TRIAL=<mark>."""
    needle = f"SOAK_TRIAL={mark}\0"
    found = []
    for entry in os.listdir("/proc"):
        pid = int(entry) if entry.isdigit() else 0
        if pid and pid != os.getpid() and needle in _environ(pid) and _state(pid) not in ("Z", "X"):
            found.append(f"{entry} ({_comm(pid)})")
    return found


def kill_marked(mark: str) -> int:
    """SIGKILL every process whose environment carries SOAK_TRIAL=<mark> (what a trial left running)."""
    needle = f"SOAK_TRIAL={mark}\0"
    killed = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        if needle in _environ(int(entry)):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(entry), signal.SIGKILL)
                killed += 1
    return killed


def finished_acts(db_path: Path) -> set[str]:
    """Sections whose act step the journal holds as succeeded (none while the journal has no schema)."""
    if not db_path.exists():
        return set()
    try:
        db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    except sqlite3.Error:
        return set()
    try:
        rows = db.execute("SELECT step_key FROM steps WHERE role = 'act' AND state = 'succeeded'").fetchall()
    except sqlite3.Error:
        return set()  # killed while the journal was being created: no tables yet, so nothing finished
    finally:
        db.close()
    return {r[0].split("/")[0] for r in rows}


def _integrity(db_path: Path) -> str:
    if not db_path.exists():
        return "ok"
    db = sqlite3.connect(db_path)
    try:
        return str(db.execute("PRAGMA integrity_check").fetchone()[0])
    except sqlite3.Error as e:
        return f"error: {e}"
    finally:
        db.close()


def outside_live_state(text: str) -> tuple[str, str]:
    """The plan text before and after its `## Live State` section."""
    plan = parse(text)
    assert plan.live_state is not None
    lines = text.splitlines(keepends=True)
    span = plan.live_state.span
    return "".join(lines[: span.start]), "".join(lines[span.end :])


def _files(*roots: Path) -> Iterable[Path]:
    for root in roots:
        if root.is_file():
            yield root
        elif root.is_dir():
            yield from (p for p in root.rglob("*") if p.is_file() and not p.is_symlink())


def _secret_hits(values: list[str], roots: Iterable[Path]) -> list[str]:
    needles = [v.encode() for v in values if v]
    hits: list[str] = []
    for path in _files(*roots):
        try:
            data = path.read_bytes()
        except OSError:
            continue
        hits.extend(f"{path}" for n in needles if n in data)
    return sorted(set(hits))


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_trial(
    base: Path, plan_name: str, kinds: tuple[str, ...], rng: random.Random, *, teardown: bool = False
) -> TrialResult:
    """One trial in `base` (created, left for the caller to remove): kills, then a clean apply, then checks;
    with `teardown`, a teardown and what it must leave."""
    started = time.monotonic()
    text, extra = PLANS[plan_name]
    result = TrialResult(plan_name, kinds)
    plan_dir, out, tmp = base / "plans", base / "out", base / "tmp"
    for d in (plan_dir, out, tmp):
        d.mkdir(parents=True)
    plan = plan_dir / f"{plan_name}.md"
    plan.write_bytes(text.encode())
    state = plan_dir / ".director" / plan.name
    db = state / "journal.sqlite3"
    before, after = outside_live_state(text)
    mark = secrets.token_hex(8)
    token = "tok-" + secrets.token_hex(16)
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    env.update({"SOAK_OUT": str(out), "API_TOKEN": token, "TMPDIR": str(tmp), "SOAK_TRIAL": mark, "CI": "1"})
    env["NO_COLOR"] = "1"
    env.update({"SOAK_PORT": str(_free_port()), "SOAK_PYTHON": sys.executable})
    argv = [sys.executable, "-m", "director", "apply", str(plan), "--max-recoveries", "1000", *extra]
    acts = set(re.findall(r'echo "start:(\w+)"', text))
    pid_file = state / "workspace" / "run" / "server.pid"
    orphans = result.orphans  # servers a killed attempt left (the "server" plan)

    def invoke(kill: str | None, aim: Path | None = None) -> int | None:
        finished = finished_acts(db)
        seen = len(_acts(out))
        proc = forkserver.Popen(
            argv, cwd=base, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        result.invocations += 1
        if kill is not None:
            _kill(proc, kill, rng, result, out, seen, len(acts - finished), aim)
            log = _acts(out)
            if aim is not None and "start:2" in log and "end:2" not in log[len(log) - log[::-1].index("start:2") :]:
                # The kill landed inside the act (it never logged its end): the server it started is left.
                proc.wait(timeout=180)  # Director itself, or (a killed block) after it failed the act
                with contextlib.suppress(OSError, ValueError):
                    orphan = int(pid_file.read_text().split()[0])
                    if _state(orphan) not in ("Z", "X"):
                        orphans.append(orphan)
        try:
            _, err = proc.communicate(timeout=180)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
            result.violate("completes", f"an apply ran over 180 s: {err[-300:]}")
        rc = proc.returncode
        again = [a for a in _acts(out)[seen:] if a.startswith("start:") and a[6:] in finished]
        if again:
            result.violate(
                "acts-once", f"finished act(s) started again: {again} (finished: {sorted(finished)})"
            )
        if "Traceback" in err or (rc >= 0 and rc not in _DOCUMENTED):
            result.violate("no-traceback", f"exit {rc}: {err[-500:]}")
        elif rc >= 0 and rc not in _EXPECTED:
            result.violate("completes", f"exit {rc}: {err[-300:]}")
        _check_plan(plan, before, after, result)
        if (msg := _integrity(db)) != "ok":
            result.violate("journal-sound", msg)
        return rc

    try:
        for n, kind in enumerate(kinds):
            aimed = plan_name == "server" and n == 0
            invoke(kind, out / "server-started" if aimed else None)
        rc = invoke(None)
        if rc != 0:
            result.violate("completes", f"the apply after the kills exited {rc}")
        else:
            ls = parse(plan.read_text(encoding="utf-8")).live_state
            if ls is None or ls.data.get("status") != "live":
                result.violate("completes", f"Live State status {ls and ls.data.get('status')!r}")
        for orphan in orphans:
            if _state(orphan) not in ("Z", "X"):
                result.violate("orphan-stopped", f"pid {orphan} ({_comm(orphan)}) still runs")
        if teardown:
            _teardown(plan, base, env, result)
            if left := marked_alive(mark):
                result.violate("no-process-left", ", ".join(left))
    finally:
        kill_marked(mark)
    temps = [str(p) for p in plan_dir.rglob("*.director-tmp")]
    if temps:
        result.violate("no-temp-file", ", ".join(temps))
    left = sorted(p.name for p in tmp.iterdir())
    if left:
        result.violate("no-shell-temp", ", ".join(left))
    minted = (out / "minted").read_text().split() if (out / "minted").exists() else []
    values = [token, *minted]
    shell_dirs = [p for p in tmp.iterdir() if p.name.startswith("director-shell-")]
    others = [p for p in tmp.iterdir() if p not in shell_dirs]
    if hits := _secret_hits(values, [state, plan, *others]):
        result.violate("no-secret", ", ".join(hits))
    if hits := _secret_hits(values, shell_dirs):
        result.violate("no-secret-shell", ", ".join(hits))
    result.seconds = time.monotonic() - started
    return result


def _teardown(plan: Path, base: Path, env: dict[str, str], result: TrialResult) -> None:
    result.invocations += 1
    r = forkserver.run(
        [sys.executable, "-m", "director", "teardown", str(plan), "--approve", "teardown"],
        cwd=base, env=env, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    if "Traceback" in r.stderr:
        result.violate("no-traceback", f"teardown: {r.stderr[-500:]}")
    ls = parse(plan.read_text(encoding="utf-8")).live_state
    status = ls.data.get("status") if ls is not None else None
    if r.returncode != 0 or status != "gone":
        result.violate("tears-down", f"exit {r.returncode}, Live State {status!r}: {r.stdout[-300:]}")


def _acts(out: Path) -> list[str]:
    p = out / "acts"
    return p.read_text().split() if p.exists() else []


def _check_plan(plan: Path, before: str, after: str, result: TrialResult) -> None:
    text = plan.read_bytes().decode("utf-8")
    try:
        now = outside_live_state(text)
    except (PlanError, AssertionError) as e:
        result.violate("live-state-parses", f"{e}")
        return
    if now != (before, after):
        result.violate("plan-outside-ls", "the text outside Live State changed")


def _kill(
    proc: subprocess.Popen[str],
    kind: str,
    rng: random.Random,
    result: TrialResult,
    out: Path,
    seen: int,
    remaining: int,
    aim: Path | None = None,
) -> None:
    """SIGKILL Director, or the bash of the block it runs, at a random point of this invocation's progress:
    once the n-th of the acts it still has to run has started (n = 0: from its start), then up to 0.5 s on
    (into that act's sleep, its verify, the next section). Picked by progress, not by the clock, so that a
    kill lands as often on a loaded machine as on a quiet one, and on a resumed apply (less left to do).
    With `aim`: once that file exists (the act it names is in its last second), then up to 0.5 s on."""
    n = rng.randrange(remaining + 1) if remaining else 0
    deadline = time.monotonic() + 120
    while aim is not None and not aim.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    while aim is None and n and proc.poll() is None and time.monotonic() < deadline:
        if sum(a.startswith("start:") for a in _acts(out)[seen:]) >= n:
            break
        time.sleep(0.01)
    time.sleep(rng.uniform(0.0, 0.5) if aim is not None else rng.uniform(0.05, 0.5))
    if kind == "director":
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            result.landed.append(kind)
        return
    deadline = time.monotonic() + 10
    while proc.poll() is None and time.monotonic() < deadline:
        pid = block_bash(proc.pid)
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
                result.landed.append(kind)
            return
        time.sleep(0.01)


def trial_kinds(rng: random.Random) -> tuple[str, ...]:
    """One or two kills, each of Director or of the block's bash."""
    return tuple(rng.choice(("director", "bash")) for _ in range(rng.choice((1, 2))))


def soak(
    root: Path,
    trials: int,
    seed: int,
    plans: Iterable[str] = SOAK_PLANS,
    *,
    teardown: bool = False,
    keep: Path | None = None,
    progress: Callable[[int, TrialResult], None] | None = None,
) -> list[TrialResult]:
    """`trials` trials, round-robin over `plans`, each in its own directory under `root` (removed after;
    with `keep`, a trial that broke an invariant outside the shell's is moved there for a post-mortem)."""
    rng = random.Random(seed)
    names = list(plans)
    results = []
    for i in range(trials):
        base = root / f"t{i:04d}"
        try:
            r = run_trial(base, names[i % len(names)], trial_kinds(rng), rng, teardown=teardown)
            results.append(r)
            if keep is not None and r.violations:
                shutil.move(str(base), str(keep / base.name))
            if progress is not None:
                progress(i, r)
        finally:
            shutil.rmtree(base, ignore_errors=True)
    return results

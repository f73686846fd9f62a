"""Secrets end to end through the real CLI: known values never reach the plan, the journal, the audit or the screen.

The operator's `CLOUDFLARE_API_TOKEN` and a `--secret DB_PASS` are set to known values; the plan's blocks
echo them, mint a secret-named variable of their own (`export API_TOKEN=…`, computed inside a block so the
value is not in the plan text) and echo it in a later block. Then every byte Director wrote or printed is
searched for each value: the plan file, every file under the state directory (journal, `-wal`, `-shm`,
lease), a copy of the journal files taken while Director still had them open, `audit --json/--jsonl`,
`status --json`, the `--events` file, and stdout/stderr of every command (piped and under a terminal).
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pytest

from tests import forkserver
from tests.jsonschemas import validated
from tests.planmaker import director

# slow: end to end through the real CLI, many runs; CI runs it with the rest
pytestmark = pytest.mark.slow

CF_TOKEN = "cfTok-9f8e7d6c5b4a3210"
DB_PASS = "hunter2-Zq8xPw-77"

PLAN = """\
# Secrets — a plan that handles credentials

> Self-executing Markdown for tests: the blocks print credentials; Director must mask them everywhere.

## 🤖 Director prompt

You are the Director. Execute this plan:
- Observe-before-act; verify each step before advancing (verified frontier)
- Stop at every 🔴 GATE and 💥 for human "go"

```
Legend  🟢 create · 🟡 config · 🔴 GATE (human go) · 💥 destructive (human go) · ⏳ wait · ✔ verify
```

## Intent

**Acceptance contract:**
1. **Token minted** — the plan minted its own API token and used it.

## 0. Variables

```bash
export OUT="${COUNTER_OUT:-$PWD/out}"
export NAME="creds"
mkdir -p "$OUT"
```

## 1. Credentials  🟢

```bash
echo "s1" >> "$OUT/acts"
echo "cloudflare token: $CLOUDFLARE_API_TOKEN"
echo "db pass: $DB_PASS" >&2
export API_TOKEN="tok-$(printf '%s' "$OUT" | sha256sum | cut -c1-24)"
touch "$OUT/s1"
```
```bash
# ✔ credentials in place
[ -f "$OUT/s1" ] && echo "s1 ok for $DB_PASS" || { echo "s1 missing"; exit 1; }
```
{section1_hint}
## 2. Use  🟢

```bash
echo "s2" >> "$OUT/acts"
echo "using $API_TOKEN with $CLOUDFLARE_API_TOKEN"
printf 'header: Authorization: Bearer %s\\n' "$API_TOKEN"
mkdir -p "$OUT/snap" && cp "$SNAP_FROM"/journal.sqlite3* "$OUT/snap/"
{section2_extra}
touch "$OUT/s2"
```
```bash
# ✔ token used
[ -f "$OUT/s2" ] && echo "used $API_TOKEN" || { echo "s2 missing"; exit 1; }
```

## 3. Acceptance  ✔

```bash
[ -n "$API_TOKEN" ] && echo "1: token minted: $API_TOKEN" || { echo "1: no token"; exit 1; }
```

## Live State

```yaml
status:        not-created      # template
last_action:   —
last_verified: —
```

| key   | value (filled on apply) |
|-------|-------------------------|
| NAME  | `${NAME}` |
{kv_rows}

| ✔ check              | expected        | observed | result |
|----------------------|-----------------|----------|--------|
| token minted         | a token exists  | —        | —      |
| credentials in place | s1 ok           | —        | —      |
| token used           | used            | —        | —      |

## Teardown (observe-first, resumable)  💥

```bash
echo "tearing down with $DB_PASS and $CLOUDFLARE_API_TOKEN"
rm -f "$OUT/s1" "$OUT/s2"
```
```bash
# ✔ verify teardown — nothing left
[ ! -e "$OUT/s1" ] && [ ! -e "$OUT/s2" ] && echo "gone" || { echo "still there"; exit 1; }
```
"""


def minted(out: Path) -> str:
    """The API_TOKEN value the plan computes inside §1 (never written in the plan text)."""
    return "tok-" + hashlib.sha256(str(out).encode()).hexdigest()[:24]


class Setup:
    """A temp dir with the plan, its output dir, and the environment every command runs with."""

    def __init__(
        self, tmp: Path, *, section1_hint: str = "", section2_extra: str = "", kv_rows: str = ""
    ) -> None:
        self.tmp = tmp
        self.out = tmp / "out"
        self.out.mkdir()
        self.plan = tmp / "secrets.md"
        self.plan.write_text(
            PLAN.replace("{section1_hint}", section1_hint)
            .replace("{section2_extra}", section2_extra)
            .replace("{kv_rows}", kv_rows),
            encoding="utf-8",
        )
        self.state = tmp / ".director" / self.plan.name
        self.events = tmp / "events.jsonl"
        self.env = {
            "CLOUDFLARE_API_TOKEN": CF_TOKEN,
            "DB_PASS": DB_PASS,
            "SNAP_FROM": str(self.state),
        }
        self.captured: list[tuple[str, str]] = []
        self.values = {
            "CLOUDFLARE_API_TOKEN": CF_TOKEN,
            "--secret DB_PASS": DB_PASS,
            "API_TOKEN": minted(self.out),
        }
        assert minted(self.out) not in self.plan.read_text(), "the minted value must not be in the plan text"

    def run(self, *args: str) -> int:
        r = director(*args, cwd=self.tmp, out=self.out, env=self.env, timeout=60)
        self.captured.append((f"`director {' '.join(args[:1])}` stdout", r.stdout))
        self.captured.append((f"`director {' '.join(args[:1])}` stderr", r.stderr))
        return r.returncode

    def run_capture(self, *args: str) -> str:
        r = director(*args, cwd=self.tmp, out=self.out, env=self.env, timeout=60)
        assert r.returncode == 0, r.stdout + r.stderr
        self.captured.append((f"`director {' '.join(args)}`", r.stdout + r.stderr))
        return r.stdout

    def leaks(self, *, files: bool = True, outputs: bool = True, audit: bool = True) -> list[str]:
        """Where any secret value occurs (bytes of files, text of outputs)."""
        places: list[tuple[str, bytes]] = []
        if files:
            places.append(("the plan file", self.plan.read_bytes()))
            roots = [self.state, self.out / "snap"]
            for root in roots:
                for p in sorted(root.rglob("*")) if root.exists() else []:
                    if p.is_file():
                        places.append((str(p.relative_to(self.tmp)), p.read_bytes()))
            if self.events.exists():
                places.append(("the --events file", self.events.read_bytes()))
        if audit:
            for args in (("audit", "--json"), ("audit", "--jsonl"), ("status", "--json")):
                text = self.run_capture(args[0], str(self.plan), *args[1:])
                places.append((f"`director {' '.join(args)}`", text.encode()))
        if outputs:
            places += [(where, text.encode()) for where, text in self.captured]
        return [
            f"{name} in {where}"
            for where, data in places
            for name, value in self.values.items()
            if value.encode() in data
        ]


def test_secret_values_never_reach_plan_journal_audit_or_screen(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    assert s.run("apply", str(s.plan), "--secret", "DB_PASS", "--events", str(s.events)) == 0, s.captured
    # the blocks really saw the values (the masks stand where the values were printed)
    apply_out = s.captured[0][1]
    assert "cloudflare token: ***" in apply_out and "db pass: ***" in apply_out
    assert "using *** with ***" in apply_out and "Bearer ***" in apply_out
    assert sorted(p.name for p in (s.out / "snap").iterdir())[0] == "journal.sqlite3"
    text = s.plan.read_text()
    assert "| s1 ok for *** |" in text and "1: token minted: ***" in text
    assert s.run("teardown", str(s.plan), "--secret", "DB_PASS", "--approve", "teardown") == 0, s.captured
    assert "tearing down with *** and ***" in s.captured[-2][1]
    assert s.leaks() == []
    # the journal was written: the search looked at real data, not an empty database
    audit = validated(s.run_capture("audit", str(s.plan), "--json"))
    outputs = [st["output"] for st in audit["steps"] if st["role"] == "act"]
    assert any("using *** with ***" in o for o in outputs)


def test_secret_values_never_reach_an_interactive_terminal(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    env = dict(os.environ)
    env.update(s.env)
    env.update({"COUNTER_OUT": str(s.out), "TERM": "xterm-256color"})
    for var in ("CI", "NO_COLOR"):
        env.pop(var, None)
    child = pexpect.spawn(
        sys.executable,
        ["-m", "director", "apply", str(s.plan), "--secret", "DB_PASS"],
        cwd=str(tmp_path),
        env=env,
        encoding="utf-8",
        timeout=60,
        dimensions=(50, 160),
    )
    child.expect(pexpect.EOF)
    child.close()
    screen = child.before or ""
    assert child.exitstatus == 0, screen
    assert "Credentials" in screen and "***" in screen, "the board showed the blocks' (masked) output"
    s.captured.append(("the terminal", screen))
    assert s.leaks() == []


def test_a_secret_named_live_state_row_is_never_realized(tmp_path: Path) -> None:
    s = Setup(tmp_path, section1_hint="> → Live State: API_TOKEN\n", kv_rows="| API_TOKEN | `${API_TOKEN}` |")
    code = s.run("apply", str(s.plan), "--secret", "DB_PASS")
    assert s.leaks() == []
    assert code == 0, s.captured


def test_a_variable_holding_a_secret_value_is_not_persisted(tmp_path: Path) -> None:
    extra = 'export LAST_USED="$API_TOKEN"\nexport DSN="postgres://app:${DB_PASS}@db.internal/app"'
    s = Setup(tmp_path, section2_extra=extra)
    assert s.run("apply", str(s.plan), "--secret", "DB_PASS") == 0, s.captured
    assert s.leaks() == []


def test_a_live_state_row_carrying_a_secret_value_is_masked(tmp_path: Path) -> None:
    s = Setup(
        tmp_path, section1_hint="> → Live State: DSN\n", kv_rows="| DSN | `${DSN}` |", section2_extra=""
    )
    s.plan.write_text(
        s.plan.read_text().replace(
            'export NAME="creds"\n',
            'export NAME="creds"\nexport DSN="postgres://app:${DB_PASS}@db.internal/app"\n',
        )
    )
    code = s.run("apply", str(s.plan), "--secret", "DB_PASS")
    assert code == 0, s.captured
    assert "| DSN | `postgres://app:***@db.internal/app` |" in s.plan.read_text()


def test_a_secret_minted_and_printed_in_the_same_block_is_not_journaled(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    s.plan.write_text(
        s.plan.read_text().replace('touch "$OUT/s1"\n', 'echo "minted $API_TOKEN"\ntouch "$OUT/s1"\n', 1)
    )
    assert s.run("apply", str(s.plan), "--secret", "DB_PASS") == 0, s.captured
    # The live screen cannot un-print what streamed before the value was known; what is stored must not hold it.
    assert s.leaks(outputs=False) == []


RESUME_PLAN = """\
# Resume — a plan whose session carries secrets

```
Legend  🟢 create · 🟡 config · 🔴 GATE (human go) · 💥 destructive (human go) · ⏳ wait · ✔ verify
```

## 0. Variables

```bash
export OUT="${COUNTER_OUT:-$PWD/out}"
export DSN="postgres://app:${DB_PASS}@db.internal/app"
mkdir -p "$OUT"
```

## 1. Mint  🟢

```bash
export API_TOKEN="tok-$(printf '%s' "$OUT" | sha256sum | cut -c1-24)"
touch "$OUT/s1"
```
```bash
# ✔ minted
[ -f "$OUT/s1" ] && echo "s1 ok" || { echo "s1 missing"; exit 1; }
```

## 2. Use  🟢

```bash
echo "start" >> "$OUT/log"
sleep 4
printf '%s\\n' "$DSN" > "$OUT/dsn"
printf '%s\\n' "$API_TOKEN" > "$OUT/token"
touch "$OUT/s2"
```
```bash
# ✔ used
[ -f "$OUT/s2" ] && echo "s2 ok" || { echo "s2 missing"; exit 1; }
```

## Live State

```yaml
status:        not-created
last_action:   —
```
"""


def test_a_resumed_run_never_runs_a_block_with_a_masked_or_missing_secret(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    plan = tmp_path / "resume.md"
    plan.write_text(RESUME_PLAN)
    env = dict(os.environ)
    env.update({"COUNTER_OUT": str(out), "CI": "1", "NO_COLOR": "1", "DB_PASS": DB_PASS})
    proc = forkserver.Popen(
        [sys.executable, "-m", "director", "apply", str(plan), "--secret", "DB_PASS"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.time() + 30
        while not (out / "log").exists() and time.time() < deadline:
            assert proc.poll() is None
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)  # while §2 sleeps: §0 and §1 are finished and journaled
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert not (out / "dsn").exists()

    r = director("apply", str(plan), "--secret", "DB_PASS", cwd=tmp_path, out=out, env={"DB_PASS": DB_PASS})
    # Either the resumed run recomputes what it may not store (§0 is pure: run it again) and refuses to run a
    # block that reads a minted secret it could not restore, or it completes with the real values; it never
    # hands a block `***` or an empty string in place of a credential.
    dsn = (out / "dsn").read_text().strip() if (out / "dsn").exists() else None
    token = (out / "token").read_text().strip() if (out / "token").exists() else None
    assert dsn in (None, f"postgres://app:{DB_PASS}@db.internal/app"), f"§2 ran with DSN={dsn!r}"
    assert token in (None, minted(out)), f"§2 ran with API_TOKEN={token!r}"
    if r.returncode != 0:
        assert "API_TOKEN" in r.stdout + r.stderr, "a refusal names the secret it cannot restore"


def test_a_later_run_never_runs_a_block_with_a_secret_an_in_sync_section_minted(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    plan = tmp_path / "later.md"
    plan.write_text(RESUME_PLAN.replace("sleep 4", "sleep 0"))
    env = {"DB_PASS": DB_PASS}
    assert director("apply", str(plan), "--secret", "DB_PASS", cwd=tmp_path, out=out, env=env).returncode == 0
    assert (out / "token").read_text().strip() == minted(out)
    (out / "token").unlink()
    # only §2 changes: §1 is observed in sync and not run again, §2 is re-applied
    plan.write_text(plan.read_text().replace("sleep 0", "sleep 0.1"))
    r = director("apply", str(plan), "--secret", "DB_PASS", cwd=tmp_path, out=out, env=env)
    token = (out / "token").read_text().strip() if (out / "token").exists() else None
    assert token in (None, minted(out)), f"§2 ran with API_TOKEN={token!r}"
    if r.returncode != 0:
        assert "API_TOKEN" in r.stdout + r.stderr, "a refusal names the secret it cannot restore"


SPOOL_PLAN = """\
# Spool — a plan whose §0 gives a secret a default

## 0. Variables

```bash
export OUT="${COUNTER_OUT:-$PWD/out}"
export SPOOL_TOKEN="${SPOOL_TOKEN:-dev-spool-token-0042}"
mkdir -p "$OUT"
```

## 1. Spool  🟢

```bash
printf '%s' "$SPOOL_TOKEN" | sha256sum | cut -c1-16 > "$OUT/spool.sig"
```
```bash
# ✔ spool signed
[ -s "$OUT/spool.sig" ] && echo "spool signed" || { echo "no signature"; exit 1; }
```

## Live State

```yaml
status:        not-created
last_action:   —
```

| key  | value (filled on apply) |
|------|-------------------------|
| OUT  | `${OUT}` |

| ✔ check      | expected | observed | result |
|--------------|----------|----------|--------|
| spool signed | a sig    | —        | —      |
"""


def test_a_secret_default_in_the_authors_text_never_blocks_the_write(tmp_path: Path) -> None:
    """The §0 literal is the author's text outside Live State: apply writes the plan; the value stays out of
    Live State, the journal and the screen (issue: a §0 default made apply refuse to write, exit 70)."""
    out = tmp_path / "out"
    plan = tmp_path / "spool.md"
    plan.write_text(SPOOL_PLAN, encoding="utf-8")
    r = director("apply", str(plan), cwd=tmp_path, out=out, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    text = plan.read_text(encoding="utf-8")
    head, live = text.split("## Live State", 1)
    assert head == SPOOL_PLAN.split("## Live State", 1)[0], "the author's text is untouched"
    assert "status:        live" in live and "✅" in live
    value = "dev-spool-token-0042"
    assert value not in live and value not in r.stdout + r.stderr
    # The journal keeps a copy of the plan as the author wrote it (for `diff --last-run`); nothing else of it
    # -- step outputs, sessions, events -- may hold the value.
    import sqlite3

    db = sqlite3.connect(tmp_path / ".director" / "spool.md" / "journal.sqlite3")
    try:
        rows = db.execute("select kind, data_json from events where kind != 'plan-before-run'").fetchall()
        rows += db.execute("select step_key, coalesce(output, '') || coalesce(session_json, '') from steps").fetchall()
        assert not [r for r in rows if value in r[1]], "the value reached the journal"
        assert db.execute("select count(*) from steps").fetchone()[0] >= 2
    finally:
        db.close()

"""What the operator reads is true (issue 25): Live State says what exists, gates say everything that changes
and fit the screen, times are the sections' own, `plan`/`check` name what they judge, and what the commands
print has no Python repr, no microseconds, no target a plan does not use.

Everything through the real CLI; the ledger is read back from the plan file after declined, interrupted and
failed runs, and the gate panel from an emulated 80x24 terminal (pexpect + pyte).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from director.plan.parse import parse_file
from tests import forkserver
from tests.planmaker import CounterPlan, Step, acts, director, write_plan
from tests.terminal import Term

GATE = "🔴 *(`MODE=a` — outward-facing)*  /  🟡 *(`b`)*"
LONG_DIR = "a-rather-long-directory-for-the-server-log"

# A plan whose gated §2 installs a tool and realizes its path, its checksum and a URL it prints, runs a
# command longer than 80 columns (`nohup … > "…/server.log" 2>&1 < /dev/null &`), and whose §1 writes a
# file template and realizes ROOT by its variable (`$ROOT`).
TOOL_PLAN = """\
# Toolbox — install a tool behind a gate

> Self-executing Markdown for Director's tests.

## Provisioning Inputs

| # | Question | Options (closed enum) | Default | Sets | Gates |
|---|----------|-----------------------|---------|------|-------|
| 1 | Mode | `a` / `b` | `a` | `MODE` | §2 gate severity |
| 2 | Flavour of the installed tool | `vanilla-extra-long` / `plain` | `vanilla-extra-long` | `FLAVOUR` | — |

## 0. Variables

```bash
export MODE="a" FLAVOUR="vanilla-extra-long"
export OUT="${COUNTER_OUT:-$PWD/out}"
export ROOT="$OUT/toolbox"
export CONF="$ROOT/tool.jsonc"
```

## 1. Directory and its configuration — `tool.jsonc`  🟢

```jsonc
{
  "flavour": "vanilla-extra-long"   // = ${FLAVOUR}
}
```
```bash
mkdir -p "$ROOT/LONG_DIR"
# → Live State: $ROOT
```
```bash
# ✔ directory made
[ -d "$ROOT/LONG_DIR" ] && echo "directory made" || { echo "no directory"; exit 1; }
```

## 2. Install the tool  GATE

```bash
mkdir -p "$ROOT/bin"
printf '#!/bin/sh\\necho %s\\n' "$FLAVOUR" > "$ROOT/bin/tool" && chmod +x "$ROOT/bin/tool"
export BIN="$ROOT/bin/tool"
export SUM="$(sha256sum "$BIN" | cut -c1-12)"
nohup "$BIN" > "$ROOT/LONG_DIR/server.log" 2>&1 < /dev/null &
echo "tool answers at http://127.0.0.1:18999/$MODE"
# → Live State: BIN, SUM, URL
```
```bash
# ✔ tool installed
[ -x "$ROOT/bin/tool" ] && echo "tool installed" || { echo "tool missing"; exit 1; }
```

## Live State

```yaml
status:        not-created      # template
last_action:   —
last_verified: —
resolved_inputs: { mode: a, flavour: vanilla-extra-long }
```

| key  | value (filled on apply) |
|------|-------------------------|
| ROOT | `—` (the toolbox) |
| BIN  | `—` (the installed tool) |
| SUM  | `—` (its checksum) |
| URL  | `—` (where it answers) |

| ✔ check          | expected          | observed | result |
|------------------|-------------------|----------|--------|
| directory made   | the toolbox       | —        | —      |
| tool installed   | an executable     | —        | —      |

## Teardown (observe-first, resumable)  💥

```bash
rm -rf "$ROOT"
```
```bash
# ✔ verify teardown — nothing left
[ ! -e "$ROOT" ] && echo "all gone" || { echo "still present"; exit 1; }
```
""".replace("LONG_DIR", LONG_DIR).replace("GATE", GATE)


def tool_plan(tmp: Path, text: str = TOOL_PLAN) -> Path:
    path = tmp / "toolbox.md"
    path.write_text(text, encoding="utf-8")
    return path


def ledger(plan: Path) -> Any:
    ls = parse_file(str(plan)).live_state
    assert ls is not None
    return ls


def result_of(plan: Path, row: str) -> str:
    return str(next(r.result for r in ledger(plan).check_rows if r.name == row))


def events(path: Path, kind: str) -> list[dict[str, Any]]:
    return [e for e in map(json.loads, path.read_text().splitlines()) if e["type"] == kind]


# ------------------------------------------------------------------------ the gate panel at 80 x 24


def commands_block(lines: list[str], boxed: bool) -> list[str]:
    """The panel's lines from its `commands (…)` heading to the panel's end, without the box."""
    inner = [ln[2:-1].rstrip() if boxed and ln.startswith("│") else ln for ln in lines]
    start = next(i for i, ln in enumerate(inner) if ln.startswith("commands ("))
    end = next(i for i, ln in enumerate(inner) if i > start and ln.startswith(("╰", "content sha256")))
    return inner[start + 1 : end]


@pytest.mark.slow
@pytest.mark.parametrize("view", ["rich", "plain", "no-color"])
def test_the_gate_panel_fits_80x24_with_its_first_line_its_changes_and_the_prompt(
    tmp_path: Path, out: Path, term: Callable[..., Term], view: str
) -> None:
    plan = tool_plan(tmp_path)
    flags = ["--plain"] if view == "plain" else []
    env = {"NO_COLOR": "1"} if view == "no-color" else {}
    t = term("apply", plan.name, "--set", "mode=a", "--set", "flavour=plain", *flags, env=env, size=(24, 80))
    screen = t.wait("Type go to run these commands")
    lines = screen.splitlines()
    assert any("🔴 GATE · §2 Install the tool" in ln for ln in lines), screen
    assert "changes:" in screen and "why gated: outward-facing" in screen
    for change in ("+ BIN: from this section's act", "+ SUM: from this section's act",
                   "+ URL: from this section's output", "~ status: partially applied → live"):
        assert change in screen, f"{change!r} not on screen:\n{screen}"
    assert f"details: director plan {plan.name} --section 2" in screen
    assert len(lines) <= 24 and any(ln.startswith("Type go") for ln in lines[-2:]), "the prompt, at the bottom"
    block = commands_block(lines, boxed=view == "rich")
    assert block, screen
    assert all(ln.startswith("  ") for ln in block if ln.strip()), "no command line starts at column 0"
    wrapped = [ln for ln in block if "↪" in ln]
    assert wrapped and all(ln.startswith("    ") for ln in wrapped), "a continuation is indented under its line"
    assert not any(ln.lstrip().startswith(("2>&1", "< /dev/null", "&")) for ln in block if "↪" not in ln)
    assert "$ROOT" not in screen and 'mkdir -p "/' in screen, "each command once, as it runs (values in)"
    if view != "rich":
        assert "\x1b" not in t.raw.decode("utf-8", "replace").split("🔴 GATE", 1)[1].split("Type go")[0]
    t.send("no")
    assert t.finish() == 4, t.text()
    assert not (out / "toolbox" / "bin").exists(), "declined: nothing of §2 ran"


@pytest.mark.slow
def test_after_a_gate_the_board_is_drawn_once_and_80_columns_keep_titles_and_the_outcome(
    tmp_path: Path, out: Path, term: Callable[..., Term]
) -> None:
    plan = tool_plan(tmp_path)
    t = term("apply", plan.name, "--set", "mode=a", "--set", "flavour=vanilla-extra-long", size=(40, 80))
    t.wait("Type go to run these commands")
    t.send("go")
    assert t.finish() == 0, t.text()
    final = t.text()
    assert final.count("director apply run 1") == 1, f"the board's header once:\n{final}"
    header = next(ln for ln in final.splitlines() if ln.startswith("director apply run 1"))
    assert "· completed" in header, header
    assert re.search(r"^§1 +Directory and its configuration — `tool.jsonc` +✓ applied", final, re.M), final
    assert re.search(r"^§2 +Install the tool +✓ applied", final, re.M), final


# ------------------------------------------------------------------------ Live State says what exists


def test_a_declined_gate_or_teardown_leaves_the_status_as_what_exists(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(marker=GATE), Step()]))
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 4 and acts(out) == [], r.stdout + r.stderr
    assert ledger(plan).data["status"] == "not-created", "nothing was created"
    assert str(ledger(plan).data["last_action"]).endswith("— awaiting-approval at §1")

    assert director("apply", str(plan), "--approve", "1", cwd=tmp_path, out=out).returncode == 0
    before = {r.name: r.result for r in ledger(plan).check_rows}
    r = director("teardown", str(plan), cwd=tmp_path, out=out)  # no approval: the teardown waits
    assert r.returncode == 4 and acts(out, "teardown-acts") == [], r.stdout + r.stderr
    ls = ledger(plan)
    assert ls.data["status"] == "live", "nothing was destroyed: still live"
    assert str(ls.data["last_action"]).endswith("nothing changed — awaiting-approval at teardown")
    assert {r.name: r.result for r in ls.check_rows} == before and "target" not in ls.data


def test_a_teardown_that_fails_after_its_destructive_block_ran_is_partially_torn_down(
    tmp_path: Path, out: Path
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step()]))
    plan.write_text(plan.read_text().replace('rm -f "$OUT"/s[0-9]*\n', 'rm -f "$OUT"/s1\nexit 1\n'))
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    r = director("teardown", str(plan), "--approve", "teardown", cwd=tmp_path, out=out)
    assert r.returncode == 3 and not (out / "s1").exists(), r.stdout + r.stderr
    ls = ledger(plan)
    assert ls.data["status"] == "partially torn down", "its destructive block ran: not live, not gone"
    assert str(ls.data["last_action"]).endswith("— failed at teardown"), ls.data["last_action"]


def test_a_check_seen_failing_before_a_gate_is_never_left_passing(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    assert director("apply", str(plan), "--approve", "2", cwd=tmp_path, out=out).returncode == 0
    assert result_of(plan, "s2 exists").startswith("✅") and "s2 exists" in ledger(plan).data["last_verified"]
    (out / "s2").unlink()  # what §2 made is gone; its gate stops the heal
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 4, r.stdout + r.stderr
    ls = ledger(plan)
    assert ls.data["status"] == "drifted"
    assert result_of(plan, "s2 exists").startswith("❌")
    assert next(r.observed for r in ls.check_rows if r.name == "s2 exists") == "s2 missing"
    assert "s2 exists" not in str(ls.data["last_verified"])
    assert re.search(r"^  V2\s+= value-2-a  \(not holding: check `s2 exists` ❌", r.stdout, re.M), r.stdout
    o = director("output", str(plan), "V2", cwd=tmp_path, out=out)
    assert o.returncode == 0 and o.stdout == "value-2-a\n" and "V2 may not hold" in o.stderr

    assert director("apply", str(plan), "--approve", "2", cwd=tmp_path, out=out).returncode == 0
    assert ledger(plan).data["status"] == "live" and result_of(plan, "s2 exists").startswith("✅")


def test_a_failed_run_leaves_partially_applied_and_says_where_it_stopped(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(extra='echo "boom"; exit 1')]))
    r = director("apply", str(plan), "--events", str(tmp_path / "ev.jsonl"), cwd=tmp_path, out=out)
    assert r.returncode == 3, r.stdout + r.stderr
    ls = ledger(plan)
    assert ls.data["status"] == "partially applied"
    assert str(ls.data["last_action"]).endswith("— failed at §2"), ls.data["last_action"]
    failed = [e for e in events(tmp_path / "ev.jsonl", "section.verdict") if e["verdict"] == "failed"]
    assert failed and failed[0]["duration_s"] > 0, "a failed section has its own time"


@pytest.mark.slow
def test_an_interrupted_section_shows_the_time_its_block_ran(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(extra="sleep 30")]))
    ev = tmp_path / "ev.jsonl"
    env = dict(os.environ, COUNTER_OUT=str(out), CI="1", NO_COLOR="1")
    proc = forkserver.Popen(
        [sys.executable, "-m", "director", "apply", str(plan), "--events", str(ev)],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while acts(out) != ["s1"]:
            assert proc.poll() is None and time.monotonic() < deadline, "§1's act never started"
            time.sleep(0.05)
        started = time.monotonic()
        time.sleep(1.5)  # the block runs (sleeps) meanwhile
        ran = time.monotonic() - started
        proc.send_signal(signal.SIGINT)
        output, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, output
    [verdict] = [e for e in events(ev, "section.verdict") if e["section"] == "1"]
    assert verdict["verdict"] == "interrupted" and verdict["duration_s"] >= ran, verdict
    assert re.search(r"§1 Step 1\s+✗ interrupted\s+(\d+\.\d)s", output), output
    assert ledger(plan).data["status"] == "partially applied", "its act began: something may exist"


@pytest.mark.slow
def test_a_wait_for_a_receipt_is_not_the_sections_time(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    ev = tmp_path / "ev.jsonl"
    env = dict(os.environ, COUNTER_OUT=str(out), CI="1", NO_COLOR="1")
    proc = forkserver.Popen(
        [sys.executable, "-m", "director", "apply", str(plan), "--non-interactive", "--wait-for-approval", "60",
         "--events", str(ev)],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not (ev.exists() and any(e.get("approved") is None for e in events(ev, "gate"))):
            assert proc.poll() is None and time.monotonic() < deadline, "the gate never waited"
            time.sleep(0.05)
        waiting = time.monotonic()
        time.sleep(3)  # a human takes a while
        a = director("approve", str(plan), "2", "--yes", cwd=tmp_path, out=out)
        assert a.returncode == 0, a.stdout + a.stderr
        output, _ = proc.communicate(timeout=60)
        waited = time.monotonic() - waiting
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, output
    [verdict] = [e for e in events(ev, "section.verdict") if e["section"] == "2"]
    assert verdict["duration_s"] < waited - 2.5, (verdict, waited)


# ------------------------------------------------------------------------ what a gate changes


def test_a_gate_lists_every_key_it_realizes_and_says_when_a_live_section_acts_again(
    tmp_path: Path, out: Path
) -> None:
    plan = tool_plan(tmp_path)
    r = director("plan", str(plan), "--section", "2", cwd=tmp_path, out=out)
    assert r.returncode == 2, r.stdout + r.stderr
    for change in ("+ BIN: from this section's act (not realized yet)",
                   "+ SUM: from this section's act (not realized yet)",
                   "+ URL: from this section's output (not realized yet)"):
        assert change in r.stdout, r.stdout
    assert "! " not in r.stdout, "never applied: nothing runs again"
    assert director("apply", str(plan), "--approve", "2", cwd=tmp_path, out=out).returncode == 0
    ls = ledger(plan)
    bin_, url = f"{out}/toolbox/bin/tool", "http://127.0.0.1:18999/a"
    kv = {r.key: r.value for r in ls.kv_rows}
    assert kv["BIN"].startswith(f"`{bin_}`") and kv["URL"].startswith(f"`{url}`")
    assert re.fullmatch(r"`[0-9a-f]{12}` \(its checksum\)", kv["SUM"]) and kv["ROOT"].startswith(f"`{out}/toolbox`")

    plan.write_text(plan.read_text().replace("echo %s\\n", "echo %s version 2\\n"))  # §2's act changes
    r = director("plan", str(plan), "--section", "2", cwd=tmp_path, out=out)
    assert r.returncode == 2, r.stdout + r.stderr
    for change in ("! live: the act runs again on what exists",
                   f"~ BIN: `{bin_}` → set again from this section's act; it may change",
                   "~ SUM: `", f"~ URL: `{url}` → set again from this section's output; the URL may change"):
        assert change in r.stdout, f"{change!r} not in:\n{r.stdout}"
    assert "why it acts now:" in r.stdout and "the block at plan line" in r.stdout


# ------------------------------------------------------------------------ plan and check


def test_plan_names_each_section_and_every_section_a_gate_waits_on(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(), Step(marker=GATE)]))
    r = director("plan", str(plan), "--plain", cwd=tmp_path, out=out)
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    for i, ln in enumerate(lines):
        if re.match(r"^ {3}[→⏸…✔·] ", ln):
            assert lines[i - 1].startswith("── "), f"a verdict line names its section first:\n{r.stdout}"
    assert "── §3 Step 3" in r.stdout and "⏸ needs approval — after §1, §2 apply;" in r.stdout, r.stdout


def test_plan_says_a_missing_file_will_be_created(tmp_path: Path, out: Path) -> None:
    plan = tool_plan(tmp_path)
    r = director("plan", str(plan), cwd=tmp_path, out=out)
    assert f"tool.jsonc will be created ({out}/toolbox/tool.jsonc)" in r.stdout, r.stdout
    assert "on disk differs" not in r.stdout


def test_check_reads_a_torn_down_plan_as_gone_and_whatever_outlived_it_as_drift(
    tmp_path: Path, out: Path
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    assert director("apply", str(plan), "--approve", "2", cwd=tmp_path, out=out).returncode == 0
    assert director("teardown", str(plan), "--approve", "teardown", cwd=tmp_path, out=out).returncode == 0
    r = director("check", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert not re.search(r"will apply|needs approval|blocked", r.stdout), r.stdout
    assert r.stdout.count("✓ absent — gone, as recorded") == 2 and "in sync with the ledger" in r.stdout

    (out / "s2").touch()  # something of §2 outlived the teardown
    r = director("check", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "drift: §2 Step 2: present, though the ledger says gone" in r.stdout
    assert re.search(r"drift: check row 's2 exists': ledger says — torn down .*observed: passed", r.stdout)


# ------------------------------------------------------------------------ wording and internals


def test_a_key_named_by_its_variable_is_realized_and_a_hint_naming_no_key_is_linted(
    tmp_path: Path, out: Path
) -> None:
    plan = tool_plan(tmp_path)
    assert director("apply", str(plan), "--approve", "2", cwd=tmp_path, out=out).returncode == 0
    r = director("output", str(plan), "ROOT", "--raw", cwd=tmp_path, out=out)
    assert (r.returncode, r.stdout) == (0, f"{out}/toolbox"), r.stdout + r.stderr

    bad = tmp_path / "other"
    bad.mkdir()
    wrong = tool_plan(bad, TOOL_PLAN.replace("# → Live State: $ROOT", "# → Live State: $ROOT_DIR"))
    r = director("lint", str(wrong), cwd=tmp_path, out=out)
    assert re.search(r":\d+: warning: hint-unknown-key: the `→ Live State:` hint names \$ROOT_DIR, but the "
                     r"key/value table has no key ROOT_DIR \(keys: ROOT, BIN, SUM, URL\)", r.stdout), r.stdout


def test_status_and_audit_say_seconds_no_repr_and_no_target_a_plan_does_not_use(
    tmp_path: Path, out: Path
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 4
    assert "target" not in plan.read_text().split("## Live State", 1)[1].split("| key")[0]
    st = director("status", str(plan), cwd=tmp_path, out=out)
    au = director("audit", str(plan), cwd=tmp_path, out=out)
    for r in (st, au):
        assert r.returncode == 0, r.stderr
        assert not re.search(r"\d{2}:\d{2}:\d{2}\.\d", r.stdout), "seconds, never microseconds"
        assert not re.search(r"\{'|\['|None\b", r.stdout), r.stdout
    assert "target" not in st.stdout and "on none" not in au.stdout
    assert re.search(r"^  last run       apply #1: awaiting-approval, waiting on §2 \(\S+\+00:00\)$", st.stdout, re.M)
    e = director("approve", str(plan), "1", "--yes", cwd=tmp_path, out=out)
    assert e.returncode == 64 and e.stderr.count("\n") == 1, e.stderr
    assert e.stderr.startswith("error: SECTION: '1' is not gated for the inputs of the last run (MODE=a)")


def test_without_colour_the_default_is_marked_in_words(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan())
    r = director("show", str(plan), cwd=tmp_path, out=out)  # NO_COLOR=1
    assert "options (default marked *)" in r.stdout and "a* / b" in r.stdout and "in bold" not in r.stdout

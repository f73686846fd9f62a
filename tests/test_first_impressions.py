"""What a new user meets in the first half hour, through the real CLI: a pristine plan is not drift, one
command resets a plan completely, a closed pipe ends as documented, every documented option exists, every
run command has a JSON result, prerequisites are checked at start, and the small promises of the output.

The README's first screen is tests/test_readme.py's; packaging is tests/test_install_docs.py's.
"""

from __future__ import annotations

import fcntl
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import typer.main

from director import __version__
from director.cli import app
from tests import forkserver
from tests.jsonschemas import validated
from tests.planmaker import CounterPlan, Step, acts, director, write_plan
from tests.pristine import SEED

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# A published plan: its author's Live State says the chain was seen complete, with the author's date.
PUBLISHED = (
    ("| chain complete  | every step ran once | —        | —      |",
     "| chain complete  | every step ran once | all      | ✅ 2026-07-03 |"),
    ("| s1 exists       | s1 present        | —        | —      |",
     "| s1 exists       | s1 present        | present  | ✅ 2026-07-03 |"),
    ("| s2 exists       | s2 present        | —        | —      |",
     "| s2 exists       | s2 present        | present  | ✅ 2026-07-03 |"),
)  # fmt: skip


def published(tmp: Path, steps: list[Step]) -> Path:
    """A counter plan as its author published it: ✅ check rows from the author's own run."""
    path = write_plan(tmp, CounterPlan(steps))
    text = path.read_text(encoding="utf-8")
    for before, after in PUBLISHED:
        assert before in text
        text = text.replace(before, after)
    path.write_text(text, encoding="utf-8")
    return path


def live_status(plan: Path) -> str:
    m = re.search(r"^status:\s+(.+?)\s*(#.*)?$", plan.read_text(encoding="utf-8"), re.M)
    assert m
    return m.group(1)


# ------------------------------------------------------------------------------- 2. a pristine plan


def test_a_pristine_plan_is_not_created_here_and_check_says_so(tmp_path: Path, out: Path) -> None:
    plan = published(tmp_path, [Step(), Step()])
    before = plan.read_bytes()
    r = director("check", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 12, r.stdout + r.stderr
    assert "not created here" in r.stdout and "drift" not in r.stdout.replace("no drift", "")
    assert plan.read_bytes() == before  # check writes nothing
    doc = validated(director("check", str(plan), "--json", cwd=tmp_path, out=out).stdout)
    assert doc["outcome"] == "not-created" and doc["exit_code"] == 12 and doc["drift"] == []


def test_a_declined_first_gate_does_not_read_the_template_as_drifted(tmp_path: Path, out: Path) -> None:
    plan = published(tmp_path, [Step(), Step(marker="🔴")])
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 4, r.stdout + r.stderr  # §2's gate: no terminal, no approval
    assert live_status(plan) == "partially applied"  # §1 acted here; the template's ✅ rows are not evidence
    r = director("apply", str(plan), cwd=tmp_path, out=out)  # resumed: still not drifted
    assert r.returncode == 4 and live_status(plan) == "partially applied"
    assert "drifted" not in r.stdout
    r = director("apply", str(plan), "--approve", "2", cwd=tmp_path, out=out)
    assert r.returncode == 0 and live_status(plan) == "live"
    assert director("check", str(plan), cwd=tmp_path, out=out).returncode == 0  # applied here: in sync


@pytest.mark.slow
def test_the_pristine_seed_on_the_local_target_is_not_drift(tmp_path: Path) -> None:
    plan = tmp_path / "workflow.cloudflare.md"
    plan.write_bytes(SEED.read_bytes())
    env = {**os.environ, "CI": "1", "NO_COLOR": "1"}
    run = [sys.executable, "-m", "director"]
    r = forkserver.run([*run, "check", str(plan), "--target", "local"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=600)  # fmt: skip
    assert r.returncode == 12, r.stdout + r.stderr
    assert "not created here" in r.stdout and "ledger says" not in r.stdout
    r = forkserver.run([*run, "plan", str(plan), "--target", "local"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=600)  # fmt: skip
    assert r.returncode == 2, r.stdout + r.stderr
    discovery = next(ln for ln in r.stdout.splitlines() if ln.startswith("  discovery"))
    assert "skipped" in discovery and "in sync" not in discovery  # as apply says it
    assert plan.read_bytes() == SEED.read_bytes()


# ---------------------------------------------------------------------------------- 1, 3. the reset


def test_state_forget_resets_a_plan_completely(tmp_path: Path, out: Path) -> None:
    plan = published(tmp_path, [Step(), Step()])
    published_text = plan.read_bytes()
    state = tmp_path / ".director" / plan.name
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    # live: refused unless forced; without a terminal, --yes is required
    r = director("state", "forget", str(plan), "--yes", cwd=tmp_path, out=out)
    assert r.returncode == 64 and "may still exist" in r.stderr and state.is_dir()
    assert director("teardown", str(plan), "--approve", "teardown", cwd=tmp_path, out=out).returncode == 0
    r = director("state", "forget", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 64 and "--yes" in r.stderr and state.is_dir()
    # a run holding the lease: refused (exit 5), nothing removed
    fd = os.open(state / "lease.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        r = director("state", "forget", str(plan), "--yes", cwd=tmp_path, out=out)
        assert r.returncode == 5 and state.is_dir(), r.stdout + r.stderr
    finally:
        os.close(fd)
    r = director("state", "forget", str(plan), "--yes", cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stderr
    assert not state.exists() and "not removed:" in r.stdout and "git checkout" in r.stdout
    plan.write_bytes(published_text)  # the user's `git checkout PLAN`
    r = director("check", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 12  # as never applied here
    r = director("status", str(plan), "--json", cwd=tmp_path, out=out)
    assert validated(r.stdout)["last_run"] is None


def test_state_forget_with_force_forgets_a_live_plan(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step()]))
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    r = director("state", "forget", str(plan), "--yes", "--force", cwd=tmp_path, out=out)
    assert r.returncode == 0 and not (tmp_path / ".director" / plan.name).exists()
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0 and "run 1" in r.stdout  # a new history


# --------------------------------------------------------------------------- 4. a closed output pipe


def _closed_stdout(*args: str, cwd: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """Run the CLI with a stdout whose reader is already gone (every write fails with EPIPE)."""
    read, write = os.pipe()
    os.close(read)
    env = {**os.environ, "COUNTER_OUT": str(out), "CI": "1", "NO_COLOR": "1"}
    try:
        return forkserver.run([sys.executable, "-m", "director", *args], cwd=cwd, env=env, stdout=write,
                              stderr=subprocess.PIPE, text=True, timeout=300)  # fmt: skip
    finally:
        os.close(write)


def test_a_closed_pipe_ends_a_reading_command_with_130_never_1(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step()]))
    for args in (["show", str(plan)], ["show", str(plan), "--json"], ["status", str(plan)],
                 ["lint", str(plan)], ["output", str(plan)], ["docs"]):  # fmt: skip
        r = _closed_stdout(*args, cwd=tmp_path, out=out)
        assert r.returncode == 130, (args, r.returncode, r.stderr)
        assert "Traceback" not in r.stderr


def test_a_closed_pipe_does_not_stop_a_run_or_leave_it_pending(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step()]))
    r = _closed_stdout("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stderr
    assert "output discarded" in r.stderr and "Traceback" not in r.stderr
    assert acts(out) == ["s1", "s2"]
    status = validated(director("status", str(plan), "--json", cwd=tmp_path, out=out).stdout)
    assert status["last_run"]["id"] == 1 and status["last_run"]["state"] == "completed"
    assert live_status(plan) == "live"
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0 and acts(out) == ["s1", "s2"]  # in sync: nothing ran again


# ------------------------------------------------------------------------- 5. the documented options


def _options() -> dict[str, set[str]]:
    """Each command (`state forget` for a subcommand) and the option names it takes, from click's tree."""
    root = typer.main.get_command(app)
    found: dict[str, set[str]] = {"": {o for p in root.params for o in p.opts}}

    def walk(cmd: Any, prefix: str) -> None:
        for name, sub in getattr(cmd, "commands", {}).items():
            full = f"{prefix} {name}".strip()
            found[full] = {o for p in sub.params for o in (*p.opts, *p.secondary_opts) if o.startswith("-")}
            walk(sub, full)

    walk(root, "")
    return found


def _readme_options_table() -> dict[str, dict[str, bool]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("### Options of `apply`, `teardown`, `plan` and `check`", 1)[1].split("\n\n##", 1)[0]
    rows: dict[str, dict[str, bool]] = {}
    for line in section.splitlines():
        m = re.match(r"^\| `(--[a-z-]+)[^`]*` \|(.*)$", line)
        if m:
            cells = [c.strip() == "✓" for c in m.group(2).split("|")][:4]
            rows[m.group(1)] = dict(zip(("apply", "teardown", "plan", "check"), cells, strict=True))
    return rows


def test_the_readme_options_table_is_the_cli(tmp_path: Path) -> None:
    options = _options()
    table = _readme_options_table()
    assert len(table) > 20
    for opt, where in table.items():
        for command, takes in where.items():
            assert (opt in options[command]) == takes, f"README: {command} {opt} {'✓' if takes else '(none)'}"
    shared = set().union(*(options[c] for c in ("apply", "teardown", "plan", "check"))) - {"--help", "-h"}
    assert shared - {"-j"} == set(table), "an option of the four missing from the README's table"


# `director CMD … --opt` in a code span or block of the README or docs/ (the whole command on one line)
_MENTION = re.compile(r"director ((?:state )?[a-z]+)\b([^`\n|]*)")


def test_every_option_the_docs_name_exists() -> None:
    options = _options()
    seen = 0
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        code = re.findall(r"```[^\n]*\n(.*?)```", text, re.S) + re.findall(r"`([^`\n]+)`", text)
        for piece in code:
            for m in _MENTION.finditer(piece):
                command = m.group(1)
                if command not in options:
                    continue  # prose (`director runs …`) or a command of another tool
                for opt in re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", m.group(2)):
                    if opt in ("-", "--"):
                        continue
                    seen += 1
                    assert opt in options[command], f"{path.name}: `director {command}` has no {opt}"
    assert seen > 40  # the test reads something


def test_state_help_promises_nothing_it_cannot_do() -> None:
    r = forkserver.run([sys.executable, "-m", "director", "state", "--help"], capture_output=True, text=True,
                       timeout=60)  # fmt: skip
    assert r.returncode == 0 and "break" not in r.stdout.lower() and "forget" in r.stdout


def test_check_takes_a_step_timeout_and_a_set(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step()]))
    text = plan.read_text(encoding="utf-8").replace('[ -f "$OUT/s1" ] &&', 'sleep 600; [ -f "$OUT/s1" ] &&')
    plan.write_text(text, encoding="utf-8")
    started = time.monotonic()
    r = director("check", str(plan), "--step-timeout", "2", "--set", "mode=b", cwd=tmp_path, out=out,
                 timeout=300)  # fmt: skip
    assert r.returncode not in (64, 70), r.stderr
    assert time.monotonic() - started < 120  # the hung observation ended at its timeout, not 1800 s
    r = director("logs", str(plan), "--state-url", "", cwd=tmp_path, out=out)
    assert r.returncode == 64 and "no run yet" in r.stderr  # the option exists (an empty URL: SQLite)


# ------------------------------------------------------------------------------ 6. JSON everywhere


def test_every_run_command_has_a_json_result(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker="🔴")]))
    r = director("plan", str(plan), "--json", cwd=tmp_path, out=out)
    doc = validated(r.stdout)
    assert doc["command"] == "plan" and doc["exit_code"] == r.returncode == 2 and doc["changes"] is True
    assert "changes pending" in r.stderr  # the lines go to stderr
    r = director("apply", str(plan), "--json", cwd=tmp_path, out=out)
    doc = validated(r.stdout)
    assert r.returncode == 4 and doc["outcome"] == "awaiting-approval" and doc["section"] == "2"
    assert doc["approve_hint"].startswith("director approve")
    r = director("apply", str(plan), "--json", "--auto-approve", cwd=tmp_path, out=out)
    doc = validated(r.stdout)
    assert r.returncode == 0 and doc["outcome"] == "completed" and doc["outputs"]["V1"] == "value-1-a"
    assert [s["key"] for s in doc["sections"]][:3] == ["0", "1", "2"]
    doc = validated(director("check", str(plan), "--json", cwd=tmp_path, out=out).stdout)
    assert doc["command"] == "check" and doc["outcome"] == "check" and doc["exit_code"] == 0
    r = director("teardown", str(plan), "--json", "--auto-approve", cwd=tmp_path, out=out)
    doc = validated(r.stdout)
    assert r.returncode == 4 and doc["section"] == "teardown"  # --auto-approve never passes 💥
    r = director("teardown", str(plan), "--json", "--approve", "teardown", cwd=tmp_path, out=out)
    assert validated(r.stdout)["outcome"] == "completed" and r.returncode == 0
    r = director("apply", str(plan), "--json", "--events", "-", cwd=tmp_path, out=out)
    assert r.returncode == 64 and "--json" in r.stderr


def test_every_json_document_has_its_schema_and_one_spelling(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step()]))
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    doc = validated(director("output", str(plan), "--json", cwd=tmp_path, out=out).stdout)
    assert doc["schema"] == "director.output/1" and doc["values"]["V1"] == "value-1-a"
    one = validated(director("output", str(plan), "v1", "--json", cwd=tmp_path, out=out).stdout)
    assert one["values"] == {"V1": "value-1-a"}
    by_json = director("lint", str(plan), "--json", cwd=tmp_path, out=out)
    by_format = director("lint", str(plan), "--format", "json", cwd=tmp_path, out=out)
    assert validated(by_json.stdout) == validated(by_format.stdout)
    for flag in ("-V", "--version"):
        r = director(flag, cwd=tmp_path, out=out)
        assert r.returncode == 0 and r.stdout == f"director {__version__}\n"


# ------------------------------------------------------------------------------- 7. prerequisites


def test_an_old_bash_is_refused_at_start_in_one_line(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step()]))
    fake = tmp_path / "oldbash"
    fake.mkdir()
    (fake / "bash").write_text('#!/bin/sh\necho "3 2"\n', encoding="utf-8")  # as macOS's bash 3.2 answers
    (fake / "bash").chmod(0o755)
    env = {"PATH": f"{fake}{os.pathsep}{os.environ['PATH']}"}
    for command in ("apply", "plan", "check", "teardown"):
        r = director(command, str(plan), cwd=tmp_path, out=out, env=env)
        assert r.returncode == 6, (command, r.stdout, r.stderr)
        assert r.stderr.count("\n") == 1 and "bash 3.2" in r.stderr and "bash ≥ 4.1" in r.stderr
    assert not (tmp_path / ".director").exists() and acts(out) == []  # nothing created, nothing ran


# ------------------------------------------------------------------------------------- 10. polish


def test_show_in_a_pipe_never_cuts_a_command(tmp_path: Path, out: Path) -> None:
    long = 'echo "s1" ' + " ".join(f"word{i}" for i in range(40)) + ' >> "$OUT/acts"'  # wider than 80
    plan = write_plan(tmp_path, CounterPlan([Step()]))
    plan.write_text(plan.read_text(encoding="utf-8").replace('echo "s1" >> "$OUT/acts"', long), encoding="utf-8")
    r = director("show", str(plan), cwd=tmp_path, out=out)
    shown = [ln for ln in r.stdout.splitlines() if "word10" in ln]  # past column 80 of its line
    assert r.returncode == 0 and shown and all('echo "s1" word0' in ln for ln in shown), r.stdout


def test_plan_teardown_says_what_its_exit_status_is(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step()]))
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    r = director("plan", str(plan), "--teardown", cwd=tmp_path, out=out)
    assert r.returncode == 2
    assert "would tear down (its verify does not find it gone: exit 1)" in r.stdout, r.stdout


def test_a_version_probe_killed_by_a_signal_is_asked_again(tmp_path: Path) -> None:
    """A probe another process killed (a soak's SIGKILL, the OOM killer) says nothing about the version."""
    from director.commands.prereqs import bash_version

    fake = tmp_path / "bash"
    once = tmp_path / "killed-once"
    fake.write_text(
        f'#!/bin/sh\nif [ ! -e "{once}" ]; then : > "{once}"; kill -9 $$; fi\nprintf "5 2"\n', encoding="utf-8"
    )
    fake.chmod(0o755)
    assert bash_version(str(fake)) == (5, 2)
    assert once.exists()

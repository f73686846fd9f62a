"""`director init NAME` through the real CLI: the scaffold lints clean, applies on a fresh machine, tears down,
and never overwrites a file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from director.plan.parse import parse_file
from tests import forkserver

# slow: end to end through the real CLI, many runs; CI runs it with the rest
pytestmark = pytest.mark.slow


def _fresh_env(home: Path) -> dict[str, str]:
    """A machine with nothing set up: an empty HOME, a minimal PATH with no wrangler, no token, no CI config."""
    path = ":".join(d for d in ("/usr/local/bin", "/usr/bin", "/bin") if Path(d).is_dir())
    env = {"HOME": str(home), "PATH": path, "LANG": "C.UTF-8", "NO_COLOR": "1", "USER": "newcomer"}
    if "PYTHONPATH" in os.environ:  # a test run pointed at another checkout of Director keeps using it
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def _director(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    # No CI variable and no terminal: --non-interactive is what keeps the run from prompting.
    return forkserver.run(
        [sys.executable, "-m", "director", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture
def machine(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    env = _fresh_env(home)
    return work, env


def test_init_lints_clean_applies_and_tears_down_on_a_fresh_machine(
    machine: tuple[Path, dict[str, str]],
) -> None:
    work, env = machine
    r = _director("init", "cache.local", cwd=work, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    plan = work / "cache.local.md"
    assert r.stdout.strip() == f"wrote {plan.name}" and plan.is_file()

    lint = _director("lint", str(plan), cwd=work, env=env)
    assert (lint.returncode, lint.stdout.strip()) == (0, "clean"), lint.stdout + lint.stderr

    preview = _director("plan", str(plan), cwd=work, env=env)
    assert preview.returncode == 2, preview.stdout + preview.stderr  # everything would be created

    r = _director("apply", str(plan), "--non-interactive", cwd=work, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    store = work / ".director" / plan.name / "workspace" / "cache-local-dev"
    assert (store / "manifest").read_text() == "name=cache-local\nenv=dev\n"
    ls = parse_file(str(plan)).live_state
    assert ls is not None and ls.data["status"] == "live"
    assert (
        ls.data["resolved_inputs"]["env"] == "dev" and ls.data["resolved_inputs"]["resolved_by"] == "newcomer"
    )
    assert {row.key: row.value for row in ls.kv_rows}["STORE"] == f"`{store}` (the store)"
    assert {row.name: row.result for row in ls.check_rows}["store ready"].startswith("✅")
    assert _director("lint", str(plan), cwd=work, env=env).returncode == 0, (
        "the applied plan still lints clean"
    )

    again = _director("apply", str(plan), "--non-interactive", cwd=work, env=env)
    assert again.returncode == 0 and "in sync" in again.stdout

    r = _director("teardown", str(plan), "--non-interactive", cwd=work, env=env)
    assert r.returncode == 4 and store.exists(), "💥 teardown waits for a named approval"
    r = _director("teardown", str(plan), "--approve", "teardown", "--non-interactive", cwd=work, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert not store.exists()
    ls = parse_file(str(plan)).live_state
    assert ls is not None and ls.data["status"] == "gone"
    assert {row.key: row.value for row in ls.kv_rows}["STORE"] == "`${NAME}-${ENV}` (the store)"


def test_init_with_the_other_input_value_applies_too(machine: tuple[Path, dict[str, str]]) -> None:
    work, env = machine
    assert _director("init", "My Store", "--dir", "plans", cwd=work, env=env).returncode == 0
    plan = work / "plans" / "My Store.md"
    assert parse_file(str(plan)).title.startswith("My Store")
    r = _director("apply", str(plan), "--non-interactive", "--set", "env=prod", cwd=work, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    store = work / "plans" / ".director" / plan.name / "workspace" / "my-store-prod"
    assert (store / "manifest").read_text() == "name=my-store\nenv=prod\n"


def test_init_refuses_to_overwrite(machine: tuple[Path, dict[str, str]]) -> None:
    work, env = machine
    plan = work / "cache.local.md"
    plan.write_text("# my own notes\n")
    for name in ("cache.local", "cache.local.md"):
        r = _director("init", name, cwd=work, env=env)
        assert r.returncode == 64, r.stdout + r.stderr
        assert "already exists" in r.stderr and "not overwriting" in r.stderr
        assert plan.read_text() == "# my own notes\n"


@pytest.mark.parametrize("name", ["", "a/b", "../escape"])
def test_init_refuses_names_that_are_not_plan_names(machine: tuple[Path, dict[str, str]], name: str) -> None:
    work, env = machine
    r = _director("init", name, cwd=work, env=env)
    assert r.returncode == 64 and "NAME" in r.stderr, r.stdout + r.stderr
    assert list(work.iterdir()) == [] and not (work.parent / "escape.md").exists()

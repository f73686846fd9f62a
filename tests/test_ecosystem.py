"""Fitting in: --version and -h, the packaging metadata, shell completion of --target from the registry,
DIRECTOR_* environment variables, and documentation whose links all stay inside the repository."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import director
from director.targets import TARGETS
from tests import forkserver
from tests.pristine import SEED

ROOT = Path(__file__).resolve().parent.parent


def cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return forkserver.run(
        [sys.executable, "-m", "director", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "NO_COLOR": "1", **env},
        timeout=60,
    )


def test_version_and_short_help() -> None:
    v = cli("--version")
    assert (v.returncode, v.stdout) == (0, f"director {director.__version__}\n")
    for args in (["-h"], ["lint", "-h"], ["apply", "-h"]):
        r = cli(*args)
        assert r.returncode == 0 and r.stdout.startswith("Usage: "), r.stderr


def test_packaging_metadata() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == "director-plans" and project["scripts"] == {"director": "director.cli:entry"}
    assert project["license"] == "MIT" and (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert {"Operating System :: POSIX :: Linux", "Operating System :: MacOS"} <= set(project["classifiers"])
    assert "urls" not in project  # no public home yet: no placeholder URL presented as real (README "Install")
    # Linux runs plans; on macOS the read-only commands work and a run stops at start (exit 6: prereqs)
    assert "**Linux** to run plans" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_no_private_typer_or_click_import() -> None:
    for path in (ROOT / "director").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(from|import) (typer\._click|click)\b", text, re.M), path


COMPLETE = {
    **os.environ,
    "_DIRECTOR_COMPLETE": "complete_bash",
    "COMP_WORDS": "director apply p.md --target ",
    "COMP_CWORD": "4",
}


def test_target_completes_from_the_registry() -> None:
    r = forkserver.run(
        [sys.executable, "-m", "director"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=COMPLETE,
        timeout=60,
    )
    if r.returncode != 0 or not r.stdout.strip():  # python -m: typer names the program after argv[0]
        r = subprocess.run(
            [str(Path(sys.executable).parent / "director")],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=COMPLETE,
            timeout=60,
        )
    assert r.stdout.split() == list(TARGETS), r.stdout + r.stderr
    bad = cli("plan", str(SEED), "--target", "nope")
    assert bad.returncode == 64 and "choose one of: " + ", ".join(TARGETS) in bad.stderr


def test_environment_variables_are_options(tmp_path: Path) -> None:
    r = cli("plan", str(SEED), DIRECTOR_TARGET="nope")
    assert r.returncode == 64 and "DIRECTOR_TARGET" in r.stderr
    import typer.main

    from director.cli import app

    group = typer.main.get_command(app)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    seen: set[str] = set()
    for name in ("apply", "teardown", "plan", "check", "status", "audit", "diff", "approve", "lint"):
        for param in group.commands[name].params:  # type: ignore[attr-defined]
            if param.name in ("plan", "plans", "section", "restart", "reinterview", "yes", "as_json", "jsonl", "against", "last_run",
                              "teardown_", "help", "verify", "orphan_consumers", "ignore_lint_errors", "details",
                              "allow_dirty_signers", "valid_for", "revoke", "reason"):  # fmt: skip  (per receipt, or an override)
                continue
            assert param.envvar, f"{name} {param.opts}: no DIRECTOR_* variable"
            seen.add(param.envvar)
    for var in seen:
        assert f"`{var}`" in table, f"{var} is not in the README's Configuration table"
    assert len(seen) >= 14


def test_usage_lines_name_the_arguments_in_capitals() -> None:
    # typer 0.26+ writes a required argument as `{plan}`; every command's usage reads `… [OPTIONS] PLAN`
    import typer.main

    from director.cli import app

    group = typer.main.get_command(app)
    commands: list[list[str]] = []
    for name, cmd in group.commands.items():  # type: ignore[attr-defined]
        subs = getattr(cmd, "commands", None)
        commands += [[name, sub] for sub in subs] if subs else [[name]]
    assert len(commands) >= 15
    usage = {}
    script = str(Path(sys.executable).parent / "director")  # the console script: `python -m` is named so
    for argv in commands:
        r = subprocess.run([script, *argv, "-h"], capture_output=True, text=True, cwd=ROOT, timeout=60)
        assert r.returncode == 0, r.stderr
        usage[" ".join(argv)] = r.stdout.splitlines()[0]
    for name, line in usage.items():
        assert re.fullmatch(rf"Usage: director {name} \[OPTIONS\]( \[?[A-Z]+(\.\.\.)?\]?)*", line), line
    assert usage["apply"] == "Usage: director apply [OPTIONS] PLAN..."  # one plan, or a family
    assert usage["lint"] == "Usage: director lint [OPTIONS] PLAN..."
    assert usage["output"] == "Usage: director output [OPTIONS] PLAN [KEY]"
    # a missing argument is a usage error naming it, never a traceback (whichever typer and click)
    missing = cli("approve", str(SEED))
    assert missing.returncode == 64 and "SECTION" in missing.stderr, missing.stderr
    none = cli("lint")
    assert none.returncode == 64 and "Missing argument 'PLAN'" in none.stderr and "Traceback" not in none.stderr


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


@pytest.mark.parametrize("doc", ["README.md", *sorted(p.name for p in (ROOT / "docs").glob("*.md"))])
def test_every_link_stays_in_the_repository(doc: str) -> None:
    path = ROOT / doc if doc == "README.md" else ROOT / "docs" / doc
    text = path.read_text(encoding="utf-8")
    assert "../shared" not in text and "PLAN-FORMAT.md" not in text
    for target in LINK.findall(text):
        assert not re.match(r"[a-z]+:", target), f"{doc}: {target} leaves the repository"
        file = target.split("#", 1)[0]
        if file:
            resolved = (path.parent / file).resolve()
            assert resolved.is_file() and ROOT in resolved.parents, f"{doc}: {target} is not a file of the repo"


def test_the_readme_links_every_doc() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for doc in (ROOT / "docs").glob("*.md"):
        assert f"(docs/{doc.name})" in readme, doc.name

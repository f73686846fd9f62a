"""Every install instruction of the README and of docs/ works as written, on this machine, in a temp venv.

The instructions are found in the documents (every `pip install …` / `pipx install …` in a code span or a
code block), so a new one the test does not run fails it. Each runs in a copy of the project (the working
tree is never built into), against the package registries pip is configured with and nothing else, and
the `director` it installed is then run. The two README commands `.ci/run` runs as written (the main job's
`pip install -e .`, the tests' `pip install -q -e '.[test]'`) are that very CI run, so they are checked to
be those commands rather than run a second time.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import director
from tests.test_readme import readme_block

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

pytestmark = pytest.mark.slow

_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)
_INSTALL = re.compile(r"(?:\S*/)?pipx? install\b[^#&;|`]*")


def install_instructions() -> dict[str, set[str]]:
    """Each install command (whitespace normalised) and the documents that give it."""
    found: dict[str, set[str]] = {}
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        code = [line for block in _FENCE.findall(text) for line in block.splitlines()]
        code += re.findall(r"`([^`]+)`", _FENCE.sub("", text))
        for piece in code:
            for m in _INSTALL.finditer(" ".join(piece.split())):
                found.setdefault(m.group(0).strip(), set()).add(path.relative_to(ROOT).as_posix())
    return found


def _copy_project(dest: Path) -> Path:
    """What `pip install .` reads from a clone: the package, its metadata, README and licence."""
    dest.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, dest / name)
    shutil.copytree(ROOT / "director", dest / "director", ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def _run(command: str, cwd: Path, env: dict[str, str]) -> None:
    r = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, f"`{command}` in {cwd} failed ({r.returncode}):\n{r.stdout[-2000:]}{r.stderr[-3000:]}"


def _version(director_bin: Path) -> str:
    r = subprocess.run([str(director_bin), "--version"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_every_install_instruction_works_as_written(tmp_path: Path) -> None:
    found = install_instructions()
    by_ci = {c for c in found if c in readme_block("main job") or c in readme_block("tests")}
    assert by_ci == {".venv/bin/pip install -e .", ".venv/bin/pip install -q -e '.[test]'"}, by_ci
    run_here = {"pip install .", "pipx install .", "pip install '.[postgres]'", "pip install ./director"}
    assert set(found) - by_ci == run_here, f"install instructions this test does not run: {set(found) - by_ci - run_here}"
    assert {"README.md", "docs/ci.md"} <= set().union(*found.values())

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"  # an activated venv: `pip` is its pip
    expected = f"director {director.__version__}"

    clone = _copy_project(tmp_path / "clone")
    _run("pip install .", clone, env)  # README "Install"; docs/ci.md's workflow, in Director's repository
    assert _version(venv / "bin" / "director") == expected
    _run("pip install '.[postgres]'", clone, env)  # README "Install" and "Shared state on PostgreSQL"
    _run("python -c 'import psycopg'", clone, env)

    team = tmp_path / "team"  # docs/ci.md: a repository of plans with a clone of Director beside them
    _copy_project(team / "director")
    _run("pip install ./director", team, env)
    assert _version(venv / "bin" / "director") == expected

    # README "Install": pipx (installed into this venv from the registry, as a user would have it)
    _run("pip install -q pipx", clone, env)
    pipx_env = {**env, "PIPX_HOME": str(tmp_path / "pipx"), "PIPX_BIN_DIR": str(tmp_path / "pipx-bin"),
                "PIPX_MAN_DIR": str(tmp_path / "pipx-man")}  # fmt: skip
    _run("pipx install .", clone, pipx_env)
    assert _version(tmp_path / "pipx-bin" / "director") == expected


def test_every_package_data_pattern_matches_a_file() -> None:
    import tomllib

    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    for package, patterns in data["package-data"].items():
        where = ROOT / package.replace(".", "/")
        for pattern in patterns:
            assert list(where.glob(pattern)), f"package-data {package}: {pattern!r} matches nothing"


def test_an_installed_copy_has_its_docs_and_says_what_it_is(tmp_path: Path) -> None:
    """`pip install .` (not editable) into a fresh venv: the pages `--help` names are there, and `pip show`
    names the licence (there is no public home, so no URL is claimed)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    clone = _copy_project(tmp_path / "clone")
    _run("pip install -q .", clone, env)
    shutil.rmtree(clone)  # nothing of the source tree is left to read from
    bin_ = venv / "bin" / "director"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(bin_), *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=120)  # fmt: skip

    listed = run("docs")
    assert listed.returncode == 0, listed.stderr
    pages = {line.split()[0] for line in listed.stdout.splitlines()}
    assert pages == {p.stem for p in (ROOT / "docs").glob("*.md")}
    # every page a command's --help names is installed
    named: set[str] = set()
    for command in ("apply", "teardown", "plan", "check", "lint", "approve", "status", "docs"):
        help_text = run(command, "--help").stdout
        assert "docs/" not in help_text.replace("`director docs", ""), f"{command} --help names a file"
        named |= set(re.findall(r"director docs ([a-z-]+)", " ".join(help_text.split())))
    assert named and named <= pages, named - pages
    page = run("docs", "families")
    assert page.returncode == 0 and page.stdout == (ROOT / "docs" / "families.md").read_text(encoding="utf-8")
    # the licence as PEP 639 says it (`pip show` prints it from pip 25.1 on; an older pip's `License:` is
    # empty, as the README says), read from the installed metadata
    read = "import importlib.metadata as m; d = m.metadata('director-plans'); print(d['License-Expression'])"
    licence = subprocess.run([str(venv / "bin" / "python"), "-c", read], env=env, capture_output=True,
                             text=True, timeout=120)  # fmt: skip
    assert licence.stdout.strip() == "MIT", licence.stderr
    shown = subprocess.run([str(venv / "bin" / "pip"), "show", "director-plans"], env=env, capture_output=True,
                           text=True, timeout=120).stdout  # fmt: skip
    fields = dict(line.split(": ", 1) for line in shown.splitlines() if ": " in line)
    assert fields["Name"] == "director-plans" and fields["Summary"] and fields["Author"]

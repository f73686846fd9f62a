"""The lowest versions pyproject.toml allows really work: `.ci/floor` pins every dependency (and the test
extra) to its floor in a fresh venv (`pip install -c constraints`) and runs a representative part of the
fast suite there (parse, lint, show, the CLI, exit codes, schemas, events…)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def test_the_floor_versions_pass_the_suite() -> None:
    r = subprocess.run(
        ["bash", str(ROOT / ".ci" / "floor")], cwd=ROOT, capture_output=True, text=True, timeout=1200
    )
    tail = (r.stdout + r.stderr)[-4000:]
    assert r.returncode == 0, tail
    assert "floor versions installed" in r.stdout and " passed" in r.stdout, tail
    assert "typer==0.16" in r.stdout  # typer before it vendored click: the CLI must not import either

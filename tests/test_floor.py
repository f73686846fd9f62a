"""The lowest versions pyproject.toml allows really work: `.ci/floor` pins every dependency (and the test
extra) to its floor in a fresh venv (`pip install -c constraints`) and runs a representative part of the
fast suite there (parse, lint, show, the CLI, exit codes, schemas, events…)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

@pytest.mark.slow
def test_the_floor_versions_pass_the_suite() -> None:
    r = subprocess.run(
        ["bash", str(ROOT / ".ci" / "floor")], cwd=ROOT, capture_output=True, text=True, timeout=1200
    )
    tail = failure_report(r.stdout, r.stderr)
    assert r.returncode == 0, tail
    assert "floor versions installed" in r.stdout and " passed" in r.stdout, tail
    assert "typer==0.16" in r.stdout  # typer before it vendored click: the CLI must not import either


def failure_report(stdout: str, stderr: str) -> str:
    """What a failure shows: the failing tests first (pytest's FAILED/ERROR lines), then the end of pytest's
    output, then the end of stderr -- where pip's warnings go; they never push the failures out of sight."""
    failing = [ln for ln in stdout.splitlines() if ln.startswith(("FAILED ", "ERROR "))]
    parts = [
        "failing tests:\n" + ("\n".join(failing) if failing else "(none named: see the output below)"),
        "the end of .ci/floor's output:\n" + stdout[-3000:],
        "the end of its stderr (pip, …):\n" + stderr[-1500:],
    ]
    return "\n\n".join(parts)


def test_a_failure_report_names_the_failing_tests_before_pips_noise() -> None:
    stdout = "floor versions installed\n" + "." * 50 + "\nFAILED tests/test_x.py::test_y - boom\n1 failed\n"
    stderr = "WARNING: Location 'file:///opt/x' is ignored\n" * 500
    report = failure_report(stdout, stderr)
    assert report.startswith("failing tests:\nFAILED tests/test_x.py::test_y - boom\n")
    assert "1 failed" in report and len(report) < 6000

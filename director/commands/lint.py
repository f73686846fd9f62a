"""`director lint`: author checks, one finding a line."""

from __future__ import annotations

from pathlib import Path

from director.commands.paths import load_plan
from director.errors import ExitCode


def lint_command(plan_path: Path) -> ExitCode:
    """Print the findings; exit 1 (findings) when there are any, like a linter."""
    from director.plan.lint import lint

    findings = lint(load_plan(plan_path))
    for f in findings:
        print(f.format(str(plan_path)))
    if findings:
        print(f"{len(findings)} finding(s)")
        return ExitCode.FINDINGS
    print("clean")
    return ExitCode.OK

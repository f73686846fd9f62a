"""The lint gate: `apply` and `teardown` refuse a plan in which `director lint` finds an error.

A lint *error* means the run will misbehave (docs/lint.md): a section whose verify a missing fence merged
into its act (`missing-verify`), a marker that can never apply, a template that stops the run midway.
Such a plan is refused before anything is created or run: each error on its own line
(`error: PLAN:LINE: CODE: message`), then one line saying what to do, exit 65. `--ignore-lint-errors`
runs it anyway (a warning line names the codes). Suppressed findings (`director-lint: disable=…`) and
warnings never stop a run.
"""

from __future__ import annotations

import sys
from pathlib import Path

from director.errors import PlanError, one_line
from director.plan.model import Plan

__all__ = ["refuse_lint_errors"]


def refuse_lint_errors(plan: Plan, path: Path, *, ignore: bool) -> None:
    """Raise `PlanError` (exit 65) if `plan` has lint errors, after printing each; with `ignore`, warn."""
    from director.plan.lint import Severity, lint, split_suppressed

    findings, _silenced = split_suppressed(plan, lint(plan))
    errors = [f for f in findings if f.severity is Severity.ERROR]
    if not errors:
        return
    n = f"{len(errors)} lint error{'s' if len(errors) > 1 else ''}"
    if ignore:
        codes = ", ".join(sorted({f.code for f in errors}))
        print(
            f"warning: {one_line(str(path))}: running despite {n} ({codes}): --ignore-lint-errors",
            file=sys.stderr,
        )
        return
    for f in errors:
        message = " ".join(f.message.split())  # one line each
        print(f"error: {one_line(str(path))}:{f.line}: {f.code}: {message}", file=sys.stderr)
    raise PlanError(
        f"{n} (above): nothing was run; fix the plan (`director lint` explains each code), or run it anyway "
        "with --ignore-lint-errors",
        path=str(path),
    )

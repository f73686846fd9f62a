"""`director lint`: author checks over one or more plans, as text, one JSON document, or GitHub annotations.

Exit 0 when no finding fails (`--strict`: warnings fail too; info never does), 1 when one does, 65 when a
plan cannot be parsed (the others are still linted and reported), 64 when a PLAN does not exist.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from director.commands.paths import require_plan
from director.errors import ExitCode, PlanError, one_line

Format = Literal["text", "json", "github"]
SCHEMA = "director.lint/1"


@dataclass
class _FileResult:
    path: str
    findings: list[Any] = field(default_factory=list)  # plan.lint.Finding
    suppressed: int = 0
    plan_error: PlanError | None = None


def lint_command(plan_paths: list[Path], *, fmt: Format = "text", strict: bool = False) -> ExitCode:
    """Lint every plan and print the findings in `fmt`; the exit code of the whole set."""
    from director.plan.lint import Severity, lint, split_suppressed
    from director.plan.parse import parse_file

    for p in plan_paths:
        require_plan(p)  # every argument exists before anything is printed
    results: list[_FileResult] = []
    for p in plan_paths:
        r = _FileResult(str(p))
        try:
            plan = parse_file(str(p))
        except PlanError as exc:
            r.plan_error = exc
        else:
            r.findings, silenced = split_suppressed(plan, lint(plan))
            r.suppressed = len(silenced)
        results.append(r)

    failing = {Severity.ERROR, Severity.WARNING} if strict else {Severity.ERROR}
    if any(r.plan_error for r in results):
        code = ExitCode.PLAN_ERROR
    elif any(f.severity in failing for r in results for f in r.findings):
        code = ExitCode.FINDINGS
    else:
        code = ExitCode.OK
    if fmt == "json":
        print(json.dumps(_document(results, strict, code), indent=2, ensure_ascii=False))
    elif fmt == "github":
        _github(results)
    else:
        _text(results)
    return code


def _counts(results: list[_FileResult]) -> dict[str, int]:
    counts = {"error": 0, "warning": 0, "info": 0}
    for r in results:
        for f in r.findings:
            counts[str(f.severity)] += 1
    return counts


def _summary_line(results: list[_FileResult]) -> str:
    c = _counts(results)
    total = sum(c.values())
    suppressed = sum(r.suppressed for r in results)
    broken = sum(1 for r in results if r.plan_error)
    parts = [f"{c['error']} error(s), {c['warning']} warning(s), {c['info']} info"]
    if suppressed:
        parts.append(f"{suppressed} suppressed")
    if broken:
        parts.append(f"{broken} plan(s) not parsed")
    head = "clean" if total == 0 and not broken else f"{total} finding(s)"
    if len(results) > 1:
        head += f" in {len(results)} plans"
    return f"{head}: {', '.join(parts)}" if total or suppressed or broken else head


def _text(results: list[_FileResult]) -> None:
    for r in results:
        if r.plan_error is not None:
            print(f"error: {one_line(str(r.plan_error))}", file=sys.stderr)
        for f in r.findings:
            print(one_line(f.format(r.path)))  # one finding a line, whatever the path holds
    print(_summary_line(results))


def _github(results: list[_FileResult]) -> None:
    from director.ci import Level, annotation

    level: dict[str, Level] = {"error": "error", "warning": "warning", "info": "notice"}
    for r in results:
        if r.plan_error is not None:
            e = r.plan_error
            print(annotation("error", e.reason, file=r.path, line=e.line, title="director plan error"))
        for f in r.findings:
            title = f"director-lint {f.code}"
            print(annotation(level[str(f.severity)], f.message, file=r.path, line=f.line, title=title))
    print(_summary_line(results))


def _document(results: list[_FileResult], strict: bool, code: ExitCode) -> dict[str, Any]:
    """The `director.lint/1` document: every file, every finding, the counts, the exit code."""
    return {
        "schema": SCHEMA,
        "strict": strict,
        "files": [
            {
                "path": r.path,
                "findings": len(r.findings),
                "suppressed": r.suppressed,
                "plan_error": None
                if r.plan_error is None
                else {"line": r.plan_error.line, "message": r.plan_error.reason},
            }
            for r in results
        ],
        "findings": [f.to_json(r.path) for r in results for f in r.findings],
        "counts": {**_counts(results), "suppressed": sum(r.suppressed for r in results)},
        "exit_code": int(code),
    }

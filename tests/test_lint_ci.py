"""`director lint` in CI: several plans, severities and --strict, suppression comments, one JSON document,
GitHub annotations, and docs/lint.md naming every code with its severity."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from director.plan import bash
from director.plan.lint import RULES, Severity, lint, split_suppressed
from director.plan.parse import parse
from tests import forkserver, pristine
from tests.jsonschemas import validated
from tests.pristine import PRISTINE

ROOT = Path(__file__).resolve().parent.parent
SEED = "plans/workflow.cloudflare.md"


def lint_cli(*args: str, cwd: Path = PRISTINE) -> subprocess.CompletedProcess[str]:
    return forkserver.run(
        [sys.executable, "-m", "director", "lint", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
    )


def every_plan() -> list[str]:
    return [str(p.relative_to(PRISTINE)) for p in pristine.every_plan()]


def test_several_plans_one_json_document() -> None:
    r = lint_cli(*every_plan(), "--format", "json")
    assert r.returncode == 0, r.stdout + r.stderr  # warnings only: CI passes by default
    doc = validated(r.stdout, "lint")  # ONE document for all the files
    assert [f["path"] for f in doc["files"]] == every_plan()
    seed = [(f["line"], f["code"], f["severity"]) for f in doc["findings"] if f["path"] == SEED]
    assert seed == [
        (256, "verify-exit-status", "warning"),
        (289, "unenforced-check", "warning"),
        (397, "soft-alternative", "warning"),
        (399, "soft-alternative", "warning"),
    ]
    assert doc["counts"]["error"] == 0 and doc["exit_code"] == 0 and doc["strict"] is False


def test_strict_fails_on_warnings_and_github_prints_annotations() -> None:
    r = lint_cli(SEED, "--strict", "--format", "github")
    assert r.returncode == 1
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("::")]
    assert len(lines) == 4 and all(ln.startswith(f"::warning file={SEED},line=") for ln in lines)
    assert lines[0].startswith(f"::warning file={SEED},line=256,title=director-lint verify-exit-status::")


def test_errors_fail_without_strict_and_info_never(tmp_path: Path) -> None:
    plan = tmp_path / "p.md"
    plan.write_text("# T\n\n## 1. Build  🟢\n\n```sh { name=b color=blue }\nmake\n```\n")
    r = lint_cli(str(plan), "--format", "json")
    doc = validated(r.stdout)
    by_code = {f["code"]: f["severity"] for f in doc["findings"]}
    assert by_code["missing-verify"] == "error" and by_code["unknown-fence-attribute"] == "info"
    assert r.returncode == 1 and doc["exit_code"] == 1
    plan.write_text("# T\n\n<!-- director-lint: disable=missing-verify -->\n## 1. Build  🟢\n\n```sh\nmake\n```\n")
    assert lint_cli(str(plan)).returncode == 0


def test_a_plan_error_among_several_is_reported_and_exits_65(tmp_path: Path) -> None:
    bad_plan = str(ROOT / "tests" / "plans" / "bad" / "unknown-marker.md")
    r = lint_cli(SEED, bad_plan, "--format", "json")
    assert r.returncode == 65
    doc = validated(r.stdout)
    bad = doc["files"][1]
    assert bad["plan_error"]["line"] == 3 and "unknown marker" in bad["plan_error"]["message"]
    assert len(doc["findings"]) == 4  # the seed was still linted
    text = lint_cli(SEED, bad_plan)
    assert text.returncode == 65 and f"{bad_plan}:3:" in text.stderr
    assert lint_cli(SEED, "no/such.md").returncode == 64


SOFT = """# T

## 1. Go  ✔

```bash
probe | tail -5
{directive}probe && echo "gone" || echo "still there"
probe || echo "probe failed"{trailing}
```
"""


@pytest.mark.parametrize(
    ("directive", "trailing", "silenced"),
    [
        ("# director-lint: disable=soft-alternative\n", "", {"soft-alternative"}),
        ("", "   # director-lint: disable=fail-without-exit", {"fail-without-exit"}),
        ("# director-lint: disable=soft-alternative,verify-exit-status\n", "", {"soft-alternative"}),
        ("# director-lint: disable=all\n", "", {"soft-alternative"}),
    ],
)
def test_a_comment_silences_one_rule_on_one_line(directive: str, trailing: str, silenced: set[str]) -> None:
    plan = parse(SOFT.format(directive=directive, trailing=trailing))
    reported, suppressed = split_suppressed(plan, lint(plan))
    assert {f.code for f in suppressed} == silenced
    # the same code elsewhere is still reported: one line only
    assert "verify-exit-status" in {f.code for f in reported}


def test_html_comment_before_a_heading_and_disable_file() -> None:
    text = "# T\n\n## 1. A\n\n```bash\nmake\n```\n"
    plan = parse(text)
    assert {"unverified-act", "missing-marker"} <= {f.code for f in lint(plan)}
    quiet = parse(text.replace("## 1. A", "<!-- director-lint: disable=missing-marker -->\n## 1. A"))
    reported, suppressed = split_suppressed(quiet, lint(quiet))
    assert [f.code for f in suppressed] == ["missing-marker"] and "unverified-act" in {f.code for f in reported}
    whole = parse("<!-- director-lint: disable-file=missing-teardown,missing-live-state -->\n" + text)
    assert {f.code for f in split_suppressed(whole, lint(whole))[1]} == {"missing-teardown", "missing-live-state"}


def test_suppressed_count_in_text_and_json(tmp_path: Path) -> None:
    plan = tmp_path / "p.md"
    plan.write_text(SOFT.format(directive="# director-lint: disable=soft-alternative\n", trailing=""))
    r = lint_cli(str(plan))
    assert "1 suppressed" in r.stdout.splitlines()[-1]
    assert validated(lint_cli(str(plan), "--format", "json").stdout)["counts"]["suppressed"] == 1


def _emitted_codes() -> set[str]:
    """Every code the lint modules can emit (read from their source)."""
    sources = [Path(sys.modules["director.plan.lint"].__file__ or ""), Path(bash.__file__ or "").parent / "lint.py"]
    codes: set[str] = set()
    for src in sources:
        text = src.read_text(encoding="utf-8")
        codes |= set(re.findall(r'^\s+"([a-z]+(?:-[a-z]+)+)",\s*$', text, re.MULTILINE))
    return codes


def test_every_code_has_a_severity_and_a_documented_row() -> None:
    emitted = _emitted_codes()
    assert len(emitted) >= 25 and emitted <= set(RULES), emitted - set(RULES)
    doc = (ROOT / "docs" / "lint.md").read_text(encoding="utf-8")
    sections = re.split(r"^### ", doc, flags=re.MULTILINE)
    documented = {
        sev: set(re.findall(r"^\| `([a-z-]+)` \|", next(s for s in sections if s.startswith(title)), re.M))
        for sev, title in ((Severity.ERROR, "Errors"), (Severity.WARNING, "Warnings"), (Severity.INFO, "Info"))
    }
    for code, (sev, _) in RULES.items():
        assert code in documented[sev], f"docs/lint.md does not list {code} under {sev}"
    assert sum(len(v) for v in documented.values()) == len(RULES)


def test_the_seed_and_examples_do_not_fail_ci_by_default() -> None:
    assert lint_cli(*every_plan()).returncode == 0
    assert lint_cli(SEED, "--strict").returncode == 1
    strict = forkserver.run(
        [sys.executable, "-m", "director", "lint", SEED],
        cwd=PRISTINE,
        capture_output=True,
        text=True,
        env={**os.environ, "DIRECTOR_LINT_STRICT": "1", "DIRECTOR_LINT_FORMAT": "github"},
    )
    assert strict.returncode == 1 and strict.stdout.startswith("::warning ")

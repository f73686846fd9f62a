"""Table-driven corpus: every plan under tests/plans/ok parses to its golden JSON, every plan under
tests/plans/bad fails with a PlanError naming the expected file:line and reason.

Regenerate the goldens after an intended model change with:

    DIRECTOR_UPDATE_GOLDEN=1 .venv/bin/pytest tests/test_parse_corpus.py

then review `git diff tests/golden/parse` before committing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from director.errors import PlanError
from director.plan.lint import lint
from director.plan.parse import parse, parse_file
from director.plan.tojson import to_json
from tests.pristine import EXAMPLES, PRISTINE, SEED

ROOT = Path(__file__).resolve().parent.parent
PLANS = ROOT / "tests" / "plans"
GOLDEN = ROOT / "tests" / "golden" / "parse"
UPDATE = os.environ.get("DIRECTOR_UPDATE_GOLDEN") == "1"

FULL_PLANS = [SEED, EXAMPLES / "database.local.md", EXAMPLES / "static-site.local.md"]
OK_PLANS = sorted((PLANS / "ok").glob("*.md"))

# name → (1-based line the error must name, a phrase the reason must contain)
BAD = {
    "check-table-columns": (9, "lacks column(s) observed"),
    "condition-no-knob": (3, "name no knob"),
    "duplicate-section": (7, "duplicate section number 2"),
    "duplicate-teardown": (5, "a second"),
    "input-default-outside": (7, "default 'ap' is not one of its options"),
    "input-missing-column": (5, "lacks column(s) options"),
    "input-no-knob": (7, "sets no knob"),
    "input-no-options": (8, "has no options"),
    "live-state-not-mapping": (5, "must be a mapping"),
    "live-state-yaml": (7, "Live State YAML does not parse"),
    "no-title": (1, "no `#` title"),
    "out-of-order": (7, "must be in order"),
    "realized-missing": (12, "names no section"),
    "resolved-inputs-yaml": (8, "resolved_inputs YAML does not parse"),
    "retry-bad-count": (5, "bad retries"),
    "retry-bad-duration": (5, "bad delay"),
    "template-no-target": (5, "names no file"),
    "two-titles": (5, "a second `#` title"),
    "unclosed-fence": (5, "unclosed ``` fence"),
    "unknown-marker": (3, "unknown marker '🟣'"),
    "unknown-marker-second": (3, "unknown marker '🚫'"),
    "unknown-marker-vs": (5, "unknown marker '⚠️'"),
}


def _rel(path: Path) -> str:
    """The path a user names: `plans/…` for the committed plans, `tests/plans/…` for the test plans."""
    return path.relative_to(PRISTINE if path.is_relative_to(PRISTINE) else ROOT).as_posix()


def _check_golden(path: Path, name: str) -> None:
    data = to_json(parse(path.read_text(encoding="utf-8"), _rel(path)))
    text = json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False) + "\n"
    golden = GOLDEN / f"{name}.json"
    if UPDATE or not golden.exists():
        if not UPDATE:
            pytest.fail(f"no golden {golden}; run with DIRECTOR_UPDATE_GOLDEN=1 to create it")
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text, encoding="utf-8")
    assert json.loads(golden.read_text(encoding="utf-8")) == json.loads(text)


@pytest.mark.parametrize("path", FULL_PLANS, ids=lambda p: p.stem)
def test_full_plan_matches_golden(path: Path) -> None:
    _check_golden(path, path.stem)


@pytest.mark.parametrize("path", OK_PLANS, ids=lambda p: p.stem)
def test_corpus_plan_matches_golden(path: Path) -> None:
    _check_golden(path, f"corpus-{path.stem}")


def test_every_bad_plan_is_in_the_table() -> None:
    assert {p.stem for p in (PLANS / "bad").glob("*.md")} == set(BAD)


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_plan_names_line_and_reason(name: str) -> None:
    line, phrase = BAD[name]
    path = PLANS / "bad" / f"{name}.md"
    with pytest.raises(PlanError) as info:
        parse_file(path)
    err = info.value
    assert err.line == line, str(err)
    assert phrase in err.reason, str(err)
    assert str(err).startswith(f"{path}:{line}: ")


@pytest.mark.parametrize("path", FULL_PLANS[1:], ids=lambda p: p.stem)
def test_example_plans_lint_clean(path: Path) -> None:
    plan = parse_file(path)
    assert [f.format(str(path)) for f in lint(plan)] == []


def test_example_plans_use_no_wrangler() -> None:
    for path in FULL_PLANS[1:]:
        assert "wrangler" not in path.read_text(encoding="utf-8")

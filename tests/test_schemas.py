"""The shipped JSON Schemas: valid, packaged, closed (a field an output gains without a schema change fails),
and every output of a full run validates (the tests that produce JSON validate it too: tests/jsonschemas.py)."""

from __future__ import annotations

import copy
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from director import schemas
from tests import forkserver, jsonschemas
from tests.planmaker import CounterPlan, Step, director, write_plan
from tests.pristine import every_plan

# slow: end to end through the real CLI, many runs; CI runs it with the rest
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name", schemas.NAMES)
def test_each_schema_is_a_valid_draft_2020_12_schema(name: str) -> None:
    schema = schemas.load(name)
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_schemas_are_package_data() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"director.schemas" = ["*.json"]' in pyproject
    shipped = {p.stem for p in (ROOT / "director" / "schemas").glob("*.json")}
    assert shipped == set(schemas.NAMES)


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every JSON output of Director, from one plan run through a gate, an approval and a drift."""
    tmp = tmp_path_factory.mktemp("outputs")
    out = tmp / "out"
    out.mkdir()
    plan = write_plan(tmp, CounterPlan([Step(), Step(marker="🔴")]))
    sibling = write_plan(tmp, CounterPlan([Step()]), name="sibling.md")
    events = tmp / "events.jsonl"
    assert director("apply", str(plan), "--events", str(events), cwd=tmp, out=out).returncode == 4
    assert director("status", str(plan), "--json", cwd=tmp, out=out).returncode == 0
    assert director("approve", str(plan), "2", "--yes", cwd=tmp, out=out).returncode == 0
    assert director("apply", str(plan), "--events", str(events), cwd=tmp, out=out).returncode == 0
    (out / "s1").unlink()
    assert director("check", str(plan), "--events", str(events), cwd=tmp, out=out).returncode == 2
    assert director("plan", str(plan), "--events", str(events), cwd=tmp, out=out).returncode == 2

    def run(*args: str) -> str:
        return director(*args, cwd=tmp, out=out).stdout

    return {
        "plan": json.loads(run("show", str(plan), "--json")),
        "diff": json.loads(run("diff", str(plan), "--last-run", "--json")),
        "status": json.loads(run("status", str(plan), "--json")),
        "family": json.loads(run("status", str(plan), str(sibling), "--json")),
        "audit": json.loads(run("audit", str(plan), "--json")),
        "audit-record": [json.loads(ln) for ln in run("audit", str(plan), "--jsonl").splitlines()],
        "lint": json.loads(run("lint", str(plan), "--format", "json")),
        "event": [json.loads(ln) for ln in events.read_text(encoding="utf-8").splitlines()],
        "result": [json.loads(run(c, str(plan), "--json")) for c in ("plan", "check", "apply")],
        "family-result": json.loads(run("check", str(plan), str(sibling), "--json")),
        "output": json.loads(run("output", str(plan), "--json")),
    }


@pytest.mark.parametrize("name", schemas.NAMES)
def test_every_output_validates_and_declares_its_schema(outputs: dict[str, Any], name: str) -> None:
    docs = outputs[name] if isinstance(outputs[name], list) else [outputs[name]]
    assert docs
    for doc in docs:
        assert re.fullmatch(r"director\.[a-z-]+/1", doc["schema"]), doc["schema"]
        assert schemas.name_for(doc) == name
        jsonschemas.check(doc)


def test_the_events_cover_the_run_and_the_records_every_table(outputs: dict[str, Any]) -> None:
    types = {e["type"] for e in outputs["event"]}
    assert {"run.start", "inputs", "run.state", "section.start", "section.verdict", "step.start", "step.output",
            "step.end", "gate", "approval", "ledger.write", "run.end"} <= types  # fmt: skip
    assert {r["record"] for r in outputs["audit-record"]} >= {"run", "transition", "step", "approval", "event"}


def _objects(node: Any, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Paths of every JSON object in a document."""
    found: list[tuple[str | int, ...]] = []
    if isinstance(node, dict):
        found.append(path)
        for k, v in node.items():
            found += _objects(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            found += _objects(v, (*path, i))
    return found


# Objects whose content is the plan's or a target's own: open on purpose (docs/json.md, "Conventions").
OPEN = re.compile(r"(^|/)(data|content|session|flags|inputs|values|how|attributes|detail|resolved_inputs_template"
                  r"|sessions/\d+|mapping|variables|arrays)(/|$)")  # fmt: skip


@pytest.mark.parametrize("name", schemas.NAMES)
def test_a_field_the_schema_does_not_declare_fails(outputs: dict[str, Any], name: str) -> None:
    """Closed objects: adding a field anywhere (but inside plan/target content) breaks validation."""
    docs = outputs[name] if isinstance(outputs[name], list) else [outputs[name]]
    tried = 0
    for doc in docs:
        for path in _objects(doc):
            if OPEN.search("/".join(map(str, path))):
                continue
            bad = copy.deepcopy(doc)
            node = bad
            for k in path:
                node = node[k]
            node["surprise"] = 1
            with pytest.raises(AssertionError, match="surprise"):
                jsonschemas.check(bad, name)
            tried += 1
    assert tried > 0


def test_times_are_rfc3339_everywhere(outputs: dict[str, Any]) -> None:
    text = json.dumps(outputs, ensure_ascii=False)
    assert not re.search(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", text), "a space-separated timestamp"
    stamps = re.findall(r'"(?:ts|at|created_at|updated_at|started_at|finished_at|last_success)": "([^"]+)"', text)
    assert stamps and all(re.fullmatch(jsonschemas.RFC3339, s) for s in stamps), stamps[:5]


def test_show_json_of_every_repository_plan_validates() -> None:
    for plan in [*every_plan(), *ROOT.glob("tests/plans/ok/*.md")]:
        r = forkserver.run(
            [sys.executable, "-m", "director", "show", "--json", str(plan)],
            capture_output=True, text=True, cwd=ROOT, env={**os.environ, "NO_COLOR": "1"}, timeout=60,
        )  # fmt: skip
        assert r.returncode == 0, r.stderr
        jsonschemas.validated(r.stdout, "plan")

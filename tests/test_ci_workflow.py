"""The GitHub Actions workflow of docs/ci.md, run step by step (every `run:` but the install) against small
local plans, as the runner would: `GITHUB_ACTIONS=true`, `CI=true`, a temporary `GITHUB_STEP_SUMMARY` and
`GITHUB_OUTPUT`, `bash -e`. Checks the annotations, the job summary, the step outputs and the events."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from director.ci import in_ci, truthy
from tests.jsonschemas import validated_lines
from tests.planmaker import CounterPlan, Step

# slow: end to end through the real CLI, many runs; CI runs it with the rest
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent

WEAK = """# Weak

## 1. Build  🟢

```bash
touch built
```
```bash
# ✔ built
ls built | tail -1
```
"""


def workflow() -> dict[str, Any]:
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```yaml\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
    wf = next(b for b in blocks if b.startswith("name: director"))
    data: dict[str, Any] = YAML(typ="safe").load(wf)
    return data


class Runner:
    """One job's `run:` steps, in a checkout of a small repository."""

    def __init__(self, repo: Path, out: Path, overrides: dict[str, str]) -> None:
        self.repo, self.out, self.overrides = repo, out, overrides
        self.summary = repo.parent / "summary.md"
        self.output = repo.parent / "github-output"

    def job(self, name: str) -> list[subprocess.CompletedProcess[str]]:
        wf = workflow()
        job = wf["jobs"][name]
        results = []
        for step in job["steps"]:
            if "run" not in step or step.get("name", "").startswith("Install"):
                continue
            env = {**os.environ, **{k: str(v) for k, v in wf.get("env", {}).items()}}
            env.update({k: str(v) for k, v in job.get("env", {}).items()})
            env.update({k: "" if "${{" in str(v) else str(v) for k, v in step.get("env", {}).items()})
            env.update(self.overrides)
            env.update(
                GITHUB_ACTIONS="true",
                CI="true",
                GITHUB_STEP_SUMMARY=str(self.summary),
                GITHUB_OUTPUT=str(self.output),
                PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
                COUNTER_OUT=str(self.out),
                NO_COLOR="1",
            )
            assert "${{" not in step["run"], "run scripts read env vars, never expressions"
            results.append(
                subprocess.run(
                    ["bash", "-e", "-c", step["run"]],
                    cwd=self.repo,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=300,
                )
            )
        return results


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    d = tmp_path / "repo"
    (d / "plans").mkdir(parents=True)
    (d / "plans" / "app.md").write_text(CounterPlan([Step(), Step(marker="🔴")]).text(), encoding="utf-8")
    (d / "plans" / "weak.md").write_text(WEAK, encoding="utf-8")
    return d


def test_the_documented_workflow_on_github_actions(repo: Path, tmp_path: Path) -> None:
    assert (BIN / "director").exists(), "the director console script of this environment"
    out = tmp_path / "out"
    gh = Runner(repo, out, {"PLAN": "plans/app.md", "APPROVE": "2", "DIRECTOR_TARGET": "cloudflare"})

    # lint on every push: warnings are annotations, not a failure
    [lint] = gh.job("lint")
    assert lint.returncode == 0, lint.stdout + lint.stderr
    assert re.search(r"^::warning file=plans/weak\.md,line=10,title=director-lint verify-exit-status::", lint.stdout, re.M)

    # the pull-request check: exit 2 (changes pending) passes the step, the preview is in the job summary
    [preview] = gh.job("preview")
    assert preview.returncode == 0, preview.stdout + preview.stderr
    assert "changes=true" in gh.output.read_text()
    summary = gh.summary.read_text(encoding="utf-8")
    assert "### `director plan` · `plans/app.md`" in summary and "**changes pending** (exit 2)" in summary
    assert re.search(r"^\| §1 Step 1 \| will-apply \| never applied; .*\|$", summary, re.M)
    assert re.search(r"^::notice file=plans/app\.md,line=\d+,title=director plan::will-apply", preview.stdout, re.M)
    assert validated_lines((repo / "events-preview.jsonl").read_text(), "event")

    # apply on merge, the 🔴 section approved by flag; the events are kept for the artifact
    [apply] = gh.job("apply")
    assert apply.returncode == 0, apply.stdout + apply.stderr
    summary = gh.summary.read_text(encoding="utf-8")
    assert "### `director apply` · `plans/app.md`" in summary and "(exit 0)" in summary
    events = validated_lines((repo / "events-apply.jsonl").read_text(), "event")
    assert [e["how"] for e in events if e["type"] == "approval"] == ["flag"]
    assert events[-1]["type"] == "run.end" and events[-1]["exit_code"] == 0

    # the scheduled drift check: drift is an error annotation at the section, and the summary lists it
    (out / "s1").unlink()
    [drift] = gh.job("drift")
    assert drift.returncode == 2
    plan_lines = (repo / "plans" / "app.md").read_text().splitlines()
    line = plan_lines.index("## 1. Step 1  🟢") + 1
    assert f"::error file=plans/app.md,line={line},title=director check%3A drift::drift: §1 Step 1" in drift.stdout
    assert "**drift found** (exit 2)" in gh.summary.read_text(encoding="utf-8")


def test_a_failed_apply_is_an_error_annotation_at_its_section(repo: Path, tmp_path: Path) -> None:
    (repo / "plans" / "app.md").write_text(CounterPlan([Step(extra="exit 3"), Step()]).text(), encoding="utf-8")
    gh = Runner(repo, tmp_path / "out", {"PLAN": "plans/app.md", "APPROVE": ""})
    [apply] = gh.job("apply")
    assert apply.returncode == 3
    line = (repo / "plans" / "app.md").read_text().splitlines().index("## 1. Step 1  🟢") + 1
    assert re.search(rf"^::error file=plans/app\.md,line={line},title=director apply failed::failed", apply.stdout, re.M)
    assert "**apply failed" in gh.summary.read_text(encoding="utf-8")


def test_a_gate_without_approval_is_a_warning_with_the_approve_command(repo: Path, tmp_path: Path) -> None:
    gh = Runner(repo, tmp_path / "out", {"PLAN": "plans/app.md", "APPROVE": ""})
    [apply] = gh.job("apply")
    assert apply.returncode == 4
    assert re.search(r"^::warning file=plans/app\.md,line=\d+,title=director apply::awaiting approval", apply.stdout, re.M)
    assert "director approve" in gh.summary.read_text(encoding="utf-8")


@pytest.mark.parametrize(("value", "ci"), [("true", True), ("1", True), ("TRUE", True), ("false", False),
                                           ("0", False), ("", False), (None, False)])  # fmt: skip
def test_ci_false_is_not_ci(value: str | None, ci: bool) -> None:
    env = {} if value is None else {"CI": value}
    assert in_ci(env) is ci and truthy(value) is ci


def test_no_raw_ci_lookups_left() -> None:
    """Every `CI` read goes through director.ci (a raw `environ.get("CI")` is truthy for "false").

    The wrangler shim is wrangler, not Director: it reads CI the way wrangler (ci-info) does."""
    for path in (ROOT / "director").rglob("*.py"):
        if "shim" in path.parts:
            continue
        assert 'environ.get("CI")' not in path.read_text(encoding="utf-8"), path

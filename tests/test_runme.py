"""Runme interop: a fence written the Runme way is no plan error; Director uses name, cwd, interactive,
excludeFromRunAll (and keeps Runme's id), notes any other attribute (lint info), and keeps its own
`{retries=3 …}` retry policy working, alone or mixed with Runme's attributes."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from director.errors import PlanError
from director.plan.lint import lint
from director.plan.model import BlockRole
from director.plan.parse import parse
from director.plan.tojson import to_json
from tests import forkserver

PLAN = """\
# R

## 0. Variables

```bash
mkdir -p app
```

## 1. Deploy  🟢

```sh { name=deploy cwd=app interactive=false }
echo deployed > marker
```
```sh {"name":"check-deployed","id":"01HF7BT3HD"}
# ✔ deployed
[ -f app/marker ] && [ ! -e marker ] && echo "deployed" || { echo "not deployed"; exit 1; }
```
```bash {retries=2 delay=1s name=flaky}
true
```
```sh { excludeFromRunAll=true background=true }
rm -rf "$HOME/not-run"
```

## Live State

```yaml
status: not-created
```
"""


def test_runme_fences_parse_with_their_attributes() -> None:
    blocks = parse(PLAN).section("1").blocks
    assert [b.name for b in blocks] == ["deploy", "check-deployed", "flaky", None]
    assert [b.role for b in blocks] == [BlockRole.ACT, BlockRole.VERIFY, BlockRole.ACT, BlockRole.ILLUSTRATIVE]
    assert blocks[0].cwd == "app" and blocks[0].fence.interactive is False
    assert blocks[2].retry is not None and (blocks[2].retry.retries, blocks[2].retry.delay_s) == (2, 1.0)
    shown = to_json(parse(PLAN))["sections"][1]["blocks"]
    assert shown[0]["name"] == "deploy" and shown[0]["attributes"] == {
        "name": "deploy",
        "cwd": "app",
        "interactive": "false",
    }


def test_unknown_attributes_are_a_lint_note_not_an_error() -> None:
    found = [(f.line, f.code, str(f.severity)) for f in lint(parse(PLAN)) if f.code == "unknown-fence-attribute"]
    assert found == [(21, "unknown-fence-attribute", "info")]


@pytest.mark.parametrize(
    ("fence", "phrase"),
    [
        ("```sh {interactive=maybe}", "bad interactive='maybe'"),
        ("```sh {name=a name=b}", "set twice"),
        ("```sh {name}", "expected key=value"),
        ("```bash {retries=x}", "bad retries"),
        ('```sh {"name": }', "bad fence attributes"),
    ],
)
def test_malformed_attributes_are_plan_errors(fence: str, phrase: str) -> None:
    with pytest.raises(PlanError) as info:
        parse(f"# T\n\n## 1. A  🟢\n\n{fence}\necho hi\n```\n")
    assert info.value.line == 5 and phrase in info.value.reason


def test_cwd_runs_the_block_there_and_the_next_block_where_the_session_was(tmp_path: Path) -> None:
    plan = tmp_path / "r.md"
    plan.write_text(PLAN, encoding="utf-8")
    r = forkserver.run(
        [sys.executable, "-m", "director", "apply", str(plan), "--plain"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "CI": "1", "NO_COLOR": "1"},
        timeout=120,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    work = tmp_path / ".director" / "r.md" / "workspace"
    assert (work / "app" / "marker").read_text() == "deployed\n" and not (work / "marker").exists()

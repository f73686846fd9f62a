"""`show` renders a readable outline; `show --json` prints the documented plan JSON."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

from rich.console import Console

from director.plan.parse import parse_file
from director.plan.tojson import SCHEMA, to_json
from director.ui.show import render
from tests import forkserver
from tests.jsonschemas import validated
from tests.pristine import EXAMPLES, PRISTINE, SEED

ROOT = Path(__file__).resolve().parent.parent


def rendered(path: Path) -> str:
    buf = io.StringIO()
    render(parse_file(path), Console(file=buf, width=160, color_system=None))
    return buf.getvalue()


def test_seed_outline() -> None:
    out = rendered(SEED)
    assert out.startswith("Ephemera — Durable execution on Cloudflare")
    assert "How are instances started?" in out and "TRIGGER" in out
    assert "🔴 if TRIGGER=http (outward-facing) · 🟡 if TRIGGER∈{cli,binding}" in out
    assert "gate: human go required (🔴, TRIGGER=http)" in out
    assert "gate: human go required (💥, always)" in out
    assert "template  line 233" in out and "→ writes ${SVC}.jsonc → $CONFIG (7 regeneration rules)" in out
    assert "pass 2a l.308 2a: reserve-inventory attempt 1 failed → retried" in out
    assert "(exit-0 alternative: inconclusive when printed)" in out
    assert "URL realized in §3" in out
    assert "label:2a, label:2b" in out and "section:3" in out
    # execution order: §0, then Requires-discovery, then §1…
    assert out.index("§0 Variables") < out.index("Requires-discovery") < out.index("§1 Workflow class")
    assert out.index("§4 Acceptance verify") < out.index("Teardown (observe-first")


def test_live_state_values_read_as_yaml(tmp_path: Path) -> None:
    # a mapping in flow style as the plan writes it, never a Python dict; null/true as YAML says them
    assert "  resolved_inputs: { trigger: cli, env: dev }\n" in rendered(SEED)
    text = SEED.read_text(encoding="utf-8").replace(
        "resolved_inputs: { trigger: cli, env: dev }",
        "resolved_inputs: { trigger: http, env: dev, resolved_at: '2026-12-02T09:24:13+00:00' }\n"
        "plan_id: null\nlocked: true\nowners: [ops, 'a: b']",
    )
    plan = tmp_path / "p.md"
    plan.write_text(text, encoding="utf-8")
    out = forkserver.run(
        [sys.executable, "-m", "director", "show", str(plan)], capture_output=True, text=True, check=True,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
    ).stdout  # fmt: skip
    assert "  resolved_inputs: { trigger: http, env: dev, resolved_at: '2026-12-02T09:24:13+00:00' }\n" in out
    assert "  plan_id: null\n" in out and "  locked: true\n" in out and "  owners: [ops, 'a: b']\n" in out
    assert "{'" not in out and "None" not in out


def test_default_is_highlighted() -> None:
    buf = io.StringIO()
    render(parse_file(SEED), Console(file=buf, width=160, force_terminal=True, color_system="standard"))
    assert "\x1b[1;7mhttp\x1b[0m" in buf.getvalue()


def test_examples_render() -> None:
    out = rendered(EXAMPLES / "static-site.local.md")
    assert "retries=2 constant delay 1s, timeout 30s" in out
    assert "🔴 if BIND=lan (reachable from the network) · 🟡 if BIND=loopback" in out


def test_json_shape() -> None:
    data = to_json(parse_file(SEED))
    assert data["schema"] == SCHEMA == "director.plan/1"
    s3 = next(s for s in data["sections"] if s["key"] == "3")
    assert s3["span"] == {"line": 260, "end_line": 274}
    assert s3["markers"][0] == {
        "marker": "🔴",
        "name": "gate",
        "condition": {"knob": "TRIGGER", "values": ["http"]},
        "note": "outward-facing",
    }
    assert s3["blocks"][1]["role"] == "verify" and s3["blocks"][1]["checks"][0]["line"] == 272
    json.dumps(data)


def test_cli_show_and_json() -> None:
    text = forkserver.run(
        [sys.executable, "-m", "director", "show", "plans/workflow.cloudflare.md"],
        capture_output=True,
        text=True,
        cwd=PRISTINE,
        check=True,
    ).stdout
    assert "Execution order" in text and "Live State" in text
    raw = forkserver.run(
        [sys.executable, "-m", "director", "show", "--json", "plans/workflow.cloudflare.md"],
        capture_output=True,
        text=True,
        cwd=PRISTINE,
        check=True,
    ).stdout
    data = validated(raw)
    assert data["schema"] == "director.plan/1"
    expected = to_json(parse_file(SEED))
    expected["path"] = "plans/workflow.cloudflare.md"
    assert data == json.loads(json.dumps(expected))


def test_template_targets_in_the_outline() -> None:
    db = rendered(EXAMPLES / "database.local.md")
    assert "→ writes ${DIR}/schema-${ENV}.sql → $SCHEMA (3 regeneration rules)" in db
    site = rendered(EXAMPLES / "static-site.local.md")
    assert "→ writes ${ROOT}/site.css (2 regeneration rules)" in site

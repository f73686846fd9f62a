"""Live State diff: JSON shape against a golden file, nested paths, missing sections, render, git."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from rich.console import Console

from director.errors import UsageError
from director.ledger.diff import SCHEMA, live_state_diff, text_at_revision
from director.ledger.splice import LedgerUpdate, apply_update
from director.plan.parse import parse
from tests.jsonschemas import check
from tests.pristine import SEED

TESTS = Path(__file__).resolve().parent
GOLDEN = TESTS / "golden" / "ledger"


def _read(path: Path) -> str:
    with open(path, encoding="utf-8", newline="") as fh:
        return fh.read()


def test_diff_of_a_full_apply_matches_golden_json() -> None:
    before = _read(SEED)
    after = _read(GOLDEN / "workflow.cloudflare.applied.md")
    got = live_state_diff(before, after).to_json()
    golden = GOLDEN / "workflow.cloudflare.diff.json"
    if os.environ.get("DIRECTOR_UPDATE_GOLDEN"):
        golden.write_text(json.dumps(got, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert got == json.loads(golden.read_text(encoding="utf-8"))
    assert got["schema"] == SCHEMA == "director.diff/1"
    check(got)
    assert {"op": "changed", "path": "status", "old": "not-created", "new": "live"} in got["yaml"]
    assert {"op": "changed", "path": "resolved_inputs.trigger", "old": "cli", "new": "http"} in got["yaml"]
    assert {"op": "added", "path": "resolved_inputs.resolved_by", "old": None, "new": "alice"} in got["yaml"]
    assert {"op": "added", "path": "target", "old": None, "new": "local"} in got["yaml"]
    assert [c["key"] for c in got["kv"]] == ["WORKER", "WF_NAME", "URL"]  # CLASS was already right
    assert {c["field"] for c in got["checks"]} == {"observed", "result"}


def test_identical_texts_give_an_empty_diff() -> None:
    text = _read(SEED)
    diff = live_state_diff(text, text)
    assert diff.is_empty
    assert diff.to_json() == {"schema": SCHEMA, "yaml": [], "kv": [], "checks": []}


def test_removed_keys_rows_and_a_missing_live_state() -> None:
    with_state = (
        "# P\n\n## Live State\n\n```yaml\nstatus: live\nold: 1\nnested: { a: 1, b: 2 }\n```\n\n"
        "| key | value |\n|---|---|\n| A | `a` |\n| B | `b` |\n\n"
        "| ✔ check | expected | observed | result |\n|---|---|---|---|\n| c1 | e | o | ✅ |\n"
    )
    without = "# P\n\nNo ledger yet.\n"
    after = (
        with_state.replace("old: 1\n", "").replace("{ a: 1, b: 2 }", "{ a: 1 }").replace("| B | `b` |\n", "")
    )
    d = live_state_diff(with_state, after).to_json()
    assert d["yaml"] == [
        {"op": "removed", "path": "old", "old": 1, "new": None},
        {"op": "removed", "path": "nested.b", "old": 2, "new": None},
    ]
    assert d["kv"] == [{"op": "removed", "key": "B", "old": "`b`", "new": None}]
    added = live_state_diff(without, with_state)
    assert [c.op for c in (*added.yaml, *added.kv, *added.checks)] == ["added"] * 8
    assert [(c.where, c.field) for c in added.checks] == [
        ("c1", "expected"),
        ("c1", "observed"),
        ("c1", "result"),
    ]
    gone = live_state_diff(with_state, "")
    assert {c.op for c in (*gone.yaml, *gone.kv, *gone.checks)} == {"removed"}
    assert live_state_diff(without, without).is_empty


def test_render_colours_and_aligns() -> None:
    before = _read(SEED)
    after = apply_update(parse(before), LedgerUpdate(yaml={"status": "live"}, kv={"CLASS": "`[Cls]`"}))
    console = Console(record=True, width=200, force_terminal=True, color_system="standard")
    live_state_diff(before, after).render(console)
    plain = console.export_text(styles=False, clear=False).splitlines()
    assert plain == [
        "yaml",
        "  - status  not-created",
        "  + status  live",
        "kv",
        "  - CLASS   `OrderWorkflow`",
        "  + CLASS   `[Cls]`",  # markup-looking values print as written
    ]
    styled = console.export_text(styles=True)
    assert "\x1b[31m  - status" in styled and "\x1b[32m  + status" in styled
    empty = Console(record=True, width=80)
    live_state_diff(before, before).render(empty)
    assert empty.export_text().strip() == "Live State: no changes"


def _git(repo: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env=env)


def test_text_at_revision_reads_the_committed_plan(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "plans").mkdir(parents=True)
    plan = repo / "plans" / "p.md"
    committed = _read(SEED).replace("\n", "\r\n")  # CRLF must come back as CRLF
    plan.write_bytes(committed.encode())
    _git(repo, "init", "-q")
    _git(repo, "config", "core.autocrlf", "false")
    _git(repo, "add", "plans/p.md")
    _git(repo, "commit", "-qm", "plan")
    new = apply_update(parse(committed), LedgerUpdate(yaml={"status": "live"}))
    plan.write_bytes(new.encode())
    old = text_at_revision(plan, "HEAD")
    assert old == committed
    assert [c.where for c in live_state_diff(old, new).yaml] == ["status"]
    with pytest.raises(UsageError, match="not available at revision 'HEAD~5'"):
        text_at_revision(plan, "HEAD~5")
    untracked = repo / "plans" / "new.md"
    untracked.write_text("# N\n")
    with pytest.raises(UsageError, match="not available at revision 'HEAD'"):
        text_at_revision(untracked, "HEAD")
    with pytest.raises(UsageError, match="not a git revision"):
        text_at_revision(plan, "--output=/tmp/x")


def test_text_at_revision_outside_a_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lone = tmp_path / "lone"
    lone.mkdir()
    (lone / "p.md").write_text("# P\n")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))  # never find a repo above tmp
    with pytest.raises(UsageError, match="not inside a git repository"):
        text_at_revision(lone / "p.md", "HEAD")

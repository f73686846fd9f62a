"""File templates through the real CLI: the example plans applied with non-default knobs write the regenerated
files where the plans' variables put them."""

from __future__ import annotations

import socket
import sqlite3
from pathlib import Path

import pytest

from tests.jsonschemas import validated_lines
from tests.planmaker import director
from tests.pristine import EXAMPLES

# slow: end to end through the real CLI, many runs; CI runs it with the rest
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent

DARK_CSS = """\
/* every literal with a rule is a pure function of the §0 knobs (shown for THEME=light) */
body {
  background: #111111;   /* THEME=light → #ffffff; dark → #111111 */
  color: #eeeeee;        /* THEME=light → #111111; dark → #eeeeee */
  font-family: system-ui, sans-serif;
}
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _written(events: Path) -> list[str]:
    lines = events.read_text(encoding="utf-8").splitlines() if events.exists() else []
    return [
        e["detail"]
        for e in validated_lines("\n".join(lines), "event")
        if e.get("type") == "target" and e.get("op") == "template-written"
    ]


def test_static_site_dark_theme_writes_the_dark_stylesheet(tmp_path: Path) -> None:
    plan = tmp_path / "static-site.local.md"
    text = (EXAMPLES / plan.name).read_text(encoding="utf-8")
    plan.write_text(text.replace('export PORT="8765"', f'export PORT="{_free_port()}"'), encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    events = tmp_path / "events.jsonl"
    try:
        r = director(
            "apply", str(plan), "--set", "theme=dark", "--auto-approve", "--events", str(events),
            cwd=tmp_path, out=out,
        )  # fmt: skip
        css = tmp_path / ".director" / plan.name / "workspace" / ".pamphlet-dev" / "site.css"
        assert css.read_text(encoding="utf-8") == DARK_CSS, r.stdout + r.stderr
        assert _written(events) == [str(css)]
        assert "stylesheet written (#111111)" in r.stdout, r.stdout + r.stderr
        # Whatever the later sections did, §2 was applied and verified from the regenerated file.
        row = next(line for line in r.stdout.splitlines() if line.startswith("  §2 Stylesheet"))
        assert "applied" in row, r.stdout
    finally:
        director("teardown", str(plan), "--approve", "teardown", cwd=tmp_path, out=out)


def test_database_non_default_knobs_write_the_schema_where_schema_says(tmp_path: Path) -> None:
    plan = tmp_path / "database.local.md"
    plan.write_text((EXAMPLES / plan.name).read_text(encoding="utf-8"), encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    events = tmp_path / "events.jsonl"
    try:
        r = director(
            "apply", str(plan), "--set", "env=test", "--set", "journal=rollback", "--auto-approve",
            "--events", str(events), cwd=tmp_path, out=out,
        )  # fmt: skip
        assert r.returncode == 0, r.stdout + r.stderr
        ledger = tmp_path / ".director" / plan.name / "workspace" / ".ledger"
        schema = (ledger / "schema-test.sql").read_text(encoding="utf-8")
        assert "PRAGMA journal_mode = 'delete';                       -- JOURNAL=wal" in schema
        assert "INSERT OR REPLACE INTO meta VALUES ('env', 'test');   -- = ${ENV}" in schema
        assert _written(events) == [str(ledger / "schema-test.sql")]
        with sqlite3.connect(ledger / "ledger-test.sqlite3") as conn:
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
            assert conn.execute("select v from meta where k = 'env'").fetchone()[0] == "test"
    finally:
        director("teardown", str(plan), "--approve", "teardown", cwd=tmp_path, out=out)

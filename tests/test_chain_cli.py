"""The journal's hash chain through the real CLI, with the real `sqlite3` and `psql` programs editing the
journal as an operator with write access would: a spent receipt whose use was deleted does not release its
gate again (exit 13, the row named); `director audit` never reads `✓ verified` for an edited receipt;
`approve --verify` raises the alarm (exit 13) for a tampered journal and not for receipts refused when
offered (exit 0), and names the same receipts and breaks `audit` does. (Only the CLI and the tests'
helpers are imported: these run against any Director.)
"""

from __future__ import annotations

import re
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.jsonschemas import validated, validated_lines
from tests.pgcluster import find_bindir
from tests.planmaker import CounterPlan, Step, acts, director, write_plan

# slow: end to end through the real CLI, many runs; CI runs it with the rest
pytestmark = pytest.mark.slow

GATE = "🔴"
SIGNERS = ".director-allowed-signers"


def _sqlite3(plan: Path, sql: str) -> None:
    """The real `sqlite3` program on the plan's journal (an operator editing it by hand)."""
    db = plan.parent / ".director" / plan.name / "journal.sqlite3"
    subprocess.run(
        [shutil.which("sqlite3") or "sqlite3", str(db), sql], check=True, capture_output=True, text=True
    )


def _psql(url: str, sql: str) -> None:
    """The real `psql` on the state database."""
    bindir = find_bindir()
    exe = (
        str(bindir / "psql")
        if bindir is not None and (bindir / "psql").exists()
        else (shutil.which("psql") or "psql")
    )
    subprocess.run([exe, url, "-v", "ON_ERROR_STOP=1", "-c", sql], check=True, capture_output=True, text=True)


def _through_the_gate(tmp: Path, out: Path, env: dict[str, str] | None = None) -> Path:
    plan = write_plan(tmp, CounterPlan([Step(), Step(marker=GATE)]))
    assert director("apply", str(plan), cwd=tmp, out=out, env=env).returncode == 4
    assert director("approve", str(plan), "2", "--yes", cwd=tmp, out=out, env=env).returncode == 0
    r = director("apply", str(plan), cwd=tmp, out=out, env=env)
    assert r.returncode == 0 and acts(out) == ["s1", "s2"], r.stdout + r.stderr
    return plan


def test_a_spent_receipt_whose_use_was_deleted_with_sqlite3_does_not_release_again(
    tmp_path: Path, out: Path
) -> None:
    plan = _through_the_gate(tmp_path, out)
    _sqlite3(plan, "DELETE FROM events WHERE kind = 'approval-used'")
    (out / "s2").unlink()  # the world drifted: §2 is asked again with the same content
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 13, r.stdout + r.stderr
    [line] = r.stderr.splitlines()
    assert re.fullmatch(
        r"error: the journal \S+ was tampered with: event \d+ \(approval-used\) was deleted \(it came before event \d+ \(\S+\)\); no gate is released across a break",
        line,
    ), line
    assert acts(out) == ["s1", "s2"]  # §2 did not act again on the spent receipt
    data = validated(director("audit", str(plan), "--json", cwd=tmp_path, out=out).stdout)
    assert data["chain"]["intact"] is False and [b["kind"] for b in data["chain"]["breaks"]] == ["deleted"]


def test_a_spent_receipt_whose_use_was_deleted_with_psql_does_not_release_again(
    tmp_path: Path, out: Path, pg_url: str
) -> None:
    env = {"DIRECTOR_STATE_URL": pg_url}
    plan = _through_the_gate(tmp_path, out, env)
    _psql(pg_url, "DELETE FROM director.events WHERE kind = 'approval-used'")
    (out / "s2").unlink()
    r = director("apply", str(plan), cwd=tmp_path, out=out, env=env)
    assert r.returncode == 13 and "(approval-used) was deleted" in r.stderr, r.stdout + r.stderr
    assert acts(out) == ["s1", "s2"]
    _psql(pg_url, "UPDATE director.approvals SET at = '2020-01-01T00:00:00.000000+00:00'")
    data = validated(director("audit", str(plan), "--json", cwd=tmp_path, out=out, env=env).stdout)
    assert {(b["table"], b["kind"]) for b in data["chain"]["breaks"]} == {
        ("events", "deleted"),
        ("approvals", "edited"),
    }
    assert "its at changed" in next(b["detail"] for b in data["chain"]["breaks"] if b["table"] == "approvals")


def _key(tmp: Path, name: str) -> Path:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(tmp / name)], check=True
    )
    return tmp / name


def _signer(principal: str, key: Path) -> str:
    kind, blob = key.with_name(key.name + ".pub").read_text().split()[:2]
    return f"{principal} {kind} {blob}\n"


def _verified_and_refused(tmp: Path, out: Path) -> Path:
    """A gate released by alice's signed receipt (1), an unsigned one (2) refused when offered."""
    keys = tmp / "keys"
    keys.mkdir()
    alice = _key(keys, "alice")
    plan = write_plan(tmp, CounterPlan([Step(), Step(marker=GATE)]))
    (tmp / SIGNERS).write_text(_signer("alice@example.com", alice))
    assert director("apply", str(plan), cwd=tmp, out=out).returncode == 4
    assert (
        director("approve", str(plan), "2", "--yes", "--sign-with", str(alice), cwd=tmp, out=out).returncode
        == 0
    )
    # unsigned: recorded, and approve exits 14 (a run will refuse it; docs/approvals.md)
    assert director("approve", str(plan), "2", "--yes", cwd=tmp, out=out).returncode == 14
    r = director("apply", str(plan), cwd=tmp, out=out)
    assert r.returncode == 0 and "refused: unsigned" in r.stdout, r.stdout + r.stderr
    return plan


def _said(plan: Path, out: Path) -> tuple[int, str, str, dict[str, Any], list[dict[str, Any]]]:
    """(approve --verify's exit code, its output, audit's text, audit's JSON, audit's JSON lines)."""
    v = director("approve", str(plan), "--verify", cwd=plan.parent, out=out)
    text = director("audit", str(plan), cwd=plan.parent, out=out).stdout
    data = validated(director("audit", str(plan), "--json", cwd=plan.parent, out=out).stdout)
    lines = validated_lines(director("audit", str(plan), "--jsonl", cwd=plan.parent, out=out).stdout)
    return v.returncode, v.stdout, text, data, lines


def _tampered_receipts(verify_output: str) -> set[str]:
    return set(re.findall(r"^receipt (\d+) .*: ✗ tampered: ", verify_output, re.M))


def test_refused_receipts_are_history_and_an_edited_one_is_the_alarm_in_verify_and_audit(
    tmp_path: Path, out: Path
) -> None:
    plan = _verified_and_refused(tmp_path, out)
    code, verify, text, data, lines = _said(plan, out)
    assert code == 0, verify  # a receipt refused when offered is history, not an alarm
    assert "1 of 2 receipts verified against" in verify and "1 refused (history, not an alarm)" in verify
    assert re.search(r"^receipt 2 .*: ✗ unsigned$", verify, re.M), verify
    assert "receipt 1: ✓ verified: alice@example.com" in text and "tampered" not in text
    assert data["chain"] == {"intact": True, "breaks": []} and lines[-1]["record"] == "chain"
    db = sqlite3.connect(plan.parent / ".director" / plan.name / "journal.sqlite3")
    for column, value in (
        ("at", "2020-01-01T00:00:00.000000+00:00"),
        ("content_json", '{"commands": ["rm -rf /"]}'),
    ):
        [(was,)] = db.execute(f"SELECT {column} FROM approvals WHERE id = 1").fetchall()
        _sqlite3(plan, f"UPDATE approvals SET {column} = '{value}' WHERE id = 1")
        code, verify, text, data, lines = _said(plan, out)
        assert code == 13, verify
        assert re.search(
            rf"^receipt 1 .*: ✗ tampered: was edited: its {column} changed since it was written$",
            verify,
            re.M,
        ), verify
        assert (
            "✓ verified" not in text and f"receipt 1: ✗ tampered: was edited: its {column} changed" in text
        ), text
        assert text.startswith("✗ the journal was tampered with: 1 break(s)")
        # audit and --verify agree: the same breaks, the same receipts tampered
        assert [f"tampered: {b['row']} {b['detail']}" for b in data["chain"]["breaks"]] == [
            ln for ln in verify.splitlines() if ln.startswith("tampered: ")
        ]
        assert _tampered_receipts(verify) == {
            b["id"] for b in data["chain"]["breaks"] if b["table"] == "approvals"
        }
        assert lines[-1] == {"schema": "director.audit/1", "record": "chain", **data["chain"]}
        r = director(
            "apply", str(plan), cwd=tmp_path, out=out
        )  # in sync: no gate is asked, nothing to release
        assert r.returncode == 0, r.stdout + r.stderr
        restored = str(was).replace("'", "''")
        _sqlite3(
            plan, f"UPDATE approvals SET {column} = '{restored}' WHERE id = 1"
        )  # put back as it was written
        code, verify, text, data, lines = _said(plan, out)
        assert code == 0 and data["chain"]["intact"] and "receipt 1: ✓ verified: alice@example.com" in text, (
            verify
        )
    db.close()

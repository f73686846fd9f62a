"""Signed approvals through the real CLI, with real `ssh-keygen` keys (ed25519 and RSA) and a real
allowed-signers file: a signed receipt releases a gate; an unsigned one, an unknown key, an edited row,
a receipt replayed (spent, from another plan, for other content), an expired or removed signer and a key
not allowed to sign a 💥 gate are each refused, named in the output, audited, and the run keeps waiting.
The journal is edited with the sqlite3 module as an attacker with write access to it would.

At a terminal (pexpect), the typed confirmation races a `director approve` from another process.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from director.state.signing import Claim
from tests import forkserver
from tests.jsonschemas import validated
from tests.planmaker import CounterPlan, Step, acts, director, write_plan
from tests.terminal import Term

# slow: end to end through the real CLI, many runs; CI runs it with the rest
pytestmark = pytest.mark.slow

GATE, BOOM = "🔴", "💥"
SIGNERS = ".director-allowed-signers"  # the default location, found beside the plan


def _key(tmp: Path, name: str, kind: str = "ed25519") -> Path:
    extra = ["-b", "2048"] if kind == "rsa" else []
    subprocess.run(["ssh-keygen", "-q", "-t", kind, *extra, "-N", "", "-C", name, "-f", str(tmp / name)], check=True)
    return tmp / name


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """alice (ed25519), bob (RSA), a CI bot (ed25519) and mallory (ed25519, never in a file)."""
    d = tmp_path_factory.mktemp("keys")
    return {"alice": _key(d, "alice"), "bob": _key(d, "bob", "rsa"), "bot": _key(d, "bot"), "mallory": _key(d, "mallory")}


def line(principal: str, key: Path, options: str = "") -> str:
    kind, blob = key.with_name(key.name + ".pub").read_text().split()[:2]
    return " ".join(w for w in (principal, options, kind, blob) if w)


def fingerprint(key: Path) -> str:
    """What ssh-keygen itself prints for the key (not Director's word)."""
    r = subprocess.run(["ssh-keygen", "-l", "-f", f"{key}.pub"], capture_output=True, text=True, check=True)
    return r.stdout.split()[1]


def audit(plan: Path, out: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    r = director("audit", str(plan), "--json", cwd=plan.parent, out=out, env=env)
    assert r.returncode == 0, r.stderr
    return dict(validated(r.stdout))


def events(data: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e["data"] for e in data["events"] if e["kind"] == kind]


def journal(plan: Path) -> sqlite3.Connection:
    return sqlite3.connect(plan.parent / ".director" / plan.name / "journal.sqlite3", isolation_level=None)


def run(plan: Path, out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return director(*args, cwd=plan.parent, out=out)


def approve(
    plan: Path, out: Path, section: str, key: Path | None = None, refused: bool = False
) -> subprocess.CompletedProcess[str]:
    """`director approve --yes`: exit 0, or 14 when the receipt is one a run will refuse (`refused`)."""
    signed = ("--sign-with", str(key)) if key is not None else ()
    r = run(plan, out, "approve", str(plan), section, "--yes", *signed)
    assert r.returncode == (14 if refused else 0), r.stdout + r.stderr
    return r


# ------------------------------------------------------------------------------ released / refused


@pytest.mark.parametrize("who", ["alice", "bob"])  # ed25519, RSA
def test_a_signed_approval_releases_the_gate_and_the_audit_names_signer_and_key(
    tmp_path: Path, out: Path, keys: dict[str, Path], who: str
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    (tmp_path / SIGNERS).write_text(f"# who may approve\n{line(f'{who}@example.com', keys[who])}\n")
    r = run(plan, out, "apply", str(plan))
    assert r.returncode == 4 and f"approvals must be signed by a key in {tmp_path / SIGNERS}" in r.stdout
    a = approve(plan, out, "2", keys[who])
    fp = fingerprint(keys[who])
    assert f"signed by {who}@example.com with {fp}: verified against" in a.stdout
    r = run(plan, out, "apply", str(plan))
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"signed by {who}@example.com with {fp}" in r.stdout
    assert acts(out) == ["s1", "s2"]
    data = audit(plan, out)
    [receipt] = data["approvals"]
    assert receipt["principal"] == f"{who}@example.com" and receipt["signature"].startswith("-----BEGIN SSH SIGNATURE")
    claim = Claim.parse(receipt["signed_payload"])
    assert (claim.section, claim.sha256, claim.how) == ("2", receipt["sha256"], "approve-command")
    [verified] = events(data, "approval-verified")
    assert (verified["approval_id"], verified["principal"], verified["fingerprint"]) == (receipt["id"], f"{who}@example.com", fp)
    [used] = events(data, "approval-used")
    assert used["approval_id"] == receipt["id"] and used["nonce"] == claim.nonce
    text = run(plan, out, "audit", str(plan)).stdout
    assert f"receipt {receipt['id']}: ✓ verified: {who}@example.com, key {fp}" in text


def test_unsigned_and_unknown_key_receipts_are_refused_audited_and_a_waiting_run_keeps_waiting(
    tmp_path: Path, out: Path, keys: dict[str, Path]
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    (tmp_path / SIGNERS).write_text(line("alice@example.com", keys["alice"]) + "\n")
    assert run(plan, out, "apply", str(plan)).returncode == 4
    a = approve(plan, out, "2", refused=True)
    assert "will not release §2 on this receipt: unsigned; pass --sign-with KEYFILE" in a.stdout
    r = run(plan, out, "apply", str(plan))
    assert r.returncode == 4 and "receipt 1 by " in r.stdout and "refused: unsigned" in r.stdout, r.stdout
    approve(plan, out, "2", keys["mallory"], refused=True)
    r = run(plan, out, "apply", str(plan))
    assert r.returncode == 4 and "refused: key SHA256:" in r.stdout and "is not in" in r.stdout, r.stdout
    assert fingerprint(keys["mallory"]) in r.stdout
    assert acts(out) == ["s1"]
    refused = events(audit(plan, out), "approval-refused")
    assert [(e["approval_id"], e["code"]) for e in refused] == [(1, "unsigned"), (2, "unknown-key"), (1, "unsigned")]
    # --wait-for-approval: a refused receipt arriving during the wait is said, and the wait goes on
    p = forkserver.Popen(
        [sys.executable, "-m", "director", "apply", str(plan), "--wait-for-approval", "120"],
        cwd=tmp_path, env={**os.environ, "COUNTER_OUT": str(out), "CI": "1", "NO_COLOR": "1"},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        _until(lambda: "waits up to 120 s" in json.dumps(audit(plan, out)["transitions"]))
        approve(plan, out, "2", keys["mallory"], refused=True)
        # receipts 2 and 1 refused again as this run started (each run says and audits them), then 3
        _until(lambda: len(events(audit(plan, out), "approval-refused")) == 6)
        assert p.poll() is None, "a refused receipt does not end the wait"
        approve(plan, out, "2", keys["alice"])
        stdout, stderr = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, stdout + stderr
    assert "receipt 3 by " in stdout and "refused: key" in stdout and "signed by alice@example.com" in stdout
    assert acts(out) == ["s1", "s2"]


def _until(cond: Any, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


def test_an_edited_receipt_row_is_refused_and_the_same_row_restored_releases(
    tmp_path: Path, out: Path, keys: dict[str, Path]
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    (tmp_path / SIGNERS).write_text(line("alice@example.com", keys["alice"]) + "\n" + line("bob@example.com", keys["bob"]) + "\n")
    assert run(plan, out, "apply", str(plan)).returncode == 4
    approve(plan, out, "2", keys["alice"])
    db = journal(plan)
    for column, forged in (("operator", "bob"), ("principal", "bob@example.com"), ("how", "prompt")):
        [(was,)] = db.execute(f"SELECT {column} FROM approvals").fetchall()
        db.execute(f"UPDATE approvals SET {column} = ?", (forged,))
        r = run(plan, out, "apply", str(plan))
        assert r.returncode == 4 and f"refused: edited: the row's {column} is {forged}, the signature says {was}" in r.stdout, r.stdout
        db.execute(f"UPDATE approvals SET {column} = ?", (was,))
    payload = db.execute("SELECT signed_payload FROM approvals").fetchone()[0]
    db.execute("UPDATE approvals SET signed_payload = ?", (payload.replace('"MODE":"a"', '"MODE":"b"'),))
    r = run(plan, out, "apply", str(plan))
    assert r.returncode == 4 and "refused: replayed: signed for other inputs" in r.stdout, r.stdout
    db.execute("UPDATE approvals SET signed_payload = ?", (payload,))
    db.close()
    assert acts(out) == ["s1"]
    r = run(plan, out, "apply", str(plan))
    assert r.returncode == 0, r.stdout
    assert [e["code"] for e in events(audit(plan, out), "approval-refused")] == ["edited"] * 3 + ["other-content"]


def _copy_receipt(src: sqlite3.Connection, dst: sqlite3.Connection, receipt_id: int, **changes: Any) -> int:
    cols = [r[1] for r in src.execute("PRAGMA table_info(approvals)") if r[1] != "id"]
    row = dict(zip(cols, src.execute(f"SELECT {', '.join(cols)} FROM approvals WHERE id = ?", (receipt_id,)).fetchone(), strict=True))
    row.update(changes, run_id=None)
    cur = dst.execute(f"INSERT INTO approvals ({', '.join(row)}) VALUES ({', '.join('?' for _ in row)})", list(row.values()))
    return int(cur.lastrowid or 0)


def test_replayed_receipts_are_refused_spent_from_another_plan_or_for_other_content(
    tmp_path: Path, out: Path, keys: dict[str, Path]
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    (tmp_path / SIGNERS).write_text(line("alice@example.com", keys["alice"]) + "\n")
    assert run(plan, out, "apply", str(plan)).returncode == 4
    approve(plan, out, "2", keys["alice"])
    assert run(plan, out, "apply", str(plan)).returncode == 0
    # 1. the spent receipt, copied into a new row, for the same content: its nonce was spent
    (out / "s2").unlink()  # the world drifted: §2 acts again, with the same content
    assert run(plan, out, "apply", str(plan)).returncode == 4, "an approval covers one application"
    db = journal(plan)
    copy = _copy_receipt(db, db, 1)
    r = run(plan, out, "apply", str(plan))
    assert r.returncode == 4 and f"receipt {copy} by " in r.stdout and "refused: replayed: its signature's nonce was already carried or spent by receipt 1" in r.stdout, r.stdout
    # 2. the same content in another plan (a copy of it elsewhere, the same $OUT): signed for another plan
    other_dir = tmp_path / "other"
    other_dir.mkdir()
    other = write_plan(other_dir, CounterPlan([Step(), Step(marker=GATE)]))
    (other_dir / SIGNERS).write_text(line("alice@example.com", keys["alice"]) + "\n")
    assert director("apply", str(other), cwd=other_dir, out=out).returncode == 4
    od = journal(other)
    _copy_receipt(db, od, 1)
    r = director("apply", str(other), cwd=other_dir, out=out)
    # another plan's act reads another session (its workspace, its closure key): never this content
    assert r.returncode == 4 and "needs a human go" in r.stdout, r.stdout
    v = director("approve", str(other), "--verify", cwd=other_dir, out=out)
    # a receipt row copied in by hand from another journal: the journal was tampered with (the alarm, exit 13)
    assert v.returncode == 13 and "✗ tampered: was added outside Director" in v.stdout, v.stdout
    od.close()
    # 3. a receipt for this content, its sha256 set to other content's (the plan's command was changed)
    approve(plan, out, "2", keys["alice"])
    plan.write_text(plan.read_text().replace('echo "s2" >> "$OUT/acts"', 'echo "s2" >> "$OUT/acts"  # changed'))
    assert run(plan, out, "apply", str(plan)).returncode == 4
    data = audit(plan, out)
    new_sha = [e for e in data["events"] if e["kind"] == "gate-waiting"][-1]["data"]["sha256"]
    last = data["approvals"][-1]["id"]
    assert data["approvals"][-1]["sha256"] != new_sha
    db.execute("UPDATE approvals SET sha256 = ? WHERE id = ?", (new_sha, last))
    db.close()
    r = run(plan, out, "apply", str(plan))
    assert r.returncode == 4 and f"receipt {last} by " in r.stdout and "refused: edited: the row's sha256 is" in r.stdout, r.stdout
    assert acts(out) == ["s1", "s2", "s1"]  # the other plan's §1 (the same $OUT: the same content); no §2 again


def test_expired_and_removed_signers_are_refused(tmp_path: Path, out: Path, keys: dict[str, Path]) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    signers = tmp_path / SIGNERS
    alice = line("alice@example.com", keys["alice"])
    signers.write_text(line("bob@example.com", keys["bob"], 'valid-before="20200101"') + "\n" + alice + "\n")
    assert run(plan, out, "apply", str(plan)).returncode == 4
    approve(plan, out, "2", keys["bob"], refused=True)
    r = run(plan, out, "apply", str(plan))
    assert r.returncode == 4 and "is out of its validity" in r.stdout and "key has expired" in r.stdout, r.stdout
    approve(plan, out, "2", keys["alice"])
    signers.write_text("# alice left the team\n")  # revoked: removed from the file
    r = run(plan, out, "apply", str(plan))
    assert r.returncode == 4 and "(an unknown key, or one removed from the file)" in r.stdout, r.stdout
    signers.write_text(alice + "\n")
    assert run(plan, out, "apply", str(plan)).returncode == 0
    refused = events(audit(plan, out), "approval-refused")
    assert [(e["approval_id"], e["code"]) for e in refused] == [(1, "expired"), (2, "unknown-key"), (1, "unknown-key")]


def test_flags_need_a_signature_too_and_a_gate_only_key_cannot_release_a_destructive_gate(
    tmp_path: Path, out: Path, keys: dict[str, Path]
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE), Step(marker=BOOM)]))
    (tmp_path / SIGNERS).write_text(
        line("alice@example.com", keys["alice"]) + "\n" + line("ci-bot", keys["bot"], 'namespaces="director-gate"') + "\n"
    )
    r = run(plan, out, "apply", str(plan), "--approve", "2", "--approve", "3")
    assert r.returncode == 4 and "by " in r.stdout and "(flag) refused: unsigned" in r.stdout, r.stdout
    env = {"DIRECTOR_SIGNING_KEY": str(keys["bot"])}
    r = director("apply", str(plan), "--approve", "2", "--approve", "3", cwd=tmp_path, out=out, env=env)
    assert r.returncode == 4, r.stdout
    assert "signed by ci-bot" in r.stdout and 'not permitted for use in signature namespace "director-destroy"' in r.stdout
    assert acts(out) == ["s1", "s2"]
    approve(plan, out, "3", keys["alice"])
    r = run(plan, out, "apply", str(plan))
    assert r.returncode == 0, r.stdout
    assert acts(out) == ["s1", "s2", "s3"]
    # the teardown's 💥 gate: the same rule
    r = run(plan, out, "teardown", str(plan), "--approve", "teardown")
    assert r.returncode == 4 and "(flag) refused: unsigned" in r.stdout, r.stdout
    approve(plan, out, "teardown", keys["alice"])
    r = run(plan, out, "teardown", str(plan))
    assert r.returncode == 0 and "signed by alice@example.com" in r.stdout, r.stdout
    assert (out / "teardown-acts").read_text().split() == ["td"]


def test_approve_verify_rechecks_every_stored_receipt(tmp_path: Path, out: Path, keys: dict[str, Path]) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    r = run(plan, out, "approve", str(plan), "--verify")
    assert r.returncode == 64 and r.stderr.startswith("error: --allowed-signers: no allowed-signers file"), r.stderr
    (tmp_path / SIGNERS).write_text(line("alice@example.com", keys["alice"]) + "\n")
    assert run(plan, out, "apply", str(plan)).returncode == 4
    approve(plan, out, "2", refused=True)
    approve(plan, out, "2", keys["alice"])
    assert run(plan, out, "apply", str(plan)).returncode == 0
    r = run(plan, out, "approve", str(plan), "--verify")
    assert r.returncode == 0, r.stdout + r.stderr  # a receipt refused when offered is history, not an alarm
    lines = r.stdout.splitlines()
    assert re.match(r"receipt 1 by \S+ \(approve-command\) §2 at \S+: ✗ unsigned$", lines[0]), lines
    assert re.match(rf"receipt 2 by \S+ \(approve-command\) §2 at \S+ \(spent\): ✓ alice@example.com {re.escape(fingerprint(keys['alice']))}$", lines[1])
    assert lines[2] == f"1 of 2 receipts verified against {tmp_path / SIGNERS}; 1 refused (history, not an alarm)"
    db = journal(plan)
    content = json.loads(db.execute("SELECT content_json FROM approvals WHERE id = 2").fetchone()[0])
    content["commands"][0] = "rm -rf \"$OUT\"\n"
    db.execute("UPDATE approvals SET content_json = ? WHERE id = 2", (json.dumps(content),))
    db.close()
    r = run(plan, out, "approve", str(plan), "--verify")
    assert r.returncode == 13 and "receipt 2 " in r.stdout, r.stdout  # the journal edited by hand: the alarm
    assert "✗ tampered: was edited: its content_json changed since it was written" in r.stdout


def test_bad_signing_options_are_one_error_line_and_nothing_is_created(
    tmp_path: Path, out: Path, keys: dict[str, Path]
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    signers = tmp_path / SIGNERS
    signers.write_text(line("alice@example.com", keys["alice"]) + "\nbob ssh-ed25519 not-a-key\n")
    cases = [
        ((), f"error: {signers}:2: the key is not base64 (the default allowed-signers file)"),
        (("--allowed-signers", str(tmp_path / "nope")), f"error: --allowed-signers: no such file: {tmp_path / 'nope'}"),
        (("--sign-with", str(tmp_path / "nokey")), f"error: --sign-with: {tmp_path / 'nokey'} is not a readable key file"),
    ]
    for args, said in cases:
        r = run(plan, out, "apply", str(plan), *args)
        assert r.returncode == 64 and r.stderr.strip() == said, r.stderr
        assert not (tmp_path / ".director").exists() and acts(out) == []


# ------------------------------------------------------------------------------ at a terminal


def _term(plan: Path, out: Path, *args: str, env: dict[str, str] | None = None) -> Term:
    return Term(["apply", str(plan), "--set", "mode=a", *args], plan.parent, out, env)


def _released_after(data: dict[str, Any], receipt_id: int) -> float:
    """Seconds from the receipt's commit to the run going on with it (both times from the journal)."""
    [receipt] = [a for a in data["approvals"] if a["id"] == receipt_id]
    [back] = [t for t in data["transitions"] if re.search(rf"receipt {receipt_id} (signed )?by ", t["reason"] or "")]
    return (datetime.fromisoformat(back["at"]) - datetime.fromisoformat(receipt["at"])).total_seconds()


def test_at_a_terminal_an_approval_from_another_process_releases_the_prompt_within_2_s(
    tmp_path: Path, out: Path
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    t = _term(plan, out, "--wait-for-approval", "60")
    try:
        t.wait("Type go")
        assert f"or approve from elsewhere: director approve {plan} 2" in t.text()
        st = json.loads(run(plan, out, "status", str(plan), "--json").stdout)
        assert st["last_run"]["state"] == "awaiting-approval" and st["last_run"]["waiting_on"] == "2"
        r = run(plan, out, "approve", str(plan), "2", "--yes", "--operator", "bob")
        assert r.returncode == 0, r.stderr
        screen = t.wait("approved from elsewhere")
        assert re.search(r"approved from elsewhere: receipt 1 by bob@\S+ \(approve-command\)", screen), screen
        assert t.finish() == 0, t.text()
    finally:
        t.kill()
    assert acts(out) == ["s1", "s2"]
    released = _released_after(audit(plan, out), 1)
    print(f"receipt committed -> prompt released: {released * 1000:.0f} ms")
    assert 0 <= released < 2.0


def test_at_a_terminal_the_wait_ends_at_its_timeout(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    t = _term(plan, out, "--wait-for-approval", "1")
    try:
        t.wait("Type go")
        assert t.finish() == 4
        assert "no approval in time" in t.seen()
    finally:
        t.kill()
    assert acts(out) == ["s1"]


def test_at_a_terminal_a_typed_go_is_held_to_the_same_rule(tmp_path: Path, out: Path, keys: dict[str, Path]) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    (tmp_path / SIGNERS).write_text(line("alice@example.com", keys["alice"]) + "\n")
    t = _term(plan, out)
    try:  # no --sign-with at this terminal: it cannot approve, says so once, and waits
        t.wait("press Enter to stop waiting")
        assert f"director approve {plan} 2 --sign-with KEYFILE" in t.text()
        assert "Type go" not in t.text() and acts(out) == ["s1"]
        approve(plan, out, "2", keys["alice"])
        t.wait("approved from elsewhere: receipt 1 by alice@example.com (signature verified")
        assert t.finish() == 0
    finally:
        t.kill()
    assert acts(out) == ["s1", "s2"]
    (out / "s2").unlink()  # §2 acts again: asked again, and this terminal signs its go
    t = _term(plan, out, "--sign-with", str(keys["alice"]))
    try:
        t.wait("Type go")
        t.send("go")
        assert t.finish() == 0, t.text()
    finally:
        t.kill()
    assert acts(out) == ["s1", "s2", "s2"]
    data = audit(plan, out)
    prompt = [a for a in data["approvals"] if a["how"] == "prompt"]
    assert [(a["principal"], a["id"]) for a in prompt] == [("alice@example.com", 2)]
    verified = {e["approval_id"]: e["fingerprint"] for e in events(data, "approval-verified")}
    assert verified == {1: fingerprint(keys["alice"]), 2: fingerprint(keys["alice"])}


# ------------------------------------------------------------------------------ two machines, one PostgreSQL


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=cwd, check=True, capture_output=True)


def test_approve_signed_on_machine_b_releases_machine_a_at_its_prompt_and_a_tampered_row_is_refused(
    tmp_path: Path, out: Path, pg_url: str, keys: dict[str, Path]
) -> None:
    import psycopg

    origin = tmp_path / "origin"
    origin.mkdir()
    write_plan(origin, CounterPlan([Step(), Step(marker=GATE)]))
    (origin / SIGNERS).write_text(line("bob@example.com", keys["bob"]) + "\n")  # the repository's, at its root
    _git("init", "-q", cwd=origin)
    _git("add", "counter.md", SIGNERS, cwd=origin)
    _git("commit", "-qm", "plan and who may approve it", cwd=origin)
    for m in ("machine-a", "machine-b"):
        _git("clone", "-q", str(origin), str(tmp_path / m), cwd=tmp_path)
    a, b = tmp_path / "machine-a" / "counter.md", tmp_path / "machine-b" / "counter.md"
    env_a, env_b = ({"DIRECTOR_STATE_URL": pg_url, "DIRECTOR_HOST": m} for m in ("machine-a", "machine-b"))

    def on_b(*args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
        r = director(*args, cwd=b.parent, out=out, env=env_b)
        assert r.returncode == code, r.stdout + r.stderr
        return r

    t = Term(["apply", str(a), "--set", "mode=a", "--wait-for-approval", "60"], a.parent, out, env_a)
    try:
        t.wait("press Enter to stop waiting")  # no key here: this prompt cannot approve, it waits
        on_b("approve", str(b), "2", "--yes", code=14)  # unsigned: refused on machine A, which keeps asking
        t.wait("refused: unsigned")
        on_b("approve", str(b), "2", "--yes", "--sign-with", str(keys["bob"]))
        t.wait("approved from elsewhere")
        assert t.finish() == 0, t.text()
        fp = re.escape(fingerprint(keys["bob"]))  # the signer named, with the key that signed
        said = rf"approved from elsewhere: receipt \d+ by bob@example\.com \(signature verified, key {fp}; recorded by \S+@machine-b, approve-command\)"
        assert re.search(said, " ".join(t.seen().split())), t.seen()
    finally:
        t.kill()
    assert acts(out) == ["s1", "s2"]
    data = audit(a, out, env_a)
    [signed] = [x for x in data["approvals"] if x["principal"]]
    assert signed["host"] == "machine-b" and signed["principal"] == "bob@example.com"
    released = _released_after(data, signed["id"])
    print(f"signed receipt committed on machine-b -> machine-a's prompt released: {released * 1000:.0f} ms")
    assert 0 <= released < 2.0
    assert [e["fingerprint"] for e in events(data, "approval-verified")] == [fingerprint(keys["bob"])]
    # a receipt row edited in the shared database is refused; restored, it releases
    (out / "s2").unlink()
    assert director("apply", str(a), cwd=a.parent, out=out, env=env_a).returncode == 4
    on_b("approve", str(b), "2", "--yes", "--sign-with", str(keys["bob"]))
    rid = audit(a, out, env_a)["approvals"][-1]["id"]
    with psycopg.connect(pg_url, autocommit=True) as db:
        db.execute("UPDATE director.approvals SET host = 'machine-x' WHERE id = %s", (rid,))
        r = director("apply", str(a), cwd=a.parent, out=out, env=env_a)
        assert r.returncode == 4 and "refused: edited: the row's host is machine-x, the signature says machine-b" in r.stdout, r.stdout
        db.execute("UPDATE director.approvals SET host = 'machine-b' WHERE id = %s", (rid,))
    assert director("apply", str(a), cwd=a.parent, out=out, env=env_a).returncode == 0
    assert acts(out) == ["s1", "s2", "s2"]

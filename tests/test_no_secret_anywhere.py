"""No secret in any store or on any screen (issue 33 item 3), through the real CLI.

A token from the operator's environment is read by a gated act through a derived value
(`DB_URL=postgres://app:$API_TOKEN@…`), printed cut in two by a colour code, shown in the gate panel at a
terminal, `plan --section 2` and `approve`'s receipt diff; a later block mints a password, prints it and
fails. Then every store is searched for the token and for every 8-character piece of it: the journal (the
real `sqlite3 .dump`), the `--events` files, `audit --jsonl`, and everything the terminal showed; and
the stores for the minted password (a stream may show a minted secret before its block ends: documented).
"""

from __future__ import annotations

import re
import secrets
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.approvalplans import cli, plan_text
from tests.terminal import Term

pytestmark = pytest.mark.slow  # end to end through the real CLI

MINT = """\
export DB_PASSWORD="pw-$(tr -dc 'g-z' < /dev/urandom | head -c 28)"
echo "$DB_PASSWORD" >> "$OUT/minted"
echo "minted $DB_PASSWORD"
exit 1"""


def _pieces(secret: str, n: int = 8) -> list[str]:
    return [secret[i : i + n] for i in range(len(secret) - n + 1)]


def _plan(path: Path) -> None:
    text = plan_text(
        var0="",
        setup='export DB_URL="postgres://app:${API_TOKEN}@db.internal/$REGION"\n'
        "printf '%s\\e[0m%s\\n' \"${API_TOKEN:0:11}\" \"${API_TOKEN:11}\"",
        act='echo "connecting to $DB_URL"',
    )
    text = text.replace("| OUT   | `${OUT}` |", "| OUT   | `${OUT}` |\n| DB_URL | `${DB_URL}` |")
    text = text.replace("## Live State", "## 3. Mint  🟢\n\n```bash\n" + MINT + "\n```\n```bash\n# ✔ minted\n"
                        '[ -f "$OUT/minted" ] && echo "minted" || { echo "not minted"; exit 1; }\n```\n\n## Live State')  # fmt: skip
    path.write_text(text)


def test_no_secret_in_any_store_or_on_any_screen(tmp_path: Path, out: Path) -> None:
    token = "tok-" + "".join(secrets.choice("ghijklmnopqrstuvwxyz") for _ in range(36))
    env = {"API_TOKEN": token, "REGION": "eu"}
    plan = tmp_path / "closure.md"
    _plan(plan)
    events = [tmp_path / f"events-{i}.jsonl" for i in range(4)]
    shown: list[str] = []
    # at a terminal: the gate panel, a typed go; §3 mints, prints and fails
    t = Term(["apply", str(plan), "--events", str(events[0])], tmp_path, out, env)
    try:
        t.wait("Type go")
        t.send("go")
        assert t.finish() == 3, t.text()
    finally:
        t.kill()
    shown.append(t.raw.decode("utf-8", "replace"))
    assert "***" in shown[0] and "minted" in shown[0]
    # the act again, for other content (REGION changed): exit 4, then `plan --section` and approve's diff
    (out / "acted").unlink()
    env["REGION"] = "us"
    # §1 is in sync from here on (not re-run), and the DB_URL it derived from the token was never stored:
    # §2 reads it, so it comes from the environment, as the refusal says (docs/secrets.md), never empty
    env["DB_URL"] = f"postgres://app:{token}@db.internal/us"
    r = cli("apply", str(plan), "--events", str(events[1]), cwd=tmp_path, out=out, env=env)
    assert r.returncode == 4, r.stdout + r.stderr
    shown.append(r.stdout + r.stderr)
    r = cli("plan", str(plan), "--section", "2", "--events", str(events[2]), cwd=tmp_path, out=out, env=env)
    shown.append(r.stdout + r.stderr)
    r = cli("approve", str(plan), "2", "--yes", cwd=tmp_path, out=out, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    shown.append(r.stdout + r.stderr)
    diff = r.stdout
    r = cli("apply", str(plan), "--events", str(events[3]), cwd=tmp_path, out=out, env=env)
    assert r.returncode == 3, r.stdout
    shown.append(r.stdout + r.stderr)
    audit = cli("audit", str(plan), "--jsonl", cwd=tmp_path, out=out, env=env)
    assert audit.returncode == 0, audit.stderr
    sqlite = shutil.which("sqlite3")
    assert sqlite is not None
    db = tmp_path / ".director" / plan.name / "journal.sqlite3"
    dump = subprocess.run([sqlite, str(db), ".dump"], capture_output=True, text=True, check=True).stdout
    assert "gate-waiting" in dump and "approval-used" in dump
    stores = {"journal": dump, "audit --jsonl": audit.stdout}
    stores.update({e.name: e.read_text() for e in events if e.exists()})
    screens = {f"screen {i}": re.sub(r"\x1b\[[0-?]*[ -/]*[@-~]", "", s) for i, s in enumerate(shown)}
    for where, text in {**stores, **screens}.items():
        found = [p for p in _pieces(token) if p in text]
        assert not found, f"{where} holds pieces of the token: {found[:3]}"
    minted = (out / "minted").read_text().split()
    assert len(minted) == 2
    for pw in minted:
        reasons = [ln for ln in stores["events-1.jsonl"].splitlines() + stores["events-3.jsonl"].splitlines()
                   if '"step.output"' not in ln]  # fmt: skip
        for where, text in {**stores, "events (reasons)": "\n".join(reasons)}.items():
            if where.startswith("events-"):
                continue  # a stream shows what a block printed before Director learned the value
            found = [p for p in _pieces(pw) if p in text]
            assert not found, f"{where} holds pieces of a minted password: {found[:3]}"
    # and what the approver saw instead: the receipt diff names the sealed value that changed
    assert "was for other content" in diff and "(sealed " in diff, diff


def test_plan_never_shows_a_piece_of_a_secret_in_a_changed_value(tmp_path: Path, out: Path) -> None:
    """`plan` names what changed since a section's last success (`DB_URL changed: … → …`), each value cut
    to 48 characters: the value is redacted before it is cut (a cut token no longer matches the redactor)."""
    token = "tok-" + "".join(secrets.choice("ghijklmnopqrstuvwxyz") for _ in range(36))
    env = {"API_TOKEN": token, "REGION": "eu"}
    plan = tmp_path / "closure.md"
    plan.write_text(
        plan_text(
            var0='export DB_URL="postgres://app:${API_TOKEN}@db.internal/$REGION"',
            act='echo "$DB_URL" >/dev/null',
        )
    )
    r = cli("apply", str(plan), "--approve", "2", cwd=tmp_path, out=out, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    env["REGION"] = "us"
    r = cli("plan", str(plan), "--section", "2", cwd=tmp_path, out=out, env=env)
    shown = r.stdout + r.stderr
    assert "DB_URL changed" in shown, shown  # the sequence reaches the reason it is about
    found = [p for p in _pieces(token) if p in shown]
    assert not found, f"`plan` shows pieces of the token: {found[:3]}\n{shown.replace(token, '<TOKEN>')}"

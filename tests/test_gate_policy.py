"""Gate policy and what `approve` tells CI (issue 36, items 3, 4, 5 and 7), through the real CLI with real
`ssh-keygen` keys and real allowed-signers and policy files:

- `director approve` exits 14 when its receipt will not release the gate (unsigned, unknown, expired or
  removed key, a key not allowed to sign this kind of gate, the run's own operator): the gate stays shut;
- a typed `go` that cannot count (no key, a key not in the file) is said once, and the prompt waits;
- a gate may need two approvals from different people, refuse its run's operator; receipts expire and
  can be revoked; the plan may tighten the repository's policy, never loosen it;
- whose signature released a gate is named on the screen, in the summary and in the audit; the exit-4 hint
  names `--sign-with`; an allowed-signers file git does not hold is refused unless `--allow-dirty-signers`.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from director.state.signing import Claim
from tests import forkserver
from tests.approvalplans import SIGNERS, cli, key, signer_line
from tests.planmaker import CounterPlan, Step, acts, write_plan
from tests.terminal import Term

pytestmark = pytest.mark.slow  # end to end through the real CLI

GATE, BOOM = "🔴", "💥"
POLICY = ".director-approval-policy.toml"


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("keys")
    return {n: key(d, n) for n in ("alice", "bob", "carol", "bot", "mallory")}


def fingerprint(k: Path) -> str:
    """What ssh-keygen itself prints for the key (not Director's word)."""
    r = subprocess.run(["ssh-keygen", "-l", "-f", f"{k}.pub"], capture_output=True, text=True, check=True)
    return r.stdout.split()[1]


def signers(tmp: Path, keys: dict[str, Path], *who: str, options: dict[str, str] | None = None) -> Path:
    """An allowed-signers file beside the plan: `alice@example.com,alice` for alice's key, and so on."""
    lines = []
    for name in who:
        opt = (options or {}).get(name, "")
        kind, blob = keys[name].with_name(keys[name].name + ".pub").read_text().split()[:2]
        lines.append(" ".join(w for w in (f"{name}@example.com,{name}", opt, kind, blob) if w))
    path = tmp / SIGNERS
    path.write_text("\n".join(lines) + "\n")
    return path


def approve(plan: Path, out: Path, section: str, k: Path | None, *extra: str) -> subprocess.CompletedProcess[str]:
    signed = ("--sign-with", str(k)) if k is not None else ()
    return cli("approve", str(plan), section, "--yes", *signed, *extra, cwd=plan.parent, out=out)


def apply(plan: Path, out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return cli("apply", str(plan), *args, cwd=plan.parent, out=out)


def audit(plan: Path, out: Path) -> dict[str, Any]:
    r = cli("audit", str(plan), "--json", cwd=plan.parent, out=out)
    assert r.returncode == 0, r.stderr
    return dict(json.loads(r.stdout))


def events(data: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e["data"] for e in data["events"] if e["kind"] == kind]


def flat(text: str) -> str:
    """Text without its whitespace: what was said, however a screen of 80 columns wrapped or folded it."""
    return "".join(text.split())


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=cwd, check=True,
                   capture_output=True)  # fmt: skip


# ------------------------------------------------------------------------------ item 3: approve's exit code


def test_approve_exits_14_when_its_receipt_will_not_release_the_gate_and_the_gate_stays_shut(
    tmp_path: Path, out: Path, keys: dict[str, Path]
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=BOOM)]))
    signers(tmp_path, keys, "alice", "bob", "bot",
            options={"bob": 'valid-before="20200101"', "bot": 'namespaces="director-gate"'})  # fmt: skip
    assert apply(plan, out).returncode == 4
    cases = [
        (None, "unsigned; pass --sign-with KEYFILE"),
        (keys["mallory"], "(an unknown key, or one removed from the file)"),
        (keys["bob"], "is out of its validity"),
        (keys["bot"], 'not permitted for use in signature namespace "director-destroy"'),
    ]
    for k, why in cases:
        r = approve(plan, out, "2", k)
        assert r.returncode == 14, r.stdout + r.stderr
        assert "refused: a run checking" in r.stdout and "will not release §2 on this receipt" in r.stdout, r.stdout
        assert why in r.stdout, r.stdout
        assert "Traceback" not in r.stderr
        r = apply(plan, out)
        assert r.returncode == 4 and acts(out) == ["s1"], r.stdout  # the gate stays shut
    r = approve(plan, out, "2", keys["alice"])
    assert r.returncode == 0 and f"signed by alice@example.com with {fingerprint(keys['alice'])}" in r.stdout, r.stdout
    assert apply(plan, out).returncode == 0 and acts(out) == ["s1", "s2"]


# ------------------------------------------------------------------------------ item 4: no loop at the prompt


def test_a_prompt_without_a_key_says_once_what_is_needed_and_waits_never_a_loop(
    tmp_path: Path, out: Path, keys: dict[str, Path]
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    allowed = signers(tmp_path, keys, "alice")
    t = Term(["apply", str(plan), "--set", "mode=a"], tmp_path, out, size=(24, 80))
    try:
        t.wait("press Enter to stop waiting")
        seen = flat(t.seen())
        assert flat("Type go") not in seen
        assert flat(f"this prompt cannot approve §2: approvals must be signed by a key in {allowed}, and this run "
                    "has no key to sign with (it was started without --sign-with KEYFILE)") in seen, seen  # fmt: skip
        assert flat(f"approve from elsewhere: director approve {plan} 2 --sign-with KEYFILE") in seen, seen
        t.send("go")  # cannot approve here: any line stops the wait, once
        assert t.finish() == 4, t.text()
    finally:
        t.kill()
    seen = flat(t.seen())
    assert seen.count(flat("this prompt cannot approve")) == 1 and "refused" not in seen, seen
    assert flat(f"approve with: director approve {plan} 2 --sign-with KEYFILE") in seen, seen
    assert acts(out) == ["s1"] and [a for a in audit(plan, out)["approvals"]] == []  # nothing recorded


def test_a_typed_go_refused_once_is_said_once_then_the_prompt_waits_for_elsewhere(
    tmp_path: Path, out: Path, keys: dict[str, Path]
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    signers(tmp_path, keys, "alice")
    t = Term(["apply", str(plan), "--set", "mode=a", "--sign-with", str(keys["mallory"])], tmp_path, out, size=(24, 80))
    try:
        t.wait("Type go")
        t.send("go")  # signed with a key the file does not list: refused, said once
        t.wait("press Enter to stop waiting")
        assert flat("its typed go was refused") in flat(t.seen())
        r = approve(plan, out, "2", keys["alice"])
        assert r.returncode == 0, r.stdout
        t.wait("approved from elsewhere")
        assert t.finish() == 0, t.text()
    finally:
        t.kill()
    seen = flat(t.seen())
    assert seen.count(flat("refused: key")) == 1 and seen.count(flat("Type go")) == 1, seen
    fp = fingerprint(keys["alice"])
    assert flat(f"approved from elsewhere: receipt 2 by alice@example.com (signature verified, key {fp};") in seen, seen
    assert acts(out) == ["s1", "s2"]


# ------------------------------------------------------------------------------ item 5: the policy


def test_two_approvals_from_different_people_release_a_gate_one_person_twice_does_not(
    tmp_path: Path, out: Path, keys: dict[str, Path]
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    signers(tmp_path, keys, "alice", "bob")
    (tmp_path / POLICY).write_text("[gates]\napprovals = 2\n")
    assert apply(plan, out).returncode == 4
    r = approve(plan, out, "2", keys["alice"])
    assert r.returncode == 0 and "1 of 2 approvals; 1 more needed from someone else" in r.stdout, r.stdout
    r = apply(plan, out)
    assert r.returncode == 4 and "1 of 2 approvals (alice@example.com (receipt 1)); 1 more needed" in r.stdout, r.stdout
    r = approve(plan, out, "2", keys["alice"], "--operator", "someone-else")  # the same key: the same person
    assert r.returncode == 14 and "does not count again: receipt 1 is by the same person" in r.stdout, r.stdout
    assert apply(plan, out).returncode == 4 and acts(out) == ["s1"]
    r = approve(plan, out, "2", keys["bob"])
    assert r.returncode == 0 and "2 of 2 approvals" in r.stdout, r.stdout
    r = apply(plan, out)
    assert r.returncode == 0 and acts(out) == ["s1", "s2"], r.stdout
    for who in ("alice", "bob"):
        assert f"signed by {who}@example.com with {fingerprint(keys[who])}" in r.stdout, r.stdout
    used = events(audit(plan, out), "approval-used")
    assert sorted(e["principal"] for e in used) == ["alice@example.com", "bob@example.com"]
    # each spent: the next application needs two new approvals
    (out / "s2").unlink()
    assert apply(plan, out).returncode == 4 and acts(out) == ["s1", "s2"]


def test_at_a_terminal_and_while_waiting_approvals_are_gathered_until_the_gate_has_enough(
    tmp_path: Path, out: Path, keys: dict[str, Path]
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    signers(tmp_path, keys, "alice", "bob", "carol")
    (tmp_path / POLICY).write_text("[gates]\napprovals = 2\n")
    t = Term(["apply", str(plan), "--set", "mode=a", "--sign-with", str(keys["alice"])], tmp_path, out, size=(24, 80))
    try:
        t.wait("Type go")
        t.send("go")  # alice's own, signed: it counts, one more is needed, the prompt only waits now
        t.wait("press Enter to stop waiting")
        said = "your approval counts: 1 of 2 approvals (alice@example.com (receipt 1)); 1 more needed from someone else"
        assert flat(said) in flat(t.seen()), t.seen()
        assert approve(plan, out, "2", keys["bob"]).returncode == 0
        t.wait("approved from elsewhere")
        assert t.finish() == 0, t.text()
    finally:
        t.kill()
    seen = flat(t.seen())
    alice = f"receipt 1 by alice@example.com (signature verified, key {fingerprint(keys['alice'])}; recorded by"
    bob = f"prompt) and receipt 2 by bob@example.com (signature verified, key {fingerprint(keys['bob'])};"
    assert flat(f"approved from elsewhere: {alice}") in seen and flat(bob) in seen, seen
    assert acts(out) == ["s1", "s2"]
    # without a terminal, --wait-for-approval gathers receipts from elsewhere the same way
    (out / "s2").unlink()
    env = {**os.environ, "COUNTER_OUT": str(out), "CI": "1", "NO_COLOR": "1"}
    p = forkserver.Popen([sys.executable, "-m", "director", "apply", str(plan), "--wait-for-approval", "300"],
                         cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        _until(lambda: "waits up to 300 s" in json.dumps(audit(plan, out)["transitions"]))
        assert approve(plan, out, "2", keys["carol"]).returncode == 0
        _until(lambda: any(e["approval_id"] == 3 for e in events(audit(plan, out), "approval-verified")))
        assert p.poll() is None, "one approval of two does not release the gate"
        assert approve(plan, out, "2", keys["bob"]).returncode == 0
        stdout, stderr = p.communicate(timeout=300)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, stdout + stderr
    assert acts(out) == ["s1", "s2", "s2"]
    used = [e["approval_id"] for e in events(audit(plan, out), "approval-used")]
    assert sorted(used) == [1, 2, 3, 4], used


def _until(cond: Any, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.1)


def test_the_plan_tightens_the_repositorys_policy_and_never_loosens_it(
    tmp_path: Path, out: Path, keys: dict[str, Path]
) -> None:
    loose = CounterPlan([Step(), Step(marker=GATE, info="bash {approvals=1 self-approval=yes}")])
    plan = write_plan(tmp_path, loose)
    signers(tmp_path, keys, "alice", "bob")
    (tmp_path / POLICY).write_text("[gates]\napprovals = 2\n")
    assert apply(plan, out).returncode == 4
    assert approve(plan, out, "2", keys["alice"]).returncode == 0
    r = apply(plan, out)
    assert r.returncode == 4 and "1 of 2 approvals" in r.stdout, r.stdout  # the repository's 2 hold
    (tmp_path / POLICY).unlink()
    here = tmp_path / "strict"  # no policy file: the plan's own fence asks for two
    here.mkdir()
    strict = write_plan(here, CounterPlan([Step(), Step(marker=GATE, info="bash {approvals=2}")]))
    signers(here, keys, "alice", "bob")
    assert apply(strict, out).returncode == 4
    r = approve(strict, out, "2", keys["alice"])
    assert r.returncode == 0 and "1 of 2 approvals" in r.stdout, r.stdout
    r = apply(strict, out)
    assert r.returncode == 4 and "1 of 2 approvals" in r.stdout, r.stdout
    r = cli("lint", str(strict), cwd=strict.parent, out=out)
    assert "unknown-fence-attribute" not in r.stdout, r.stdout
    bad = tmp_path / "bad.md"
    bad.write_text(CounterPlan([Step(), Step(marker=GATE, info="bash {approvals=two}")]).text())
    r = apply(bad, out)
    assert r.returncode == 65 and "bad approvals='two'" in r.stderr and f"{bad}:" in r.stderr, r.stderr


def test_a_gate_may_refuse_its_own_runs_operator(tmp_path: Path, out: Path, keys: dict[str, Path]) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    signers(tmp_path, keys, "alice", "bob")
    (tmp_path / POLICY).write_text("[gates]\nself_approval = false\n")
    as_alice = ("--operator", "alice")
    r = apply(plan, out, *as_alice, "--approve", "2", "--sign-with", str(keys["alice"]))
    assert r.returncode == 4 and "refused: the run's own approval, and the gate needs 1 approval, not from the run's own operator" in r.stdout, r.stdout
    r = approve(plan, out, "2", keys["alice"])
    assert r.returncode == 14 and "its approver is the run's own operator" in r.stdout, r.stdout
    assert apply(plan, out, *as_alice).returncode == 4 and acts(out) == ["s1"]
    assert approve(plan, out, "2", keys["bob"]).returncode == 0
    r = apply(plan, out, *as_alice)
    assert r.returncode == 0 and acts(out) == ["s1", "s2"], r.stdout
    refused = events(audit(plan, out), "approval-refused")
    assert {e["code"] for e in refused} == {"self-approval"}
    # at a terminal, the run's own operator's prompt cannot approve: said once, it waits
    (out / "s2").unlink()
    t = Term(["apply", str(plan), *as_alice, "--sign-with", str(keys["alice"])], tmp_path, out, size=(24, 80))
    try:
        t.wait("press Enter to stop waiting")
        said = "this prompt cannot approve §2: the gate needs 1 approval, not from the run's own operator"
        assert flat(said) in flat(t.seen())
        assert approve(plan, out, "2", keys["bob"]).returncode == 0
        t.wait("approved from elsewhere")
        assert t.finish() == 0
    finally:
        t.kill()


def test_a_receipt_expires_inside_its_signed_claim(tmp_path: Path, out: Path, keys: dict[str, Path]) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    signers(tmp_path, keys, "alice")
    (tmp_path / POLICY).write_text('[gates]\nmax_valid_for = "2h"\n')
    assert apply(plan, out).returncode == 4
    r = approve(plan, out, "2", keys["alice"], "--valid-for", "3h")
    assert r.returncode == 64 and "--valid-for 3h: the approval policy allows at most 2h" in r.stderr, r.stderr
    r = approve(plan, out, "2", keys["alice"], "--valid-for", "soon")
    assert r.returncode == 64 and r.stderr.startswith("error: --valid-for: 'soon' is not a duration"), r.stderr
    r = approve(plan, out, "2", keys["alice"], "--valid-for", "2s")
    assert r.returncode == 0, r.stdout
    [receipt] = audit(plan, out)["approvals"]
    claim = Claim.parse(receipt["signed_payload"])
    assert claim.expires is not None
    ends = datetime.fromisoformat(claim.expires)
    assert (ends - datetime.fromisoformat(claim.at)).total_seconds() == 2
    while datetime.now(UTC) < ends:  # the receipt's own end, whatever the load: no fixed sleep
        time.sleep(0.1)
    r = apply(plan, out)
    assert r.returncode == 4 and f"refused: it expired at {claim.expires}" in r.stdout, r.stdout
    # the expiry is signed: extended in the journal, the signature no longer holds
    db = sqlite3.connect(tmp_path / ".director" / plan.name / "journal.sqlite3", isolation_level=None)
    later = claim.expires.replace(claim.expires[:4], "2099")
    db.execute("UPDATE approvals SET signed_payload = ?", (receipt["signed_payload"].replace(claim.expires, later),))
    db.close()
    r = apply(plan, out)
    assert r.returncode == 4 and "refused: the signature does not hold" in r.stdout, r.stdout
    assert acts(out) == ["s1"]
    codes = [e["code"] for e in events(audit(plan, out), "approval-refused")]
    assert codes == ["receipt-expired", "bad-signature"], codes
    # a default receipt counts for 24 h at most, or the policy's bound if shorter
    r = approve(plan, out, "2", keys["alice"])
    [_, last] = audit(plan, out)["approvals"]
    second = Claim.parse(last["signed_payload"])
    assert second.expires is not None
    assert (datetime.fromisoformat(second.expires) - datetime.fromisoformat(second.at)).total_seconds() == 7200
    # ... and releases nothing here: the journal's chain shows the edit, no gate is released across it
    r = apply(plan, out)
    assert r.returncode == 13 and "receipt 1 (§2) was edited" in r.stderr and acts(out) == ["s1"], r.stderr


def test_a_revoked_receipt_never_releases_a_gate(tmp_path: Path, out: Path, keys: dict[str, Path]) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    signers(tmp_path, keys, "alice")
    assert apply(plan, out).returncode == 4
    assert approve(plan, out, "2", keys["alice"]).returncode == 0
    r = cli("approve", str(plan), "--revoke", "1", "--reason", "wrong change", "--operator", "carol", cwd=tmp_path, out=out)
    assert r.returncode == 0 and "revoked receipt 1 by" in r.stdout and "it releases no gate from now on" in r.stdout
    r = apply(plan, out)
    assert r.returncode == 4 and "receipt 1 by" in r.stdout and "refused: revoked by carol@" in r.stdout, r.stdout
    assert ": wrong change" in r.stdout and acts(out) == ["s1"]
    r = cli("approve", str(plan), "--revoke", "7", cwd=tmp_path, out=out)
    assert r.returncode == 64 and "no receipt 7" in r.stderr, r.stderr
    r = cli("approve", str(plan), "2", "--revoke", "1", cwd=tmp_path, out=out)
    assert r.returncode == 64, r.stderr
    [revoked] = events(audit(plan, out), "approval-revoked")
    assert (revoked["approval_id"], revoked["operator"], revoked["reason"]) == (1, "carol", "wrong change")
    text = cli("audit", str(plan), cwd=tmp_path, out=out).stdout
    assert "receipt 1 revoked by carol@" in text
    assert approve(plan, out, "2", keys["alice"]).returncode == 0  # a new approval releases it
    assert apply(plan, out).returncode == 0 and acts(out) == ["s1", "s2"]


def test_a_policy_is_checked_before_anything_runs_and_fails_closed(
    tmp_path: Path, out: Path, keys: dict[str, Path]
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    policy = tmp_path / POLICY
    policy.write_text("[destructive]\napprovals = 2\n")  # no allowed-signers file: who is who?
    r = apply(plan, out)
    assert r.returncode == 64 and "needs 2 approvals from different people" in r.stderr and "no allowed-signers" in r.stderr
    assert acts(out) == [] and not (tmp_path / ".director").exists()
    signers(tmp_path, keys, "alice")
    for text, said in (("[gates]\napprovals = 0\n", ":2: [gates] approvals: a number from 1 to 9, not 0"),
                       ("[gate]\napprovals = 2\n", ":1: unknown 'gate'"),
                       ("[gates]\nquorum = 2\n", ":2: [gates]: unknown 'quorum'"),
                       ("[gates\n", ": not TOML")):  # fmt: skip
        policy.write_text(text)
        r = apply(plan, out)
        assert r.returncode == 64 and r.stderr.startswith(f"error: {policy}{said}"), r.stderr
        assert r.stderr.count("\n") == 1 and acts(out) == []
    policy.write_text("[gates]\napprovals = 1\n")
    assert apply(plan, out).returncode == 4
    policy.unlink()  # a policy the journal held the gates to is gone: fail closed
    r = apply(plan, out)
    assert r.returncode == 64 and "its journal holds its gates to the approval policy in" in r.stderr, r.stderr
    assert acts(out) == ["s1"]


# ------------------------------------------------------------------------------ item 7: named, hinted, committed


def test_whose_signature_released_the_gate_is_named_in_the_summary_and_the_audit_and_the_hint_names_the_key(
    tmp_path: Path, out: Path, keys: dict[str, Path]
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    signers(tmp_path, keys, "alice")
    r = apply(plan, out)
    assert r.returncode == 4 and f"approve with:  director approve {plan} 2 --sign-with KEYFILE" in r.stdout, r.stdout
    j = cli("apply", str(plan), "--json", cwd=tmp_path, out=out)
    assert json.loads(j.stdout)["approve_hint"] == f"director approve {plan} 2 --sign-with KEYFILE"
    assert approve(plan, out, "2", keys["alice"], "--operator", "root").returncode == 0
    r = apply(plan, out)
    fp = fingerprint(keys["alice"])
    assert r.returncode == 0, r.stdout
    said = rf"approved with receipt 1 by alice@example.com \(signature verified, key {re.escape(fp)}; recorded by root@"
    assert re.search(said, " ".join(r.stdout.split())), r.stdout
    text = cli("audit", str(plan), cwd=tmp_path, out=out).stdout
    assert f"approval-used: released §2 on receipt 1 signed by alice@example.com with {fp}" in text, text


def test_an_uncommitted_allowed_signers_file_is_refused_unless_allowed_and_then_said_and_audited(
    tmp_path: Path, out: Path, keys: dict[str, Path]
) -> None:
    _git("init", "-q", cwd=tmp_path)
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    allowed = signers(tmp_path, keys, "alice")
    r = apply(plan, out)
    assert r.returncode == 64 and r.stderr.strip() == (
        f"error: {allowed}: untracked (not committed) in its git repository; commit it, or pass "
        "--allow-dirty-signers to use it as it is -- nothing was run"
    ), r.stderr
    assert acts(out) == [] and not (tmp_path / ".director").exists()
    r = apply(plan, out, "--allow-dirty-signers")
    said = f"warning: {allowed} is untracked (not committed) in its git repository: used as it is"
    assert r.returncode == 4 and said in r.stdout, r.stdout
    assert said in cli("audit", str(plan), cwd=tmp_path, out=out).stdout
    assert [e["warning"].startswith(said) for e in events(audit(plan, out), "trust-uncommitted")] == [True]
    _git("add", SIGNERS, cwd=tmp_path)
    _git("commit", "-qm", "alice may approve", cwd=tmp_path)
    r = apply(plan, out)
    assert r.returncode == 4 and "warning:" not in r.stdout, r.stdout
    allowed.write_text(allowed.read_text() + signer_line("mallory@example.com", keys["mallory"]) + "\n")
    r = approve(plan, out, "2", keys["mallory"])
    assert r.returncode == 64 and "modified since the last commit" in r.stderr, r.stderr
    r = apply(plan, out)
    assert r.returncode == 64 and "modified since the last commit" in r.stderr and acts(out) == ["s1"], r.stderr
    # the committed file replaced by a symlink to one outside the repository: checked as what is in its place
    elsewhere = tmp_path.parent / f"{tmp_path.name}-signers"
    elsewhere.write_text(allowed.read_text())
    _git("checkout", "--", SIGNERS, cwd=tmp_path)
    allowed.unlink()
    allowed.symlink_to(elsewhere)
    r = apply(plan, out)
    assert r.returncode == 64 and f"error: {allowed}: changed type since the last commit" in r.stderr, r.stderr
    elsewhere.unlink()

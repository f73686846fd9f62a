"""Signed approvals, the pure half and the ssh-keygen edge: the canonical claim, the allowed-signers file
read as data, and `ssh-keygen -Y` (the real program) signing and refusing (tests/test_signed_approvals.py
drives all of it through the CLI)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from director.errors import UsageError
from director.exec import sshsig
from director.run import signatures
from director.state.signing import (
    Claim,
    SignersError,
    content_mismatch,
    load_allowed_signers,
    namespace,
    parse_allowed_signers,
    principal_for,
    row_mismatch,
)

CLAIM = Claim("git:plans/p.md", "3", "ab" * 32, {"ENV": "prod", "A": "1"}, "2026-05-01T09:13:11+00:00",
              "00" * 16, "alice@example.com", "alice", "laptop", "approve-command")  # fmt: skip


def _key(tmp: Path, name: str, kind: str = "ed25519") -> Path:
    extra = ["-b", "2048"] if kind == "rsa" else []
    subprocess.run(["ssh-keygen", "-q", "-t", kind, *extra, "-N", "", "-C", name, "-f", str(tmp / name)], check=True)
    return tmp / name


def _line(principals: str, key: Path, options: str = "") -> str:
    kind, blob = key.with_name(key.name + ".pub").read_text().split()[:2]
    return " ".join(w for w in (principals, options, kind, blob) if w)


def test_the_claim_is_canonical_json_and_reads_back_only_when_canonical() -> None:
    text = CLAIM.payload()
    assert text.startswith('{"at":"2026-05-01T09:13:11+00:00","format":"director.approval/1"') and " " not in text
    assert '"inputs":{"A":"1","ENV":"prod"}' in text  # sorted: the same approval is the same bytes
    assert Claim.parse(text) == CLAIM
    with pytest.raises(ValueError, match="canonical"):
        Claim.parse(text.replace(",", ", ", 1))
    with pytest.raises(ValueError):
        Claim.parse(text.replace("director.approval/1", "other/1"))
    with pytest.raises(ValueError):
        Claim.parse("[]")


def test_a_row_or_a_gate_that_differs_from_the_claim_is_named() -> None:
    row = {"section_key": "3", "sha256": "ab" * 32, "principal": "alice@example.com", "operator": "alice",
           "host": "laptop", "how": "approve-command"}  # fmt: skip
    assert row_mismatch(CLAIM, row) is None
    assert row_mismatch(CLAIM, {**row, "operator": "mallory"}) == "the row's operator is mallory, the signature says alice"
    assert "sha256" in str(row_mismatch(CLAIM, {**row, "sha256": "cd" * 32}))
    gate = {"plan": "git:plans/p.md", "section": "3", "sha256": "ab" * 32, "inputs": {"A": "1", "ENV": "prod"}}
    assert content_mismatch(CLAIM, **gate) is None  # type: ignore[arg-type]
    assert "another plan" in str(content_mismatch(CLAIM, **{**gate, "plan": "git:plans/q.md"}))  # type: ignore[arg-type]
    assert "other content" in str(content_mismatch(CLAIM, **{**gate, "sha256": "cd" * 32}))  # type: ignore[arg-type]
    assert "other inputs" in str(content_mismatch(CLAIM, **{**gate, "inputs": {"ENV": "dev"}}))  # type: ignore[arg-type]
    assert (namespace("🔴"), namespace("💥")) == ("director-gate", "director-destroy")


def test_allowed_signers_lines_are_read_and_a_bad_one_is_named_by_line(tmp_path: Path) -> None:
    alice, bob = _key(tmp_path, "alice"), _key(tmp_path, "bob", "rsa")
    text = "\n".join([
        "# who may approve",
        _line("alice@example.com,alice", alice),
        _line('"bob@example.com"', bob, 'namespaces="director-gate,file",valid-before="20300101"'),
        _line("*@example.com", bob),
    ])  # fmt: skip
    signers = parse_allowed_signers(text)
    assert [(s.line, s.principals) for s in signers] == [
        (2, ("alice@example.com", "alice")), (3, ("bob@example.com",)), (4, ("*@example.com",))
    ]
    assert signers[1].options == {"namespaces": "director-gate,file", "valid-before": "20300101"}
    kind, blob = alice.with_name("alice.pub").read_text().split()[:2]
    assert principal_for(signers, kind, blob, "alice") == "alice"  # the operator's name when listed
    assert principal_for(signers, kind, blob, "root") == "alice@example.com"
    kind, blob = bob.with_name("bob.pub").read_text().split()[:2]
    assert principal_for(signers, kind, blob, "bob") == "bob@example.com"  # patterns are never a principal
    assert principal_for(signers, "ssh-ed25519", "AAAA", "x") is None
    for bad, why in [
        ("alice", "expected"),
        ("alice ssh-ed25519 !!!", "not base64"),
        (_line("alice", alice, "fancy=1"), "unknown option"),
        (_line("alice", alice).replace("ssh-ed25519", "ssh-rsa"), "not a ssh-rsa key"),
        ('"alice ' + _line("x", alice), "unbalanced quotes"),
    ]:
        with pytest.raises(SignersError, match=why) as e:
            parse_allowed_signers("# header\n" + bad)
        assert e.value.line == 2
    f = tmp_path / "signers"
    f.write_text("ok\n")
    with pytest.raises(UsageError, match=rf"^{f}:1: expected .*\(--allowed-signers\)$"):
        load_allowed_signers(f)


@pytest.mark.parametrize("kind", ["ed25519", "rsa"])
def test_ssh_keygen_signs_and_verifies_and_says_why_it_refuses(tmp_path: Path, kind: str) -> None:
    key, other = _key(tmp_path, "key", kind), _key(tmp_path, "other")
    allowed = tmp_path / "allowed"
    allowed.write_text(_line("alice@example.com", key) + "\n")
    data = CLAIM.payload().encode()
    sig = sshsig.sign(key, "director-gate", data)
    ok = signatures.verify(allowed, "alice@example.com", "director-gate", sig, data)
    printed = subprocess.run(["ssh-keygen", "-l", "-f", f"{key}.pub"], capture_output=True, text=True, check=True)
    assert ok.ok and ok.fingerprint == printed.stdout.split()[1] and ok.key_type == kind.upper()
    assert signatures.verify(allowed, "alice@example.com", "director-gate", sig, data + b" ").code == "bad-signature"
    assert signatures.verify(allowed, "alice@example.com", "director-destroy", sig, data).code == "bad-signature"
    assert signatures.verify(allowed, "bob@example.com", "director-gate", sig, data).code == "principal"
    stranger = sshsig.sign(other, "director-gate", data)
    refused = signatures.verify(allowed, "alice@example.com", "director-gate", stranger, data)
    assert refused.code == "unknown-key" and "not in" in refused.reason
    allowed.write_text(_line("alice@example.com", key, 'valid-before="20200101"') + "\n")
    assert signatures.verify(allowed, "alice@example.com", "director-gate", sig, data).code == "expired"
    allowed.write_text(_line("alice@example.com", key, 'namespaces="director-destroy"') + "\n")
    assert signatures.verify(allowed, "alice@example.com", "director-gate", sig, data).code == "namespace"
    assert sshsig.public_key(key) == tuple(key.with_name("key.pub").read_text().split()[:2])
    with pytest.raises(UsageError, match="--sign-with"):
        sshsig.sign(tmp_path / "missing", "director-gate", data)


def test_a_key_an_agent_holds_signs_through_its_public_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = _key(tmp_path, "agent-held")
    sock = tmp_path / "agent.sock"
    agent = subprocess.Popen(["ssh-agent", "-D", "-a", str(sock)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not sock.exists():
            assert agent.poll() is None and time.monotonic() < deadline, "ssh-agent did not start"
            time.sleep(0.02)
        monkeypatch.setenv("SSH_AUTH_SOCK", str(sock))
        subprocess.run(["ssh-add", "-q", str(key)], check=True, env={"SSH_AUTH_SOCK": str(sock), "PATH": "/usr/bin:/bin"})
        key.unlink()  # only the agent has the private key now
        pub = key.with_name("agent-held.pub")
        data = CLAIM.payload().encode()
        sig = sshsig.sign(pub, "director-gate", data)
        allowed = tmp_path / "allowed"
        allowed.write_text(_line("alice@example.com", key) + "\n")
        assert signatures.verify(allowed, "alice@example.com", "director-gate", sig, data).ok
    finally:
        agent.terminate()
        agent.wait(10)


def test_why_a_signature_is_refused_is_read_from_the_signature_and_the_file_not_from_words(tmp_path: Path) -> None:
    """The signature's own key and namespace (PROTOCOL.sshsig) and the file's line for that key say why;
    ssh-keygen's exit status alone says whether."""
    key = _key(tmp_path, "key")
    allowed = tmp_path / "allowed"
    data = CLAIM.payload().encode()
    sig = sshsig.sign(key, "director-destroy", data)
    parsed = sshsig.parse_signature(sig)
    assert parsed is not None and parsed.namespace == "director-destroy" and parsed.key_type == "ssh-ed25519"
    assert parsed.key == key.with_name("key.pub").read_text().split()[1]
    assert sshsig.parse_signature("-----BEGIN SSH SIGNATURE-----\nbm90IGEgc2lnbmF0dXJl\n-----END SSH SIGNATURE-----") is None
    allowed.write_text(_line("alice@example.com", key) + "\n")
    wrong = signatures.verify(allowed, "alice@example.com", "director-gate", sig, data)
    assert wrong.code == "bad-signature" and "signed for namespace director-destroy, not this gate's director-gate" in wrong.reason
    for options, code in (('valid-after="20990101"', "expired"), ('valid-before="201901011200Z"', "expired"),
                          ('namespaces="director-gate"', "namespace"), ('namespaces="director-*"', "")):  # fmt: skip
        allowed.write_text(_line("alice@example.com", key, options) + "\n")
        c = signatures.verify(allowed, "alice@example.com", "director-destroy", sig, data)
        assert (c.ok, c.code) == (code == "", code), (options, c)
    allowed.write_text(_line("*@example.com", key) + "\n")  # a pattern: ssh-keygen matches it, and so do we
    assert signatures.verify(allowed, "bob@example.com", "director-destroy", sig, data).ok
    assert signatures.verify(allowed, "bob@example.org", "director-destroy", sig, data).code == "principal"

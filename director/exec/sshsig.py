"""`ssh-keygen -Y` at the edge: sign a claim with an SSH key, check a signature against an allowed-signers
file (OpenSSH's SSHSIG, as git does with `gpg.format=ssh`). What is signed is `director.state.signing`'s.

The real program does the cryptography and reads the allowed-signers file (principals, `namespaces=`,
`valid-after`/`valid-before`, `cert-authority`); nothing here re-implements it. A key held by an agent
works as with git: `--sign-with` names its public key and `ssh-keygen` asks the agent (`SSH_AUTH_SOCK`).
A signature is checked from a file in a private temp directory, removed before returning.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from director.errors import PrerequisiteError, UsageError

TIMEOUT_S = 120.0  # a passphrase or an agent's confirmation may take a human a while


def program() -> str:
    """The `ssh-keygen` to run (PrerequisiteError, exit 6, when there is none)."""
    found = shutil.which("ssh-keygen")
    if found is None:
        raise PrerequisiteError(
            "signed approvals need ssh-keygen (OpenSSH 8.2 or later): install openssh-client"
        )
    return found


def _run(args: list[str], data: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            [program(), *args],
            input=data,
            stdin=None if data is not None else subprocess.DEVNULL,
            capture_output=True,
            timeout=TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        what = " ".join(args[:2])
        raise UsageError(f"ssh-keygen {what} took over {TIMEOUT_S:g} s (a key's passphrase?)") from None


def _said(stderr: bytes) -> str:
    """ssh-keygen's last words (what it says before failing), without its chatter."""
    lines = [
        ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines()
        if ln.strip() and not ln.startswith("Signing data on standard input")
    ]  # fmt: skip
    return lines[-1] if lines else "no reason given"


def sign(key: Path, namespace: str, data: bytes) -> str:
    """The armored signature of `data` by `key` (a private key file, or the public key of one an agent
    holds) under `namespace`; UsageError naming `--sign-with` when ssh-keygen cannot sign with it."""
    done = _run(["-Y", "sign", "-q", "-f", str(key), "-n", namespace], data)
    text = done.stdout.decode("ascii", "replace")
    if done.returncode != 0 or "BEGIN SSH SIGNATURE" not in text:
        raise UsageError(f"--sign-with {key}: ssh-keygen could not sign: {_said(done.stderr)}")
    return text


def public_key(key: Path) -> tuple[str, str] | None:
    """(key type, base64 blob) of a signing key: the file itself when it is a public key, its `.pub`
    beside it, or what `ssh-keygen -y` derives (an unencrypted key only: never a passphrase prompt)."""
    for candidate in (key, key.with_name(key.name + ".pub")):
        try:
            words = candidate.read_text(encoding="utf-8", errors="replace").split()
        except OSError:
            continue
        if len(words) >= 2 and not words[0].startswith("-----"):
            return words[0], words[1]
    done = _run(["-y", "-P", "", "-f", str(key)])
    words = done.stdout.decode("ascii", "replace").split()
    return (words[0], words[1]) if done.returncode == 0 and len(words) >= 2 else None


@dataclass(frozen=True)
class Check:
    """What ssh-keygen said of one signature: accepted, by whom and which key, or why not."""

    ok: bool
    fingerprint: str = ""  # SHA256:… of the signing key (known whenever the signature is well formed)
    key_type: str = ""  # ED25519, RSA…
    reason: str = ""  # why it is not accepted
    code: str = ""  # bad-signature | refused (`director.state.signing.refusal_code` tells which refusal)
    said: str = ""  # ssh-keygen's last words when it refused (for the operator, never for a verdict)
    listed: tuple[str, ...] = ()  # `-Y find-principals`: whom the file lists for the signing key


def verify(allowed: Path, principal: str, namespace: str, signature: str, data: bytes) -> Check:
    """`ssh-keygen -Y verify` of `signature` over `data` for `principal` under `namespace`, now, against
    the allowed-signers file. Whether it is accepted is ssh-keygen's exit status; what is known of why not
    is data, never its words: the signature's own key and namespace (`parse_signature`), whether it
    verifies over `data` at all (`-Y check-novalidate`: `bad-signature` when not), and whom the file lists
    for the key (`-Y find-principals`). Which refusal it is (`refused`) is the file's line for that key
    to say (`director.state.signing.refusal_code`)."""
    sig = parse_signature(signature)
    fingerprint = _fingerprint(sig.key) if sig is not None else ""
    key_type = _KEY_TYPES.get(sig.key_type, sig.key_type.upper()) if sig is not None else ""
    with tempfile.TemporaryDirectory(prefix="director-sig-") as tmp:
        path = Path(tmp) / "receipt.sig"
        path.write_text(signature, encoding="ascii", errors="replace")
        seen = _run(["-Y", "check-novalidate", "-n", namespace, "-s", str(path)], data)
        if seen.returncode != 0 or sig is None:
            why = _said(seen.stderr)
            if sig is not None and sig.namespace != namespace:
                why = f"{why} (it was signed for namespace {sig.namespace}, not this gate's {namespace})"
            return Check(False, fingerprint, key_type, f"the signature does not hold: {why}", "bad-signature")
        args = ["-Y", "verify", "-f", str(allowed), "-I", principal, "-n", namespace, "-s", str(path)]
        done = _run(args, data)
        if done.returncode == 0:
            return Check(True, fingerprint, key_type)
        said = _said(done.stderr)
        found = _run(["-Y", "find-principals", "-f", str(allowed), "-s", str(path)])
    listed = tuple(found.stdout.decode("utf-8", "replace").split()) if found.returncode == 0 else ()
    return Check(False, fingerprint, key_type, f"refused by {allowed}: {said}", "refused", said, listed)


def _fingerprint(blob: str) -> str:
    """`SHA256:…` of a public key blob (base64), as `ssh-keygen -l` prints it."""
    return "SHA256:" + base64.b64encode(hashlib.sha256(base64.b64decode(blob)).digest()).decode().rstrip("=")


@dataclass(frozen=True)
class Signature:
    """What an SSH signature says of itself (PROTOCOL.sshsig): the key that made it and its namespace."""

    key: str  # base64 of the signing public key's blob
    key_type: str  # `ssh-ed25519`, `ssh-rsa`…
    namespace: str


def parse_signature(armored: str) -> Signature | None:
    """The armored signature's key and namespace; None when it is not an SSHSIG signature."""
    body = "".join(ln.strip() for ln in armored.strip().splitlines()[1:-1])
    try:
        blob = base64.b64decode(body, validate=True)
    except ValueError:
        return None
    if not blob.startswith(b"SSHSIG") or len(blob) < 10:
        return None
    fields, at = [], 10  # the magic, then a uint32 version
    for _ in range(2):
        if at + 4 > len(blob):
            return None
        n = int.from_bytes(blob[at : at + 4], "big")
        fields.append(blob[at + 4 : at + 4 + n])
        at += 4 + n
    if at > len(blob) or len(fields[0]) < 4:
        return None
    kn = int.from_bytes(fields[0][:4], "big")
    key_type = fields[0][4 : 4 + kn].decode("ascii", "replace")
    key = base64.b64encode(fields[0]).decode("ascii")
    return Signature(key, key_type, fields[1].decode("utf-8", "replace"))


# How `ssh-keygen -l` names key types (what `Check.key_type` says).
_KEY_TYPES = {
    "ssh-ed25519": "ED25519", "ssh-rsa": "RSA", "ssh-dss": "DSA", "ecdsa-sha2-nistp256": "ECDSA",
    "ecdsa-sha2-nistp384": "ECDSA", "ecdsa-sha2-nistp521": "ECDSA",
    "sk-ssh-ed25519@openssh.com": "ED25519-SK", "sk-ecdsa-sha2-nistp256@openssh.com": "ECDSA-SK",
}  # fmt: skip
def readable_key(key: Path) -> Path:
    """The `--sign-with` file: it must exist and be readable (UsageError naming it otherwise)."""
    if not key.is_file() or not os.access(key, os.R_OK):
        raise UsageError(f"--sign-with: {key} is not a readable key file")
    return key

"""`ssh-keygen -Y` at the edge: sign a claim with an SSH key, check a signature against an allowed-signers
file (OpenSSH's SSHSIG, as git does with `gpg.format=ssh`). What is signed is `director.state.signing`'s.

The real program does the cryptography and reads the allowed-signers file (principals, `namespaces=`,
`valid-after`/`valid-before`, `cert-authority`); nothing here re-implements it. A key held by an agent
works as with git: `--sign-with` names its public key and `ssh-keygen` asks the agent (`SSH_AUTH_SOCK`).
A signature is checked from a file in a private temp directory, removed before returning.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from director.errors import PrerequisiteError, UsageError

TIMEOUT_S = 120.0  # a passphrase or an agent's confirmation may take a human a while
_FINGERPRINT = re.compile(r"\b(SHA256:[A-Za-z0-9+/=]+)")
_KEY_TYPE = re.compile(r"signature (?:for \S+ )?with (\S+) key")


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
    code: str = ""  # bad-signature | expired | namespace | unknown-key | principal | refused


def verify(allowed: Path, principal: str, namespace: str, signature: str, data: bytes) -> Check:
    """`ssh-keygen -Y verify` of `signature` over `data` for `principal` under `namespace`, now, against
    the allowed-signers file; when refused, `-Y find-principals` tells an unknown (or removed) key from
    one listed for someone else, and the file's own words say when a key has expired."""
    with tempfile.TemporaryDirectory(prefix="director-sig-") as tmp:
        sig = Path(tmp) / "receipt.sig"
        sig.write_text(signature, encoding="ascii", errors="replace")
        seen = _run(["-Y", "check-novalidate", "-n", namespace, "-s", str(sig)], data)
        out = seen.stdout.decode("utf-8", "replace")
        fp = _FINGERPRINT.search(out)
        kt = _KEY_TYPE.search(out)
        fingerprint, key_type = (fp.group(1) if fp else ""), (kt.group(1) if kt else "")
        if seen.returncode != 0:
            why = _said(seen.stderr)
            if "namespace" in why:
                why = f"{why} (it was not signed for this gate's namespace {namespace})"
            return Check(False, fingerprint, key_type, f"the signature does not hold: {why}", "bad-signature")
        done = _run(
            ["-Y", "verify", "-f", str(allowed), "-I", principal, "-n", namespace, "-s", str(sig)], data
        )
        if done.returncode == 0:
            return Check(True, fingerprint, key_type)
        said = _said(done.stderr)
        found = _run(["-Y", "find-principals", "-f", str(allowed), "-s", str(sig)])
    key = f"key {fingerprint}" if fingerprint else "the key"
    if "expired" in said or "not yet valid" in said:
        return Check(False, fingerprint, key_type, f"{key} is out of its validity: {said}", "expired")
    if "namespace" in said:
        return Check(False, fingerprint, key_type, f"{key} may not sign this gate: {said}", "namespace")
    names = found.stdout.decode("utf-8", "replace").split()
    if found.returncode != 0 or not names:
        return Check(
            False, fingerprint, key_type,
            f"{key} is not in {allowed} (an unknown key, or one removed from the file)", "unknown-key",
        )  # fmt: skip
    if principal not in names:
        why = f"{key} is listed for {', '.join(names)}, not {principal}"
        return Check(False, fingerprint, key_type, why, "principal")
    return Check(False, fingerprint, key_type, f"refused by {allowed}: {said}", "refused")


def readable_key(key: Path) -> Path:
    """The `--sign-with` file: it must exist and be readable (UsageError naming it otherwise)."""
    if not key.is_file() or not os.access(key, os.R_OK):
        raise UsageError(f"--sign-with: {key} is not a readable key file")
    return key

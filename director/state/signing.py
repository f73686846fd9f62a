"""Signed approvals, the pure half: what a signature over a receipt stands for, as bytes, and the
allowed-signers file read as data (the `ssh-keygen -Y` calls are in `director.exec.sshsig`).

A signed receipt carries a `Claim`: the plan's identity (`director.state.identity.plan_key`), the
section, the sha256 of the gated content (commands after substitution, the variables they read, the
inputs), the inputs again, the time, a random nonce, the signer's principal, and the row's operator,
host and how. Its canonical text (JSON, sorted keys, no spaces, UTF-8) is what `ssh-keygen -Y sign`
signs under the namespace of the gate's marker: `director-gate` for 🔴, `director-destroy` for 💥, so
an allowed-signers line can restrict a key to one of them (`namespaces="director-gate"`).

A verifier never trusts the row: it compares the claim with the row's columns (an edited row is
refused), with what the gate needs now (a claim for other content, another section or another plan is
refused), and has `ssh-keygen -Y verify` check the signature over the stored text.
"""

from __future__ import annotations

import base64
import fnmatch
import hashlib
import json
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from director.errors import UsageError

FORMAT = "director.approval/1"
NAMESPACES = {"🔴": "director-gate", "💥": "director-destroy"}
DEFAULT_FILE = ".director-allowed-signers"  # found beside the plan or above it, up to the repository root

# The key types OpenSSH's allowed-signers lines may carry (certificates' CA keys included).
KEY_TYPES = frozenset({
    "ssh-ed25519", "ssh-rsa", "ssh-dss", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
    "sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com",
})  # fmt: skip
_OPTIONS = ("cert-authority", "namespaces", "valid-after", "valid-before")


def namespace(marker: str) -> str:
    """The SSHSIG namespace an approval of a gate with this marker is signed under."""
    return NAMESPACES.get(marker, NAMESPACES["🔴"])


def new_nonce() -> str:
    """128 random bits, hex: two signatures never stand for the same approval."""
    return secrets.token_hex(16)


@dataclass(frozen=True)
class Claim:
    """What a signed receipt stands for (signed as `payload()`)."""

    plan: str  # the plan's identity: `git:plans/x.md`, `id:…`, `path:/abs/x.md`
    section: str
    sha256: str  # of the gated content (`GateContent.canonical`)
    inputs: Mapping[str, str]
    at: str  # when it was signed, RFC 3339 UTC, seconds
    nonce: str
    principal: str  # the signer, as the allowed-signers file names it
    operator: str
    host: str
    how: str  # prompt | flag | approve-command | auto
    # when the approval stops counting, RFC 3339 UTC, seconds (`director approve --valid-for`); None: the
    # claim names no end (a claim signed before receipts carried one, or a run's own approval)
    expires: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = {
            "format": FORMAT, "plan": self.plan, "section": self.section, "sha256": self.sha256,
            "inputs": dict(sorted(self.inputs.items())), "at": self.at, "nonce": self.nonce,
            "principal": self.principal, "operator": self.operator, "host": self.host, "how": self.how,
        }  # fmt: skip
        if self.expires is not None:  # absent, not null: a claim without one reads as it was signed
            out["expires"] = self.expires
        return out

    def payload(self) -> str:
        """The canonical text that is signed: JSON, sorted keys, no spaces (signed as UTF-8)."""
        return json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def parse(cls, text: str) -> Claim:
        """The claim a stored payload states; ValueError unless it is exactly a canonical payload."""
        try:
            data = json.loads(text)
        except ValueError:
            raise ValueError("the signed text is not JSON") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"the signed text is not a {FORMAT} claim")
        try:
            claim = cls(
                **{k: data[k] for k in ("plan", "section", "sha256", "at", "nonce", "principal")},
                inputs={str(k): str(v) for k, v in dict(data["inputs"]).items()},
                **{k: data[k] for k in ("operator", "host", "how")},
                expires=str(data["expires"]) if "expires" in data else None,
            )
        except (KeyError, TypeError, ValueError):
            raise ValueError("the signed text lacks a field of the claim") from None
        if claim.payload() != text:
            raise ValueError("the signed text is not in canonical form")
        return claim


@dataclass(frozen=True)
class Signed:
    """A claim and its SSH signature (armored `-----BEGIN SSH SIGNATURE-----` text)."""

    claim: Claim
    signature: str


def row_mismatch(claim: Claim, row: Mapping[str, Any]) -> str | None:
    """How a receipt row differs from what its signature claims (an edited row), or None.

    `row` holds the row's `section_key`, `sha256`, `principal`, `operator`, `host` and `how`.
    """
    pairs = (
        ("section", claim.section, row.get("section_key")),
        ("sha256", claim.sha256, row.get("sha256")),
        ("principal", claim.principal, row.get("principal")),
        ("operator", claim.operator, row.get("operator")),
        ("host", claim.host, row.get("host")),
        ("how", claim.how, row.get("how")),
    )
    for name, signed, stored in pairs:
        if signed != stored:
            return f"the row's {name} is {stored!s}, the signature says {signed}"
    return None


def content_mismatch(
    claim: Claim, *, plan: str, section: str, sha256: str, inputs: Mapping[str, str]
) -> str | None:
    """How a claim differs from the approval a gate needs now (a replay for other content), or None."""
    if claim.plan != plan:
        return f"signed for another plan ({claim.plan}, this is {plan})"
    if claim.section != section:
        return f"signed for section {claim.section}, not {section}"
    if claim.sha256 != sha256:
        return f"signed for other content (sha256 {claim.sha256[:12]}…, the gate's is {sha256[:12]}…)"
    if dict(claim.inputs) != dict(inputs):
        return "signed for other inputs"
    return None


# ------------------------------------------------------------------------------ allowed signers


class SignersError(ValueError):
    """A line of an allowed-signers file that is not one (`line` 1-based)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line


@dataclass(frozen=True)
class AllowedSigner:
    """One line of an allowed-signers file (ssh-keygen(1), ALLOWED SIGNERS)."""

    line: int
    principals: tuple[str, ...]
    key_type: str
    key: str  # base64 of the public key blob
    options: dict[str, str] = field(default_factory=dict)

    @property
    def fingerprint(self) -> str:
        return key_fingerprint(self.key)


def key_fingerprint(blob: str) -> str:
    """`SHA256:…` of a public key (base64 blob), as `ssh-keygen -l` prints it: base64 of the blob's
    SHA-256, unpadded."""
    digest = hashlib.sha256(base64.b64decode(blob)).digest()
    return "SHA256:" + base64.b64encode(digest).decode("ascii").rstrip("=")


def listed_principals(signers: list[AllowedSigner], fingerprint: str) -> tuple[str, ...]:
    """Every principal the file lists for the key with this fingerprint (a CA's line certifies others)."""
    found = (p for s in signers if "cert-authority" not in s.options and s.fingerprint == fingerprint
             for p in s.principals)  # fmt: skip
    return tuple(dict.fromkeys(found))


def parse_allowed_signers(text: str) -> list[AllowedSigner]:
    """Every signer line of an allowed-signers file; SignersError names the first line that is not one."""
    out: list[AllowedSigner] = []
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        words = _split(line, " \t")
        if words is None:
            raise SignersError(n, "unbalanced quotes")
        at = next((i for i, w in enumerate(words) if w in KEY_TYPES), None)
        if at is None or at not in (1, 2) or at + 1 >= len(words):
            raise SignersError(n, "expected `principals [options] key-type base64-key` (ssh-keygen(1))")
        options = _options(n, words[1]) if at == 2 else {}
        blob = words[at + 1]
        try:
            decoded = base64.b64decode(blob, validate=True)
        except ValueError:
            raise SignersError(n, "the key is not base64") from None
        length = int.from_bytes(decoded[:4], "big") if len(decoded) >= 4 else -1
        if decoded[4 : 4 + length].decode("ascii", "replace") != words[at]:
            raise SignersError(n, f"the key is not a {words[at]} key")
        principals = tuple(p.strip('"') for p in (_split(words[0], ",") or []) if p.strip('"'))
        if not principals:
            raise SignersError(n, "no principal")
        out.append(AllowedSigner(n, principals, words[at], blob, options))
    return out


def _split(text: str, separators: str) -> list[str] | None:
    """`text` cut at the separators outside double quotes (quotes kept); None if a quote is not closed."""
    words, word, quoted = [], "", False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        if ch in separators and not quoted:
            if word:
                words.append(word)
            word = ""
            continue
        word += ch
    if quoted:
        return None
    return [*words, word] if word else words


def _options(n: int, text: str) -> dict[str, str]:
    opts: dict[str, str] = {}
    for part in _split(text, ",") or []:
        name, _, value = part.partition("=")
        if name.lower() not in _OPTIONS:
            raise SignersError(n, f"unknown option {name!r} (known: {', '.join(_OPTIONS)})")
        opts[name.lower()] = value.strip('"')
    return opts


def load_allowed_signers(path: Path, option: str = "--allowed-signers") -> list[AllowedSigner]:
    """The signer lines of an allowed-signers file; UsageError naming the option, or FILE:LINE."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        why = e.strerror if isinstance(e, OSError) and e.strerror else "not a UTF-8 text file"
        raise UsageError(f"{option}: cannot read {path}: {why}") from None
    try:
        return parse_allowed_signers(text)
    except SignersError as e:
        raise UsageError(f"{path}:{e.line}: {e} ({option})") from None


def principal_for(signers: list[AllowedSigner], key_type: str, key: str, operator: str) -> str | None:
    """The principal a key signs as: the operator's name if a line lists it for this key, else the first
    literal principal (no `*` or `?` pattern) listed for it; None if the key is not listed."""
    names = [p for s in signers if s.key_type == key_type and s.key == key for p in s.principals]
    literal = [p for p in names if not any(c in p for c in "*?!")]
    if operator in literal:
        return operator
    return literal[0] if literal else None


def refusal_code(
    signers: list[AllowedSigner], fingerprint: str, principal: str, namespace: str, listed: tuple[str, ...],
    now: datetime,
) -> tuple[str, tuple[str, ...]]:  # fmt: skip
    """Why the file refuses a well-formed signature by the key `fingerprint` for `principal` under
    `namespace` (ssh-keygen refused it), read from the file's line for that key, and whom the file lists
    for it: `unknown-key` (no line: never listed, or removed), `principal` (listed for others),
    `namespace` (its `namespaces=` do not include this one), `expired` (now is outside its
    `valid-after`/`valid-before`), else `refused`. `listed`: `-Y find-principals` (a certified key)."""
    mine = [s for s in signers if "cert-authority" not in s.options and s.fingerprint == fingerprint]
    names = tuple(p for s in mine for p in s.principals) or listed
    if not names:
        return "unknown-key", ()
    line = next((s for s in mine if any(fnmatch.fnmatchcase(principal, p) for p in s.principals)), None)
    if line is None and (mine or principal not in names):
        return "principal", names
    if line is not None:
        spaces = [n.strip() for n in line.options.get("namespaces", "*").split(",")]
        if not any(fnmatch.fnmatchcase(namespace, n) for n in spaces):
            return "namespace", names
        if not valid_at(line.options, now):
            return "expired", names
    return "refused", names


_WHEN = re.compile(r"^(\d{8})(\d{4}(\d{2})?)?(Z)?$")


def valid_at(options: Mapping[str, str], now: datetime) -> bool:
    """Whether `now` is inside a line's `valid-after`/`valid-before` (ssh-keygen(1): YYYYMMDD[HHMM[SS]],
    local time unless it ends in Z); a value that is not such a time counts as outside."""
    for name in ("valid-after", "valid-before"):
        value = options.get(name)
        if value is None:
            continue
        m = _WHEN.match(value)
        if m is None:
            return False
        digits = (m.group(1) + (m.group(2) or "0000")).ljust(14, "0")
        when = datetime.strptime(digits, "%Y%m%d%H%M%S")
        at = when.replace(tzinfo=UTC) if m.group(4) else when.astimezone(UTC)
        if (now < at) if name == "valid-after" else (now >= at):
            return False
    return True

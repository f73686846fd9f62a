"""Which variable names are secret: a leaf below every effect package (the journal, the ledger, the shell
and the screen all ask it; it imports nothing of Director's). Secret *values* are `director.exec.secrets`'.

A name is secret when it contains TOKEN, SECRET, PASSWORD, PASSWD, APIKEY or CREDENTIAL, ends in `_KEY`,
is `CLOUDFLARE_API_TOKEN`, or is marked by the operator (`--secret NAME`); Director's own
`DIRECTOR_SIGNING_KEY` names a file, not key material, and is secret only when marked (docs/secrets.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

__all__ = ["is_secret_name", "secret_name_predicate"]

# Substrings (case-insensitive) that make a variable name secret, and the suffixes that do.
_SECRET_PARTS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "APIKEY", "CREDENTIAL")
_SECRET_SUFFIXES = ("_KEY",)
_SECRET_EXACT = frozenset({"CLOUDFLARE_API_TOKEN"})
# Director's own settings whose names look secret but whose values name a file (docs/approvals.md): the path
# of a signing key is not key material, and masking it would taint every path that shares its directory.
_NOT_SECRET = frozenset({"DIRECTOR_SIGNING_KEY"})


def is_secret_name(name: str, marked: Iterable[str] = ()) -> bool:
    """Whether a variable name looks secret, or is one the operator marked with `--secret NAME`."""
    upper = name.upper()
    if upper in _NOT_SECRET:
        return any(upper == m.upper() for m in marked)
    if upper in _SECRET_EXACT or any(p in upper for p in _SECRET_PARTS):
        return True
    if upper.endswith(_SECRET_SUFFIXES):
        return True
    return any(upper == m.upper() for m in marked)


def secret_name_predicate(marked: Iterable[str] = ()) -> Callable[[str], bool]:
    """`is_secret_name` with the operator's `--secret` names baked in."""
    names = frozenset(m.upper() for m in marked)
    return lambda name: is_secret_name(name) or name.upper() in names

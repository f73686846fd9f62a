"""Secret names and secret values (pure).

`is_secret_name` decides which shell variables are never written to the journal, the ledger, the
audit or the screen; `Redactor` replaces secret *values* in any text Director shows or stores.

Streaming caveat: a secret can straddle two chunks of a stream ("…tok" + "en123…"); redacting each
chunk alone would leak both halves. `StreamRedactor` therefore holds back the shortest tail that could
still grow into a secret (the longest suffix of the text that is a proper prefix of some secret value)
and emits it with the next chunk or on `flush()`. Text that cannot start a secret is never delayed, so
a prompt such as "Are you sure? (y/n) " reaches the screen at once. The streamed result equals
`redact()` of the whole text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

MASK = "***"
MIN_SECRET_LEN = 4  # shorter values ("1", "yes") would blank out ordinary text

# Substrings (case-insensitive) that make a variable name secret, and the suffixes that do.
_SECRET_PARTS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "APIKEY", "CREDENTIAL")
_SECRET_SUFFIXES = ("_KEY",)
_SECRET_EXACT = frozenset({"CLOUDFLARE_API_TOKEN"})


def is_secret_name(name: str, marked: Iterable[str] = ()) -> bool:
    """Whether a variable name looks secret, or is one the operator marked with `--secret NAME`."""
    upper = name.upper()
    if upper in _SECRET_EXACT or any(p in upper for p in _SECRET_PARTS):
        return True
    if upper.endswith(_SECRET_SUFFIXES):
        return True
    return any(upper == m.upper() for m in marked)


def secret_name_predicate(marked: Iterable[str] = ()) -> Callable[[str], bool]:
    """`is_secret_name` with the operator's `--secret` names baked in."""
    names = frozenset(m.upper() for m in marked)
    return lambda name: is_secret_name(name) or name.upper() in names


def secret_values(env: Mapping[str, str], is_secret: Callable[[str], bool] = is_secret_name) -> list[str]:
    """The values of the secret-named variables of `env` (to feed a Redactor)."""
    return [v for k, v in env.items() if is_secret(k) and v]


class Redactor:
    """Replaces every occurrence of any secret value (length >= 4) with `***`."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        vals = {v for v in values if len(v.strip()) >= MIN_SECRET_LEN}
        # Longest first so that a secret containing another one is masked whole.
        self._values: tuple[str, ...] = tuple(sorted(vals, key=lambda v: (-len(v), v)))
        self._pattern: re.Pattern[str] | None = (
            re.compile("|".join(re.escape(v) for v in self._values)) if self._values else None
        )
        # Every proper prefix of every secret: the tails a stream must hold back.
        self._prefixes: frozenset[str] = frozenset(v[:k] for v in self._values for k in range(1, len(v)))
        self._max_prefix = max((len(v) - 1 for v in self._values), default=0)

    @property
    def values(self) -> tuple[str, ...]:
        """The secret values, longest first."""
        return self._values

    def __bool__(self) -> bool:
        return self._pattern is not None

    def extended(self, values: Iterable[str]) -> Redactor:
        """A Redactor that also masks `values` (secrets learned during a run)."""
        return Redactor((*self._values, *values))

    def redact(self, text: str) -> str:
        """`text` with every secret value replaced by `***`."""
        if self._pattern is None:
            return text
        return self._pattern.sub(MASK, text)

    def stream(self) -> StreamRedactor:
        """A stateful redactor for a stream of chunks."""
        return StreamRedactor(self)

    def _split_point(self, text: str) -> int:
        """Index up to which `text` can be emitted now without cutting a possible secret."""
        assert self._pattern is not None
        hold = 0
        for k in range(min(self._max_prefix, len(text)), 0, -1):
            if text[-k:] in self._prefixes:
                hold = k
                break
        cut = len(text) - hold
        # A complete match that straddles the cut would be split in two: cut before it instead.
        for m in self._pattern.finditer(text):
            if m.start() < cut < m.end():
                return m.start()
            if m.start() >= cut:
                break
        return cut


class StreamRedactor:
    """Redacts a stream chunk by chunk, holding back only a tail that could grow into a secret."""

    def __init__(self, redactor: Redactor) -> None:
        self._r = redactor
        self._carry = ""

    def feed(self, chunk: str) -> str:
        """Redacted text that is safe to emit now (possibly empty)."""
        if not self._r:
            return chunk
        text = self._carry + chunk
        cut = self._r._split_point(text)
        self._carry = text[cut:]
        return self._r.redact(text[:cut])

    def flush(self) -> str:
        """Everything still held back, redacted (end of stream)."""
        text, self._carry = self._carry, ""
        return self._r.redact(text)

    @property
    def pending(self) -> int:
        """Characters currently held back."""
        return len(self._carry)

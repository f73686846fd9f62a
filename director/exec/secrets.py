"""Secret names and secret values (pure).

`is_secret_name` decides which shell variables are never written to the journal, the ledger, the
audit or the screen; `Redactor` replaces secret *values*, and what is derived from them, in any text
Director shows or stores.

What is masked (docs/secrets.md): every occurrence of a secret value (4 characters or more), and every
*fragment* of one: a run of at least `fragment_length(L)` consecutive characters of a secret of length
L >= `MIN_FRAGMENT_SECRET` -- more than half of it, and never more than `MAX_FRAGMENT` (12) characters.
So `${TOKEN:0:17}`, `${TOKEN: -8}` or a token cut by `cut -c1-20` are masked wherever they appear (the
output, the journal, the ledger), and a variable holding one is never journaled (its value would change
under redaction: it is withheld like a secret). A fragment is masked as far as it matches the secret.
Values *computed* from a secret otherwise (a hash, base64, upper-cased) are not recognised.

Streaming caveat: a secret can straddle two chunks of a stream ("…tok" + "en123…"); redacting each
chunk alone would leak both halves. `StreamRedactor` therefore holds back the shortest tail that could
still grow into a secret or a fragment (the longest suffix of the text that is a proper prefix of a short
secret or a piece of a longer one, or a masked stretch that reaches the end) and emits it with the next
chunk or on `flush()`. Text that cannot continue a secret is never delayed, so a prompt such as
"Are you sure? (y/n) " reaches the screen at once. The streamed result equals `redact()` of the whole
text, but for one thing: a masked stretch longer than any secret (a line of one repeated character, when
a secret is made of it) is emitted as it grows, as several masks, so what is held back stays bounded by
the longest secret whatever the length of the line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from director.secretnames import is_secret_name as is_secret_name  # also the old import path
from director.secretnames import secret_name_predicate as secret_name_predicate  # the old import path

# Terminal control sequences (colours, cursor moves, titles, hyperlinks: CSI, OSC ended by BEL or ST,
# DCS/SOS/PM/APC strings, two-byte escapes, 8-bit CSI) and every other C0/C1 control but CR, LF and tab:
# what a view removes before it shows a text, so what redaction reads (`run.events` uses these too).
ESCAPE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"
    r"|\x1b[PX^_][^\x1b]*\x1b\\"
    r"|\x1b[ -/]*[0-~]"
    r"|\x9b[0-?]*[ -/]*[@-~]"
    r"|[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f-\x9a\x9c-\x9f]"
)
# What may still be the start of a sequence at the end of a chunk (the rest comes with the next one).
OPEN_ESCAPE = re.compile(
    r"(?:\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*\x1b?|[PX^_][^\x1b]*\x1b?|[ -/]*)?|\x9b[0-?]*[ -/]*)\Z"
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f]")

MASK = "***"
MIN_SECRET_LEN = 4  # shorter values ("1", "yes") would blank out ordinary text
MIN_FRAGMENT_SECRET = 8  # a secret this long or longer is masked in fragments too
MAX_FRAGMENT = 12  # a run of this many characters of a secret is always masked

def secret_values(env: Mapping[str, str], is_secret: Callable[[str], bool] = is_secret_name) -> list[str]:
    """The values of the secret-named variables of `env` (to feed a Redactor)."""
    return [v for k, v in env.items() if is_secret(k) and v]


def fragment_length(length: int) -> int:
    """The shortest run of characters of a secret of `length` that is masked (the whole value below 8)."""
    if length < MIN_FRAGMENT_SECRET:
        return length
    return min(MAX_FRAGMENT, length // 2 + 1)


class Redactor:
    """Replaces every occurrence of a secret value (length >= 4), or of a fragment of one, with `***`."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        vals = {v for v in values if len(v.strip()) >= MIN_SECRET_LEN}
        # Longest first so that a secret containing another one is masked whole.
        self._values: tuple[str, ...] = tuple(sorted(vals, key=lambda v: (-len(v), v)))
        short = [v for v in self._values if len(v) < MIN_FRAGMENT_SECRET]
        self._short: re.Pattern[str] | None = (
            re.compile("|".join(re.escape(v) for v in short)) if short else None
        )
        # A run of n >= 2b-1 characters of a secret always holds one of its blocks (b characters at a
        # multiple of b): the blocks are what is searched for, each hit is grown as far as it matches.
        self._blocks: dict[str, list[tuple[str, int, int]]] = {}  # block -> (secret, offset, min length)
        hold: set[str] = {v[:k] for v in short for k in range(1, len(v))}
        for v in self._values:
            if len(v) < MIN_FRAGMENT_SECRET:
                continue
            n = fragment_length(len(v))
            b = (n + 1) // 2
            for o in range(0, len(v) - b + 1, b):
                self._blocks.setdefault(v[o : o + b], []).append((v, o, n))
            # Any shorter piece may be the start of a fragment cut by a chunk's end.
            hold.update(v[i : i + k] for k in range(1, n) for i in range(len(v) - k + 1))
        self._hold = frozenset(hold)
        self._hold_max = max((len(h) for h in hold), default=0)

    @property
    def values(self) -> tuple[str, ...]:
        """The secret values, longest first."""
        return self._values

    def __bool__(self) -> bool:
        return bool(self._values)

    def extended(self, values: Iterable[str]) -> Redactor:
        """A Redactor that also masks `values` (secrets learned during a run)."""
        return Redactor((*self._values, *values))

    def redact(self, text: str) -> str:
        """`text` with every secret value, and every fragment of one, replaced by `***`: found in the text
        as a terminal shows it (control sequences removed), so that colour codes between the parts of a
        secret (`printf '%s\\e[0m%s' "${T:0:11}" "${T:11}"`) do not keep it from being masked."""
        if not self._values:
            return text
        if _CONTROL.search(text) is None:
            return _masked(text, self._spans(text), 0, len(text))
        visible, pos = _visible(text)
        return _masked(text, _mapped(self._spans(visible), pos), 0, len(text))

    def stream(self) -> StreamRedactor:
        """A stateful redactor for a stream of chunks."""
        return StreamRedactor(self)

    def _spans(self, text: str) -> list[tuple[int, int]]:
        """Where `text` holds a secret or a fragment of one, as [start, end) spans (overlaps merged)."""
        return _merged(self._found(text))

    def _found(self, text: str) -> list[tuple[int, int]]:
        """Every occurrence of a secret or a fragment of one, as found: [start, end) spans, overlapping."""
        found: list[tuple[int, int]] = []
        if self._short is not None:
            found.extend(m.span() for m in self._short.finditer(text))
        grown: dict[tuple[str, int], tuple[int, int]] = {}  # (secret, where it would start) -> span grown
        for block, owners in self._blocks.items():
            i = text.find(block)
            while i >= 0:
                for secret, o, n in owners:
                    prev = grown.get((secret, i - o))
                    if prev is not None and prev[0] <= i and i + len(block) <= prev[1]:
                        continue  # inside a stretch already grown from another block of this secret
                    # grown as far as it matches: whole in one comparison when it does (the common case)
                    a, j = i - o, 0
                    if a < 0 or text[a:i] != secret[:o]:
                        a, j = i, o
                        while a > 0 and j > 0 and text[a - 1] == secret[j - 1]:
                            a, j = a - 1, j - 1
                    e, k = i + len(block), o + len(block)
                    rest = len(secret) - k
                    if text[e : e + rest] == secret[k:]:
                        e += rest
                    else:
                        while e < len(text) and k < len(secret) and text[e] == secret[k]:
                            e, k = e + 1, k + 1
                    grown[(secret, i - o)] = (a, e)
                    if e - a >= n:
                        found.append((a, e))
                i = text.find(block, i + 1)
        return found

    def _split_point(self, text: str, found: list[tuple[int, int]]) -> tuple[int, list[tuple[int, int]]]:
        """Index up to which `text` can be emitted now without cutting a possible secret or fragment, and
        the spans to mask before it.

        A masked stretch that reaches the end is held back, but only from the start of the last secret
        or fragment found in it: a stretch longer than any secret (a run of one repeated character, when
        a secret is made of it) is emitted as it grows, so what is held stays bounded by the longest
        secret whatever the length of the line.
        """
        spans = _merged(found)
        cut = len(text)
        for k in range(min(self._hold_max, len(text)), 0, -1):
            if text[-k:] in self._hold:
                cut = len(text) - k
                break
        for a, e in spans:
            if e == len(text) or a < cut < e:  # it may go on, or the cut would split it: keep it whole
                # ... from the last occurrence in it that reaches as far, when what is held from there
                # is masked again whole on its own (it is, for a run of a secret's repeated character)
                last = max(fa for fa, fe in found if a <= fa and fe == e)
                at = min(cut, last)
                if at > a and not any(x <= 0 and y >= e - at for x, y in self._spans(text[at:])):
                    at = a
                if at > a:
                    spans = [*(sp for sp in spans if sp[1] <= a), (a, at)]
                return at, spans
        return cut, spans


def _visible(text: str) -> tuple[str, list[int]]:
    """`text` without control sequences, and where each of its characters is in `text` (one more entry:
    the end)."""
    parts: list[str] = []
    pos: list[int] = []
    at = 0
    for m in ESCAPE.finditer(text):
        parts.append(text[at : m.start()])
        pos.extend(range(at, m.start()))
        at = m.end()
    parts.append(text[at:])
    pos.extend(range(at, len(text)))
    pos.append(len(text))
    return "".join(parts), pos


def _mapped(spans: list[tuple[int, int]], pos: list[int]) -> list[tuple[int, int]]:
    """Spans of the visible text as spans of the text (the control sequences inside them masked too)."""
    return [(pos[a], pos[e - 1] + 1) for a, e in spans]


def _merged(found: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans sorted, overlapping ones merged (adjacent ones stay two masks)."""
    if len(found) < 2:
        return found
    found = sorted(found)
    merged = [found[0]]
    for a, e in found[1:]:
        if a < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], e))
        else:
            merged.append((a, e))
    return merged


def _masked(text: str, spans: list[tuple[int, int]], start: int, end: int) -> str:
    """`text[start:end]` with the spans inside it replaced by `***`."""
    out: list[str] = []
    at = start
    for a, e in spans:
        if a >= end:
            break
        out.append(text[at:a])
        out.append(MASK)
        at = e
    out.append(text[at:end])
    return "".join(out)


class StreamRedactor:
    """Redacts a stream chunk by chunk, holding back only a tail that could grow into a secret."""

    def __init__(self, redactor: Redactor) -> None:
        self._r = redactor
        self._carry = ""

    def feed(self, chunk: str) -> str:
        """Redacted text that is safe to emit now (possibly empty). Secrets are looked for in the text
        without its control sequences (as `Redactor.redact`); a sequence cut by the chunk's end is held."""
        if not self._r:
            return chunk
        text = self._carry + chunk
        if _CONTROL.search(text) is None:
            cut, spans = self._r._split_point(text, self._r._found(text))
            self._carry = text[cut:]
            return _masked(text, [s for s in spans if s[1] <= cut], 0, cut)
        open_ = OPEN_ESCAPE.search(text)
        head = text[: open_.start()] if open_ is not None else text  # a sequence not ended yet: held
        visible, pos = _visible(head)
        cut, spans = self._r._split_point(visible, self._r._found(visible))
        end = pos[cut]
        self._carry = text[end:]
        return _masked(text, _mapped([s for s in spans if s[1] <= cut], pos), 0, end)

    def flush(self) -> str:
        """Everything still held back, redacted (end of stream)."""
        text, self._carry = self._carry, ""
        return self._r.redact(text)

    @property
    def pending(self) -> int:
        """Characters currently held back."""
        return len(self._carry)

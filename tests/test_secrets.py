"""Secret names and value redaction, whole and streamed."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from director.exec.secrets import (
    MASK,
    Redactor,
    fragment_length,
    is_secret_name,
    secret_name_predicate,
    secret_values,
)


@pytest.mark.parametrize(
    "name",
    [
        "CLOUDFLARE_API_TOKEN",
        "GITHUB_TOKEN",
        "token",
        "DB_PASSWORD",
        "MYSQL_PASSWD",
        "AWS_SECRET_ACCESS_KEY",
        "STRIPE_KEY",
        "SENDGRID_APIKEY",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "client_secret",
    ],
)
def test_secret_names(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize("name", ["WF", "WORKER", "KEYS", "KEY_ID", "ACCOUNT_ID", "PATH", "MONKEY"])
def test_plain_names(name: str) -> None:
    assert not is_secret_name(name)


def test_marked_names() -> None:
    pred = secret_name_predicate(["db_url"])
    assert pred("DB_URL") and pred("API_TOKEN") and not pred("WF")
    assert is_secret_name("HOOK", marked=["hook"])


def test_secret_values() -> None:
    env = {"API_TOKEN": "abcdef", "WF": "flow", "EMPTY_TOKEN": ""}
    assert secret_values(env) == ["abcdef"]


def test_redact_longest_first_and_short_values_ignored() -> None:
    r = Redactor(["abcd", "abcdefgh", "xy", "   a  "])
    assert r.values == ("abcdefgh", "abcd")
    assert r.redact("x abcdefgh y abcd z xy") == f"x {MASK} y {MASK} z xy"
    assert not Redactor([]) and Redactor([]).redact("abc") == "abc"


def test_redact_regex_metacharacters() -> None:
    assert Redactor(["a.b*c(d"]).redact("a.b*c(d axbbc(d") == f"{MASK} axbbc(d"


def test_stream_does_not_delay_text_that_cannot_start_a_secret() -> None:
    s = Redactor(["s3cr3t-value"]).stream()
    assert s.feed("Are you sure? (y/n) ") == "Are you sure? (y/n) "
    assert s.pending == 0


def test_stream_secret_across_chunks() -> None:
    s = Redactor(["s3cr3t-value"]).stream()
    out = s.feed("token: s3c") + s.feed("r3t-va") + s.feed("lue\nnext s3") + s.flush()
    assert out == f"token: {MASK}\nnext s3"


def test_extended() -> None:
    r = Redactor(["aaaa"]).extended(["bbbb"])
    assert r.redact("aaaa bbbb") == f"{MASK} {MASK}"


@settings(max_examples=300, deadline=None)
@given(
    secrets=st.lists(st.text(alphabet="abc", min_size=4, max_size=7), min_size=1, max_size=3),
    text=st.text(alphabet="abc\n", max_size=60),
    cuts=st.lists(st.integers(min_value=0, max_value=60), max_size=8),
)
def test_stream_equals_whole_text(secrets: list[str], text: str, cuts: list[int]) -> None:
    r = Redactor(secrets)
    chunks = _chunks(text, cuts)
    s = r.stream()
    assert _one_mask("".join(s.feed(c) for c in chunks) + s.flush()) == _one_mask(r.redact(text))


def _chunks(text: str, cuts: list[int]) -> list[str]:
    """`text` cut at `cuts` (those within it), as a stream would deliver it."""
    points = sorted({c for c in cuts if c <= len(text)})
    chunks, prev = [], 0
    for p in [*points, len(text)]:
        chunks.append(text[prev:p])
        prev = p
    return chunks


def _one_mask(text: str) -> str:
    """Masks next to each other as one: a masked stretch longer than a secret streams as several."""
    return re.sub(f"(?:{re.escape(MASK)})+", MASK, text)


def test_a_stretch_of_a_secret_longer_than_it_streams_in_bounded_memory() -> None:
    """A secret made of one repeated character, and a 512 kB line of it: what the stream holds back stays
    within the secret's length (it held the whole line, and grew quadratically, before), nothing of the
    line shows, and the text after it comes through."""
    secret = "x" * 20
    s = Redactor([secret, "tok-9f8e7d6c5b4a39281706f5e4d3c2b1a0"]).stream()
    out, held = [], 0
    for _ in range(8):
        out.append(s.feed("x" * 65536))
        held = max(held, s.pending)
    out.append(s.feed("x" * 7 + "\nafter " + "x" * 4 + "\n") + s.flush())
    text = "".join(out)
    assert held <= len(secret)
    assert set(text.replace(MASK, "")) == set("\nafter x") and text.endswith("\nafter xxxx\n")
    assert "x" * 5 not in text.replace(MASK, "")


def test_a_fragment_of_a_secret_is_masked_as_far_as_it_matches() -> None:
    token = "tok-9f8e7d6c5b4a39281706f5e4d3c2b1a0"  # 36 characters: fragments of 12 or more are masked
    r = Redactor([token])
    assert fragment_length(len(token)) == 12 and fragment_length(16) == 9 and fragment_length(7) == 7
    assert r.redact(f"prefix {token[:17]}!") == f"prefix {MASK}!"  # the 17-character prefix
    assert r.redact(f"tail={token[-12:]} mid={token[10:30]}x") == f"tail={MASK} mid={MASK}x"
    assert r.redact(f"short={token[:11]} {token[5:16]}") == f"short={token[:11]} {token[5:16]}"
    # as far as it matches: the text around a fragment that does not continue the secret is kept
    assert r.redact("Ztok-9f8e7d6c5b4aZ") == f"Z{MASK}Z"
    # two secrets next to each other are two masks, as before; overlapping fragments are one
    assert r.redact(token + token) == MASK + MASK


def test_stream_holds_back_a_piece_that_may_grow_into_a_fragment() -> None:
    token = "tok-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
    s = Redactor([token]).stream()
    # `${TOKEN:5:20}` cut by a chunk's end: neither half (each shorter than a fragment) leaks
    piece = token[5:25]
    out = s.feed("key: " + piece[:9]) + s.feed(piece[9:] + "\n") + s.flush()
    assert out == f"key: {MASK}\n"
    assert s.feed("Are you sure? (y/n) ") == "Are you sure? (y/n) " and s.pending == 0


def _fragments(secret: str) -> set[str]:
    n = fragment_length(len(secret))
    return {secret[i : i + n] for i in range(len(secret) - n + 1)}


@settings(max_examples=300, deadline=None)
@example(secrets=["aaabbbba", "aaaaaabbbbba"], text="abbbbba", cuts=[])  # a held stretch masked again whole
@given(
    secrets=st.lists(st.text(alphabet="abc", min_size=4, max_size=20), min_size=1, max_size=3),
    text=st.text(alphabet="abc\n", max_size=80),
    cuts=st.lists(st.integers(min_value=0, max_value=80), max_size=8),
)
def test_stream_equals_whole_text_and_no_fragment_survives(
    secrets: list[str], text: str, cuts: list[int]
) -> None:
    r = Redactor(secrets)
    chunks = _chunks(text, cuts)
    s = r.stream()
    whole = r.redact(text)
    assert _one_mask("".join(s.feed(c) for c in chunks) + s.flush()) == _one_mask(whole)
    for piece in whole.split(MASK):  # what is left between the masks holds no secret, no fragment of one
        for secret in r.values:
            assert secret not in piece
            assert not any(f in piece for f in _fragments(secret)), (secret, piece)


def test_the_signing_key_setting_names_a_file_not_a_secret() -> None:
    """DIRECTOR_SIGNING_KEY is the path of a key: masked, it would taint every path sharing its directory
    (a plan's `$OUT` under the same temporary directory was withheld from the journal)."""
    from director.exec.secrets import is_secret_name

    assert not is_secret_name("DIRECTOR_SIGNING_KEY") and is_secret_name("DIRECTOR_SIGNING_KEY", ["director_signing_key"])
    assert is_secret_name("DEPLOY_KEY")

"""Bounded output: the shell's capture and the journal's excerpt agree (no second cut)."""

from __future__ import annotations

from director.exec.capture import OUTPUT_HEAD, OUTPUT_TAIL, OutputCapture, excerpt


def test_capture_keeps_head_and_tail_and_says_how_much_it_elided() -> None:
    c = OutputCapture(head=4, tail=3)
    for chunk in ("abc", "defg", "hij"):
        c.add(chunk)
    assert c.text() == "abcd\n…[3 bytes elided]…\nhij"
    small = OutputCapture()
    small.add("é\n")
    assert small.text() == "é\n"


def test_excerpt_leaves_what_the_capture_bounded_as_it_is() -> None:
    c = OutputCapture()
    c.add("x" * 100_000)
    bounded = c.text()
    assert len(bounded) > OUTPUT_HEAD + OUTPUT_TAIL  # the marker makes it longer than the bound…
    assert excerpt(bounded) == bounded  # …and the journal still stores it as it is, marker and count
    assert "…[34464 bytes elided]…" in bounded


def test_excerpt_bounds_long_text() -> None:
    assert excerpt("ab" + "-" * 100 + "yz", head=2, tail=2) == "ab\n…[100 chars elided]…\nyz"
    assert excerpt("short") == "short"
    text = "y" * (OUTPUT_HEAD + OUTPUT_TAIL + 1000)
    out = excerpt(text)
    assert out.startswith("y" * OUTPUT_HEAD + "\n…[1000 chars elided]…\n") and out.endswith("y" * OUTPUT_TAIL)

"""Why Director keeps its own ANSI stripper (director/ledger/cells.py `strip_ansi`, used by ui/render.py
`clean`) rather than rich's `Text.from_ansi(...).plain`: block output comes from arbitrary tools under a
pseudo-terminal, and rich's decoder (made for SGR colours) leaks OSC payloads ended by BEL (a terminal
title), DCS payloads, 8-bit CSI and C1 controls into the text that Director writes into the Live State and
the journal. Where both strip, they agree."""

from __future__ import annotations

import pytest
from rich.text import Text

from director.ledger.cells import strip_ansi

BOTH = {
    "SGR colours": ("\x1b[31mred\x1b[0m ok", "red ok"),
    "OSC 8 hyperlink ended by ST": ("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"),
    "cursor movement": ("\x1b[2Kline\x1b[1A", "line"),
    "tput sgr0 (ESC ( B)": ("x\x1b(By", "xy"),
}
ONLY_OURS = {
    "OSC title ended by BEL": ("\x1b]0;deploying\x07done", "done"),
    "DCS payload": ("\x1bPq#0;2;0;0;0\x1b\\after", "after"),
    "8-bit CSI": ("\x9b31mred", "red"),
    "C1 control (NEL)": ("a\x85b", "ab"),
}


@pytest.mark.parametrize("name", sorted(BOTH))
def test_both_strip_the_common_sequences(name: str) -> None:
    raw, plain = BOTH[name]
    assert strip_ansi(raw) == plain == Text.from_ansi(raw).plain


@pytest.mark.parametrize("name", sorted(ONLY_OURS))
def test_rich_leaks_what_ours_strips(name: str) -> None:
    raw, plain = ONLY_OURS[name]
    assert strip_ansi(raw) == plain
    assert Text.from_ansi(raw).plain != plain, f"rich now strips {name}: switch to Text.from_ansi"

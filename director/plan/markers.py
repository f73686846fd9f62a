"""The heading markers, in one table: what each one is called, how it is written, and what it means for a run.

Parse recognises markers by this table, lint and the engine read their meaning from it, `show` and the gate
panel print its words (as markdown-it-py keeps its rules in one list). Adding a marker is one row here plus
whatever new behaviour it asks for.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

# Emoji may come with or without a variation selector (`✔` / `✔️`).
VARIATION_SELECTORS = "\ufe0f\ufe0e"


class Marker(enum.Enum):
    """Section heading markers (the plan's legend); the value is the glyph without variation selector."""

    CREATE = "🟢"
    CONFIG = "🟡"
    GATE = "🔴"
    DESTRUCTIVE = "💥"
    WAIT = "⏳"
    VERIFY = "✔"


@dataclass(frozen=True)
class MarkerRule:
    """One marker: its glyph and name, what it means for a run, and the words `show`/the gate panel print."""

    marker: Marker
    name: str  # `create`: the marker's name in JSON, errors and lint messages
    legend: str  # `GATE (human go)`: its entry in the plan's legend block
    gates: bool = False  # the section's act needs a human go (an approval for exactly its content)
    destructive: bool = False  # may destroy (lint's 💥-only commands); never auto-approved; gates first
    check: bool = False  # a read-only check section: every block is a verify block and it always runs
    wait: bool = False  # its blocks wait or poll (informational: a run treats it like any act)
    needs_verify: bool = False  # it creates or configures: lint wants a verify block
    gate_title: str = ""  # the gate panel's title word (`GATE`, `DESTRUCTIVE`)
    gate_reason: str = ""  # why the gate panel says the section is gated, when the plan gives no note
    gate_style: str = ""  # the gate panel's border colour

    @property
    def glyph(self) -> str:
        """The marker as written in a heading (without variation selector)."""
        return self.marker.value

    @property
    def auto_approvable(self) -> bool:
        """Whether `--auto-approve` may pass this gate (never for a destructive one)."""
        return self.gates and not self.destructive


MARKERS: tuple[MarkerRule, ...] = (
    MarkerRule(Marker.CREATE, "create", "create", needs_verify=True),
    MarkerRule(Marker.CONFIG, "config", "config", needs_verify=True),
    MarkerRule(
        Marker.GATE, "gate", "GATE (human go)", gates=True,
        gate_title="GATE", gate_reason="🔴 (a human go)", gate_style="yellow",
    ),
    MarkerRule(
        Marker.DESTRUCTIVE, "destructive", "destructive (human go)", gates=True, destructive=True,
        gate_title="DESTRUCTIVE", gate_reason="💥 destructive", gate_style="red",
    ),
    MarkerRule(Marker.WAIT, "wait", "wait", wait=True),
    MarkerRule(Marker.VERIFY, "verify", "verify", check=True),
)  # fmt: skip

# `# ✔ …` as the first line of a bash block makes it a verify block (the section's observation).
VERIFY_BLOCK = Marker.VERIFY

# A Teardown is destructive even when its author forgot the marker: it gates as this one.
TEARDOWN_GATE = Marker.DESTRUCTIVE

_BY_MARKER = {r.marker: r for r in MARKERS}
_BY_GLYPH = {r.glyph: r for r in MARKERS}


def rule(marker: Marker) -> MarkerRule:
    """The table row of a marker."""
    return _BY_MARKER[marker]


def strip_variation(text: str) -> str:
    """`text` without emoji variation selectors (`✔️` → `✔`)."""
    return text.translate({ord(c): None for c in VARIATION_SELECTORS})


def by_glyph(glyph: str) -> MarkerRule | None:
    """The row of a glyph as written (with or without variation selector); None for any other symbol."""
    return _BY_GLYPH.get(strip_variation(glyph))


def gating_order() -> tuple[MarkerRule, ...]:
    """The gating markers, the one that wins first: destructive before the others, then table order."""
    return tuple(sorted((r for r in MARKERS if r.gates), key=lambda r: not r.destructive))


def known_list() -> str:
    """`🟢 create, 🟡 config, …`: the known markers, for an error message."""
    return ", ".join(f"{r.glyph} {r.name}" for r in MARKERS)


def glyphs(rows: Iterable[MarkerRule] = MARKERS) -> str:
    """`🟢 🟡 🔴 💥 ⏳ ✔`: the glyphs of some rows, space-separated."""
    return " ".join(r.glyph for r in rows)


def legend() -> str:
    """The legend block's line, as `director init` writes it."""
    return "Legend  " + " · ".join(f"{r.glyph} {r.legend}" for r in MARKERS)

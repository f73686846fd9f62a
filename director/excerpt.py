"""A long text bounded to its head and tail: a leaf below every effect package (the shell's capture and
the journal both bound a block's output with it; it imports nothing of Director's)."""

from __future__ import annotations

__all__ = ["OUTPUT_HEAD", "OUTPUT_TAIL", "excerpt"]

OUTPUT_HEAD = 16 * 1024
OUTPUT_TAIL = 48 * 1024
_MARKER_ROOM = 64  # more than any elision marker is long


def excerpt(text: str, head: int = OUTPUT_HEAD, tail: int = OUTPUT_TAIL) -> str:
    """`text` bounded to its first `head` and last `tail` characters, with an elision marker.

    Text within a marker's length of the bound is left alone: a block's output, which `OutputCapture`
    already bounded (in bytes), is stored as it is rather than cut again around its own marker.
    """
    if len(text) <= head + tail + _MARKER_ROOM:
        return text
    elided = len(text) - head - tail
    return f"{text[:head]}\n…[{elided} chars elided]…\n{text[-tail:]}"

"""A block's output stream as screen lines, each bounded whatever the line's length (pure).

A block may print one line of a hundred megabytes; the views hold at most `LINE_HEAD` + `LINE_TAIL`
characters of the line being written, and show a longer line as its head, an elision marker and its
tail. What Director stores of a block's output is bounded separately (`director.exec.capture`).
"""

from __future__ import annotations

from director.ledger.cells import strip_ansi

__all__ = ["LINE_HEAD", "LINE_TAIL", "LineBuffer", "clean"]

LINE_HEAD = 8 * 1024  # characters kept of a long line's start
LINE_TAIL = 8 * 1024  # and of its end (where a progress bar's latest state is)


def clean(text: str) -> str:
    """Text safe to show on any screen: no control sequences, tabs expanded (a line stays one line)."""
    return strip_ansi(text.replace("\r", "")).expandtabs(8)


class LineBuffer:
    """Splits a block's output stream into lines; chunks may cut a line, a CRLF or an escape in two.

    A bare CR rewrites the line (progress bars): with `overwrite` only what a terminal would finally show
    is kept; without it every rewrite is its own line, so a log loses nothing. A line longer than
    `LINE_HEAD` + `LINE_TAIL` characters keeps its head and tail around a `…[N characters not shown]…`
    marker: memory stays bounded whatever the line's length.
    """

    def __init__(self, overwrite: bool = False) -> None:
        self.overwrite = overwrite
        self._rest = ""  # the line being written (its tail, once `_head` is set)
        self._head = ""  # the start of a line too long to keep whole
        self._elided = 0  # characters of that line between `_head` and `_rest`

    def feed(self, chunk: str) -> list[str]:
        """The lines this chunk completes (cleaned)."""
        buf = (self._rest + chunk).replace("\r\n", "\n")
        *lines, self._rest = buf.split("\n")
        out: list[str] = []
        for ln in lines:
            out.extend(self._split(self._kept(ln)))
        self._bound()
        return out

    def flush(self) -> list[str]:
        """The last line if the output did not end with a newline."""
        rest = self._kept(self._rest)
        self._rest = ""
        return self._split(rest) if rest.strip("\r") else []

    @property
    def partial(self) -> str:
        """The line being written now (cleaned), as a terminal would show it."""
        segs = [s for s in self._rest.split("\r") if s]
        return clean(segs[-1]) if segs else ""

    def _bound(self) -> None:
        """Keep the line being written within `LINE_HEAD` + `LINE_TAIL` characters."""
        if not self._head and len(self._rest) > LINE_HEAD + LINE_TAIL:
            self._head, self._rest = self._rest[:LINE_HEAD], self._rest[LINE_HEAD:]
        if self._head and len(self._rest) > LINE_TAIL:
            self._elided += len(self._rest) - LINE_TAIL
            self._rest = self._rest[-LINE_TAIL:]

    def _kept(self, line: str) -> str:
        """A completed line as kept: whole, or head, marker and tail (the first one completed may continue
        a long line whose head was set aside)."""
        head, elided = self._head, self._elided
        self._head, self._elided = "", 0
        if not head and len(line) <= LINE_HEAD + LINE_TAIL:
            return line
        if not head:
            head, line = line[:LINE_HEAD], line[LINE_HEAD:]
        elided += max(0, len(line) - LINE_TAIL)
        if not elided:
            return head + line
        return f"{head}…[{elided} characters not shown]…{line[-LINE_TAIL:]}"

    def _split(self, line: str) -> list[str]:
        segs = line.split("\r")
        if len(segs) == 1:
            return [clean(line)]
        segs = [s for s in segs if s]
        if not segs:
            return [""]
        return [clean(segs[-1])] if self.overwrite else [clean(s) for s in segs]

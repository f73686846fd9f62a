"""Bounded capture of what a block prints, and of what bash traced (in memory, never stored whole).

A block's output is kept as its first `OUTPUT_HEAD` and last `OUTPUT_TAIL` bytes with an elision
marker (`OutputCapture`); the journal stores it through `excerpt`, which leaves text the capture
already bounded as it is. The xtrace of a judged block is read as it comes (a full pipe would stall the
block) and folded into counts per command (`TraceReader`).
"""

from __future__ import annotations

import codecs
import os
import re

from director.excerpt import OUTPUT_HEAD, OUTPUT_TAIL, excerpt  # excerpt: re-exported (old import path)
from director.exec import markers
from director.exec.secrets import Redactor
from director.plan.bash import TraceEntry, parse_trace

__all__ = ["OUTPUT_HEAD", "OUTPUT_TAIL", "OutputCapture", "TraceReader", "excerpt"]

class OutputCapture:
    """Keeps the first `head` and last `tail` bytes of a stream."""

    def __init__(self, head: int = OUTPUT_HEAD, tail: int = OUTPUT_TAIL) -> None:
        self._head_max, self._tail_max = head, tail
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, text: str) -> None:
        data = text.encode("utf-8", "surrogateescape")
        self.total += len(data)
        room = self._head_max - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > 2 * self._tail_max:
                del self.tail[: -self._tail_max]

    def text(self) -> str:
        tail = bytes(self.tail[-self._tail_max :])
        elided = self.total - len(self.head) - len(tail)
        head = bytes(self.head).decode("utf-8", "ignore")  # "ignore": a cut mid-character vanishes
        mid = f"\n…[{elided} bytes elided]…\n" if elided > 0 else ""
        return head + mid + tail.decode("utf-8", "ignore")


_XTRACE_OFF = re.compile(r"(?:^|\s)(?:\+[A-Za-z]*x|\+o\s+xtrace\b)")


def _turns_tracing_off(e: TraceEntry) -> bool:
    """Whether a traced command is `set` turning xtrace off (`set +x`, `set +ex`, `builtin set +o xtrace`)."""
    return (e.name == "set" or (e.name == "builtin" and e.rest.startswith("set "))) and bool(
        _XTRACE_OFF.search(e.rest)
    )


class TraceReader:
    """Reads a block's xtrace pipe as it comes (a full pipe would stall the block) into bounded counts."""

    _KEEP = 1 << 20  # parse and aggregate whenever this much raw trace is buffered
    _ENTRY_MAX = 64 * 1024  # of one longer entry (`+ echo <100 MB>`), only its start is kept

    def __init__(self, fd: int, redactor: Redactor, *, skip_eval: bool = False) -> None:
        """Read `fd`; with `skip_eval`, the first entry is the `eval` that ran the block: not the block's."""
        self.fd = fd
        self._skip_eval = skip_eval
        self._redactor = redactor
        self._buf = ""
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._counts: dict[tuple[int, str, str, str], int] = {}
        self._skipping = False  # dropping the rest of an entry longer than `_ENTRY_MAX`
        self.paused = False  # the block turned tracing off (`set +x`) at some point
        os.set_blocking(fd, False)

    def read(self) -> bool:
        """Read what is there; False at EOF."""
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return True
            except OSError:
                return False
            if not data:
                return False
            text = self._decoder.decode(data)
            if self._skipping:
                start = text.find("\x1e")  # where the next entry begins
                if start < 0:
                    continue
                text, self._skipping = text[start:], False
            self._buf += text
            if len(self._buf) > self._KEEP:
                self._fold(final=False)
                if len(self._buf) > self._KEEP:  # one entry, still going: keep its start only
                    self._buf, self._skipping = self._buf[: self._ENTRY_MAX], True

    def _fold(self, final: bool) -> None:
        text = self._buf
        if not final:
            cut = text.rfind("\x1e")
            # Keep the last (possibly incomplete) entry and its prefix for the next round.
            while cut > 0 and text[cut - 1] == "\x1e":
                cut -= 1
            if cut <= 0:
                return
            text, self._buf = text[:cut], text[cut:]
        else:
            self._buf = ""
        entries = parse_trace(text)
        if self._skip_eval and entries:
            self._skip_eval = False
            if entries[0].name == "eval" and not entries[0].function:
                entries = entries[1:]
        for e in entries:
            if e.function != markers.END and _turns_tracing_off(e):
                self.paused = True
            rest = e.rest if len(self._counts) < 20_000 else ""
            key = (e.line, e.function, e.name, self._redactor.redact(rest[:500]))
            self._counts[key] = self._counts.get(key, 0) + e.count

    def entries(self) -> tuple[TraceEntry, ...] | None:
        """Everything read, folded into entries with counts; None unless it is the whole run: it never
        reached the block's end (the EXIT capture's function, `markers.END`) -- the block closed or moved the
        trace's descriptor, or ended without its EXIT trap (`exec`, a signal) -- or the block turned tracing
        off on the way (`{ set +x; } 2>/dev/null` … `set -x`): what is missing is not known."""
        self._buf += self._decoder.decode(b"", final=True)
        self._fold(final=True)
        if self.paused or not any(markers.END in (fn, name) for _ln, fn, name, _rest in self._counts):
            return None
        return tuple(TraceEntry(ln, fn, name, rest, n) for (ln, fn, name, rest), n in self._counts.items())

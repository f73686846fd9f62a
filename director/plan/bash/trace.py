"""Traces: which commands a run executed, read from bash's xtrace written on a private descriptor."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass

from director.plan.bash.checks import Probe, VerifyModel

# PS4 for tracing: a record separator, the line, the function, a unit separator. Bash repeats the first
# character once per nesting level, so the prefix is one or more \x1e.
TRACE_PS4 = "\x1e${LINENO}\x1f${FUNCNAME[0]-}\x1f"
_TRACE_ENTRY = re.compile(r"\x1e+(\d+)\x1f([^\x1f]*)\x1f")


@dataclass(frozen=True)
class TraceEntry:
    """One traced command: 1-based line in the block, enclosing function, the first word, the rest."""

    line: int
    function: str
    name: str
    rest: str
    count: int = 1


def parse_trace(raw: str) -> list[TraceEntry]:
    """Entries of an xtrace stream written with `TRACE_PS4` (continuation lines join their entry)."""
    out: list[TraceEntry] = []
    starts = list(_TRACE_ENTRY.finditer(raw))
    for i, m in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(raw)
        body = raw[m.end() : end].rstrip("\n")
        name, rest = _trace_name(body)
        out.append(TraceEntry(int(m.group(1)), m.group(2), name, rest))
    return out


def _trace_name(body: str) -> tuple[str, str]:
    """The command word xtrace printed first (unquoted) and the rest of the line."""
    if body.startswith("'['") or body.startswith("'[' "):
        return "[", body[3:].strip()
    for kw in ("[[", "((", "for", "case", "select"):
        if body == kw or body.startswith(kw + " "):
            return kw, body[len(kw) :].strip()
    m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)(\[[^]]*\])?\+?=", body)
    if m:
        return "=", body
    m = re.match(r"'((?:[^']|'\\'')*)'|(\S+)", body)
    if not m:
        return "", body
    name = m.group(1).replace("'\\''", "'") if m.group(1) is not None else m.group(2)
    return name, body[m.end() :].strip()


def _unquote_trace(rest: str) -> str:
    """xtrace's quoting undone well enough to compare with a message pattern."""
    out: list[str] = []
    i, n = 0, len(rest)
    while i < n:
        c = rest[i]
        if c == "'":
            j = rest.find("'", i + 1)
            j = n if j < 0 else j
            out.append(rest[i + 1 : j])
            i = j + 1
        elif c == "$" and rest.startswith("$'", i):
            j = rest.find("'", i + 2)
            j = n if j < 0 else j
            out.append(rest[i + 2 : j])
            i = j + 1
        elif c == "\\" and i + 1 < n:
            out.append(rest[i + 1])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


@functools.lru_cache(maxsize=4096)
def message_regex(message: str) -> re.Pattern[str]:
    """A message pattern as a regex: literal text, every expansion matching anything."""
    parts: list[str] = []
    pos = 0
    for m in re.finditer(r"\$\{[^}]*\}|\$\([^)]*\)?|\$[A-Za-z_][A-Za-z0-9_]*|\$[0-9@*#?$!_-]", message):
        parts.append(re.escape(message[pos : m.start()]))
        parts.append(".*?")
        pos = m.end()
    parts.append(re.escape(message[pos:]))
    return re.compile("".join(parts), re.DOTALL)


def _matched(model: VerifyModel, entries: list[TraceEntry]) -> Iterator[tuple[TraceEntry, list[Probe]]]:
    """Each trace entry of this block with the probes it is (a function of an earlier block's are skipped)."""
    by_row: dict[int, list[Probe]] = {}
    for p in model.probes:
        for r in range(p.row, p.end_row + 1):
            by_row.setdefault(r, []).append(p)
    own_functions = set(model.functions)
    ctx = model.context_row
    # Session functions from earlier blocks (the model's context): bash numbers their lines from where
    # they were defined, not as rows here, so their commands are told apart by name and words alone.
    context_fns = {p.function for p in model.probes if p.function and ctx is not None and p.row >= ctx}
    for e in entries:
        fn = e.function or None
        if fn is not None and fn not in own_functions:
            continue  # a function of an earlier block the model was not given: its lines are not this block's
        if fn in context_fns:
            cands = [p for p in model.probes if p.function == fn]
        else:
            cands = [p for p in by_row.get(e.line - 1, ()) if p.function == fn]
        named = [p for p in cands if p.name == e.name or (p.name == "" and e.name not in ("=",))]
        if e.name == "=":
            named = [p for p in cands if p.name in ("=", "")] or named
        if len(named) > 1:
            text = _unquote_trace(e.rest)
            matching = [p for p in named if message_regex(p.pattern).fullmatch(text)]
            named = matching or named[:1]
        yield e, named


def executed(model: VerifyModel, entries: list[TraceEntry]) -> dict[int, int]:
    """Probe id -> how many times the trace shows it ran."""
    counts: dict[int, int] = {}
    for e, probes in _matched(model, entries):
        for p in probes:
            counts[p.id] = counts.get(p.id, 0) + e.count
    return counts


def unit_paths(model: VerifyModel, entries: list[TraceEntry]) -> dict[int, tuple[int, ...]]:
    """Check unit -> the path its run took: which of its messages and exits ran, by position.

    Never the words, and never how often: a loop that went round three times took the same path as one
    that went round once. What a function prints counts where it was called (the unit running when the
    function's lines ran). Units the run never reached are absent.
    """
    row_unit: dict[int, int] = {}
    for u in model.units:
        for r in range(u.row, u.end_row + 1):
            row_unit[r] = u.index
    ran: dict[int, set[int]] = {}
    current: int | None = None
    for e, probes in _matched(model, entries):
        if not e.function:
            current = row_unit.get(e.line - 1)
            if current is not None:
                ran.setdefault(current, set())
        if current is None:
            continue
        unit = model.units[current]
        ran[current].update(p.id for p in probes if p.id in unit.probes)
    return {u: tuple(sorted(ids)) for u, ids in ran.items()}

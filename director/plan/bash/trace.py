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

# Entries that are no command of the block: what its command marks (`director.exec.markers`) saw -- a
# command that ended non-zero (`rest`: its status) and a command something was printed after.
STATUS = "\x1dstatus"
WROTE = "\x1dwrote"
# That the run had the marks at all, whatever they saw: a path's `RICHER` says how the run was read, never
# whether one of its commands happened to fail or print (`unit_paths`).
MARKED = "\x1dmarked"
_MARK_ENTRIES = (STATUS, WROTE, MARKED)
# The marks' DEBUG trap runs traced too: its commands are dropped from the trace.
_TRAP_COMMANDS = (("builtin", "printf '\\035"),)


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
        if any(name == n and (rest if n != "=" else body).startswith(s) for n, s in _TRAP_COMMANDS):
            continue
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


_EXPANSION = re.compile(r"\$\{|\$\(|`|\$[A-Za-z_][A-Za-z0-9_]*|\$[0-9@*#?$!_-]")


def _expansion_end(message: str, start: int) -> int:
    """Where the expansion starting at `start` ends: `${…}`, `$(…)` and backquotes to their balanced close
    (quotes and nested groups inside, `$(py -c 'print(x)')`), a name or special parameter by itself."""
    if message.startswith("`", start):
        end = message.find("`", start + 1)
        return len(message) if end < 0 else end + 1
    if not (message.startswith("${", start) or message.startswith("$(", start)):
        m = _EXPANSION.match(message, start)
        return m.end() if m else start + 1
    close = "}" if message[start + 1] == "{" else ")"
    opens = "{" if close == "}" else "("
    depth, i, quote = 0, start + 1, ""
    while i < len(message):
        c = message[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 1
            elif c == quote:
                quote = ""
        elif c == "\\":
            i += 1
        elif c in "'\"":
            quote = c
        elif c == opens:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(message)  # unbalanced (a message cut short): the rest is the expansion


@functools.lru_cache(maxsize=4096)
def message_regex(message: str) -> re.Pattern[str]:
    """A message pattern as a regex: literal text, every expansion matching anything (a command
    substitution with quotes and parentheses of its own too: `has X $(py -c 'print(x.v)')`)."""
    parts: list[str] = []
    pos = 0
    while (m := _EXPANSION.search(message, pos)) is not None:
        parts.append(re.escape(message[pos : m.start()]))
        parts.append(".*?")
        pos = _expansion_end(message, m.start())
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
        if e.name in _MARK_ENTRIES:
            continue  # what the marks saw: `unit_paths` reads them
        fn = e.function or None
        if fn is not None and fn not in own_functions:
            continue  # a function of an earlier block the model was not given: its lines are not this block's
        if fn in context_fns:
            cands = [p for p in model.probes if p.function == fn]
        else:
            cands = [p for p in by_row.get(e.line - 1, ()) if p.function == fn]
        # a command whose name the block computes (`"$PY" -c …`, name "") runs as whatever it expands to:
        # it takes an entry only when no command on the row is written with the traced name
        named = [p for p in cands if p.name == e.name] or [
            p for p in cands if p.name == "" and e.name not in ("=",)
        ]
        if e.name == "=":
            named = [p for p in cands if p.name in ("=", "")] or named
        if len(named) > 1:
            text = _unquote_trace(e.rest)
            matching = [p for p in named if message_regex(p.pattern).fullmatch(text)]
            named = matching or named[:1]
        yield e, named


def via_key(call: int, polarity: str) -> int:
    """The key under which `executed` counts a called function's pass (or failure) lines that ran during
    the call `call` (a labelled call, `ReportLine.via`): negative, never a probe id."""
    return -(2 * call + (1 if polarity == "pass" else 2))


def executed(model: VerifyModel, entries: list[TraceEntry]) -> dict[int, int]:
    """Probe id -> how many times the trace shows it ran; for each labelled call (`ReportLine.via`), how
    often its function's pass and failure lines ran during it (under `via_key`)."""
    counts: dict[int, int] = {}
    calls = {ln.probe: ln for ln in model.lines if ln.via}
    polarity = {ln.probe: ln.polarity for ln in model.lines}
    current: int | None = None  # the labelled call whose function is running
    for e, probes in _matched(model, entries):
        if not e.function:
            current = next((p.id for p in probes if p.id in calls), None)
        for p in probes:
            counts[p.id] = counts.get(p.id, 0) + e.count
            if current is not None and e.function and p.id in calls[current].via:
                key = via_key(current, polarity[p.id])
                counts[key] = counts.get(key, 0) + e.count
    return counts


# A path is the ids of the messages and exits that ran, ascending; then `RICHER` and what the command marks
# saw (`richer_element`), descending. A path learned before the marks existed has no `RICHER`: it is read
# by its messages and exits alone (`director.plan.contrast.Baseline`). So is one learned while the marks
# still kept statuses nothing reads (`unread_rows`): it has -1 where `RICHER` stands (-2 is no element:
# a status is 1–255). A run's path has `RICHER` whenever the run had the marks (`MARKED`), also when they
# saw nothing; one learned before that had none then, and is the same path without it (`Baseline.world_of`).
RICHER = -2


def richer_element(row: int, status: int | None) -> int:
    """A path element for the command(s) at `row` (0-based, in the block): it ended with `status` (1–255),
    or (None) something was printed after it."""
    return -(2 + row * 512 + (256 if status is None else status))


def legacy(path: tuple[int, ...]) -> tuple[int, ...]:
    """A path's messages and exits alone (what a path was before the command marks)."""
    return tuple(p for p in path if p >= 0)


def unit_paths(model: VerifyModel, entries: list[TraceEntry]) -> dict[int, tuple[int, ...]]:
    """Check unit -> the path its run took: which of its messages and exits ran, by position; and which of
    its commands ended non-zero (with which status) or printed something (the command marks, when the run
    had them), by row. Never the words, and never how often: a loop that went round three times took the
    same path as one that went round once.

    What a function prints counts where it was called (the unit running when the function's lines ran).
    Units the run never reached are absent. The marks count outside loops only (a poll's failed tries say
    nothing of the world), never for a line that only prints or exits (its message already counts), in
    a function only when one unit calls it, and a status only when something reads it (`model.unread_rows`).
    """
    row_unit: dict[int, int] = {}
    for u in model.units:
        for r in range(u.row, u.end_row + 1):
            row_unit[r] = u.index
    ran: dict[int, set[int]] = {}
    richer: dict[int, set[int]] = {}
    marked = False
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
    for e in entries:
        if e.name not in _MARK_ENTRIES:
            continue
        marked = True
        if e.name == MARKED:
            continue
        unit_index = _marked_unit(model, e, row_unit)
        if unit_index is None or unit_index not in ran:
            continue
        status = int(e.rest) if e.name == STATUS and e.rest.isdigit() else None
        if e.name == STATUS and (not 0 < (status or 0) < 256 or e.line - 1 in model.unread_rows):
            continue  # a status nothing reads shows nowhere under plain bash: no world is told by it
        richer.setdefault(unit_index, set()).add(richer_element(e.line - 1, status))
    if not marked:
        return {u: tuple(sorted(ids)) for u, ids in ran.items()}
    return {
        u: (*sorted(ids), RICHER, *sorted(richer.get(u, ()), reverse=True)) for u, ids in ran.items()
    }


def _marked_unit(model: VerifyModel, e: TraceEntry, row_unit: dict[int, int]) -> int | None:
    """The unit a mark at this line belongs to (None: a loop, a line that only speaks, a shared function)."""
    row = e.line - 1
    if row in model.loop_rows or row in model.speaking_rows:
        return None
    if not e.function:
        return row_unit.get(row)
    if e.function not in model.functions or (model.context_row is not None and row >= model.context_row):
        return None
    fn_ids = {p.id for p in model.probes if p.function == e.function}
    callers = [u.index for u in model.units if fn_ids & set(u.span)]
    return callers[0] if len(callers) == 1 else None

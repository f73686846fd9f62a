"""What Director writes into Live State: realized key/value cells and check rows (pure)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from director import knobs as knobs_mod
from director.model import CheckLine, CheckPolarity, CheckRow, KVRow, Plan, SectionKind

_TICKED = re.compile(r"`([^`]*)`")
_URL = re.compile(r"https?://[^\s\"'<>`)]+")


@dataclass(frozen=True)
class CheckOutcome:
    """What one check feeding a row saw: passed or not, and a short true excerpt."""

    ok: bool
    observed: str
    warnings: tuple[str, ...] = ()


def excerpt(text: str, limit: int = 80) -> str:
    """A short single-line excerpt for a table cell."""
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


_WHOLE_WORD_VAR = re.compile(
    r"""(?:^|(?<=[\s;|&(]))(["']?)\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?\1(?=[\s;|&)]|$)"""
)


def discovered_vars(plan: Plan) -> list[str]:
    """Variables Requires-discovery probes as resource names: upstream (bound) resources.

    A variable counts when it is a whole shell word there (`wrangler d1 info "$BIND_D1"`,
    `[ -n "$BIND_KV" ]`), not when it only helps build a path or a message (`"$OUT/x"`).
    """
    names: list[str] = []
    for s in plan.sections:
        if s.kind is SectionKind.DISCOVERY:
            for b in s.executable_blocks:
                for line in b.text.split("\n"):
                    if line.lstrip().startswith("#"):
                        continue
                    for m in _WHOLE_WORD_VAR.finditer(line):
                        if m.group(2) not in names:
                            names.append(m.group(2))
    return names


def realize_cell(
    template: str,
    key: str,
    env: Mapping[str, str],
    knobs: Mapping[str, str],
    realized: Mapping[str, str],
    discovered: Mapping[str, str],
) -> str:
    """A key/value cell realized from its template; unchanged when nothing is known yet."""
    cond = knobs_mod.kv_condition(template)
    if cond is not None and knobs.get(cond[0]) not in (None, cond[1]):
        return f"`—` (not applicable: `{cond[0]}={knobs[cond[0]]}`; `{cond[0]}={cond[1]}` only)"
    if "discovered" in template.lower():
        found = [f"{k}={v}" for k, v in discovered.items() if v]
        return f"`{', '.join(found)}` (discovered, not created here)" if found else "`—` (none discovered)"
    m = _TICKED.search(template)
    value: str | None = realized.get(key)
    if value is None and m is not None and "$" in m.group(1):
        try:
            value = knobs_mod.expand(m.group(1), env)
        except knobs_mod.TemplateError:
            value = None
    if value is None:
        return template
    if m is None:
        return f"`{value}`"
    return template[: m.start()] + f"`{value}`" + template[m.end() :]


def first_url(text: str) -> str | None:
    """The first http(s) URL in a block's output (how a deploy's URL is realized)."""
    m = _URL.search(text)
    return m.group(0).rstrip(".,;") if m else None


def keys_named(hints: Iterable[str], rows: Iterable[KVRow]) -> list[str]:
    """Key/value keys a section's `→ Live State:` hints name (word match, case-insensitive)."""
    text = " ".join(hints)
    out = []
    for r in rows:
        if re.search(rf"(?<![\w$]){re.escape(r.key)}(?!\w)", text, flags=re.IGNORECASE):
            out.append(r.key)
    return out


def ends_with_guard(text: str) -> bool:
    """Whether a block's last statement is a guard (`[ -n "$X" ] && { … }`).

    Bash gives such a block the guard's status, 1, when the guard is false: "nothing to check", not a
    failed check. Director reads that exit as success when no failure line was printed (lint says so).
    """
    from director.checks import Simple, _argv0, parse_shell

    stmts = parse_shell(text)
    if not stmts:
        return False
    last = stmts[-1]
    if len(last.elements) < 2 or any(op != "&&" for op in last.ops[1:]):
        return False
    first = last.elements[0].commands
    return len(first) == 1 and isinstance(first[0], Simple) and _argv0(first[0]) in ("[", "[[", "test")


# CSI, OSC (ended by BEL or ST), DCS/SOS/PM/APC strings, two-byte escapes (`ESC ( B` from `tput sgr0`),
# 8-bit CSI, and every other C0/C1 control except tab and newline.
_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b[ -/]*[0-~]"
    r"|\x1b"
    r"|\x9b[0-?]*[ -/]*[@-~]"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"
)
_INCONCLUSIVE = re.compile(r"inconclusive|undetermined|unknown|could not (?:tell|determine)", re.IGNORECASE)


def strip_ansi(text: str) -> str:
    """Text without terminal control sequences (tools colour their output under a pty)."""
    return _ANSI.sub("", text)


def is_inconclusive(check: CheckLine) -> bool:
    """An exit-0 alternative the author worded as "could not tell" rather than as a failure."""
    return (
        check.ambiguous and check.polarity is CheckPolarity.FAIL and bool(_INCONCLUSIVE.search(check.message))
    )


def check_outcomes(
    checks: Iterable[CheckLine], output_lines: list[str], exit_ok: bool
) -> dict[str, CheckOutcome]:
    """Per label (`1`, `2a`…) and for the whole block (key ""), what the verify output shows.

    The block holds when it exited 0 (or ended on a false guard), printed no failure line, and printed
    each ambiguous pass line or, in its place, its inconclusive alternative (kept as a warning).
    """
    from director.checks import match_check

    lines = [strip_ansi(ln).rstrip() for ln in output_lines]
    out: dict[str, CheckOutcome] = {}
    checks = tuple(checks)
    printed_pass: list[str] = []
    failed_line: str | None = None
    warnings: list[str] = []
    for check in checks:
        hit = next((ln for ln in lines if match_check(check, ln)), None)
        if check.polarity is CheckPolarity.PASS:
            if hit is not None:
                printed_pass.append(hit)
            if check.label:
                prev = out.get(check.label)
                if hit is not None and (prev is None or prev.ok):
                    out[check.label] = CheckOutcome(True, excerpt(hit))
                elif hit is None:
                    out[check.label] = CheckOutcome(False, "")
        elif hit is not None and is_inconclusive(check):
            warnings.append(hit.strip())
        elif hit is not None:
            failed_line = hit
            if check.label:
                out[check.label] = CheckOutcome(False, excerpt(hit))
    warned_lines = {c.line for c in checks if is_inconclusive(c) and any(match_check(c, ln) for ln in lines)}
    ok = (
        exit_ok
        and failed_line is None
        and all(
            any(match_check(c, ln) for ln in lines) or c.line in warned_lines
            for c in checks
            if c.polarity is CheckPolarity.PASS and c.ambiguous
        )
    )
    if not ok:
        tail = failed_line or next((ln for ln in reversed(lines) if ln.strip()), "")
        for label, o in list(out.items()):
            if not o.ok and not o.observed:
                out[label] = CheckOutcome(False, excerpt(tail))
        observed = excerpt(tail)
    else:
        shown = (
            " · ".join(printed_pass + warnings) if printed_pass or warnings else (lines[-1] if lines else "")
        )
        observed = excerpt(shown)
    out[""] = CheckOutcome(ok, observed, tuple(warnings))
    return out


def row_updates(
    rows: Iterable[CheckRow], by_ref: Mapping[str, CheckOutcome], date: str
) -> dict[str, tuple[str, str]]:
    """Check-table cells for the rows whose feeding checks ran: (observed, `✅ date` / `❌ date`)."""
    updates: dict[str, tuple[str, str]] = {}
    for row in rows:
        seen = [by_ref[r] for r in row.fed_by if r in by_ref]
        if not seen:
            continue
        ok = all(o.ok for o in seen)
        observed = excerpt(" · ".join(o.observed for o in seen if o.observed)) or (
            "—" if ok else "not observed"
        )
        updates[row.name] = (observed.replace("|", "/"), f"{'✅' if ok else '❌'} {date}")
    return updates

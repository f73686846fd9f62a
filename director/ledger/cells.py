"""What Director writes into Live State: realized key/value cells and check rows (pure)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from director.plan import bash
from director.plan import hints as plan_hints
from director.plan import knobs as knobs_mod
from director.plan.model import CheckRow, KVRow, Plan, SectionKind
from director.plan.verify import CheckResult, Verdict, excerpt

_TICKED = re.compile(r"`([^`]*)`")
_URL = re.compile(r"https?://[^\s\"'<>`)]+")


def discovered_vars(plan: Plan) -> list[str]:
    """Variables Requires-discovery probes as resource names: upstream (bound) resources.

    A variable counts when a discovery command takes it as a whole word (`wrangler d1 info "$BIND_D1"`,
    `[ -n "$BIND_KV" ]`, `sqlite3 -readonly "$LEDGER_DB" …`), not when it only helps build a path or a
    message (`"$OUT/x"`, `echo "D1 $BIND_D1 missing"`) -- and not when the plan makes it itself: a value
    discovery computes (`MAJOR=$(node -v …)`), or a file an act block of the plan creates or writes
    (`echo $! > "$PIDFILE"`): discovery may look at the plan's own resources too.

    Read from every act and discovery block, so computed once a plan (`Plan.derived`): the engine asks
    after every section, and N sections would otherwise cost N passes over the whole plan.
    """
    names = plan.derived.get("discovered_vars")
    if names is None:
        names = plan.derived["discovered_vars"] = tuple(_discovered_vars(plan))
    return list(names)


def _discovered_vars(plan: Plan) -> list[str]:
    """`discovered_vars`, computed (one pass over the plan)."""
    own: set[str] = set()
    parents: dict[str, str] = {}  # VAR -> the variable its value is a path under (`PIDFILE="$BASE/x.pid"`)
    for s in plan.sections:
        if s.kind in (SectionKind.VARIABLES, SectionKind.NUMBERED):
            for b in s.act_blocks:
                own |= bash.creates(b.text)
                for name, value in bash.assignments(b.text):
                    m = re.match(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/", value.pattern)
                    if m:
                        parents[name] = m.group(1)
    grew = True
    while grew:  # under a directory the plan creates: the plan's own too
        grew = False
        for name, parent in parents.items():
            if parent in own and name not in own:
                own.add(name)
                grew = True
    names: list[str] = []
    for s in plan.sections:
        if s.kind is SectionKind.DISCOVERY:
            for b in s.executable_blocks:
                script = bash.parse(b.text)
                for c in script.commands:
                    if c.program in ("echo", "printf"):
                        continue
                    for w in c.argv if c.kind == "test" else c.argv[1:]:
                        v = w.whole_var
                        if not v or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", v):
                            continue  # `$1`, `$?`: not a resource's name
                        if v not in names and v not in script.assigns and v not in own:
                            names.append(v)
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
    """Key/value keys a section's `→ Live State:` hints name (by exact name or `$KEY`: `plan.hints`)."""
    return plan_hints.keys_named(hints, rows)


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


def strip_ansi(text: str) -> str:
    """Text without terminal control sequences (tools colour their output under a pty)."""
    return _ANSI.sub("", text)


def row_updates(
    rows: Iterable[CheckRow], by_ref: Mapping[str, CheckResult], date: str
) -> dict[str, tuple[str, str]]:
    """Check-table cells for the rows whose feeding checks ran or were reached: (observed, result).

    The result is `✅ date` only when every feeding check passed; a failed one is `❌`, an inconclusive
    one `⚠ inconclusive`, a skipped one `— skipped` and one the run never reached `— not run`: a check
    that did not run is never evidence (docs/verify-semantics.md).
    """
    updates: dict[str, tuple[str, str]] = {}
    for row in rows:
        seen = [by_ref[r] for r in row.fed_by if r in by_ref]
        if not seen:
            continue
        order = (Verdict.FAILED, Verdict.INCONCLUSIVE, Verdict.NOT_RUN, Verdict.SKIPPED, Verdict.PASSED)
        worst = next(v for v in order if any(o.verdict is v for o in seen))
        observed = excerpt(" · ".join(o.observed for o in seen if o.observed)) or "—"
        mark = {
            Verdict.PASSED: "✅",
            Verdict.FAILED: "❌",
            Verdict.INCONCLUSIVE: "⚠ inconclusive",
            Verdict.SKIPPED: "— skipped",
            Verdict.NOT_RUN: "— not run",
        }[worst]
        updates[row.name] = (observed.replace("|", "/"), f"{mark} {date}")
    return updates

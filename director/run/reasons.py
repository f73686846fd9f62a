"""Why a section is not in sync: what changed since it last succeeded (an input, a block, a value it reads,
a file template), what the disk and the observation say.

When a section succeeds after acting, its *basis* is journaled (`section-basis`): the inputs, the exact text
of each block (a digest), the values its blocks read and a digest of each regenerated file. The next time its
fingerprint differs, the difference is named from the basis instead of "changed since its last success".
Secret-named values are never part of a basis; other values pass through the run's redactor.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from director.exec.secrets import is_secret_name
from director.ledger import cells
from director.plan import bash, knobs
from director.plan.model import Plan, Section, SectionKind
from director.plan.source import whole_number
from director.run.fingerprint import Templates, read_values
from director.state.store import StateStore

KIND = "section-basis"


def basis(
    section: Section,
    texts: Mapping[int, str],
    knob_values: Mapping[str, str],
    session_vars: Mapping[str, str],
    templates: Templates,
    is_secret: Callable[[str], bool],
    redact: Callable[[str], str],
    identity: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """What a section's success rested on (journaled; compared with the next time it is not in sync), and
    the identity its run's inputs named (`run.identities`: a later run of another one replaces it)."""
    read: dict[str, str] = {}
    for text in texts.values():
        read.update(read_values(text, session_vars, is_secret))
    return {
        "section": section.key,
        "inputs": dict(knob_values),
        # digests, not texts: a block may hold a literal the author wrote (a default token) and nothing
        # but its value's name says it is secret
        "blocks": {str(i): _digest(t) for i, t in sorted(texts.items())},
        "vars": {k: redact(v) for k, v in sorted(read.items())},
        "templates": {p: _digest(c) for p, c in templates.values()},
        "identity": dict(identity or {}),
    }


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def last_basis(journal: StateStore, section_key: str) -> dict[str, Any] | None:
    """The basis of the section's latest success that journaled one."""
    return Bases(journal).last(section_key)


class Bases:
    """The latest basis of every section: read from the journal once, then kept as the run records more
    (asking the journal for each section would read every basis each time: quadratic in the plan)."""

    def __init__(self, journal: StateStore, since: int = 0) -> None:
        self._journal = journal
        self._since = since  # bases of runs before it are void (a teardown acted in it)
        self._by_section: dict[str, dict[str, Any]] | None = None

    def last(self, section_key: str) -> dict[str, Any] | None:
        """The basis of the section's latest success that journaled one."""
        if self._by_section is None:
            self._by_section = {}
            for ev in self._journal.events(kind=KIND):
                if (ev.run_id or 0) >= self._since:
                    self._by_section[str(ev.data.get("section"))] = dict(ev.data)
        found = self._by_section.get(section_key)
        return None if found is None else dict(found)

    def recorded(self, basis: Mapping[str, Any]) -> None:
        """A basis was journaled (with its section's success)."""
        if self._by_section is not None:
            self._by_section[str(basis.get("section"))] = dict(basis)


def _short(value: str, n: int = 48) -> str:
    v = " ".join(str(value).split())
    return v if len(v) <= n else v[: n - 1] + "…"


def changes(before: Mapping[str, Any], now: Mapping[str, Any], section: Section) -> list[str]:
    """The differences between two bases, in words: which input, which block, which value, which file."""
    out: list[str] = []
    old_in, new_in = dict(before.get("inputs", {})), dict(now.get("inputs", {}))
    for k in sorted(set(old_in) | set(new_in)):
        if old_in.get(k) != new_in.get(k):
            out.append(f"input {k} changed: {old_in.get(k, '(unset)')} → {new_in.get(k, '(unset)')}")
    lines = {str(b.index): b.span.first_line for b in section.executable_blocks}
    old_b, new_b = dict(before.get("blocks", {})), dict(now.get("blocks", {}))
    for i in sorted(set(old_b) | set(new_b), key=lambda x: whole_number(x) or 0):
        if old_b.get(i) != new_b.get(i) and not (out and section.kind is SectionKind.VARIABLES):
            # (§0's text carries the knobs: a changed input is the reason, already named)
            out.append(f"the block at plan line {lines.get(i, '?')} changed")
    old_v, new_v = dict(before.get("vars", {})), dict(now.get("vars", {}))
    for k in sorted(set(old_v) | set(new_v)):
        if old_v.get(k) != new_v.get(k) and old_in.get(k) == new_in.get(k):  # (a knob: named as the input)
            out.append(f"{k} changed: {_short(old_v.get(k, '(unset)'))} → {_short(new_v.get(k, '(unset)'))}")
    old_t, new_t = dict(before.get("templates", {})), dict(now.get("templates", {}))
    for p in sorted(set(old_t) | set(new_t)):
        if old_t.get(p) != new_t.get(p):
            out.append(f"the regenerated {Path(p).name} changed (knobs or template)")
    return list(dict.fromkeys(out))


def template_drift(templates: Templates) -> list[str]:
    """Regenerated files whose content on disk differs (or that are missing)."""
    out = []
    for path, content in templates.values():
        p = Path(path)
        try:
            same = p.read_text(encoding="utf-8") == content
        except (OSError, UnicodeDecodeError):
            same = False
        if not same:
            out.append(path)
    return out


def file_reason(path: str) -> str:
    """Why a regenerated file will be written: it differs on disk, or it is not there yet."""
    if not Path(path).exists():
        return f"{Path(path).name} will be created ({path})"
    return f"{Path(path).name} on disk differs from its regenerated template ({path})"


def why_not_in_sync(
    *,
    last: Mapping[str, Any] | None,
    ever_succeeded: bool,
    unchanged: bool,
    now: Mapping[str, Any],
    section: Section,
    drift: list[str],
    observed: str,
) -> list[str]:
    """The reasons a section will act: never applied, what changed, a file on disk, the observation."""
    why: list[str] = []
    if not ever_succeeded:
        why.append("never applied")
    elif not unchanged:
        found = changes(last, now, section) if last is not None else []
        why.extend(found or ["changed since its last success"])
    for path in drift:
        why.append(file_reason(path))
    if observed:
        why.append(f"observed: {observed}")
    return why


def why_waiting(journal: StateStore, run_id: int, section_key: str) -> list[str]:
    """What the run waiting at this gate said about it (for `director approve`, from another process)."""
    for ev in reversed(journal.events(run_id, kind="gate-waiting")):
        if ev.data.get("section") == section_key:
            review = dict(ev.data.get("content", {}).get("review") or {})
            return [str(r) for r in review.get("reasons", [])]
    return []


# ------------------------------------------------------------------------------ what a gate changes


def ticked(cell: str) -> str:
    """The first backticked value of a table cell (the value), or the cell."""
    m = re.search(r"`([^`]*)`", cell)
    return (m.group(1) if m else cell).strip()


def realized_value(cell: str) -> str | None:
    """The value a realized cell holds (`orders-dev`), or None while it is a template or empty."""
    v = ticked(cell)
    return None if not v or "$" in v or v in ("—", "-") or "<" in v else v


def _hints(section: Section) -> list[str]:
    return list(section.hints) + [h for b in section.blocks for h in b.hints]


EXISTS = ("live", "drifted", "partially")  # ledger statuses that say what the plan made exists


def ledger_changes(
    plan: Plan,
    section: Section,
    kind: str,
    env: Mapping[str, str],
    knob_values: Mapping[str, str],
    realized: Mapping[str, str],
    kv_templates: Mapping[str, str],
    *,
    acted_before: bool = False,
) -> tuple[str, ...]:
    """What the section changes in Live State, every key it realizes with its current and new value:
    `+` realized for the first time, `~` changed (or set again by the act: it may change), `=` kept, `-`
    cleared; and, first, `!` when the section is live and its act runs again on what exists."""
    ls = plan.live_state
    if ls is None:
        return ()
    out: list[str] = []
    status = str(ls.data.get("status", "")).strip()
    if section.kind is SectionKind.TEARDOWN:
        for row in ls.kv_rows:
            if realized_value(row.value) is not None and "discovered" not in row.value.lower():
                out.append(f"- {row.key}: `{ticked(row.value)}` (back to its template)")
        if ls.check_rows:
            out.append(f"~ {len(ls.check_rows)} check rows: → — torn down")
        if status != "gone":
            out.append(f"~ status: {status or '(none)'} → gone")
        return tuple(out)
    if acted_before and status.startswith(EXISTS):
        out.append(f"! {status}: the act runs again on what exists (it was applied before)")
    discovered = {v: env.get(v, "") for v in cells.discovered_vars(plan)}
    # a key the session holds is realized from it again once the section verified (not the old value)
    realized = {k: v for k, v in realized.items() if k not in env}
    sets = {name for b in section.executable_blocks for name in bash.assigns(b.text)}
    for key in cells.keys_named(_hints(section), ls.kv_rows):
        row = next(r for r in ls.kv_rows if r.key == key)
        if is_secret_name(key):
            continue
        tmpl = kv_templates.get(key, row.value)
        cond = knobs.kv_condition(tmpl)
        if cond is not None and knob_values.get(cond[0]) not in (None, cond[1]):
            continue  # not applicable for these inputs
        new = cells.realize_cell(tmpl, key, env, knob_values, realized, discovered)
        old_v, new_v = realized_value(row.value), realized_value(new)
        url = "URL" in key.upper() and key not in env and key not in sets
        if key in sets or url:
            new_v = None  # what the act sets (or prints) is known once it ran, whatever it was before
        now = f"`{old_v}`" if old_v is not None else "not realized yet"
        if new_v is None:
            if not url and key not in sets:
                out.append(f"= {key}: {'stays ' + now if old_v is not None else 'not realized'} "
                           f"(no block of this section sets ${key})")
                continue
            source = "this section's output" if url else "this section's act"
            if old_v is None:
                out.append(f"+ {key}: from {source} ({now})")
            else:
                may = "; the URL may change" if "URL" in key.upper() else "; it may change"
                out.append(f"~ {key}: {now} → set again from {source}{may}")
        elif old_v is None:
            out.append(f"+ {key}: `{new_v}` ({now})")
        elif new_v != old_v:
            out.append(f"~ {key}: `{old_v}` → `{new_v}`")
        else:
            out.append(f"= {key}: `{old_v}` (unchanged)")
    if kind == "apply" and status != "live":
        out.append(f"~ status: {status or '(none)'} → live (when the run completes)")
    return tuple(out)

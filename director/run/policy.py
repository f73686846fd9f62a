"""Gate policy (docs/approvals.md "Gate policy"): how many approvals release a gate, whether the run's own
operator may give one, and how long a receipt counts. Pure: the rules as data, merged so that the stricter
always wins, and which receipts count together (one per person).

A policy is declared in two places, both in force at once:

- the repository: `.director-approval-policy.toml` at its root, beside `.director-allowed-signers` (and
  beside an allowed-signers file named with `--allowed-signers`), read by `director.commands.trust`;
- the plan: a gated section's act fence, `bash {approvals=2 self-approval=no}`.

A plan can make a gate stricter than its repository requires, never weaker. Defaults (nothing declared):
one approval, the run's own operator may give it, a `director approve` receipt counts for 24 hours.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from director.plan import markers
from director.plan.fence import MAX_APPROVALS
from director.plan.model import Plan, Section, SectionKind, section_label

POLICY_FILE = ".director-approval-policy.toml"
DEFAULT_VALID_FOR_S = 24 * 3600.0  # a receipt from `director approve` without --valid-for
TABLES = {"gates": "every gate, 🔴 and 💥", "destructive": "💥 gates, on top of [gates]"}
KEYS = ("approvals", "self_approval", "max_valid_for")

_DURATION = re.compile(r"(\d+)([smhd])")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> float:
    """Seconds of `90s`, `30m`, `24h`, `7d` or a sum of them (`1h30m`); ValueError otherwise."""
    t = text.strip().lower()
    parts = _DURATION.findall(t)
    if not t or "".join(n + u for n, u in parts) != t:
        raise ValueError(f"{text!r} is not a duration (write 90s, 30m, 24h, 7d or 1h30m)")
    seconds = float(sum(int(n) * _UNIT_S[u] for n, u in parts))
    if seconds <= 0:
        raise ValueError(f"{text!r}: a duration must be longer than 0")
    return seconds


def shown_duration(seconds: float) -> str:
    """`7d`, `24h`, `90m`, `45s`: the largest unit that divides it."""
    for unit in ("d", "h", "m"):
        if seconds % _UNIT_S[unit] == 0:
            return f"{int(seconds // _UNIT_S[unit])}{unit}"
    return f"{seconds:g}s"


@dataclass(frozen=True)
class Rule:
    """What a gate requires of its approvals."""

    approvals: int = 1  # receipts from that many different people (two-person rule: 2)
    self_approval: bool = True  # whether the run's own operator may give one of them
    max_valid_for_s: float | None = None  # a receipt counts at most this long after it was signed
    source: tuple[str, ...] = ()  # where each requirement beyond the defaults was declared

    def tighten(self, other: Rule) -> Rule:
        """The stricter of the two on every point (so that nothing declared can loosen anything else)."""
        bounds = [b for b in (self.max_valid_for_s, other.max_valid_for_s) if b is not None]
        return Rule(
            max(self.approvals, other.approvals),
            self.self_approval and other.self_approval,
            min(bounds) if bounds else None,
            tuple(dict.fromkeys((*self.source, *other.source))),
        )

    @property
    def needs_identities(self) -> bool:
        """Whether the rule must tell people apart (only a verified signature says who approved)."""
        return self.approvals > 1 or not self.self_approval

    @property
    def valid_for_s(self) -> float:
        """How long a new receipt counts when its approver does not say (`--valid-for`)."""
        return min(DEFAULT_VALID_FOR_S, self.max_valid_for_s or DEFAULT_VALID_FOR_S)

    def describe(self) -> str:
        """`2 approvals from different people, not the run's operator` (what the gate needs)."""
        parts = ["1 approval" if self.approvals == 1 else f"{self.approvals} approvals from different people"]
        if not self.self_approval:
            parts.append("not from the run's own operator")
        if self.max_valid_for_s is not None:
            parts.append(f"each signed at most {shown_duration(self.max_valid_for_s)} ago")
        return ", ".join(parts)


@dataclass(frozen=True)
class Policy:
    """The rules a repository declares: for every gate, and for 💥 gates on top of those."""

    gates: Rule = field(default_factory=Rule)
    destructive: Rule = field(default_factory=Rule)
    files: tuple[str, ...] = ()  # the policy files it was read from

    def tighten(self, other: Policy) -> Policy:
        return Policy(
            self.gates.tighten(other.gates),
            self.destructive.tighten(other.destructive),
            tuple(dict.fromkeys((*self.files, *other.files))),
        )

    def for_gate(self, marker: str, section: Section | None = None) -> Rule:
        """The rule of a gate with `marker`, tightened by the plan's own declaration for `section`."""
        rule = self.gates
        if marker == markers.Marker.DESTRUCTIVE.value:
            rule = rule.tighten(self.destructive)
        return rule.tighten(plan_rule(section)) if section is not None else rule

    def needing_identities(self, plan: Plan) -> tuple[Section, Rule] | None:
        """The first gate of `plan` whose rule tells people apart (two approvals from different people, or
        not the run's operator): only a verified signature can say who approved there."""
        for s in plan.sections:
            glyphs = [m.marker.value for m in s.markers if m.rule.gates]
            if s.kind is SectionKind.TEARDOWN:  # a teardown gates as 💥, marked or not
                glyphs.append(markers.Marker.DESTRUCTIVE.value)
            for glyph in glyphs:
                r = self.for_gate(glyph, s)
                if r.needs_identities:
                    return s, r
        return None

    def to_json(self) -> dict[str, Any]:
        return {"files": list(self.files), **{t: _rule_json(getattr(self, t)) for t in TABLES}}


def _rule_json(rule: Rule) -> dict[str, Any]:
    return {"approvals": rule.approvals, "self_approval": rule.self_approval,
            "max_valid_for_s": rule.max_valid_for_s}  # fmt: skip


def plan_rule(section: Section) -> Rule:
    """What the plan declares for a gated section: the strictest of its act fences' `approvals=N` and
    `self-approval=no` (docs/approvals.md; the fence's parser has checked the values)."""
    rule = Rule()
    for b in section.act_blocks:
        f = b.fence
        n, own = f.approvals, f.self_approval
        if n is not None or own is not None:
            where = f"the plan's {section_label(section)} fence (line {b.span.first_line})"
            rule = rule.tighten(Rule(n or 1, own is not False, None, (where,)))
    return rule


class PolicyError(ValueError):
    """A policy file that is not one (`line`: 1-based, 0 when unknown)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line


def parse_policy(text: str, name: str) -> Policy:
    """A `.director-approval-policy.toml` (TOML): `[gates]` and `[destructive]`, each with `approvals`,
    `self_approval` and `max_valid_for`; anything else is a PolicyError naming its line."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise PolicyError(0, f"not TOML: {e}") from None
    rules: dict[str, Rule] = {}
    for table, value in data.items():
        if table not in TABLES:
            known = ", ".join(f"[{t}] ({what})" for t, what in TABLES.items())
            raise PolicyError(_line_of(text, table), f"unknown {table!r}: a policy has {known}")
        if not isinstance(value, dict):
            raise PolicyError(_line_of(text, table), f"{table!r} must be a table: [{table}]")
        rules[table] = _rule(text, table, value, f"{name} [{table}]")
    return Policy(rules.get("gates", Rule()), rules.get("destructive", Rule()), (name,))


def _rule(text: str, table: str, value: Mapping[str, Any], where: str) -> Rule:
    rule = Rule(source=(where,))
    for key, v in value.items():
        line = _line_of(text, key)
        if key == "approvals":
            if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_APPROVALS:
                raise PolicyError(line, f"[{table}] approvals: a number from 1 to {MAX_APPROVALS}, not {v!r}")
            rule = Rule(v, rule.self_approval, rule.max_valid_for_s, rule.source)
        elif key == "self_approval":
            if not isinstance(v, bool):
                raise PolicyError(line, f"[{table}] self_approval: true or false, not {v!r}")
            rule = Rule(rule.approvals, v, rule.max_valid_for_s, rule.source)
        elif key == "max_valid_for":
            try:
                seconds = parse_duration(str(v)) if isinstance(v, str) else None
            except ValueError as e:
                raise PolicyError(line, f"[{table}] max_valid_for: {e}") from None
            if seconds is None:
                raise PolicyError(line, f"[{table}] max_valid_for: a duration in quotes (\"7d\"), not {v!r}")
            rule = Rule(rule.approvals, rule.self_approval, seconds, rule.source)
        else:
            raise PolicyError(line, f"[{table}]: unknown {key!r} (known: {', '.join(KEYS)})")
    return rule


def _line_of(text: str, key: str) -> int:
    """The first line that declares `key` (a table or a key): for the error message only."""
    k = re.escape(key)
    pattern = re.compile(rf"^\s*(\[\s*([\w-]+\.)*{k}\s*\]|{k}\s*=)")
    return next((n for n, ln in enumerate(text.splitlines(), start=1) if pattern.match(ln)), 0)


# ------------------------------------------------------------------------------ who is who


def identities(principal: str, fingerprint: str, listed: Iterable[str] = ()) -> frozenset[str]:
    """Everything that names the approver of a verified receipt: its key and every principal the
    allowed-signers file lists for that key (so that one key, or one name, counts once)."""
    names = {f"principal:{p}" for p in (principal, *listed) if p}
    return frozenset({*names, *([f"key:{fingerprint}"] if fingerprint else [])})


def operator_identities(operator: str, principal: str = "", fingerprint: str = "",
                        listed: Iterable[str] = ()) -> frozenset[str]:  # fmt: skip
    """The run's own operator: the name it runs as (`--operator`, the login name), and, when it signs its
    approvals (`--sign-with`), its key and the principals listed for it."""
    return identities(principal, fingerprint, listed) | {f"principal:{operator}"}


@dataclass(frozen=True)
class Counted:
    """Which receipts count together toward a gate's approvals: one per person, in the order offered."""

    counted: tuple[int, ...]  # receipt ids
    same_as: dict[int, int]  # a receipt that does not count -> the counted one by the same person

    def complete(self, rule: Rule) -> bool:
        return len(self.counted) >= rule.approvals


def count(offered: Sequence[tuple[int, frozenset[str]]], rule: Rule) -> Counted:
    """Receipts (id, identities) counted toward `rule`: a receipt whose approver shares a key or a
    principal with one already counted does not count again; at most `rule.approvals` are counted."""
    counted: list[tuple[int, frozenset[str]]] = []
    same: dict[int, int] = {}
    for rid, who in offered:
        if len(counted) >= rule.approvals:
            break
        earlier = next((c for c, w in counted if w & who), None)
        if earlier is not None and rule.approvals > 1:
            same[rid] = earlier
            continue
        counted.append((rid, who))
    return Counted(tuple(c for c, _ in counted), same)

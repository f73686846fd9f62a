"""Inputs and knobs: resolution, marker conditions, knob/realization substitution (pure).

File templates live in `director.plan.templates`; its `expand` and `TemplateError` are re-exported here for
the callers that expand `${VAR}` cells outside templates.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from director.errors import UsageError
from director.plan.markers import TEARDOWN_GATE, gating_order
from director.plan.model import Block, Input, MarkerSpec, Plan, Section, SectionKind
from director.plan.templates import TemplateError as TemplateError
from director.plan.templates import expand as expand

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


# How a knob's value was decided: `--set`, the previous run's resolution, the prompt, the input's default.
Decided = Literal["flag", "previous", "prompt", "default"]


@dataclass(frozen=True)
class Resolution:
    """The resolved knobs and, per knob, how each value was decided."""

    values: dict[str, str]  # knob (as in the plan, e.g. TRIGGER) -> value
    how: dict[str, Decided]  # knob -> how its value was decided


def parse_sets(plan: Plan, sets: list[str]) -> dict[str, str]:
    """`--set knob=value` options -> {KNOB: value}; knob names are case-insensitive; refuses bad values."""
    by_name = {i.knob.lower(): i for i in plan.inputs}
    out: dict[str, str] = {}
    for raw in sets:
        name, eq, value = raw.partition("=")
        if not eq or not name.strip():
            raise UsageError(f"--set {raw!r}: expected KNOB=value")
        inp = by_name.get(name.strip().lower())
        if inp is None:
            known = ", ".join(i.knob.lower() for i in plan.inputs) or "(the plan has no inputs)"
            raise UsageError(f"--set {raw!r}: the plan has no input setting {name.strip()!r}; known: {known}")
        value = value.strip()
        if value not in inp.options:
            raise UsageError(
                f"--set {raw!r}: {value!r} is not an option of input {inp.number} ({inp.question}); "
                f"choose one of: {' / '.join(inp.options)}"
            )
        out[inp.knob] = value
    return out


def resolve(
    plan: Plan,
    given: Mapping[str, str],
    previous: Mapping[str, str] | None,
    ask: Callable[[Input], str] | None,
    *,
    ask_again: bool = False,
) -> Resolution:
    """Resolve every input: a flag wins, then a previous resolution, then the prompt, then the default.

    With `ask_again` (`--reinterview`, or the first apply after a completed teardown) and a prompt, every
    input without a flag is asked again, its previous answer as the default; without a prompt the previous
    answers stand.
    """
    values: dict[str, str] = {}
    how: dict[str, Decided] = {}
    for inp in plan.inputs:
        before = previous.get(inp.knob) if previous else None
        if inp.knob in given:
            values[inp.knob], how[inp.knob] = given[inp.knob], "flag"
        elif before in inp.options and not (ask_again and ask is not None):
            values[inp.knob], how[inp.knob] = str(before), "previous"
        elif ask is not None:
            asked = dataclasses.replace(inp, default=str(before)) if before in inp.options else inp
            values[inp.knob], how[inp.knob] = ask(asked), "prompt"
        else:
            values[inp.knob], how[inp.knob] = inp.default, "default"
    return Resolution(values, how)


def unresolved(
    plan: Plan,
    knob_values: Mapping[str, str],
    session_vars: Mapping[str, str],
    inherited: Callable[[str], str | None],
) -> list[str]:
    """After §0: each knob whose variable the blocks would not see as resolved (the session's value, or
    the one inherited from Director's environment when §0 left it unset), in words; [] when all reach them.

    `--set` and the interview are the only sources of a knob's value: a value that comes from the
    operator's environment instead (a §0 that never assigns the knob, or assigns it only when unset) would
    build other resources than the inputs say, so such a run is refused.
    """
    out: list[str] = []
    for inp in plan.inputs:
        want = knob_values.get(inp.knob)
        if want is None:
            continue
        seen = session_vars.get(inp.knob)
        source = "§0"
        if seen is None:
            seen, source = inherited(inp.knob), "the environment"
        if seen != want:
            got = "unset" if seen is None else f"{inp.knob}={seen} (from {source})"
            out.append(
                f"input {inp.number} resolved {inp.knob}={want}, but after §0 the blocks would see {got}: "
                f"§0 must assign {inp.knob} unconditionally (`export {inp.knob}=\"{inp.default}\"`) so that "
                "Director can set it"
            )
    return out


def marker_applies(spec: MarkerSpec, knobs: Mapping[str, str]) -> bool:
    """Whether a (possibly conditional) marker holds for these knob values."""
    if spec.condition is None:
        return True
    return knobs.get(spec.condition.knob) in spec.condition.values


def markers(section: Section, knobs: Mapping[str, str]) -> tuple[MarkerSpec, ...]:
    """The section's markers that hold for these knobs."""
    return tuple(m for m in section.markers if marker_applies(m, knobs))


def gate_of(section: Section, knobs: Mapping[str, str]) -> MarkerSpec | None:
    """The marker that gates this section for these knobs (a destructive one first: 💥 before 🔴), or None."""
    active = markers(section, knobs)
    for row in gating_order():
        for m in active:
            if m.marker is row.marker:
                return m
    if section.kind is SectionKind.TEARDOWN:
        # A teardown is destructive even if its author forgot the marker.
        return MarkerSpec(TEARDOWN_GATE, None, "teardown")
    return None


def is_check_section(section: Section, knobs: Mapping[str, str]) -> bool:
    """A check section (✔, or only verify blocks): read-only checks that always run."""
    if any(m.rule.check for m in markers(section, knobs)):
        return True
    return bool(section.verify_blocks) and not section.act_blocks and not section.template_blocks


def _assignment_re(name: str) -> re.Pattern[str]:
    # NAME=value where value is "…", '…' or a bare word; not preceded by a name character or `$`.
    return re.compile(rf"(?<![\w$]){re.escape(name)}=(\"[^\"\n]*\"|'[^'\n]*'|[^\s;#]*)")


def substitute_knobs(text: str, knobs: Mapping[str, str]) -> str:
    """Set the resolved knob values in the assignments of a §0 block (`export ENV="dev"` -> `ENV="prod"`)."""
    out_lines = []
    for line in text.split("\n"):
        code, hashmark, comment = _split_comment(line)
        for knob, value in knobs.items():
            code = _assignment_re(knob).sub(f'{knob}="{value}"'.replace("\\", "\\\\"), code)
        out_lines.append(code + hashmark + comment)
    return "\n".join(out_lines)


def _split_comment(line: str) -> tuple[str, str, str]:
    """Split a shell line at an unquoted `#` that starts a comment."""
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t;"):
            return line[:i], "#", line[i + 1 :]
    return line, "", ""


def substitute_realizations(block: Block, realized: Mapping[str, str]) -> str:
    """Replace `VAR="placeholder"  # realized in §N` values with the values realized for VAR."""
    if not block.realizations:
        return block.text
    lines = block.text.split("\n")
    for r in block.realizations:
        value = realized.get(r.var)
        if value is None:
            continue
        idx = r.line - block.body_start
        if 0 <= idx < len(lines):
            replacement = f"{r.var}={_dq(value)}".replace("\\", "\\\\")
            lines[idx] = _assignment_re(r.var).sub(replacement, lines[idx], count=1)
    return "\n".join(lines)


def _dq(value: str) -> str:
    """A double-quoted shell word for a literal value."""
    return '"' + re.sub(r'(["\\$`])', r"\\\1", value) + '"'


def block_text(section: Section, block: Block, knobs: Mapping[str, str], realized: Mapping[str, str]) -> str:
    """The exact text Director runs for a block: knob values in §0, realized placeholders replaced."""
    text = substitute_realizations(block, realized)
    if section.kind is SectionKind.VARIABLES:
        text = substitute_knobs(text, knobs)
    return text


def referenced_vars(text: str) -> list[str]:
    """Names of `$VAR` / `${VAR}` references, in first-seen order."""
    seen: dict[str, None] = {}
    for m in _VAR.finditer(text):
        seen.setdefault(m.group(1) or m.group(2), None)
    return list(seen)


_ASSIGN = re.compile(
    r"(?:^|[\s;(&|])(?:export\s+|local\s+|declare\s+(?:-\w+\s+)*|readonly\s+)?"
    r"([A-Za-z_][A-Za-z0-9_]*)\+?="
)
_LOOP_OR_READ = re.compile(r"\b(?:for|read(?:\s+-\w+)*)\s+([A-Za-z_][A-Za-z0-9_]*)")


def assigned_vars(text: str) -> set[str]:
    """Names a block assigns (`X=…`, `export X=…`, `for X in`, `read X`): its outputs, not its inputs."""
    names = {m.group(1) for m in _ASSIGN.finditer(text)}
    names.update(m.group(1) for m in _LOOP_OR_READ.finditer(text))
    return names


_KV_ONLY = re.compile(r"`?([A-Za-z_][A-Za-z0-9_]*)=([\w./-]+)`?\s+only")


def kv_condition(value_cell: str) -> tuple[str, str] | None:
    """A key/value cell that applies only for one knob value: "(`TRIGGER=http` only)" -> (TRIGGER, http)."""
    m = _KV_ONLY.search(value_cell)
    return (m.group(1), m.group(2)) if m else None

"""Verdicts by contrast: a check judged by the worlds Director has seen it in, never by its words (pure).

Exit status and structure decide first (`director.plan.verify.judge`). A check unit whose failure cannot
show in the block's exit status (`director.plan.bash.units`: no `exit N≠0` on any of its paths, not the
block's last status, no `set -e`), or that printed an exit-0 alternative, is judged by the *path* its run
took -- which of its messages and exits ran, by position -- against the paths Director has seen it take:

- in a world where it held (right after a successful act; for a teardown's check, right after the teardown:
  gone) and in one where it did not (before an act that was needed; before a teardown: present);
- a path seen when it held → it holds; seen when it did not → it fails; never seen → the world changed
  (drift for `check`, an act for `apply`, not known gone for `teardown`);
- right after an act, with the path seen just before it: a different path means the act made it hold (and
  both are learned); the same path beside checks that changed (or a path the block did not reach before)
  holds too, the block having shown the act's effect; when nothing in the block changed, the same path in a
  teardown is not shown gone, and in an apply leaves the check to its structure (what already held need
  not change); a path that decided nothing is remembered as settled (unchanged, never evidence);
- with nothing seen yet, structure is all there is: a pass line by position passes, an exit-0 alternative
  is inconclusive, and lines that are alternatives of an `if`/`case` (or followed by an early `exit 0`)
  cannot be told apart at all: inconclusive. A teardown is never "already gone" on structure alone.

Baselines are kept per block content (`block_key`, comments ignored) and per family: a teardown's
check and a section's check never share what they have seen, because "held" means "gone" for one and
"present" for the other. The rules, with examples, are in `docs/verify-semantics.md`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from director.plan.bash import Unit, VerifyModel, message_regex
from director.plan.bash.trace import RICHER, legacy
from director.plan.verify import CheckResult, Judgement, Verdict, assertion_failed, excerpt, ran_from_output

Path = tuple[int, ...]
World = Literal["held", "not-held", "settled"]
Family = Literal["apply", "teardown"]
Phase = Literal["observe", "after-act"]
_Reading = Literal["pass", "soft", "undecided"]


@dataclass(frozen=True)
class Baseline:
    """The paths one check unit took in the worlds Director knows.

    `settled`: paths it took right after a successful act that did not change them -- what the world looks
    like unchanged since that act, never evidence that the check holds.
    """

    held: frozenset[Path] = frozenset()
    not_held: frozenset[Path] = frozenset()
    settled: frozenset[Path] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.held or self.not_held or self.settled)

    def world_of(self, path: Path) -> World | None:
        """The world `path` was seen in, if any. A check seen only before paths held what its command
        marks saw as they are read now (`bash.trace.RICHER`) is judged by its messages and exits alone until
        it learns anew: in the one world they were seen in (seen in several, they tell nothing)."""
        worlds: tuple[tuple[World, frozenset[Path]], ...] = (
            ("held", self.held), ("not-held", self.not_held), ("settled", self.settled),
        )  # fmt: skip
        for world, paths in worlds:
            if path in paths:
                return world
        if path and path[-1] == RICHER:
            # the marks saw nothing: until they always said that they ran, such a path had no `RICHER`
            for world, paths in worlds:
                if path[:-1] in paths:
                    return world
        if RICHER in path and not any(RICHER in p for _, paths in worlds for p in paths):
            old = legacy(path)
            found = {world for world, paths in worlds if any(legacy(p) == old for p in paths)}
            if len(found) == 1:
                return found.pop()
        return None

    def learned(self, world: World, path: Path) -> Baseline:
        """This baseline with `path` moved into `world` (the world a path was last seen in wins)."""
        sets = {"held": set(self.held), "not-held": set(self.not_held), "settled": set(self.settled)}
        for v in sets.values():
            v.discard(path)
        sets[world].add(path)
        return Baseline(frozenset(sets["held"]), frozenset(sets["not-held"]), frozenset(sets["settled"]))


@dataclass(frozen=True)
class Learned:
    """A path to remember: unit `unit` took `path` in `world`."""

    unit: int
    world: World
    path: Path


@dataclass(frozen=True)
class UnitVerdict:
    """One contrast-judged unit: its verdict, why, the path it took, and the plan line it starts on."""

    unit: int
    verdict: Verdict
    why: str
    path: Path
    line: int


_COMMENT_LINE = re.compile(r"(?m)^[ \t]*#.*\n?")


def block_key(text: str) -> str:
    """The identity a check's baselines are kept under: its code, comment lines and blank lines aside.

    The `# ✔ title` line and remarks do not change what runs, nor the positions of its commands.
    """
    code = "\n".join(ln.rstrip() for ln in _COMMENT_LINE.sub("", text).splitlines() if ln.strip())
    return hashlib.sha256(code.encode("utf-8", "surrogateescape")).hexdigest()


def contrast_units(
    model: VerifyModel, ran: Mapping[int, int], before: Mapping[int, Path] | None = None
) -> list[Unit]:
    """The units judged by contrast: those that cannot fail, and those that took an exit-0 alternative
    (printed a soft failure line, or one of the lines structure cannot tell apart) -- in this run, or
    right before the act this run follows (what the act changed is learned either way)."""
    doubt = {ln.probe for ln in model.lines if ln.polarity == "fail" and not ln.hard} | model.choices
    return [
        u
        for u in model.units
        if not u.can_fail
        or any(ran.get(p, 0) for p in u.lines if p in doubt)
        or (before is not None and any(p in doubt for p in before.get(u.index, ())))
    ]


def _reading(model: VerifyModel, unit: Unit, ran: Mapping[int, int]) -> _Reading:
    """What structure alone says of a unit's run (used only when no world has been seen)."""
    mine = set(unit.lines)
    printed = [ln for ln in model.lines if ln.probe in mine and ran.get(ln.probe, 0)]
    if any(ln.polarity == "fail" and not ln.hard for ln in printed):
        return "soft"
    if any(g.kind == "assertion" and set(g.lines) <= mine and assertion_failed(g, ran) for g in model.guards):
        return "soft"
    if any(ln.probe in model.choices for ln in printed):
        return "undecided"
    return "pass"


def _judge_unit(
    path: Path,
    base: Baseline,
    reading: _Reading,
    *,
    phase: Phase,
    family: Family,
    before: Path | None,
    block_changed: bool = False,
) -> tuple[Verdict, str, World | None]:
    """A contrast unit's verdict, why, and the world to remember its path in (after an act only).

    `block_changed`: after the act, the block as a whole took another path (a unit changed, or was reached
    on one side only).
    """
    present = "when present" if family == "teardown" else "before its act"
    held = "once gone" if family == "teardown" else "when it held"
    seen = base.world_of(path)
    if seen == "held":
        return Verdict.PASSED, f"took the path it took {held}", None
    if seen == "not-held":
        return Verdict.FAILED, f"took the path it took {present}", None
    if phase == "observe":
        if seen == "settled":
            why = "took the path it took right after its last act: unchanged, never seen to change"
            return Verdict.SKIPPED, why, None
        if base:
            return Verdict.INCONCLUSIVE, "took a path never seen before: the world changed", None
        if family == "teardown":
            return Verdict.INCONCLUSIVE, "has never been seen in a torn-down world: not known gone", None
        return (
            *_by_structure(reading, "exits 0 whatever it finds, and has not been seen in a known world yet"),
            None,
        )
    # Right after an act, a path that did not change with it (or one not reached before it).
    same = before is not None and before == path
    if block_changed and ((same and reading != "soft") or before is None):
        # The block showed the act's effect (other checks changed, or it now gets this far): this check
        # was not part of the change, or shows what the world looks like once the act made the block pass.
        if same:
            return (
                Verdict.PASSED,
                "took the same path before and after the act, beside checks that changed",
                "held",
            )
        return Verdict.PASSED, "took a path after the act the block did not reach before it", "held"
    if family == "teardown":
        why = "the same path as when present" if same else "a path not seen before the teardown"
        return Verdict.INCONCLUSIVE, f"took {why}: not shown gone", "settled"
    if not same:
        return (
            *_by_structure(reading, "exits 0 whatever it finds and was not seen before the act"),
            "settled",
        )
    v, why = _by_structure(reading, "took the same path before and after the act: it did not show its effect")
    return v, why + (" (the same before and after the act)" if v is Verdict.PASSED else ""), "settled"


def _by_structure(reading: _Reading, undecided: str) -> tuple[Verdict, str]:
    """What structure alone says: a pass line by position, an exit-0 alternative, or nothing it can tell."""
    if reading == "pass":
        return Verdict.PASSED, "printed its pass line"
    if reading == "soft":
        return Verdict.INCONCLUSIVE, "printed its exit-0 alternative"
    return Verdict.INCONCLUSIVE, undecided


def _canonical(model: VerifyModel) -> dict[int, int]:
    """Unit -> the first unit with the same messages and exits (calls of one function share what they
    learn: the path of `check a` and of `check b` mean the same)."""
    first: dict[tuple[int, ...], int] = {}
    return {u.index: first.setdefault(u.probes, u.index) for u in model.units}


def _learn(
    units: Sequence[Unit],
    paths: Mapping[int, Path],
    before: Mapping[int, Path],
    canon: Mapping[int, int],
    local: dict[int, Baseline],
    changed: set[int],
) -> list[Learned]:
    """After an act: each unit whose path changed from the one seen before it shows the act's effect (its
    index goes into `changed`)."""
    learned: list[Learned] = []
    for u in units:
        c, b, p = canon[u.index], before.get(u.index), paths[u.index]
        base = local.get(c, Baseline())
        if b is None or b == p or base.world_of(b) == "held" or base.world_of(p) == "not-held":
            continue
        changed.add(u.index)
        learned += [Learned(c, "not-held", b), Learned(c, "held", p)]
        local[c] = base.learned("not-held", b).learned("held", p)
    return learned


def judge(
    model: VerifyModel,
    j: Judgement,
    ran: Mapping[int, int],
    paths: Mapping[int, Path] | None,
    output: Sequence[str],
    baselines: Mapping[int, Baseline],
    *,
    phase: Phase,
    family: Family,
    before: Mapping[int, Path] | None = None,
) -> tuple[Judgement, list[UnitVerdict], list[Learned]]:
    """`j` (the verdict by exit status and structure) refined by contrast; what to learn from this run.

    A failed or skipped `j` stands (exit status first); so does any run without a trace (`paths` None).
    """
    if paths is None or j.verdict in (Verdict.FAILED, Verdict.SKIPPED):
        return j, [], []
    units = [u for u in contrast_units(model, ran, before) if u.index in paths]
    if not units:
        return j, [], []
    canon = _canonical(model)
    local = dict(baselines)
    changed: set[int] = set()
    learned = _learn(units, paths, before, canon, local, changed) if phase == "after-act" and before else []
    # The block as a whole took another path with the act: a unit (any, also one whose exit status
    # decides) changed, or was reached on one side only.
    block_changed = before is not None and any(before.get(u.index) != paths.get(u.index) for u in model.units)
    verdicts: list[UnitVerdict] = []
    for u in units:
        v, why, world = _judge_unit(
            paths[u.index],
            local.get(canon[u.index], Baseline()),
            _reading(model, u, ran),
            phase=phase,
            family=family,
            before=None if before is None else before.get(u.index),
            block_changed=block_changed,
        )
        if u.index in changed:
            why = "changed its path with the act"
        elif world is not None:
            learned.append(Learned(canon[u.index], world, paths[u.index]))
        verdicts.append(UnitVerdict(u.index, v, why, paths[u.index], model.line_offset + u.row + 1))
    judged_lines = {p for u in units for p in u.lines}
    # structure's own doubts outside the judged units (an exit-0 alternative elsewhere) still count
    rest_doubt = j.verdict is Verdict.INCONCLUSIVE and any(
        ln.polarity == "fail" and not ln.hard and ran.get(ln.probe, 0) and ln.probe not in judged_lines
        for ln in model.lines
    )
    worst = next(
        (
            uv
            for v in (Verdict.FAILED, Verdict.INCONCLUSIVE, Verdict.SKIPPED)
            for uv in verdicts
            if uv.verdict is v
        ),
        None,
    )
    printed = _printed(model, verdicts, output)
    if worst is not None:
        said = f" (`{excerpt(printed[worst.unit], 60)}`)" if printed[worst.unit] else ""
        verdict, reason = worst.verdict, f"the check at plan line {worst.line}{said} {worst.why}"
        observed = printed[worst.unit] or reason
    elif rest_doubt:
        verdict, reason, observed = j.verdict, j.reason, j.observed
    else:
        verdict, reason = (
            Verdict.PASSED,
            "exit 0; " + "; ".join(f"the check at plan line {uv.line} {uv.why}" for uv in verdicts),
        )
        observed = " · ".join(p for p in (printed[uv.unit] for uv in verdicts) if p) or j.observed
    labels = _relabelled(model, j, verdicts)
    if verdict is Verdict.FAILED:
        learned = []  # an act after which a check fails was not a successful act: nothing held
    refined = replace(j, verdict=verdict, reason=reason, observed=excerpt(observed), labels=labels)
    return refined, verdicts, learned


def untraced(
    model: VerifyModel, j: Judgement, output: Sequence[str], *, phase: Phase, family: Family
) -> Judgement:
    """`j` for a run without a whole trace (the block turned tracing off, closed its descriptors, or ended
    without its EXIT capture): its path is not known, so each check that exits 0 whatever it finds is judged
    as one never seen in a known world (`_judge_unit` with nothing seen) -- by structure, and a teardown's
    check never "already gone" on structure alone. Never passed on its words."""
    if j.verdict is not Verdict.PASSED:
        return j
    ran = ran_from_output(model, output)
    verdicts: list[UnitVerdict] = []
    for u in contrast_units(model, ran):
        reading = _reading(model, u, ran)
        v, why, _ = _judge_unit((), Baseline(), reading, phase=phase, family=family, before=None)
        if v is not Verdict.PASSED:
            took = tuple(p for p in u.lines if ran.get(p, 0))
            verdicts.append(UnitVerdict(u.index, v, f"{why} (its run left no whole trace)", took,
                                        model.line_offset + u.row + 1))  # fmt: skip
    if not verdicts:
        return j
    first = verdicts[0]  # with nothing seen, every one is inconclusive: the first is named
    printed = _printed(model, [first], output)[first.unit]
    said = f" (`{excerpt(printed, 60)}`)" if printed else ""
    return replace(
        j,
        verdict=first.verdict,
        reason=f"the check at plan line {first.line}{said} {first.why}",
        observed=excerpt(printed or j.observed),
        labels=_relabelled(model, j, verdicts),
    )


def _relabelled(model: VerifyModel, j: Judgement, verdicts: Sequence[UnitVerdict]) -> dict[str, CheckResult]:
    """`j`'s labels, each of a judged unit's lines given that unit's verdict."""
    labels = dict(j.labels)
    for uv in verdicts:
        unit = model.units[uv.unit]
        for ln in model.lines:
            mine = ln.probe in unit.span if ln.via else ln.probe in unit.lines
            if ln.label and mine and ln.label in labels:
                labels[ln.label] = CheckResult(uv.verdict, labels[ln.label].observed)
    return labels


def _printed(model: VerifyModel, verdicts: Sequence[UnitVerdict], output: Sequence[str]) -> dict[int, str]:
    """The lines each judged unit printed in this run, read in order: units run one after another, so two
    calls of one function each get their own line."""
    lines = [o.strip() for o in output]
    cursor = 0
    out: dict[int, str] = {}
    for uv in verdicts:
        found: list[str] = []
        for ln in model.lines:
            if ln.probe not in uv.path:
                continue
            rx = message_regex(ln.message.strip())
            hit = next((i for i in range(cursor, len(lines)) if rx.fullmatch(lines[i])), None)
            if hit is not None:
                found.append(lines[hit])
                cursor = max(cursor, hit + 1)
        out[uv.unit] = " · ".join(dict.fromkeys(found))
    return out

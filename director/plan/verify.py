"""Verify semantics: what a verify block's run says, decided by its structure (pure).

`bash.verify_model` reads the block: its pass and failure lines, assertions, preconditions and
alternatives. `judge` combines that with what the run did -- its exit status, the commands its trace
shows it executed, the lines it printed -- into a verdict for the block and for each labelled check.
The rules, one by one, are in `docs/verify-semantics.md`; each rule below names its number there.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from director.plan.bash import Guard, ReportLine, VerifyModel, message_regex
from director.plan.bash.trace import via_key


class Verdict(enum.StrEnum):
    """What a check (or a whole verify block) established."""

    PASSED = "passed"
    FAILED = "failed"
    INCONCLUSIVE = "inconclusive"  # an exit-0 alternative printed, or an unenforced check did not hold
    SKIPPED = "skipped"  # its precondition was false: nothing was checked
    NOT_RUN = "not-run"  # the run never reached it

    @property
    def holds(self) -> bool:
        """Only a pass is evidence that something holds."""
        return self is Verdict.PASSED


# Why Director killed a verify block: it ran out of time, waited for keyboard input, or Ctrl-C.
Stopped = Literal["timeout", "input", "interrupted"]


@dataclass(frozen=True)
class Evidence:
    """What one run of a verify block did.

    `ran` maps the model's probes to how often the trace saw them run; None when the run could not be
    traced (then the printed lines are the only evidence). `stopped` says why Director killed it.
    """

    exit_code: int | None
    output: Sequence[str] = ()  # its lines, control sequences removed
    ran: Mapping[int, int] | None = None
    stopped: Stopped | None = None


@dataclass(frozen=True)
class CheckResult:
    """One labelled check's verdict and a short true excerpt of what it printed."""

    verdict: Verdict
    observed: str = ""


@dataclass(frozen=True)
class Judgement:
    """A verify block's verdict, why, and each labelled check's."""

    verdict: Verdict
    reason: str
    observed: str
    labels: dict[str, CheckResult] = field(default_factory=dict)
    printed_pass: tuple[str, ...] = ()
    printed_fail: tuple[str, ...] = ()

    @property
    def holds(self) -> bool:
        return self.verdict is Verdict.PASSED


def excerpt(text: str, limit: int = 80) -> str:
    """A short single-line excerpt for a table cell."""
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def printed_line(line: ReportLine, output: Sequence[str]) -> str | None:
    rx = message_regex(line.message.strip())
    return next((o for o in output if rx.fullmatch(o.strip())), None)


def ran_from_output(model: VerifyModel, output: Sequence[str]) -> dict[int, int]:
    """Without a trace: a report line ran when the output has a line it prints."""
    return {ln.probe: 1 for ln in model.lines if printed_line(ln, output) is not None}


def _guard_ran(g: Guard, ran: Mapping[int, int]) -> bool:
    return any(ran.get(p, 0) for p in g.cond)


def _skipped(g: Guard, ran: Mapping[int, int]) -> bool:
    """Rule 4: a precondition whose condition ran and whose body did not."""
    return g.kind == "precondition" and _guard_ran(g, ran) and not any(ran.get(p, 0) for p in g.body)


def assertion_failed(g: Guard, ran: Mapping[int, int]) -> bool:
    """Rule 3: the condition ran and its pass line did not print (on some iteration, in a for-each loop)."""
    if g.kind != "assertion" or not _guard_ran(g, ran):
        return False
    printed = sum(ran.get(p, 0) for p in g.lines)
    if printed == 0:
        return True
    if g.loop is not None and not g.poll:
        return printed < ran.get(g.loop, 0)
    return False


def judge(model: VerifyModel, ev: Evidence) -> Judgement:
    """The verdict of one run of a verify block (rules 1–7 of docs/verify-semantics.md)."""
    output = [o.rstrip() for o in ev.output]
    traced = ev.ran is not None and model.traceable
    ran: Mapping[int, int] = ev.ran if traced and ev.ran is not None else ran_from_output(model, output)
    lines_ran = [ln for ln in model.lines if ran.get(ln.probe, 0) and not ln.via]
    if ev.exit_code == 0 and ev.stopped is None:
        # A hard failure line is followed by an exit non-zero: in a block that exited 0 it did not run
        # (the trace cannot tell two identical `echo`s on one line apart; the exit status can).
        lines_ran = [ln for ln in lines_ran if not (ln.polarity == "fail" and ln.hard)]
    pass_ran = [ln for ln in lines_ran if ln.polarity == "pass"]
    fail_ran = [ln for ln in lines_ran if ln.polarity == "fail"]
    hard = [ln for ln in fail_ran if ln.hard]
    soft = [ln for ln in fail_ran if not ln.hard]
    failed_asserts = [g for g in model.guards if traced and assertion_failed(g, ran)]
    skipped = [g for g in model.guards if traced and _skipped(g, ran)]
    printed_pass = tuple(p for ln in pass_ran if (p := printed_line(ln, output)) is not None)
    printed_fail = tuple(p for ln in fail_ran if (p := printed_line(ln, output)) is not None)
    last = next((o for o in reversed(output) if o.strip()), "")

    exit_code = ev.exit_code
    tg = model.trailing_guard
    if (
        exit_code == 1
        and ev.stopped is None
        and traced
        and tg is not None
        and model.guards[tg] in skipped
        and not fail_ran
    ):
        exit_code = 0  # rule 4: bash's exit 1 is the false condition of the block's last precondition

    if ev.stopped is not None:
        verdict, reason = Verdict.FAILED, {"timeout": "timed out", "input": "waited for keyboard input"}.get(
            ev.stopped, "interrupted"
        )
    elif exit_code != 0:
        verdict = Verdict.FAILED  # rule 1
        reason = f"exit {exit_code}" if exit_code is not None else "did not run"
    elif hard:
        verdict, reason = Verdict.FAILED, f"printed its failure line `{hard[0].message}`"
    elif soft:
        verdict = Verdict.INCONCLUSIVE  # rule 2: an exit-0 alternative printed
        reason = f"printed its exit-0 alternative `{soft[0].message}`"
    elif failed_asserts:
        g = failed_asserts[0]
        msg = next((ln.message for ln in model.lines if ln.probe in g.lines), "")
        verdict = Verdict.INCONCLUSIVE  # rule 3, when the block goes on and exits 0
        reason = (
            f"the condition of `{msg}` (plan line {model.line_offset + g.row + 1}) did not hold "
            "and the block went on"
        )
    elif skipped and _only_skips(model, ran, skipped):
        verdict, reason = Verdict.SKIPPED, _skip_reason(skipped, model)  # rule 7
    else:
        verdict, reason = Verdict.PASSED, "exit 0"

    if verdict is Verdict.PASSED:
        observed = " · ".join(printed_pass) if printed_pass else (last or "exit 0")
    elif verdict is Verdict.SKIPPED:
        observed = reason
    else:
        observed = (printed_fail[0] if printed_fail else last) or reason
    labels = _labels(model, ran, traced, verdict, output, skipped, failed_asserts, exit_code)
    return Judgement(verdict, reason, excerpt(observed), labels, printed_pass, printed_fail)


def _silent_pass(
    mine: Sequence[ReportLine], model: VerifyModel, ran: Mapping[int, int], skipped: set[int]
) -> bool:
    """A label that has only failure lines (`probe || { echo "2: bad"; exit 1; }`) passed when its statement
    ran and none of them printed: the check is silent when it holds."""
    probes = {ln.probe for ln in mine}
    if not mine or any(ln.polarity != "fail" for ln in mine) or probes & skipped:
        return False
    for u in model.units:
        if probes <= set(u.lines):
            exits = {p for p in u.probes if p not in u.lines}
            return any(ran.get(p, 0) for p in u.span if p not in probes and p not in exits)
    return False


def _not_chosen(probes: set[int], model: VerifyModel, ran: Mapping[int, int]) -> bool:
    """Whether these lines all stand in one branch of an if/case, none of them ran, and another branch did."""
    if any(ran.get(p, 0) for p in probes):
        return False
    for branches in model.alternatives:
        mine = [i for i, b in enumerate(branches) if probes <= b]
        if mine and any(ran.get(p, 0) for i, b in enumerate(branches) if i != mine[0] for p in b):
            return True
    return False


def _only_skips(model: VerifyModel, ran: Mapping[int, int], skipped: list[Guard]) -> bool:
    """Rule 7: every top-level statement was inert or a skipped precondition (nothing was checked)."""
    if not skipped:
        return False
    skipped_ids = {model.guards.index(g) for g in skipped}
    return all(top == "inert" or (isinstance(top, int) and top in skipped_ids) for top in model.top)


def _skip_reason(skipped: list[Guard], model: VerifyModel) -> str:
    rows = ", ".join(str(model.line_offset + g.row + 1) for g in skipped[:3])
    return f"skipped: precondition false (plan line {rows})"


def _labels(
    model: VerifyModel,
    ran: Mapping[int, int],
    traced: bool,
    block: Verdict,
    output: Sequence[str],
    skipped: list[Guard],
    failed_asserts: list[Guard],
    exit_code: int | None,
) -> dict[str, CheckResult]:
    """Rules 5 and 6: a label passes when any of its alternatives printed its pass line, never by absence."""
    out: dict[str, CheckResult] = {}
    labels = list(dict.fromkeys(ln.label for ln in model.lines if ln.label))
    skipped_lines = {p for g in skipped for p in g.body}
    failed_lines = {p for g in failed_asserts for p in g.lines}
    for label in labels:
        mine = [ln for ln in model.lines if ln.label == label]
        if any(ln.via for ln in mine):
            out[label] = _called_label(model, [ln for ln in mine if ln.via], ran, skipped_lines, exit_code)
            continue
        if _not_chosen({ln.probe for ln in mine}, model, ran):
            continue  # rule 5: the branch its lines stand in did not run, another did
        fails = [ln for ln in mine if ln.polarity == "fail" and ran.get(ln.probe, 0)]
        passes = [ln for ln in mine if ln.polarity == "pass" and ran.get(ln.probe, 0)]
        if fails:
            shown = printed_line(fails[0], output) or fails[0].message
            v = Verdict.FAILED if (fails[0].hard or exit_code != 0) else Verdict.INCONCLUSIVE
            out[label] = CheckResult(v, excerpt(shown))
        elif any(ln.probe in failed_lines for ln in mine):
            out[label] = CheckResult(Verdict.FAILED if exit_code != 0 else Verdict.INCONCLUSIVE, "")
        elif passes:
            shown = printed_line(passes[0], output) or passes[0].message
            out[label] = CheckResult(Verdict.PASSED, excerpt(shown))
        elif traced and _silent_pass(mine, model, ran, skipped_lines):
            out[label] = CheckResult(Verdict.PASSED, "held: its failure line did not print")
        elif traced and mine and all(ln.probe in skipped_lines for ln in mine if ln.polarity == "pass"):
            out[label] = CheckResult(Verdict.SKIPPED, "skipped: precondition false")
        else:
            out[label] = CheckResult(Verdict.NOT_RUN, "")
    return out


def _called_label(
    model: VerifyModel,
    calls: list[ReportLine],
    ran: Mapping[int, int],
    skipped: set[int],
    exit_code: int | None,
) -> CheckResult:
    """A label passed to a function (`pruefe "1: …" cmd`): decided by the function's lines that ran during
    the call -- a failure line fails it (inconclusive when the block went on to exit 0 and the line does
    not end it), a pass line passes it, and a function that prints only on failure passes it silently."""
    fails = [c for c in calls if ran.get(via_key(c.probe, "fail"), 0)]
    if fails:
        hard = any(
            ln.hard for c in fails for ln in model.lines if ln.probe in c.via and ln.polarity == "fail"
        )
        verdict = Verdict.FAILED if (hard or exit_code != 0) else Verdict.INCONCLUSIVE
        return CheckResult(verdict, excerpt(calls[0].message))
    if any(ran.get(via_key(c.probe, "pass"), 0) for c in calls):
        return CheckResult(Verdict.PASSED, excerpt(calls[0].message))
    if all(c.probe in skipped for c in calls):
        return CheckResult(Verdict.SKIPPED, "skipped: precondition false")
    quiet = all(ln.polarity == "fail" for c in calls for ln in model.lines if ln.probe in c.via)
    if quiet and any(ran.get(c.probe, 0) for c in calls):
        return CheckResult(Verdict.PASSED, "held: its failure line did not print")
    return CheckResult(Verdict.NOT_RUN, "")

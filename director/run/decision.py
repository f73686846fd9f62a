"""One decision per section: what is known of it in, in sync / act (behind its gate) / verify only / blocked
out, with the reasons (pure).

`apply` (`sections.apply_section`, the teardown), `plan` and `check` (`preview.Preview.run`) gather the
facts their own way (a run's journal and session, or a preview's) and ask this one function, so that "`plan`
says what `apply` will do" holds by construction, not by care.

The rules (DESIGN: "Observe before act", "What Director promises"):
- §0 runs in every run (its values feed the others), never gated;
- a ✔ section's checks always run (verify only), once per run;
- an act that was running when Director died or was interrupted runs again, whatever an observation says
  (what it started is stopped first: `run.processes`); so does one whose act steps already ran in this
  run but whose verify did not;
- otherwise a section whose observation passes (or cannot tell: a skipped one is no evidence, so only the
  journal says it is unchanged -- and only a success a check confirmed: one whose check after the act was
  inconclusive is no evidence either, so its act runs again, as under plain bash) and whose fingerprint
  equals its last success since the last teardown is in sync; a section without a verify block is
  memoized by its fingerprint alone; a file template that differs on disk is a change whatever the
  observation says;
- everything else acts, behind its gate when a 🔴/💥 applies for these inputs;
- a teardown's observation that passes says "already gone" (unless its act was interrupted: it runs again,
  as any act does); anything else tears down behind its gate;
- `plan`/`check` only: behind a gate apply stops at, or behind an earlier section that acts while this
  one's observation did not hold, a section is blocked (its outcome waits for that one).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from director.plan import knobs
from director.plan.model import Section, SectionKind
from director.plan.verify import Verdict


class Kind(enum.StrEnum):
    """How a section runs."""

    VARIABLES = "variables"  # §0: runs in every run, never gated
    PLAIN = "plain"  # acts, no verify block: memoized by its fingerprint
    OBSERVED = "observed"  # acts and verifies: observe before act
    CHECK = "check"  # ✔ checks only (and Requires-discovery): always run
    TEARDOWN = "teardown"  # observe first: gone, or the destructive act


class Action(enum.StrEnum):
    """What happens to the section."""

    IN_SYNC = "in-sync"
    ACT = "act"  # the act (behind its gate, if one applies), then the verify
    VERIFY_ONLY = "verify-only"
    BLOCKED = "blocked"  # plan/check: behind a section that acts first, or a gate apply stops at


def kind_of(section: Section, values: Mapping[str, str]) -> Kind:
    """What kind of section it is for the decision (apply, teardown and preview read it alike)."""
    if section.kind is SectionKind.VARIABLES:
        return Kind.VARIABLES
    if section.kind is SectionKind.TEARDOWN:
        return Kind.TEARDOWN
    if knobs.is_check_section(section, values):
        return Kind.CHECK
    return Kind.OBSERVED if section.verify_blocks else Kind.PLAIN


@dataclass(frozen=True)
class Facts:
    """What is known of a section when it is reached (the observation once made, if one is needed)."""

    kind: Kind
    fingerprint: str
    completed_here: bool = False  # it succeeded earlier in this run with this fingerprint
    last_fingerprint: str | None = None  # its last success since the last teardown that acted
    last_confirmed: bool = True  # that success's checks after its act were conclusive (none inconclusive)
    torn_down: bool = False  # it succeeded before the last teardown that acted (that memory is void)
    act_interrupted: bool = False  # an attempt of its act was running when Director died or was interrupted
    acts_done_here: bool = False  # its act steps finished in this run, its verify did not (resumed)
    observed: Verdict | None = None  # its observation; None when it was not observed
    observed_reason: str = ""
    template_drift: tuple[str, ...] = ()  # the reasons its regenerated files differ on disk
    changes: tuple[str, ...] = ()  # what changed since its last success, in words (`reasons.changes`)
    replaces: tuple[str, ...] = ()  # identities this run replaces: `WORKER orders-dev → orders-stg`
    gated: bool = False  # a 🔴/💥 gate applies to it for these inputs
    waits: bool = False  # plan/check: no approval in hand, so apply would stop at its gate
    behind: str | None = None  # plan/check: the first earlier section that acts
    stopped_at: str | None = None  # plan/check: the earlier gate apply stops at

    @property
    def unchanged(self) -> bool:
        """Its fingerprint equals its last success (in this run, or since the last teardown)."""
        return self.completed_here or (
            self.last_fingerprint is not None and self.last_fingerprint == self.fingerprint
        )

    @property
    def ever_succeeded(self) -> bool:
        return self.completed_here or self.last_fingerprint is not None


@dataclass(frozen=True)
class Decision:
    """The outcome for one section, with its reasons (why it acts) or its detail (why it does not)."""

    action: Action
    reasons: tuple[str, ...] = ()  # why it acts (the gate panel, `plan`, the verdict's detail)
    detail: str = ""  # why it is in sync, or verifies only, in words
    rerun: str | None = None  # why a section that succeeded before acts again (journaled on its steps)
    gated: bool = False  # the act waits behind its 🔴/💥 gate
    waits: bool = False  # plan/check: apply would stop at that gate
    quiet: bool = False  # §0 whose values are unchanged: said as in sync although it runs

    @property
    def acts(self) -> bool:
        return self.action is Action.ACT


INTERRUPTED = (
    "its act was interrupted before it finished (Director died or was stopped): it runs again, what it "
    "started stopped first"
)
RESUMED = "its act steps already ran in this run; its verify did not (resumed)"


def must_observe(f: Facts) -> bool:
    """Whether the section's verify runs first, as an observation (it leaves no trace in the session).

    Also before an interrupted act runs again: the observation decides nothing there (the act runs
    whatever it says), but it is the world before this attempt, which the verify after it is contrasted
    with -- without it a check that exits 0 whatever it finds has no before and ends unconfirmed. Not once
    this run's act steps ran (resumed): what the verify would see then is already the world after."""
    if f.kind not in (Kind.OBSERVED, Kind.TEARDOWN):
        return False
    return not f.acts_done_here


UNCONFIRMED = "its last success was never confirmed (a check after its act was inconclusive)"


def _holds(f: Facts) -> bool:
    """The observation is no evidence against the section: it passed, or could not tell (skipped) while
    its last success was confirmed (an unconfirmed success is no evidence for it either)."""
    return f.observed is Verdict.PASSED or (f.observed is Verdict.SKIPPED and f.last_confirmed)


def _observed_words(f: Facts) -> str:
    if f.observed is None or _holds(f):
        return ""
    if f.observed is Verdict.SKIPPED:  # cannot tell, after a success never confirmed
        return f"its verify cannot tell ({f.observed_reason or 'skipped'}), and {UNCONFIRMED}"
    return f"its verify {f.observed.value}" + (f" ({f.observed_reason})" if f.observed_reason else "")


def why_acts(f: Facts) -> tuple[str, ...]:
    """The reasons a section acts: never applied, what changed, a file on disk, the observation, an
    interrupted act, what it replaces."""
    why: list[str] = []
    if f.act_interrupted:
        why.append(INTERRUPTED)
    if f.acts_done_here:
        why.append(RESUMED)
    if not f.ever_succeeded:
        why.append("torn down since its last success" if f.torn_down else "never applied")
    elif not f.unchanged:
        why.extend(f.changes or ("changed since its last success",))
    why.extend(f.template_drift)
    observed = _observed_words(f)
    if observed:
        why.append(f"observed: {observed}")
    if f.replaces and f.ever_succeeded and not f.unchanged:
        why.extend(replace_words(f.replaces))
    return tuple(dict.fromkeys(why))


def replace_words(replaces: Sequence[str]) -> tuple[str, ...]:
    """`replace: WORKER orders-dev → orders-stg (-/+)`, and what happens to the old one."""
    return tuple(
        f"replace: {r} (-/+): the old one is left as it is (recorded as existing); `director teardown` "
        "removes it"
        for r in replaces
    )


def _blocked(f: Facts, d: Decision) -> Decision:
    """plan/check: an act behind a gate apply stops at, or behind an earlier section that acts while this
    one's observation did not hold, waits for that one (apply never passes these facts)."""
    if f.stopped_at is not None:
        return Decision(Action.BLOCKED, d.reasons, f"behind {f.stopped_at}", d.rerun, d.gated)
    if f.behind is not None and f.observed is not Verdict.PASSED and not d.waits:
        return Decision(Action.BLOCKED, d.reasons, f"behind {f.behind}", d.rerun, d.gated)
    return d


def decide(f: Facts) -> Decision:
    """The one decision for a section (see the module's rules)."""
    if f.kind is Kind.VARIABLES:
        if f.completed_here:
            return Decision(Action.IN_SYNC, detail="variables set earlier in this run")
        detail = "variables set; unchanged since its last success"
        return Decision(Action.ACT, quiet=f.unchanged, detail=detail)
    if f.kind is Kind.CHECK:
        if f.completed_here:
            return Decision(Action.IN_SYNC, detail="verified earlier in this run")
        return Decision(Action.VERIFY_ONLY)
    if f.kind is Kind.TEARDOWN:
        if not (f.acts_done_here or f.act_interrupted) and f.observed is Verdict.PASSED:
            return Decision(Action.IN_SYNC, detail="already gone: nothing to delete")
        why = [INTERRUPTED] if f.act_interrupted else []
        why += [RESUMED] if f.acts_done_here else []
        if f.observed is not None and f.observed is not Verdict.PASSED:
            why.append(f"observed: its verify {f.observed.value} ({f.observed_reason or 'not gone'})")
        return Decision(Action.ACT, tuple(why), gated=f.gated, waits=f.gated and f.waits)
    in_sync = not (f.act_interrupted or f.acts_done_here or f.template_drift) and f.unchanged
    if f.kind is Kind.PLAIN and in_sync:
        return Decision(Action.IN_SYNC, detail="unchanged since its last success")
    if f.kind is Kind.OBSERVED and in_sync and _holds(f):
        detail = (
            "observed; unchanged since its last success"
            if f.observed is Verdict.PASSED
            else f"unchanged since its last success; not observable ({f.observed_reason})"
        )
        return Decision(Action.IN_SYNC, detail=detail)
    rerun = None  # journaled on the act's steps: why an observed section that succeeded before acts again
    if f.kind is Kind.OBSERVED and f.ever_succeeded and not (f.act_interrupted or f.acts_done_here):
        rerun = "observed-missing" if f.unchanged else "changed"
    d = Decision(Action.ACT, why_acts(f), rerun=rerun, gated=f.gated, waits=f.gated and f.waits)
    return _blocked(f, d)

"""The worlds a run has seen its checks in: baselines read from the journal, paths learned after an act.

`director.plan.contrast` judges a check unit by the paths it took in known worlds; this module is its
effect edge. `Worlds` reads a check's baselines once per invocation (per block content and family),
remembers the paths each check took when observed before its act (the "not held" or "present" world of
this run), and writes what an act taught (`learn`), so that the next `check`, `apply` or `teardown`
-- here or on another machine sharing the state -- judges by it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from director.plan.contrast import Baseline, Family, Learned, Path
from director.plan.model import Section, SectionKind
from director.state.store import StateStore
from director.state.worlds import SeenPath


def family_of(section: Section) -> Family:
    """A teardown's checks hold when things are gone; every other section's when they exist."""
    return "teardown" if section.kind is SectionKind.TEARDOWN else "apply"


OBSERVED = "check-observed"  # event: the paths a check took when observed before its act, in this run


@dataclass
class Worlds:
    """One invocation's view of the worlds seen: baselines (read once) and this run's observations.

    With `run_id` (a run, not a preview), an observation is also journaled: a run resumed after the act
    (killed or stopped between act and verify) contrasts its verify with the observation its run made
    before the act, in an earlier invocation."""

    journal: StateStore
    run_id: int | None = None
    _baselines: dict[tuple[str, Family], dict[int, Baseline]] = field(default_factory=dict)
    observed: dict[tuple[str, Family], dict[int, Path]] = field(default_factory=dict)
    _journaled: dict[tuple[str, Family], dict[int, Path]] | None = None

    def baselines(self, key: str, family: Family) -> dict[int, Baseline]:
        """Unit -> the paths it took in the known worlds, for this check's content and family."""
        if (key, family) not in self._baselines:
            base: dict[int, Baseline] = {}
            for s in self.journal.seen_paths(key, family):
                base[s.unit] = base.get(s.unit, Baseline()).learned(s.world, s.path)
            self._baselines[(key, family)] = base
        return self._baselines[(key, family)]

    def before(self, key: str, family: Family) -> Mapping[int, Path] | None:
        """The paths this check took when first observed in this run (the world before the run's first
        attempt of the act), if it was: in this invocation, or (the run resumed) in an earlier one."""
        return self._earlier().get((key, family), self.observed.get((key, family)))

    def saw(self, key: str, family: Family, paths: Mapping[int, Path]) -> None:
        """Remember an observation's paths, to contrast with the run after the act (journaled for a run).
        The first observation in a run is the one kept: an attempt of the act that was interrupted may
        already have changed what a later observation sees."""
        if self.before(key, family) is not None:
            return
        self.observed[(key, family)] = dict(paths)
        if self.run_id is not None:
            data = {"key": key, "family": family, "paths": {str(u): list(p) for u, p in paths.items()}}
            self.journal.record_event(self.run_id, OBSERVED, data)

    def _earlier(self) -> dict[tuple[str, Family], dict[int, Path]]:
        """The observations this run journaled in earlier invocations (read once; the first wins)."""
        if self._journaled is None:
            self._journaled = {}
            for ev in self.journal.events(self.run_id, OBSERVED) if self.run_id is not None else ():
                fam: Family = "teardown" if ev.data.get("family") == "teardown" else "apply"
                seen = dict(ev.data.get("paths") or {})
                paths = {int(u): tuple(int(x) for x in p) for u, p in seen.items()}
                self._journaled.setdefault((str(ev.data.get("key")), fam), paths)
        return self._journaled

    def learn(self, run_id: int, key: str, family: Family, learned: Sequence[Learned]) -> None:
        """Record what an act taught (journal first, then this invocation's cache)."""
        if not learned:
            return
        self.journal.learn_paths(run_id, key, family, [SeenPath(x.unit, x.world, x.path) for x in learned])
        base = self.baselines(key, family)
        for x in learned:
            base[x.unit] = base.get(x.unit, Baseline()).learned(x.world, x.path)

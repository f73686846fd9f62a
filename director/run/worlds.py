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


@dataclass
class Worlds:
    """One invocation's view of the worlds seen: baselines (read once) and this run's observations."""

    journal: StateStore
    _baselines: dict[tuple[str, Family], dict[int, Baseline]] = field(default_factory=dict)
    observed: dict[tuple[str, Family], dict[int, Path]] = field(default_factory=dict)

    def baselines(self, key: str, family: Family) -> dict[int, Baseline]:
        """Unit -> the paths it took in the known worlds, for this check's content and family."""
        if (key, family) not in self._baselines:
            base: dict[int, Baseline] = {}
            for s in self.journal.seen_paths(key, family):
                base[s.unit] = base.get(s.unit, Baseline()).learned(s.world, s.path)
            self._baselines[(key, family)] = base
        return self._baselines[(key, family)]

    def before(self, key: str, family: Family) -> Mapping[int, Path] | None:
        """The paths this check took when observed earlier in this run (before its act), if it was."""
        return self.observed.get((key, family))

    def saw(self, key: str, family: Family, paths: Mapping[int, Path]) -> None:
        """Remember an observation's paths, to contrast with the run after the act."""
        self.observed[(key, family)] = dict(paths)

    def learn(self, run_id: int, key: str, family: Family, learned: Sequence[Learned]) -> None:
        """Record what an act taught (journal first, then this invocation's cache)."""
        if not learned:
            return
        self.journal.learn_paths(run_id, key, family, [SeenPath(x.unit, x.world, x.path) for x in learned])
        base = self.baselines(key, family)
        for x in learned:
            base[x.unit] = base.get(x.unit, Baseline()).learned(x.world, x.path)

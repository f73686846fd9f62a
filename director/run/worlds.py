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
from typing import Any

from director.plan.contrast import Baseline, Family, Learned, Path
from director.plan.model import Section, SectionKind
from director.state.store import StateStore
from director.state.worlds import SeenPath


def family_of(section: Section) -> Family:
    """A teardown's checks hold when things are gone; every other section's when they exist."""
    return "teardown" if section.kind is SectionKind.TEARDOWN else "apply"


OBSERVED = "observed"  # an act step's flag: the paths its run's checks took when first observed


@dataclass
class Worlds:
    """One invocation's view of the worlds seen: baselines (read once) and this run's observations.

    With `run_id` (a run, not a preview), the observations are also journaled, with the intent of the next
    act (`take_pending`: no write of their own): a run resumed after that act (killed or stopped between
    act and verify, or in it) contrasts its verify with the observation its run made before the act's first
    attempt, in an earlier invocation."""

    journal: StateStore
    run_id: int | None = None
    _baselines: dict[tuple[str, Family], dict[int, Baseline]] = field(default_factory=dict)
    observed: dict[tuple[str, Family], dict[int, Path]] = field(default_factory=dict)
    _pending: dict[tuple[str, Family], dict[int, Path]] = field(default_factory=dict)
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
        """Remember an observation's paths, to contrast with the run after the act. The first observation in
        a run is the one kept: an attempt of the act that was interrupted may already have changed what a
        later observation sees."""
        if self.before(key, family) is not None:
            return
        self.observed[(key, family)] = dict(paths)
        self._pending[(key, family)] = dict(paths)

    def take_pending(self) -> list[dict[str, Any]]:
        """The observations not journaled yet, for the intent of the act about to run (a run's only)."""
        if self.run_id is None:
            return []
        out = [{"key": k, "family": f, "paths": {str(u): list(p) for u, p in paths.items()}}
               for (k, f), paths in self._pending.items()]  # fmt: skip
        self._pending.clear()
        return out

    def _earlier(self) -> dict[tuple[str, Family], dict[int, Path]]:
        """The observations this run journaled with its acts' intents in earlier invocations (read once;
        the first wins)."""
        if self._journaled is None:
            self._journaled = {}
            steps = self.journal.steps(self.run_id) if self.run_id is not None else []
            for step in steps:
                for seen in step.flags.get(OBSERVED, ()) if step.role == "act" else ():
                    fam: Family = "teardown" if seen.get("family") == "teardown" else "apply"
                    took = dict(seen.get("paths") or {})
                    paths = {int(u): tuple(int(x) for x in p) for u, p in took.items()}
                    self._journaled.setdefault((str(seen.get("key")), fam), paths)
        return self._journaled

    def learn(self, run_id: int, key: str, family: Family, learned: Sequence[Learned]) -> None:
        """Record what an act taught (journal first, then this invocation's cache)."""
        if not learned:
            return
        self.journal.learn_paths(run_id, key, family, [SeenPath(x.unit, x.world, x.path) for x in learned])
        base = self.baselines(key, family)
        for x in learned:
            base[x.unit] = base.get(x.unit, Baseline()).learned(x.world, x.path)

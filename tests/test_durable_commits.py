"""When an apply's journal reaches the disk (docs/durability.md), seen from the blocks' side: every act runs
only after a sync of the journal's log (its intent, and everything before it, is on the disk), the block
after an act only after another (the act's outcome); a check's intent and outcome and a section found in
sync wait for the next durable commit. The syncs are counted where they happen (`os.fdatasync` on the
journal's `-wal` file), the blocks where the shell runs them, in one real apply (real bash, real SQLite)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from director import cli
from director.exec.shell import Shell
from tests import scaleplan
from tests.journals import LogSyncs


def apply(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """`director apply` of the plan in `tmp_path`: what happened, in order ("sync", "act", "check"). A block
    the shell traces is a check (an observation or a verify), one it does not an act."""
    seen: list[str] = []
    real_run = Shell.run

    def run(self: Shell, text: str, *args: object, **kwargs: object) -> object:
        seen.append("check" if kwargs.get("trace") else "act")
        return real_run(self, text, *args, **kwargs)  # type: ignore[arg-type]

    with monkeypatch.context() as m:
        m.chdir(tmp_path)
        m.setenv("CI", "1")
        LogSyncs(m, seen)
        m.setattr(Shell, "run", run)
        with pytest.raises(SystemExit) as ended:
            cli.main(["apply", "p.md", "--plain", "--non-interactive"])
    assert ended.value.code == 0
    return seen


def test_an_act_runs_after_its_intent_is_synced_and_its_outcome_is_synced_before_the_next_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scaleplan.write_plan(tmp_path / "p.md", 3)
    seen = apply(tmp_path, monkeypatch)
    blocks = [i for i, what in enumerate(seen) if what != "sync"]
    assert [seen[i] for i in blocks] == ["check", "act", "check"] * 3
    for before, after in itertools.pairwise(blocks):
        synced = "sync" in seen[before + 1 : after]
        if seen[after] == "act" or seen[before] == "act":
            assert synced, f"no sync between block {before} and block {after}: {seen}"
        else:  # the verify of one section, then the observation of the next: nothing to sync between
            assert not synced, seen
    [made] = tmp_path.rglob("step-3.txt")  # in the plan's workspace
    assert made.read_text() == "step 3\n"


def test_a_plan_in_sync_syncs_nothing_between_its_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scaleplan.write_plan(tmp_path / "p.md", 3)
    apply(tmp_path, monkeypatch)
    seen = apply(tmp_path, monkeypatch)  # again: every section is observed in sync, nothing acts
    first, last = seen.index("check"), len(seen) - 1 - seen[::-1].index("check")
    assert seen[first : last + 1] == ["check"] * 3
    assert "sync" in seen[last:]  # the run's end is on the disk, and the checks' commits with it

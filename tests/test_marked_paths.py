"""A check's path says that the command marks ran whenever they ran (`RICHER`), also when they saw nothing.

The class: a path carried `RICHER` only when the marks had seen something -- a command that failed with a
status something reads, or output after a command. A run whose marks saw nothing (a check that prints
nothing and whose commands all succeed) got a path with no `RICHER`, the shape of a path learned before
the marks existed. Such a path is judged by its messages and exits alone against a baseline that has no
`RICHER` anywhere (`Baseline.world_of`), so a later run in a world where a command the check reads failed
-- same messages, one status element more -- was taken for the held world. And a path whose only mark was
output after a line that only speaks (not kept: its message already counts) lost `RICHER` with that
output: the same run, with the output unattributed, took a path "never seen before".
"""

from __future__ import annotations

import os
from pathlib import Path

from director.exec.shell import Shell
from director.plan.bash import unit_paths, verify_model
from director.plan.bash.trace import MARKED, RICHER, WROTE, TraceEntry, richer_element
from director.plan.contrast import Baseline

# Keeps `grep`'s status (`rc=$?` reads it) and prints nothing to the terminal whatever it finds: only the
# marks tell its worlds apart.
SILENT = 'grep -q ready "$F"; rc=$?\necho "checked $rc" >> "$F.log"\n'


def _path(shell: Shell, tmp_path: Path, content: str) -> tuple[int, ...]:
    f = tmp_path / "state"
    f.write_text(content, encoding="utf-8")
    block = f'F="{f}"\n' + SILENT
    run = shell.run(block, shell.initial_state(), trace=True)
    assert run.exit_code == 0 and run.trace is not None
    paths = unit_paths(verify_model(block), list(run.trace))
    assert len(paths) == 1, paths
    return next(iter(paths.values()))


def test_a_run_whose_marks_saw_nothing_says_it_had_them(tmp_path: Path) -> None:
    """Real bash, traced: the held world (grep finds it) prints nothing and fails nothing; its path still
    carries `RICHER`, and the broken world's (grep ends 1, read by `rc=$?`) differs from it by the mark."""
    with Shell(dict(os.environ), tmp_path, interactive=False) as shell:
        held = _path(shell, tmp_path, "ready\n")
        broken = _path(shell, tmp_path, "starting\n")
    assert held[-1] == RICHER, held  # on the code before: no RICHER (nothing seen), a legacy-looking path
    assert broken != held and broken[: len(held)] == held, (held, broken)
    learned = Baseline(held=frozenset({held}))
    assert learned.world_of(held) == "held"
    assert learned.world_of(broken) is None  # on the code before: "held", read as a path before the marks


def test_the_path_does_not_hang_on_what_the_marks_happened_to_see() -> None:
    """Output after a line that only speaks is not kept in the path (its message counts); with or without
    it, the run reads the same path."""
    model = verify_model('if [ -e "$F" ]; then\n  echo "present"\n  exit 0\nfi\necho "absent"\nexit 1\n')
    speak = next(p for p in model.probes if p.name == "echo" and p.row == 1)
    assert speak.row in model.speaking_rows
    trace = [TraceEntry(p.row + 1, "", p.name, "present" if p.name == "echo" else "") for p in model.probes
             if p.row <= 2]  # fmt: skip
    seen = unit_paths(model, [*trace, TraceEntry(0, "", MARKED, ""), TraceEntry(2, "", WROTE, "")])
    unseen = unit_paths(model, [*trace, TraceEntry(0, "", MARKED, "")])
    assert seen == unseen and all(RICHER in p for p in seen.values()), (seen, unseen)


def test_paths_learned_before_the_marks_said_so_are_the_same_path() -> None:
    """A journal learned before: the held path of a run whose marks saw nothing has no `RICHER`, while the
    not-held one has (a status); the same held run now reads `(*ids, RICHER)` and is that path."""
    base = Baseline(held=frozenset({(5, 6)}), not_held=frozenset({(7, 8, RICHER, richer_element(5, 1))}))
    assert base.world_of((5, 6, RICHER)) == "held"  # on the code before: None ("never seen", drift)
    assert base.world_of((7, 8, RICHER, richer_element(5, 1))) == "not-held"
    assert base.world_of((7, 8, RICHER)) is None

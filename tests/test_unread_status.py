"""A status nothing reads tells no world: the command marks keep a command's exit status in a check's path
only where something can read it (`director.plan.bash.units.unread_status_rows`).

The class: a tool whose findings go into a file that a later statement counts (`grep … > "$OUT"`,
`diff … > "$DRIFT"`) ends non-zero in some worlds and 0 in others, but its status is overwritten by the
next statement before anything reads it: under plain bash it shows nowhere, and the check's verdict is what
the counting statement prints. Learned from the act's world (nothing found, status 1) against the broken
one (status 0), such a status told a world that held from the act's world apart, and the held world took
the broken world's path: the teardown of a world already gone ran its act (mined:
grep-error-count-emoji-alert).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from director.exec.shell import Shell
from director.plan.bash import unit_paths, verify_model
from director.plan.bash.trace import RICHER, richer_element
from director.plan.contrast import Baseline
from tests.test_verify_contrast import live_through
from tests.test_verify_mined import assert_broken, assert_held, build, run_block
from tests.verify_corpus.mined import m

# Config drift counted from a diff written to a file: `diff` ends 0 when the files are equal (the act's
# world), 1 when they differ (the held world: one line changed, within tolerance; the broken world: three).
DRIFT = m(
    "diff-into-a-file-then-counted",
    "(unread statuses)",
    "message",
    "en",
    r"""
    EXPECTED="$W/expected.conf"
    REPORT="$W/drift.txt"

    diff "$EXPECTED" "$W/live.conf" > "$REPORT"
    CHANGED=$(grep -c '^>' "$REPORT")

    if [ "$CHANGED" -gt 2 ]; then
        echo "config drifted: $CHANGED lines differ"
    else
        echo "config within tolerance"
    fi
    """,
    r"""printf 'a=1\nb=2\nc=3\n' > "$W/expected.conf"; printf 'a=1\nb=9\nc=3\n' > "$W/live.conf" """,
    r"""printf 'a=1\nb=2\nc=3\n' > "$W/expected.conf"; printf 'a=7\nb=8\nc=9\n' > "$W/live.conf" """,
    r"""printf 'a=1\nb=2\nc=3\n' > "$W/expected.conf"; cp "$W/expected.conf" "$W/live.conf" """,
    p="config within tolerance",
    f="config drifted: 3 lines differ",
)


@pytest.mark.parametrize("world", ["held", "broken", "act"])
def test_drift_truth_under_plain_bash(world: str, tmp_path: Path) -> None:
    """The truth, without Director: the held world and the act's world print the pass line, exit 0."""
    w = tmp_path / "w"
    worlds: dict[str, str] = {"act": DRIFT.act, "held": DRIFT.held, "broken": DRIFT.broken}
    build(w, worlds[world], None, f"the {world} world")
    r = run_block(DRIFT.block, tmp_path, w, None)
    said = f"exit {r.returncode}, stdout {r.stdout!r}, stderr {r.stderr!r}"
    (assert_broken if world == "broken" else assert_held)(DRIFT, r, said)


@pytest.mark.slow
def test_a_status_nothing_reads_does_not_keep_a_held_world_from_being_gone(tmp_path: Path) -> None:
    """The whole life through the real CLI; before the fix the last teardown (held world: already gone)
    ran its act, the diff's status 1 having been learned as "present"."""
    problems = live_through(DRIFT, tmp_path)
    assert not problems, "\n".join(problems)


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[Shell]:
    sh = Shell(dict(os.environ), tmp_path, interactive=False)
    try:
        yield sh
    finally:
        sh.close()


def test_the_producer_takes_one_path_whatever_its_status(shell: Shell, tmp_path: Path) -> None:
    """Real bash, traced: the diff's unit takes the same path in the act's world (status 0) and the held
    one (status 1); the counting `if` still tells the broken world apart."""
    model = verify_model(DRIFT.block)
    diff_row = next(p.row for p in model.probes if p.name == "diff")
    assert diff_row in model.unread_rows
    paths: dict[str, dict[int, tuple[int, ...]]] = {}
    worlds: dict[str, str] = {"act": DRIFT.act, "held": DRIFT.held, "broken": DRIFT.broken}
    for world, script in worlds.items():
        w = tmp_path / world
        build(w, script, None, f"the {world} world")
        run = shell.run(f'W="{w}"\n' + DRIFT.block, shell.initial_state(), trace=True)
        assert run.trace is not None
        paths[world] = unit_paths(verify_model(f'W="{w}"\n' + DRIFT.block), list(run.trace))
    assert len(paths["act"]) == 2
    producer = max(paths["act"])  # R5's tool unit, numbered after the block's other checks
    assert paths["act"][producer] == paths["held"][producer] == paths["broken"][producer]
    assert paths["act"][0] == paths["held"][0] != paths["broken"][0]


@pytest.mark.parametrize(
    ("block", "unread"),
    [
        ('grep x "$F" > "$O"\nN=$(wc -l < "$O")\necho "$N"', True),  # overwritten by the next statement
        ('grep x "$F" > "$O"\nif [ $? -ne 0 ]; then echo none; fi', False),  # `$?` reads it
        ('grep x "$F" > "$O"\necho "${PIPESTATUS[0]}"', False),
        ('echo start\ngrep x "$F" > "$O"', False),  # the block's last status
        ('set -e\ngrep x "$F" > "$O"\necho done', False),  # errexit reads every untested status
        ("trap 'echo failed' ERR\ngrep x \"$F\" > \"$O\"\necho done", False),
        ('grep x "$F" > "$O" && echo found\necho done', False),  # an and-or list tests it
        ('if grep -q x "$F"; then echo a; else echo b; fi\necho done', False),  # a condition
        ('f() {\n  grep x "$F" > "$O"\n  echo checked\n}\nf', True),  # in a function, overwritten
        ('f() {\n  echo checking\n  grep x "$F" > "$O"\n}\nf || echo bad', False),  # the function's status
        ('grep x "$F" > "$O"; echo "$?"', False),
        ('said() { if [ $? -eq 0 ]; then echo found; else echo none; fi; }\ngrep x "$F" > "$O"\nsaid', False),
        ('said() { echo "checked $1"; }\ngrep x "$F" > "$O"\nsaid log', True),  # a function that reads no `$?`
    ],
)
def test_which_statuses_nothing_reads(block: str, unread: bool) -> None:
    model = verify_model(block)
    grep_row = next(p.row for p in model.probes if p.name == "grep")
    assert (grep_row in model.unread_rows) is unread, sorted(model.unread_rows)


def test_paths_learned_while_unread_statuses_counted_are_read_by_their_messages() -> None:
    """A journal learned before this rule (its paths have -1 where `RICHER` stands) is judged by messages
    and exits alone until an act teaches new paths -- never by a status element no run makes any more.
    On the code before, the held world's producer path was the one learned "not held": the run acted, the
    same path came back after the act, and the run stopped failed (a path seen when it did not hold)."""
    producer = Baseline(frozenset({(2, -1, richer_element(4, 1))}), frozenset({(2, -1)}))
    assert producer.world_of((2, RICHER)) is None  # seen in both worlds by its messages: tells nothing
    verdict = Baseline(frozenset({(8, -1, richer_element(7, 1))}), frozenset({(7, -1)}))
    assert verdict.world_of((8, RICHER, richer_element(7, 1))) == "held"
    assert verdict.world_of((7, RICHER)) == "not-held"
    assert Baseline(frozenset({(8,)}), frozenset({(7,)})).world_of((8, RICHER)) == "held"  # before the marks
    learned = verdict.learned("held", (8, RICHER, richer_element(7, 1)))
    assert learned.world_of((7, RICHER)) is None  # once it learned anew, the old paths are not read

"""A traced block's command marks (`director.exec.markers`): invisible in its output, faithful to what ran."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from director.exec.markers import Marks
from director.exec.shell import Shell
from director.plan.bash.trace import STATUS, WROTE


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[Shell]:
    sh = Shell(dict(os.environ), tmp_path, interactive=False)
    try:
        yield sh
    finally:
        sh.close()


BLOCK = """\
echo hi there
echo "[$_]"
ls /nonexistent-director-marks 2>/dev/null
grep -q never /dev/null || echo "status $?"
x=$(false)
awk 'BEGIN { exit 0 }'
echo done
"""


def test_marks_leave_the_output_as_plain_bash_prints_it(shell: Shell, tmp_path: Path) -> None:
    traced = shell.run(BLOCK, shell.initial_state(), trace=True)
    plain = shell.run(BLOCK, shell.initial_state())
    assert traced.output == plain.output == "hi there\n[there]\nstatus 1\ndone\n"
    assert "\x1d" not in traced.output and "\x1c" not in traced.output


def test_marks_say_which_lines_failed_and_which_printed(shell: Shell) -> None:
    r = shell.run(BLOCK, shell.initial_state(), trace=True)
    assert r.trace is not None
    failed = {(e.line, e.rest) for e in r.trace if e.name == STATUS}
    wrote = {e.line for e in r.trace if e.name == WROTE}
    assert (3, "2") in failed  # ls of a missing file, its message sent to /dev/null: a status only
    assert (5, "1") in failed  # the assignment from a failing substitution
    assert 6 not in {line for line, _ in failed}  # awk ended 0
    assert {1, 2, 4, 7} <= wrote and 3 not in wrote and 6 not in wrote
    assert not any(e.name == "builtin" and e.rest.startswith("printf") for e in r.trace)  # the trap itself


def test_a_mark_cut_between_two_reads_is_held() -> None:
    m = Marks()
    a = m.feed("out\x1d0\x1f11\x1f")
    b = m.feed("2\x1f\x1cprinted\x1d1\x1f11\x1f3\x1f\x1c")
    assert a + b + m.flush() == "outprinted"
    assert m.wrote == {(2, "")} and m.failed == {(2, "", 1)}


@pytest.mark.parametrize(
    "block, whole",
    [
        ("echo hi\n", True),
        ("f() { echo in; }\nf; ( echo sub ); x=$(echo cap)\necho \"$x\"\n", True),
        ("{ set +x; } 2>/dev/null\necho hi\n", False),  # tracing turned off the way scripts hide it
        ("{ set +x; } 2>/dev/null\necho hidden\nset -x\necho shown\n", False),  # and on again: a gap
        ("builtin set +o xtrace\necho hi\nset -o xtrace\n", False),
        ("set -- +x\necho \"$1\"\n", False),  # positional `+x`: read as tracing off (the cautious side)
        ("set -e\necho hi\n", True),
        ("exec 62>&-\necho hi\n", False),  # the marks' descriptor closed
        ("exec 61>&-\necho hi\n", False),  # the xtrace's descriptor closed
        ("echo hi\nexec true\n", False),  # ended without its EXIT capture
    ],
)
def test_a_trace_that_did_not_reach_the_blocks_end_is_no_trace(shell: Shell, block: str, whole: bool) -> None:
    """What a trace missed is not known, so a trace that never saw the block's EXIT capture is none: the
    check is read as an untraced block is, never by the path the rest of it shows."""
    r = shell.run(block, shell.initial_state(), trace=True)
    assert (r.trace is not None) == whole, (r.output, r.trace)


def test_the_marks_end_with_the_block_and_its_own_exit_handler_keeps_them(
    shell: Shell, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A DEBUG trap runs before every command: the marks stop once the EXIT capture's first command says the
    block reached its end (Director's own commands after it cost no mark: they were 12 to 20 a block, each a
    trap run, a traced line and a write to the terminal), and come back for the block's own EXIT handler,
    whose commands are the block's. Counted as `Marks` reads them off the terminal."""
    seen: list[tuple[int, str, int]] = []
    read = Marks._mark

    def counted(self: Marks, status: int, where: str, line: int, function: str) -> None:
        seen.append((line, function, status))
        read(self, status, where, line, function)

    monkeypatch.setattr(Marks, "_mark", counted)
    r = shell.run("echo hi\n", shell.initial_state(), trace=True)
    assert r.trace is not None and r.output == "hi\n"
    assert 1 <= len([s for s in seen if s[1] == "__director_exit"]) <= 5, seen
    r = shell.run("bye() { false; echo bye; }\ntrap bye EXIT\ntrue\n", shell.initial_state(), trace=True)
    assert r.trace is not None and r.output == "bye\n"
    assert (1, "bye", STATUS, "1") in {(e.line, e.function, e.name, e.rest) for e in r.trace}  # its handler


def test_a_traced_blocks_own_debug_trap_is_left_to_its_exit_handler(shell: Shell) -> None:
    """A traced block that sets its own DEBUG trap (replacing the marks) still has it in its EXIT handler,
    as under `bash -c`: the capture removes only Director's."""
    block = "trap 'echo dbg' DEBUG\ntrap 'trap -p DEBUG' EXIT\ntrue\n"
    r = shell.run(block, shell.initial_state(), trace=True)
    assert "trap -- 'echo dbg' DEBUG\n" in r.output

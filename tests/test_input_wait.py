"""A block that waits for the operator's input in an interactive run (issue 13, point 1).

Director's stdin is a real terminal here (pexpect), so the run is interactive and a block's stdin is that
terminal: the block's question reaches the screen, Director sees the block waiting (the /proc probe) and
says so with a `step.input` event, and what the operator types reaches the block.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pexpect
import pytest

from tests.planmaker import CounterPlan, Step, acts, write_plan
from tests.terminal import Term

pytestmark = pytest.mark.slow

ASK = 'read -r -p "Continue? (Y/n) " answer\necho "got $answer" | tee "$OUT/answer"'


def _events(path: Path) -> list[dict[str, object]]:
    if not path.exists():
        return []
    return [json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]


def test_a_block_asking_at_the_terminal_is_shown_waiting_and_the_typed_answer_reaches_it(
    tmp_path: Path, out: Path, term: Callable[..., Term]
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(extra=ASK), Step()]))
    events = tmp_path / "events.jsonl"
    t = term("apply", str(plan), "--set", "mode=a", "--events", str(events))
    t.wait("Continue? (Y/n)")  # the block's question is on the operator's screen
    deadline = time.monotonic() + 30
    while not [e for e in _events(events) if e["type"] == "step.input"]:
        assert time.monotonic() < deadline, "no step.input event while the block waited"
        t.wait(lambda s: True, timeout=0.2)
    assert acts(out) == ["s1"] and not (out / "answer").exists(), "the block waits; nothing killed it"
    t.send("y")
    assert t.finish() == 0, t.text()
    assert (out / "answer").read_text() == "got y\n"
    assert acts(out) == ["s1", "s2"]
    inputs = [e for e in _events(events) if e["type"] == "step.input"]
    assert [(e["section"], e["block"], e["prompt"]) for e in inputs] == [
        ("1", 0, "Continue? (Y/n)"),  # as the bus cleans it (no control sequence, no edge space)
        ("1", 0, None),  # the block printed again: the wait is over
    ]
    ends = [
        e for e in _events(events) if e["type"] == "step.end" and e["section"] == "1" and e["role"] == "act"
    ]
    assert ends and ends[0]["ok"] is True and ends[0]["waited_for_input"] is False


SHELL_CHILD = textwrap.dedent(
    """
    import os, sys
    from director.exec.shell import Shell
    block = 'read -r -p "Sure? " a; echo "a=$a"; printf "and? " >/dev/tty; read -r b </dev/tty; echo "b=$b"'
    with Shell(dict(os.environ), ".", interactive=True, input_probe_after_s=0.3) as sh:
        r = sh.run(block, sh.initial_state(),
                   on_output=lambda t: (sys.stdout.write(t), sys.stdout.flush()),
                   on_waiting=lambda p: (sys.stdout.write(f"<waiting:{p}>"), sys.stdout.flush()))
    print("exit", r.exit_code, r.waited_for_input)
    """
)


def test_interactive_waits_on_stdin_and_on_dev_tty_are_reported_once_and_answered(tmp_path: Path) -> None:
    """On stdin (the operator's terminal) the block reads the keys itself; on `/dev/tty` (the session's
    terminal, which nobody types into) Director passes the operator's keys on."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    child = pexpect.spawn(sys.executable, ["-c", SHELL_CHILD], cwd=str(tmp_path), env=env, timeout=20)
    try:
        child.expect_exact("<waiting:Sure? >")
        child.sendline("one")
        child.expect_exact("a=one")
        child.expect_exact("<waiting:and? >")
        child.sendline("two")
        child.expect_exact("b=two")
        child.expect_exact("exit 0 False")
        before = child.before.decode() if isinstance(child.before, bytes) else str(child.before)
        assert "<waiting:" not in before, "each wait is reported once"
    finally:
        child.close(force=True)

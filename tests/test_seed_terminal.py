"""The seed plan as an operator runs it at a terminal (real wrangler + workerd, `--target local`).

One apply and one teardown at a pseudo-terminal, read through a terminal emulator: the interview, the
🔴 gate's panel (why, resources, Live State changes, commands with their variables expanded), the board
while §4 polls, the realized values at the end; then the 💥 gate that asks for the resource's name, and
`wrangler delete`'s own `(Y/n)` shown as "waiting for your input" until the typed `y` reaches it. The
world is checked, not Director's word: the URL answered while live, and nothing of ours runs afterwards.

`DIRECTOR_SCREENS=FILE` keeps the screens of each moment in FILE (the closing note's capture).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from director.targets import install as inst
from tests.e2e_helpers import http_get, port_open
from tests.terminal import Term
from tests.test_e2e_local import PLAN_NAME, Project, assert_torn_down

pytestmark = pytest.mark.slow

WAIT_S = 300.0  # a cold workerd start on a loaded 2-core machine; each wait ends when the screen shows it


def test_the_seed_plan_at_a_terminal_gate_poll_outputs_and_a_teardown_that_asks(tmp_path: Path) -> None:
    inst.resolve_wrangler()
    p = Project.create(tmp_path / "seed")
    env = {k: v for k, v in p.env.items() if k not in ("CI", "NO_COLOR", "COLUMNS")}
    shots: list[str] = []

    def shot(t: Term, moment: str) -> str:
        screen = t.text()
        shots.append(f"===== {moment} =====\n{screen}\n")
        return screen

    made: list[Term] = []
    try:
        t = Term(["apply", PLAN_NAME, "--target", "local", "--operator", "sre", "--set", "trigger=http"], p.root,
                 tmp_path, env)  # fmt: skip
        made.append(t)

        # the interview asks what --set did not answer (ENV): Enter takes each default. A question is new
        # when the screen shows one more than were answered (the board is erased before the gate panel, which
        # leaves the last answered question at the bottom for a moment: no Enter for it)
        def new_question_or_gate(answered: int) -> Callable[[str], bool]:
            return lambda s: "to run these commands" in s or s.count("choose [") > answered

        answered = 0
        while "to run these commands" not in (screen := t.wait(new_question_or_gate(answered), timeout=WAIT_S)):
            answered = screen.count("choose [")
            t.send("")
        gate = shot(t, "the 🔴 gate of §3")
        assert "why now:" in gate and "never applied" in gate
        assert "WORKER orders-dev" in gate and "+ URL" in gate
        # the command as it runs, its variables expanded (a long line wraps under itself, after ↪)
        assert re.search(r'wrangler deploy --config[\s│↪]+"/[^"]+/[\s│↪]*orders\.jsonc"', gate), gate
        t.send("go")
        polling = t.wait(re.compile(r"§4 .*▶ running"), timeout=WAIT_S)
        assert re.search(r"§3 .*✓ applied", polling), polling
        shot(t, "§4 polls")
        assert t.finish(timeout=WAIT_S) == 0, t.text()
        end = shot(t, "the end of apply")
        m = re.search(r"URL\s+=\s+(http://127\.0\.0\.1:(\d+))", end)
        assert m, end  # the realized values, as terraform prints its outputs
        status, _ = http_get(m.group(1) + "/")
        assert status < 500 and port_open(int(m.group(2)))

        t2 = Term(["teardown", PLAN_NAME, "--target", "local", "--operator", "sre"], p.root, tmp_path, env)
        made.append(t2)
        gate = t2.wait("Type orders-dev to run these commands", timeout=WAIT_S)  # 💥: the resource's name
        shot(t2, "the 💥 gate of the teardown")
        assert "to approve, type orders-dev" in gate
        t2.send("orders-dev")
        waiting = t2.wait(
            "waiting for your input: ? Are you sure you want to delete orders-dev", timeout=WAIT_S
        )
        assert "(Y/n)" in waiting
        shot(t2, "wrangler delete asks; the board says so")
        t2.send("y")
        # gone (unconfirmed): the seed's teardown verify cannot confirm (README "Exit codes", 10)
        assert t2.finish(timeout=WAIT_S) == 10, t2.text()
        end = shot(t2, "the end of the teardown")
        assert "Successfully deleted orders-dev" in t2.seen() and "waited for your input" in end
        assert not port_open(int(m.group(2)))
        assert_torn_down(p)
    finally:
        for term in made:
            term.kill()
        p.stop_everything()
        if out := os.environ.get("DIRECTOR_SCREENS"):
            Path(out).write_text("\n".join(shots), encoding="utf-8")

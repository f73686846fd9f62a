"""What an operator sees at a real terminal: the real CLI under a pseudo-terminal, read through a terminal
emulator (pyte), so the assertions are about the screen, not about the bytes rich used to draw it.

The live view redraws itself in place (cursor up, erase line), so only an emulated screen tells which frame
is on display; the raw stream is kept too, for what scrolled away.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from director.plan.parse import parse_file
from tests.jsonschemas import validated
from tests.planmaker import CounterPlan, Step, acts, director, write_plan
from tests.terminal import Term

# slow: end to end through the real CLI, many runs; CI runs it with the rest
pytestmark = pytest.mark.slow

GATE = "🔴 *(`MODE=a` — outward-facing)*  /  🟡 *(`b`)*"


def status(plan: Path, out: Path) -> dict[str, object]:
    r = director("status", str(plan), "--json", cwd=plan.parent, out=out)
    assert r.returncode == 0, r.stderr
    return dict(validated(r.stdout))


def audit(plan: Path, out: Path) -> dict[str, list[dict[str, Any]]]:
    r = director("audit", str(plan), "--json", cwd=plan.parent, out=out)
    assert r.returncode == 0, r.stderr
    return dict(validated(r.stdout))


def row(screen: str, label: str) -> str:
    """The board's line for a section (`§1`), from the last frame on the screen."""
    lines = [ln for ln in screen.splitlines() if ln.startswith(label + " ")]
    assert lines, f"no {label} row on screen:\n{screen}"
    return lines[-1]


# ---------------------------------------------------------------------------------------------- interview


def two_input_plan(tmp: Path) -> Path:
    """The counter plan with a second question (Size: s / m / l, default m) that an act block records."""
    text = CounterPlan([Step(extra='echo "$SIZE" > "$OUT/size"')]).text()
    first = "| 1 | Mode | `a` / `b` | `a` | `MODE` | §2 gate severity |"
    assert first in text
    text = text.replace(first, first + "\n| 2 | Size | `s` / `m` / `l` | `m` | `SIZE` | — |")
    text = text.replace('export MODE="a"\n', 'export MODE="a"\nexport SIZE="m"\n')
    text = text.replace("resolved_inputs: { mode: a }", "resolved_inputs: { mode: a, size: m }")
    path = tmp / "counter.md"
    path.write_text(text, encoding="utf-8")
    return path


def test_interview_rejects_an_invalid_choice_takes_typed_and_default_answers(
    tmp_path: Path, out: Path, term: Callable[..., Term]
) -> None:
    plan = two_input_plan(tmp_path)
    t = term("apply", str(plan))
    screen = t.wait("choose [a/b] (a):")
    assert "1. Mode" in screen and "a / b; sets MODE" in screen
    t.send("z")
    screen = t.wait(lambda s: s.count("choose [a/b] (a):") == 2)  # the question is asked again
    assert "choose [a/b] (a): z\nPlease select one of the available options\n  choose [a/b] (a):" in screen
    t.send("B")  # options are matched case-insensitively and recorded as written in the plan
    t.wait("choose [s/m/l] (m):")
    t.send("")  # Enter: the default
    assert t.finish() == 0, t.text()
    final = t.text()
    # the live view resumed below the answers instead of drawing over them
    assert "choose [a/b] (a): B" in final and "choose [s/m/l] (m):" in final
    assert final.index("choose [s/m/l] (m):") < final.index("director apply run 1")
    assert (out / "size").read_text().strip() == "m"
    ls = parse_file(str(plan)).live_state
    assert ls is not None
    assert ls.data["resolved_inputs"]["mode"] == "b" and ls.data["resolved_inputs"]["size"] == "m"
    last_run = status(plan, out)["last_run"]
    assert isinstance(last_run, dict) and last_run["inputs"] == {"MODE": "b", "SIZE": "m"}
    resolved = [e["data"] for e in audit(plan, out)["events"] if e["kind"] == "inputs-resolved"]
    assert resolved[-1]["values"] == {"MODE": "b", "SIZE": "m"}
    assert resolved[-1]["how"] == {"MODE": "prompt", "SIZE": "prompt"}


def test_ctrl_c_at_the_interview_cancels_before_anything_runs(
    tmp_path: Path, out: Path, term: Callable[..., Term]
) -> None:
    plan = write_plan(tmp_path, CounterPlan())
    before = plan.read_bytes()
    t = term("apply", str(plan))
    t.wait("choose [a/b] (a):")
    t.child.sendintr()
    assert t.finish() == 130
    assert acts(out) == [] and plan.read_bytes() == before
    screen = t.text()
    assert "interrupted before anything ran: no run was started; nothing changed" in screen, screen
    assert "· pending" not in screen, "no board of sections that never ran"


# ---------------------------------------------------------------------------------------------- gates


def test_gate_shows_title_reason_and_exact_commands_and_go_proceeds(
    tmp_path: Path, out: Path, term: Callable[..., Term]
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE), Step()]))
    t = term("apply", str(plan), "--set", "mode=a", "--operator", "alice")
    screen = t.wait("Type go to run these commands")
    assert acts(out) == ["s1"], "nothing of the gated section runs before the answer"
    assert "🔴 GATE · §2 Step 2" in screen
    assert "why gated: outward-facing" in screen
    for command in (f'echo "s2" >> "{out}/acts"', f'touch "{out}/s2"', 'export V2="value-2-a"'):
        assert command in screen, f"the gate shows the exact command, as it runs: {command!r}"
    assert "inputs: MODE=a" in screen and re.search(r"content sha256 [0-9a-f]{64}", screen)
    t.send("go")
    assert t.finish() == 0, t.text()
    assert acts(out) == ["s1", "s2", "s3"]
    final = t.text()
    assert "(anything else declines: the run stops, awaiting approval): go" in final, "the answer stays"
    assert (
        final.index("🔴 GATE · §2 Step 2") < final.rindex("director apply run 1") < final.index("4 applied")
    )
    assert "✓ applied" in row(final, "§2")
    approvals = audit(plan, out)["approvals"]
    assert [(a["section_key"], a["operator"], a["how"]) for a in approvals] == [("2", "alice", "prompt")]


@pytest.mark.parametrize("answer", ["no", "yes", "Go", ""])
def test_anything_but_go_declines_and_runs_nothing_of_the_section(
    tmp_path: Path, out: Path, term: Callable[..., Term], answer: str
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE), Step()]))
    t = term("apply", str(plan), "--set", "mode=a")
    t.wait("Type go to run these commands")
    t.send(answer)
    assert t.finish() == 4, t.text()
    assert acts(out) == ["s1"], f"answer {answer!r}: nothing of §2 (or after it) ran"
    assert not (out / "s2").exists()
    last_run = status(plan, out)["last_run"]
    assert isinstance(last_run, dict)
    assert last_run["state"] == "awaiting-approval" and last_run["waiting_on"] == "2"
    assert audit(plan, out)["approvals"] == []
    assert f"director approve {plan} 2" in t.seen()


def test_ctrl_c_at_the_gate_prompt_interrupts_without_an_approval(
    tmp_path: Path, out: Path, term: Callable[..., Term]
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    t = term("apply", str(plan), "--set", "mode=a")
    t.wait("Type go to run these commands")
    t.child.sendintr()
    assert t.finish() == 130, t.text()
    assert acts(out) == ["s1"]
    assert audit(plan, out)["approvals"] == []
    last_run = status(plan, out)["last_run"]
    assert isinstance(last_run, dict) and last_run["state"] == "interrupted"


def test_teardown_gate_shows_what_exists_and_the_board_shows_only_what_a_teardown_runs(
    tmp_path: Path, out: Path, term: Callable[..., Term]
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step()]))
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    t = term("teardown", str(plan))
    screen = t.wait("Type chain-a to run these commands")
    assert "💥 DESTRUCTIVE · teardown Teardown (observe-first, resumable)" in screen
    assert "- V1: `value-1-a` (back to its template)" in screen, "what exists, and what goes"
    assert f'rm -f "{out}"/s[0-9]*' in screen
    assert acts(out, "teardown-acts") == []
    t.send("chain-a")
    assert t.finish() == 0, t.text()
    assert acts(out, "teardown-acts") == ["td"]
    board = t.text().split("(anything else declines: the run stops, awaiting approval): chain-a\n", 1)[1]
    assert "director teardown run 2" in board and "· completed" in board
    assert "✓ in sync" in row(board, "§0") and "torn down" in row(board, "teardown")
    assert "§1 " not in board, "the numbered steps do not run in a teardown: not on its board"


# ---------------------------------------------------------------------------------------------- live view

ELAPSED = re.compile(r"act\s+(\d+\.\d)s")


def test_live_view_shows_states_a_growing_elapsed_time_the_output_tail_and_the_summary(
    tmp_path: Path, out: Path, term: Callable[..., Term]
) -> None:
    # runs until the test has seen enough (at most 60 s): no fixed sleep decides what the screen shows
    long_block = 'echo "warming up"\nfor i in $(seq 240); do [ -f "$OUT/go-on" ] && break; sleep 0.25; done'
    plan = write_plan(tmp_path, CounterPlan([Step(extra=long_block), Step()]))
    t = term("apply", str(plan), "--set", "mode=a")

    def elapsed(screen: str) -> float | None:
        m = ELAPSED.search(row(screen, "§1")) if "§1 " in screen else None
        return float(m.group(1)) if m else None

    first = t.wait(lambda s: (elapsed(s) or 0) >= 0.3 and "warming up" in s)
    e1 = elapsed(first)
    assert e1 is not None
    assert "✓ applied" in row(first, "§0")
    assert "· pending" in row(first, "§2") and "· pending" in row(first, "§3")
    assert "warming up" in first, "the running block's output tail is on the board"
    assert re.search(r"§1 act · plan line \d+", first)
    assert "director apply run 1 · MODE=a" in first, "no target for a plan that uses none"
    second = t.wait(lambda s: (elapsed(s) or 0) >= e1 + 1.0)
    assert "✓ applied" in row(second, "§0"), "the same board, redrawn in place"
    assert second.count("§1 ") == 1 + second.count("§1 act"), "one §1 row, not a new frame below the old"
    (out / "go-on").touch()
    assert t.finish() == 0, t.text()
    final = t.text()
    assert "· completed" in final
    assert "✓ applied" in row(final, "§1") and "✓ verified" in row(final, "§3")
    # the final board is the summary: each section once, with its outcome and time; then only the counts
    assert final.count("§1 Step 1") == 1, final
    pattern = r"^(§\d) +(?:Variables|Step \d|Acceptance) +(✓ \w+(?: \w+)?) +(\d+\.\d)s"
    lines = {m.group(1): m for m in re.finditer(pattern, final, re.M)}
    assert set(lines) == {"§0", "§1", "§2", "§3"}, final
    assert lines["§1"].group(2) == "✓ applied" and float(lines["§1"].group(3)) >= e1 + 1.0
    assert lines["§2"].group(2) == "✓ applied" and lines["§3"].group(2) == "✓ verified"
    assert "3 applied · 1 verified" in final
    assert "apply completed" in final


def test_retry_wait_is_shown_with_its_countdown(tmp_path: Path, out: Path, term: Callable[..., Term]) -> None:
    flaky = (
        'n=$(cat "$OUT/tries" 2>/dev/null || echo 0); echo $((n+1)) > "$OUT/tries"; [ "$n" -ge 1 ] || exit 1'
    )
    plan = write_plan(
        tmp_path, CounterPlan([Step(extra=flaky, info="bash {retries=2 backoff=constant delay=2s}")])
    )
    t = term("apply", str(plan), "--set", "mode=a")
    screen = t.wait(re.compile(r"⏳ retry 2 in \d\.\ds"))
    assert "attempt 1 failed" in row(screen, "§1")
    assert t.finish() == 0, t.text()
    assert (out / "tries").read_text().strip() == "2"


def test_ctrl_c_during_a_long_block_interrupts_and_a_later_apply_resumes(
    tmp_path: Path, out: Path, term: Callable[..., Term]
) -> None:
    slow = 'echo "long job started"\n[ -f "$OUT/fast" ] || sleep 60'
    plan = write_plan(tmp_path, CounterPlan([Step(extra=slow), Step()]))
    t = term("apply", str(plan), "--set", "mode=a")
    t.wait(lambda s: "long job started" in s and ELAPSED.search(s))
    started = time.monotonic()
    t.child.sendintr()
    assert t.finish() == 130, t.text()
    assert time.monotonic() - started < 15, "Ctrl-C stops the block, it does not wait for it"
    screen = t.text()
    assert "✗ interrupted" in row(screen, "§1") and "· interrupted" in screen
    assert "`director apply` resumes" in t.seen()
    last_run = status(plan, out)["last_run"]
    assert isinstance(last_run, dict) and last_run["state"] == "interrupted"
    ls = parse_file(str(plan)).live_state  # what exists: §1's act began; how the run ended is last_action's
    assert ls is not None and ls.data["status"] == "partially applied"
    assert str(ls.data["last_action"]).endswith("— interrupted at §1"), ls.data["last_action"]

    (out / "fast").touch()
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "resuming apply run 1" in r.stdout
    assert acts(out) == ["s1", "s1", "s2"], "the interrupted block runs again (at-least-once), then the rest"
    last_run = status(plan, out)["last_run"]
    assert isinstance(last_run, dict) and last_run["state"] == "completed" and last_run["id"] == 1


# ---------------------------------------------------------------------------------------------- plain at a terminal

ANSI_BLOCK = (
    r"""printf '\033[31mred\033[0m\n'; printf '\033]0;title\007osc\n'; printf '\033(Bcharset\033[m\n'"""
)


@pytest.mark.parametrize("how", ["--plain", "NO_COLOR"])
def test_plain_and_no_color_at_a_terminal_print_no_escape_sequences(
    tmp_path: Path, out: Path, term: Callable[..., Term], how: str
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(extra=ANSI_BLOCK), Step()]))
    args = ["apply", str(plan), "--set", "mode=a"] + (["--plain"] if how == "--plain" else [])
    t = term(*args, env={"NO_COLOR": "1"} if how == "NO_COLOR" else None)
    assert t.finish() == 0, t.text()
    assert b"\x1b" not in t.raw, t.raw.decode("utf-8", "replace")[-2000:]
    text = t.raw.decode()
    for word in ("│ red", "│ osc", "│ charset", "apply completed"):
        assert word in text


def test_no_process_is_left_behind(tmp_path: Path, out: Path, term: Callable[..., Term]) -> None:
    """A killed Director (SIGTERM, as the fixture does) stops its block too."""
    plan = write_plan(tmp_path, CounterPlan([Step(extra='echo "$$" > "$OUT/pid"; echo ready; sleep 60')]))
    t = term("apply", str(plan), "--set", "mode=a")
    t.wait("ready")
    pid = int((out / "pid").read_text())
    t.kill()
    for _ in range(100):
        if subprocess.run(["kill", "-0", str(pid)], capture_output=True).returncode != 0:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
        pytest.fail("the block outlived Director")


# ---------------------------------------------------------------------------------------------- issue 13


def template_plan(tmp: Path) -> Path:
    """The counter plan whose gated §2 also writes a file template (`$OUT/chain.jsonc`) and realizes LEVEL."""
    text = CounterPlan([Step(), Step(marker=GATE), Step()]).text()
    text = text.replace('export NAME="chain-${MODE}"\n', 'export NAME="chain-${MODE}"\nexport LEVEL="1"\n')
    text = text.replace(
        f"## 2. Step 2  {GATE}\n",
        f"## 2. Step 2 — `$OUT/chain.jsonc`  {GATE}\n\n"
        '```jsonc\n{\n  "name": "chain-a",   // = ${NAME}\n  "level": 1          // = ${LEVEL}\n}\n```\n',
    )
    text = text.replace("> → Live State: V2\n", "> → Live State: V2, LEVEL\n")
    text = text.replace(
        "| NAME  | `chain-${MODE}` (the chain) |\n",
        "| NAME  | `chain-${MODE}` (the chain) |\n| LEVEL | `${LEVEL}` |\n",
    )
    path = tmp / "templated.md"
    path.write_text(text, encoding="utf-8")
    return path


def test_gate_shows_the_template_diff_the_ledger_changes_and_a_re_asked_approval_shows_why(
    tmp_path: Path, out: Path, term: Callable[..., Term]
) -> None:
    plan = template_plan(tmp_path)
    assert director("apply", str(plan), "--auto-approve", cwd=tmp_path, out=out).returncode == 0
    assert '"level": 1' in (out / "chain.jsonc").read_text()
    plan.write_text(
        plan.read_text().replace('export LEVEL="1"', 'export LEVEL="2"')
    )  # the template's value moves
    t = term("apply", str(plan), "--operator", "bob")
    screen = t.wait("Type go to run these commands")
    seen = t.seen()
    assert "🔴 GATE · §2 Step 2" in seen
    # why it acts now: what changed since it last succeeded, and the file on disk
    assert "why now:" in seen and "the regenerated chain.jsonc changed" in seen
    assert "chain.jsonc on disk differs from its regenerated" in seen
    # the re-asked approval says why; the ledger keys and the file it changes
    assert re.search(r"asked again: the approval by \S+@\S+ at .* \(auto\) was for other content", seen)
    assert "~ LEVEL: `1` → `2`" in seen and f"✎ file {out}/chain.jsonc: +1 −1 lines against the disk" in seen
    assert f'touch "{out}/s2"' in seen, "the commands as they run"
    # the details the panel leaves out: `director plan --section 2` (read-only, while the gate waits)
    assert f"details: director plan {plan} --section 2" in seen
    d = director("plan", str(plan), "--section", "2", cwd=tmp_path, out=out)
    assert d.returncode == 2, d.stdout + d.stderr
    assert '-  "level": 1' in d.stdout and '+  "level": 2' in d.stdout, "the approved text against this one"
    assert f"file {out}/chain.jsonc will be written (against what is on disk):" in d.stdout
    assert f"{out}/chain.jsonc (on disk)" in d.stdout and f"{out}/chain.jsonc (regenerated)" in d.stdout
    assert "variables: " in d.stdout and "inputs: MODE=a" in d.stdout
    del screen
    t.send("go")
    assert t.finish() == 0, t.text()
    assert '"level": 2' in (out / "chain.jsonc").read_text()
    assert "  LEVEL = 2" in t.seen(), "the realized values end the run"


def test_the_human_wait_at_a_gate_is_not_the_sections_time(
    tmp_path: Path, out: Path, term: Callable[..., Term]
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    ev = tmp_path / "ev.jsonl"
    t = term("apply", str(plan), "--set", "mode=a", "--events", str(ev))
    t.wait("Type go to run these commands")
    time.sleep(2.5)
    t.send("go")
    assert t.finish() == 0, t.text()
    verdict = next(
        json.loads(ln)
        for ln in ev.read_text().splitlines()
        if '"section.verdict"' in ln and '"section": "2"' in ln
    )
    assert verdict["duration_s"] < 1.5, verdict
    m = re.search(r"^§2 +Step 2 +✓ applied +(\d+\.\d)s", t.text(), re.M)
    assert m and float(m.group(1)) < 1.5, t.text()


def test_a_destructive_gate_asks_for_the_resources_name_not_go(
    tmp_path: Path, out: Path, term: Callable[..., Term]
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step()]))
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    t = term("teardown", str(plan))
    screen = t.wait("Type chain-a to run these commands")
    assert "to approve, type chain-a (the name of what it destroys)" in t.seen()
    assert "named: NAME chain-a" in t.seen()
    del screen
    t.send("go")
    assert t.finish() == 4, t.text()
    assert acts(out, "teardown-acts") == [], "go is not enough for 💥"
    t = term("teardown", str(plan))
    t.wait("Type chain-a to run these commands")
    t.send("chain-a")
    assert t.finish() == 0, t.text()
    assert acts(out, "teardown-acts") == ["td"]


def test_inputs_are_asked_again_after_a_teardown_and_with_reinterview(
    tmp_path: Path, out: Path, term: Callable[..., Term]
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step()]))
    t = term("apply", str(plan))
    t.wait("choose [a/b] (a):")
    t.send("b")
    assert t.finish() == 0, t.text()
    t = term("apply", str(plan))
    assert t.finish() == 0 and "choose [a/b]" not in t.seen(), "the answers stand between applies"
    t = term("apply", str(plan), "--reinterview")
    t.wait("choose [a/b] (b):")  # asked again, the previous answer as the default
    t.send("")
    assert t.finish() == 0, t.text()
    assert director("teardown", str(plan), "--approve", "teardown", cwd=tmp_path, out=out).returncode == 0
    t = term("apply", str(plan))
    t.wait("choose [a/b] (b):")  # after a teardown: asked again
    t.send("a")
    assert t.finish() == 0, t.text()
    assert acts(out) == ["s1", "s1"], "applied again after the teardown, with the new answer"


def test_approve_at_a_terminal_shows_the_gate_and_asks_before_recording(
    tmp_path: Path, out: Path, term: Callable[..., Term]
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 4
    t = term("approve", str(plan), "2", "--operator", "carol")
    t.wait("Type go to record this approval as carol")
    assert "🔴 GATE · §2 Step 2" in t.seen() and "why now:" in t.seen()
    assert "(anything else declines: no receipt is recorded)" in t.seen(), "declining stops no run"
    assert "the run stops" not in t.seen()
    t.send("no")
    assert t.finish() == 4 and "not approved: no receipt recorded" in t.seen()
    assert audit(plan, out)["approvals"] == []
    t = term("approve", str(plan), "2", "--operator", "carol")
    t.wait("Type go to record this approval as carol")
    t.send("go")
    assert t.finish() == 0, t.text()
    assert [a["operator"] for a in audit(plan, out)["approvals"]] == ["carol"]

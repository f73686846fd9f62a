"""The views (director/render.py): plain lines without a terminal, the live board, the gate panel, the
summary; in-process with a fake clock where possible, through the real CLI with pipes where it matters."""

from __future__ import annotations

import builtins
import io
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyte
import pytest
from rich.console import Console

from director.plan.model import Input
from director.run.gates import GateContent
from director.ui.board import LiveReporter
from director.ui.prompts import TerminalPrompter, gate_panel
from director.ui.render import (
    LineBuffer,
    PlainReporter,
    clean,
    make_console,
)
from director.ui.summary import summary_table
from tests import forkserver
from tests.planmaker import CounterPlan, Step, director, write_plan

ANSI_BLOCK = (
    r"printf '\033[31mred\033[0m\n'; printf '\033]0;title\007osc\n'; printf '\033]8;;http://x\033\\link\033]8;;\033\\\n'; "
    r"printf '\033(Bcharset\033[m\n'; printf 'bar 10%%\rbar 100%%\n'; printf '\033[2K\033[1Gcleared\n'"
)


def plain_console() -> tuple[Console, io.StringIO]:
    buf = io.StringIO()
    return Console(file=buf, no_color=True, force_terminal=False, highlight=False, emoji=False, width=120,
                   color_system=None, soft_wrap=True), buf


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def ev(type_: str, **data: Any) -> dict[str, Any]:
    return {"schema": "director.event/1", "seq": 0, "ts": "", "type": type_, **data}


# ---------------------------------------------------------------------------------------------- text


@pytest.mark.parametrize(("raw", "shown"), [
    ("\x1b[1;31mred\x1b[0m", "red"),
    ("\x1b]0;title\x07x", "x"),
    ("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"),
    ("\x1b(Bplain\x1b[m", "plain"),
    ("\x1bPq#0;2;0;0;0\x1b\\after", "after"),
    ("\x9b31mc1\x07\x08", "c1"),
    ("a\tb", "a       b"),
    ("lone\x1b", "lone"),
    ("ünïcødé ✓ 🔴", "ünïcødé ✓ 🔴"),
])
def test_clean_removes_every_control_sequence(raw: str, shown: str) -> None:
    assert clean(raw) == shown


def test_line_buffer_joins_chunks_cut_anywhere() -> None:
    b = LineBuffer()
    got = b.feed("one\r") + b.feed("\ntw") + b.feed("o\x1b[3") + b.feed("1mred\x1b[0m\n") + b.feed("tail")
    assert got == ["one", "twored"]
    assert b.partial == "tail" and b.flush() == ["tail"] and b.flush() == []


def test_line_buffer_keeps_progress_rewrites_in_logs_and_the_last_one_on_screen() -> None:
    log, screen = LineBuffer(), LineBuffer(overwrite=True)
    chunk = "10%\r50%\r100%\ndone\n"
    assert log.feed(chunk) == ["10%", "50%", "100%", "done"]
    assert screen.feed(chunk) == ["100%", "done"]
    screen.feed("downloading 3%\rdownloading 7%")
    assert screen.partial == "downloading 7%"


def test_line_buffer_holds_a_bounded_part_of_a_line_whatever_its_length() -> None:
    from director.ui.lines import LINE_HEAD, LINE_TAIL

    log, screen = LineBuffer(), LineBuffer(overwrite=True)
    n = 3_000_000
    for b in (log, screen):
        for i in range(0, n, 4096):
            chunk = ("h" if i == 0 else "x") + "x" * 4094 + ("t" if i + 4096 >= n else "x")
            assert b.feed(chunk) == []
            assert len(b._rest) + len(b._head) <= LINE_HEAD + LINE_TAIL + 4096  # never the whole line
    total = len(range(0, n, 4096)) * 4096
    [line] = log.feed("\nnext")
    assert line.startswith("h" + "x" * (LINE_HEAD - 1)) and line.endswith("x" * (LINE_TAIL - 1) + "t")
    assert f"…[{total - LINE_HEAD - LINE_TAIL} characters not shown]…" in line
    assert len(line) < LINE_HEAD + LINE_TAIL + 50 and log.flush() == ["next"]
    # A progress bar that never ends its line: the screen shows its latest state.
    for pct in range(5_000):  # 70 K characters, never a newline
        screen.feed(f"\rprogress {pct}")
    assert screen.partial == "progress 4999"


# ---------------------------------------------------------------------------------------------- plain


def test_plain_reporter_prints_markup_like_text_literally_and_strips_escapes() -> None:
    c, buf = plain_console()
    rep = PlainReporter(c)
    rep(ev("section.start", section="1", title="Deploy [bold]prod[/bold] [/]", label="§1"))
    rep(ev("step.start", section="1", block=0, role="act", attempt=1, line=12))
    rep(ev("step.output", section="1", block=0, text="\x1b[31m[/]red\x1b[0m\r"))
    rep(ev("step.output", section="1", block=0, text="\npartial [link]"))
    rep(ev("step.end", section="1", block=0, role="act", exit_code=1, duration_s=0.5, ok=False))
    rep(ev("section.verdict", section="1", label="§1", verdict="failed", detail="exit 1: [/] broke"))
    rep(ev("run.state", run_id=1, to="failed", reason="§1 [red]x[/red]"))
    text = buf.getvalue()
    assert "\x1b" not in text
    assert text.splitlines() == [
        "── §1 Deploy [bold]prod[/bold] [/]",
        "   ▶ act block (line 12)",
        "     │ [/]red",
        "     │ partial [link]",
        "   ■ act exit 1 in 0.50s",
        "   ✗ failed — exit 1: [/] broke",
        "run 1: failed — §1 [red]x[/red]",
    ]


# ---------------------------------------------------------------------------------------------- live board


def board(rep: LiveReporter, width: int = 100, height: int = 30) -> list[str]:
    c = Console(file=io.StringIO(), width=width, height=height, force_terminal=True, color_system=None,
                record=True)
    c.print(rep._render())
    return [ln.rstrip() for ln in c.export_text().splitlines()]


def live(sections: int = 3, width: int = 100, height: int = 30) -> tuple[LiveReporter, Clock]:
    clock = Clock()
    c = Console(file=io.StringIO(), width=width, height=height, force_terminal=True, color_system=None)
    rows = [(str(i), f"§{i}", f"Step {i}") for i in range(sections)]
    return LiveReporter(c, rows, clock=clock), clock


def line_of(lines: list[str], label: str) -> str:
    return next(ln for ln in lines if ln.startswith(label + " "))


def test_live_board_follows_a_section_through_running_output_and_verdict() -> None:
    rep, clock = live()
    rep(ev("run.start", run_id=7, kind="apply", resumed=True, target="local"))
    rep(ev("inputs", values={"MODE": "a"}, how={"MODE": "flag"}))
    rep(ev("section.start", section="0", title="Step 0", label="§0"))
    clock.t += 0.2
    rep(ev("section.verdict", section="0", label="§0", verdict="in-sync", detail="unchanged"))
    rep(ev("section.start", section="1", title="Step 1", label="§1"))
    rep(ev("step.start", section="1", block=0, role="act", attempt=1, line=40))
    rep(ev("step.output", section="1", block=0, text="\x1b[32mcompiling\x1b[0m\n50%\r90%"))
    clock.t += 2.5
    lines = board(rep)
    assert lines[0].startswith("director apply run 7 (resumed) · target local · MODE=a")
    assert "✓ in sync" in line_of(lines, "§0") and "0.2s unchanged" in line_of(lines, "§0")
    assert re.search(r"act\s+2\.5s", line_of(lines, "§1"))
    assert "· pending" in line_of(lines, "§2")
    assert any("§1 act · plan line 40" in ln for ln in lines)
    assert any("│ compiling" in ln for ln in lines) and any("│ 90%" in ln for ln in lines)
    clock.t += 1.0
    assert re.search(r"act\s+3\.5s", line_of(board(rep), "§1")), "the elapsed time grows with the clock"
    rep(ev("step.end", section="1", block=0, role="act", exit_code=0, duration_s=3.5, ok=True))
    rep(ev("section.verdict", section="1", label="§1", verdict="applied", detail=""))
    lines = board(rep)
    assert "✓ applied" in line_of(lines, "§1") and "3.5s" in line_of(lines, "§1")
    assert not any("compiling" in ln for ln in lines), "the tail goes with its section"
    rep(ev("run.state", run_id=7, to="completed", reason="done"))
    assert "· completed" in board(rep)[0]


def test_live_board_shows_retry_countdown_gate_and_interruption() -> None:
    rep, clock = live()
    rep(ev("run.start", run_id=1, kind="apply", resumed=False, target="cloudflare"))
    rep(ev("section.start", section="1", title="Step 1", label="§1"))
    rep(ev("step.start", section="1", block=0, role="act", attempt=1, line=3))
    rep(ev("step.end", section="1", block=0, role="act", exit_code=1, duration_s=0.1, ok=False))
    rep(ev("step.retry", section="1", block=0, attempt=1, delay_s=5.0))
    clock.t += 1.5
    assert "⏳ retry 2 in 3.5s" in line_of(board(rep), "§1")
    assert "attempt 1 failed" in line_of(board(rep), "§1")
    rep(ev("step.start", section="1", block=0, role="act", attempt=2, line=3))
    assert "act (attempt 2)" in line_of(board(rep), "§1")
    rep(ev("section.verdict", section="1", label="§1", verdict="applied", detail=""))
    rep(ev("section.start", section="2", title="Step 2", label="§2"))
    rep(ev("gate", section="2", title="Step 2", marker="🔴", note="", sha256="0" * 64, approved=None,
           how="prompt"))
    assert "⏸ awaiting approval" in line_of(board(rep), "§2")
    rep(ev("approval", section="2", sha256="0" * 64, operator="al", how="prompt"))
    rep(ev("step.start", section="2", block=0, role="act", attempt=1, line=9))
    # a teardown cancels an older apply run: not this run's outcome
    rep(ev("run.state", run_id=99, to="cancelled", reason="cancelled by teardown"))
    assert "cancelled" not in board(rep)[0]
    rep(ev("run.state", run_id=1, to="interrupted", reason="Ctrl-C"))
    lines = board(rep)
    assert "✗ interrupted" in line_of(lines, "§2") and "· interrupted" in lines[0]


def test_a_failed_blocks_output_stays_on_the_final_board() -> None:
    rep, _clock = live()
    rep(ev("run.start", run_id=1, kind="apply", resumed=False, target="cloudflare"))
    rep(ev("section.start", section="1", title="Step 1", label="§1"))
    rep(ev("step.start", section="1", block=0, role="act", attempt=1, line=5))
    rep(ev("step.output", section="1", block=0, text="error: quota exceeded\n"))
    rep(ev("step.end", section="1", block=0, role="act", exit_code=7, duration_s=0.1, ok=False))
    rep(ev("section.verdict", section="1", label="§1", verdict="failed", detail="exit 7"))
    rep(ev("run.state", run_id=1, to="failed", reason="exit 7"))
    rep.stop()
    lines = board(rep)
    assert "✗ failed" in line_of(lines, "§1") and "· failed" in lines[0]
    assert any("§1 act · plan line 5 · exit 7" in ln for ln in lines)
    assert any("│ error: quota exceeded" in ln for ln in lines)


@pytest.mark.parametrize(("sections", "height"), [(30, 24), (12, 12), (3, 8), (60, 10)])
def test_live_board_fits_the_terminal_however_many_sections(sections: int, height: int) -> None:
    rep, _clock = live(sections=sections, height=height)
    rep(ev("run.start", run_id=1, kind="apply", resumed=False, target="cloudflare"))
    running = sections // 2
    for i in range(running):
        rep(ev("section.start", section=str(i), title=f"Step {i}", label=f"§{i}"))
        rep(ev("section.verdict", section=str(i), label=f"§{i}", verdict="applied", detail=""))
    rep(ev("section.start", section=str(running), title="Step", label=f"§{running}"))
    rep(ev("step.start", section=str(running), block=0, role="act", attempt=1, line=1))
    rep(ev("step.output", section=str(running), block=0, text="".join(f"line {n} " + "x" * 300 + "\n"
                                                                     for n in range(40))))
    lines = board(rep, height=height)
    assert len(lines) <= height - 2, "\n".join(lines)
    assert any(ln.startswith(f"§{running} ") and "act" in ln for ln in lines), "the running section shows"
    assert all(len(ln) <= 100 for ln in lines), "long output lines are cut, not wrapped"
    if sections > height:
        assert any("sections done" in ln for ln in lines) or any("not reached yet" in ln for ln in lines)


def test_pause_erases_the_board_for_a_prompt_and_resume_draws_it_below_the_answer() -> None:
    stream = io.StringIO()
    c = Console(file=stream, width=80, height=24, force_terminal=True, color_system="standard")
    rep = LiveReporter(c, [("1", "§1", "Build"), ("2", "§2", "Ship")])
    rep.start()
    try:
        rep(ev("run.start", run_id=1, kind="apply", resumed=False, target="local"))
        rep(ev("section.start", section="1", title="Build", label="§1"))
        rep(ev("section.verdict", section="1", label="§1", verdict="applied", detail=""))
        rep.pause()
        c.print("Question? answer")
        rep.resume()
        rep(ev("section.start", section="2", title="Ship", label="§2"))
        rep(ev("section.verdict", section="2", label="§2", verdict="in-sync", detail=""))
        rep(ev("run.state", run_id=1, to="completed", reason=""))
    finally:
        rep.stop()
    screen = pyte.Screen(80, 24)
    pyte.Stream(screen).feed(stream.getvalue().replace("\n", "\r\n"))  # a tty's ONLCR
    lines = [ln.rstrip() for ln in screen.display if ln.strip()]
    assert lines[0] == "Question? answer", "the board before the prompt was erased, the prompt kept"
    assert lines[1].startswith("director apply run 1") and "completed" in lines[1]
    assert lines[2].startswith("§1") and "✓ applied" in lines[2]
    assert lines[3].startswith("§2") and "✓ in sync" in lines[3]
    assert len(lines) == 4, "one board, drawn once"


# ---------------------------------------------------------------------------------------------- prompts


def content(**kw: Any) -> GateContent:
    base: dict[str, Any] = dict(section_key="3", title="Deploy [bold]x[/]", marker="🔴", note="outward-facing",
                                quotes=("→ Live State: URL",), commands=('wrangler deploy --name "$W"\n',
                                                                         "echo [/] done\n"),
                                variables={"W": "orders-dev"}, inputs={"TRIGGER": "http"})
    base.update(kw)
    return GateContent(**base)


def test_gate_panel_names_section_reason_and_every_command_literally() -> None:
    c, buf = plain_console()
    gate_panel(c, content())
    text = buf.getvalue()
    assert "🔴 GATE · §3 Deploy [bold]x[/]" in text
    assert "why gated: outward-facing" in text
    assert "commands about to run (1 of 2), as they run:" in text and "commands about to run (2 of 2)" in text
    assert 'wrangler deploy --name "$W"' in text and "echo [/] done" in text  # no values known: as written
    assert "variables: W=orders-dev" in text and "inputs: TRIGGER=http" in text
    c, buf = plain_console()
    gate_panel(c, content(marker="💥", note="", context={"WORKER": "`orders-dev`"}))
    text = buf.getvalue()
    assert "💥 DESTRUCTIVE · §3" in text and "why gated: the plan marks this section 💥 destructive" in text
    assert "what the ledger says exists" in text and "WORKER" in text


def test_prompter_asks_until_a_listed_option_and_only_go_approves(monkeypatch: pytest.MonkeyPatch) -> None:
    c, buf = plain_console()
    answers = iter(["maybe", "HTTP", "", "yes", "go", " go "])
    monkeypatch.setattr(builtins, "input", lambda *_: next(answers))
    p = TerminalPrompter(c)
    calls: list[str] = []
    p.pause, p.resume = (lambda: calls.append("pause")), (lambda: calls.append("resume"))
    p.hold = lambda: calls.append("hold")
    inp = Input(1, "Trigger?", ("http", "cli"), "cli", "TRIGGER", "§3 gate", 0)
    assert p.ask_input(inp) == "http", "case-insensitive, recorded as the plan spells it"
    assert "Please select one of the available options" in buf.getvalue()
    assert p.ask_input(inp) == "cli", "Enter takes the default"
    assert [p.ask_go(content()), p.ask_go(content()), p.ask_go(content())] == [False, True, True]
    # the interview and a gate erase the board (drawn again, once, below the answer)
    assert calls == ["pause", "resume"] * 5


def test_prompter_end_of_input_declines_a_gate_and_cancels_the_interview(monkeypatch: pytest.MonkeyPatch) -> None:
    c, _buf = plain_console()

    def eof(*_: Any) -> str:
        raise EOFError

    monkeypatch.setattr(builtins, "input", eof)
    p = TerminalPrompter(c)
    assert p.ask_go(content()) is False
    with pytest.raises(KeyboardInterrupt):
        p.ask_input(Input(1, "Mode?", ("a", "b"), "a", "MODE", "", 0))


def test_ctrl_c_at_a_prompt_raises_even_under_a_handler_that_does_not() -> None:
    c, _buf = plain_console()
    seen: list[int] = []
    old = signal.signal(signal.SIGINT, lambda *_: seen.append(1))  # like the run's handler: only records
    try:
        p = TerminalPrompter(c)

        def interrupted_input(*_: Any) -> str:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)
            return "go"

        builtins_input = builtins.input
        builtins.input = interrupted_input
        try:
            with pytest.raises(KeyboardInterrupt):
                p.ask_go(content())
        finally:
            builtins.input = builtins_input
        assert seen == [] and signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, old)


# ---------------------------------------------------------------------------------------------- summary


class Report:
    def __init__(self, key: str, title: str, verdict: str, detail: str = "", duration_s: float = 0.0) -> None:
        self.key, self.title, self.verdict, self.detail, self.duration_s = key, title, verdict, detail, duration_s


def test_summary_table_counts_outcomes_and_prints_details_literally() -> None:
    c, buf = plain_console()
    summary_table(c, [Report("0", "Variables", "applied", "", 0.01), Report("1", "Deploy", "in-sync", "", 0.2),
                      Report("2", "Ship [x]", "failed", "exit 1: [/] \x1b[31mboom", 1.25),
                      Report("teardown", "Teardown", "awaiting-approval", "needs a human go")],
                  title="apply run 4")
    text = buf.getvalue()
    assert "\x1b" not in text
    assert not re.search(r"[┏┃━┡└┘┌─│]", text), "no box on a plain console"
    assert all(ln == ln.rstrip() for ln in text.splitlines()), "no trailing spaces"
    assert re.search(r"^  §2 Ship \[x\]\s+✗ failed\s+1\.2s  exit 1: \[/\] boom$", text, re.M), text
    assert re.search(r"^  teardown Teardown\s+⏸ awaiting approval\s+0\.0s  needs a human go$", text, re.M)
    assert "1 applied · 1 in sync · 1 failed · 1 awaiting approval · 1.5s" in text
    assert text.startswith("apply run 4")
    rec = Console(file=io.StringIO(), width=100, force_terminal=True, record=True)
    summary_table(rec, [Report("1", "Deploy", "applied", "", 0.2)], title="apply run 4", live=True)
    assert rec.export_text().strip() == "1 applied · 0.2s", "after the live board: only the caption"


def test_make_console_is_plain_without_a_terminal() -> None:
    c = make_console(False)  # pytest captures stdout: not a terminal
    assert not c.is_terminal and c.no_color


def test_importing_render_stays_cheap() -> None:
    code = ("import sys, director.ui.render; "
            "print(sorted(m for m in ('rich', 'rich.live', 'rich.syntax', 'rich.prompt', 'pygments', "
            "'director.run.engine') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]"


PRINTED = [
    ("a plain line", {}),
    ("brackets [bold]not markup[/]", {"markup": False, "highlight": False}),
    ("brackets [bold]read as markup[/]", {}),
    ("[link] and [/] alone", {}),
    ("a long line " + "x" * 300, {"markup": False}),
    ("wide 漢字 and emoji 🚀 :rocket:", {"highlight": False, "soft_wrap": True}),
    ("trailing spaces   ", {"markup": False}),
    ("a\ttab and a\rreturn", {"markup": False}),
    ("ansi \x1b[31mred\x1b[0m", {"markup": False}),
    ("two\nlines", {"markup": False}),
    ("ends with a newline\n", {"markup": False}),
    ("", {}),
    ("wrapped when asked " + "y " * 80, {"soft_wrap": False}),
]


@pytest.mark.parametrize(("text", "options"), PRINTED)
def test_the_plain_console_prints_what_rich_prints(text: str, options: dict[str, Any]) -> None:
    """`make_console(plain=True)` writes plain strings itself: byte for byte what rich's plain console writes."""
    ours = make_console(True)
    ours.file = mine = io.StringIO()
    ours.print(text, **options)
    rich = Console(file=io.StringIO(), no_color=True, force_terminal=False, highlight=False, emoji=False,
                   width=100, color_system=None, soft_wrap=True)  # fmt: skip
    rich.print(text, **options)
    assert mine.getvalue() == rich.file.getvalue()  # type: ignore[attr-defined]


def test_a_plain_run_never_imports_rich(tmp_path: Path) -> None:
    write_plan(tmp_path, CounterPlan(steps=[Step(), Step()]), name="p.md")
    code = ("import sys, runpy; sys.argv = ['director', 'apply', 'p.md', '--plain', '--non-interactive']\n"
            "try:\n    runpy.run_module('director', run_name='__main__')\n"
            "except SystemExit as e:\n    code = e.code\n"
            "print('RICH' if any(m.startswith('rich') for m in sys.modules) else 'NO RICH', code)")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert "apply completed" in r.stdout and r.stdout.rstrip().endswith("NO RICH 0"), r.stdout + r.stderr


# ---------------------------------------------------------------------------------------------- no terminal


def no_tty_env(**extra: str) -> dict[str, str]:
    return {"CI": "", "NO_COLOR": "", **extra}


@pytest.mark.parametrize("flags", [[], ["--plain"], ["--events", "-"]])
def test_piped_output_has_no_escape_sequences_even_when_blocks_print_them(
        tmp_path: Path, out: Path, flags: list[str]) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(extra=ANSI_BLOCK), Step()]))
    r = director("apply", str(plan), *flags, cwd=tmp_path, out=out, env=no_tty_env())
    assert r.returncode == 0, r.stdout + r.stderr
    view = r.stderr if flags == ["--events", "-"] else r.stdout
    assert "\x1b" not in view and "\x1b" not in r.stderr
    for line in ("│ red", "│ osc", "│ link", "│ charset", "│ bar 10%", "│ bar 100%", "│ cleared"):
        assert line in view, view
    assert "\x1b" not in plan.read_text(encoding="utf-8")


def test_a_failure_message_with_markup_like_output_is_reported(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(extra='echo "deploying [prod]"; echo "unbalanced [/] tag"; exit 1')]))
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 3, r.stderr
    failed = next(ln for ln in r.stdout.splitlines() if ln.startswith("failed: "))
    assert "deploying [prod] | unbalanced [/] tag" in failed, "markup-like text is printed as it is, not eaten"



def test_the_completed_message_names_sections_alike(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step()]))
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    # §0 (the variables) runs again in every new run, unchanged: in sync, not applied; §1 is observed
    assert "apply completed: in sync §0, §1; verified §2" in r.stdout, r.stdout


def test_a_failure_message_has_no_escape_sequences(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(extra=r"printf '\033(Bboom\033]0;t\033\\ end\n'; exit 1")]))
    r = director("apply", str(plan), cwd=tmp_path, out=out, env=no_tty_env())
    assert r.returncode == 3
    assert "boom end" in r.stdout and "\x1b" not in r.stdout


def test_writeback_strip_ansi_removes_what_a_terminal_would_not_show() -> None:
    from director.ledger.cells import strip_ansi

    assert strip_ansi("\x1b(Bx\x1b]0;t\x1b\\y\x1b=z") == "xyz"


def test_summary_after_ctrl_c_lists_the_interrupted_section(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(extra='echo started; sleep 60')]))
    env = dict(os.environ, COUNTER_OUT=str(out), CI="1", NO_COLOR="1")
    p = forkserver.Popen([sys.executable, "-m", "director", "apply", str(plan)], cwd=tmp_path, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not (out / "acts").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        p.send_signal(signal.SIGINT)
        stdout, _ = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 130
    assert re.search(r"^  §1 Step 1\s+✗ interrupted\s+\d+\.\ds  Ctrl-C$", stdout, re.M), stdout


# ---------------------------------------------------------------------------------------------- issue 13


def test_a_block_waiting_for_input_holds_the_board_and_shows_its_prompt() -> None:
    stream = io.StringIO()
    c = Console(file=stream, width=100, height=30, force_terminal=True, color_system=None)
    rep = LiveReporter(c, [("1", "§1", "Delete"), ("2", "§2", "After")], clock=Clock())
    rep.start()
    try:
        rep(ev("run.start", run_id=1, kind="apply", resumed=False, target="local"))
        rep(ev("section.start", section="1", title="Delete", label="§1"))
        rep(ev("step.start", section="1", block=0, role="act", attempt=1, line=9))
        rep(ev("step.output", section="1", block=0, text="deleting orders-dev\n? Are you sure? (Y/n) "))
        rep(ev("step.input", section="1", block=0, prompt="? Are you sure? (Y/n)"))
        assert not rep.live.is_started, "the board stops redrawing: the prompt stays visible, typing echoes"
        lines = board(rep)
        assert "⌨ waiting for your input" in line_of(lines, "§1")
        assert lines[-1] == "⌨ waiting for your input: ? Are you sure? (Y/n)"
        assert not any("│ ? Are you sure" in ln for ln in lines), "the prompt once, on its own line"
        assert any("│ deleting orders-dev" in ln for ln in lines)
        rep(ev("step.output", section="1", block=0, text="y\r\ndeleted\n"))
        rep(ev("step.input", section="1", block=0, prompt=None))
        assert rep.live.is_started, "the board resumes once the block's output goes on"
        lines = board(rep)
        assert not any("waiting for your input" in ln for ln in lines)
        assert "input received" in line_of(lines, "§1")
        rep(ev("step.end", section="1", block=0, role="act", exit_code=0, duration_s=3.0, ok=True))
        rep(ev("section.verdict", section="1", label="§1", verdict="applied", detail="", duration_s=3.0))
        rep(ev("run.state", run_id=1, to="completed", reason="done"))
    finally:
        rep.stop()
    lines = board(rep)
    kept = [ln for ln in lines if "waited for your input" in ln]
    assert kept and "§1 act · plan line 9" in kept[0], "the step that waited keeps its last lines on screen"
    assert any("│ deleted" in ln for ln in lines) and any("│ ? Are you sure? (Y/n)" in ln for ln in lines)


def test_plain_reporter_prints_one_line_for_a_block_waiting_for_input() -> None:
    c, buf = plain_console()
    rep = PlainReporter(c)
    rep(ev("step.input", section="1", block=0, prompt="? Are you sure? (Y/n)"))
    rep(ev("step.input", section="1", block=0, prompt=None))
    assert buf.getvalue().splitlines() == ["   ⌨ waiting for your input: ? Are you sure? (Y/n)"]


def test_the_bus_removes_control_sequences_from_output_and_prompts_even_cut_in_chunks() -> None:
    from director.run.events import Bus

    seen: list[dict[str, Any]] = []
    bus = Bus()
    bus.subscribe(seen.append)
    raw = "\x1b[1;31mred\x1b[0m\n\x1b]0;title\x07osc\nbar 10%\rbar 100%\n"
    for i in range(len(raw)):
        bus.emit("step.output", section="1", block=0, text=raw[i])
    bus.emit("step.input", section="1", block=0, prompt="\x1b[1m? Sure?\x1b[0m (Y/n) ")
    assert "".join(e["text"] for e in seen if e["type"] == "step.output") == "red\nosc\nbar 10%\rbar 100%\n"
    assert seen[-1]["prompt"] == "? Sure? (Y/n)"


def test_the_final_board_keeps_failed_steps_tails_and_titles_are_not_cut_at_140_columns() -> None:
    titles = ["Requires-discovery (read-only — pre-fill optional bindings from the cloud)",
              "Workflow class (+ optional HTTP front door)", "Bindings — `${SVC}.jsonc`"]
    clock = Clock()
    c = Console(file=io.StringIO(), width=140, height=40, force_terminal=True, color_system=None)
    rep = LiveReporter(c, [("discovery", "discovery", titles[0]), ("1", "§1", titles[1]), ("2", "§2", titles[2])],
                       clock=clock)
    rep(ev("run.start", run_id=1, kind="apply", resumed=False, target="local"))
    rep(ev("section.start", section="discovery", title=titles[0], label="discovery"))
    rep(ev("section.verdict", section="discovery", label="discovery", verdict="skipped",
           detail="skipped: precondition false (plan line 127, 128, 129)"))
    rep(ev("section.start", section="1", title=titles[1], label="§1"))
    rep(ev("step.start", section="1", block=0, role="act", attempt=1, line=5))
    rep(ev("step.output", section="1", block=0, text="transient error: quota\n"))
    rep(ev("step.end", section="1", block=0, role="act", exit_code=7, duration_s=0.1, ok=False))
    rep(ev("step.retry", section="1", block=0, attempt=1, delay_s=1.0))
    rep(ev("step.start", section="1", block=0, role="act", attempt=2, line=5))
    rep(ev("step.output", section="1", block=0, text="ok now\n"))
    rep(ev("step.end", section="1", block=0, role="act", exit_code=0, duration_s=0.1, ok=True))
    rep(ev("section.verdict", section="1", label="§1", verdict="applied", detail="", duration_s=0.4))
    lines = board(rep, width=140, height=40)
    for t in titles[:2]:
        assert any(t in ln for ln in lines), f"title cut at 140 columns: {t}\n" + "\n".join(lines)
    rep(ev("run.state", run_id=1, to="completed", reason="done"))
    lines = board(rep, width=140, height=40)
    assert "0.4s" in line_of(lines, "§1"), "the engine's duration (a gate's wait excluded)"
    assert any("§1 act · plan line 5 · exit 7" in ln for ln in lines), "the failed attempt's tail stays"
    assert any("│ transient error: quota" in ln for ln in lines)
    assert not any("ok now" in ln for ln in lines), "a step that passed leaves no panel"


def test_gate_panel_shows_the_consequences_and_the_stronger_word_for_destructive_gates() -> None:
    from director.run.gates import Review

    rv = Review(
        reasons=("input TRIGGER changed: cli → http", "observed: its verify failed (exit 1)"),
        ledger=("+ URL: from this section's output (now `—`)", "~ status: not-created → live (when the run completes)"),
        diffs=(("/w/orders.jsonc", "--- /w/orders.jsonc (on disk)\n+++ /w/orders.jsonc (regenerated)\n@@ -1 +1 @@\n-  \"workers_dev\": false,\n+  \"workers_dev\": true,"),),
        resources=("WORKER orders-dev (in orders.jsonc)",),
        expanded=('wrangler deploy --name "orders-dev"', ""),
        reasked="asked again: the approval by al@h at 2026-01-01 00:00:00 (prompt) was for other content",
        receipt_diff="--- approved\n+++ now\n@@ -1 +1 @@\n-old\n+new",
    )
    c, buf = plain_console()
    gate_panel(c, content(review=rv, commands=('wrangler deploy --name "$W"\n', "echo [/] done\n",
                                               "# write /w/orders.jsonc\n{\n  \"workers_dev\": true,\n}\n")))
    text = buf.getvalue()
    assert not re.search(r"[╭╮╰╯│─]", text) and all(ln == ln.rstrip() for ln in text.splitlines())
    for want in ("why it acts now:", "  input TRIGGER changed: cli → http",
                 "Live State changes:", "  + URL: from this section's output", "  ~ status: not-created → live",
                 "resources named:", "  WORKER orders-dev (in orders.jsonc)",
                 "file /w/orders.jsonc will be written (against what is on disk):",
                 '  -  "workers_dev": false,', '  +  "workers_dev": true,',
                 "commands about to run (1 of 2), as they run:", '  wrangler deploy --name "orders-dev"',
                 "asked again: the approval by al@h", "  -old", "  +new"):
        assert want in text, f"{want!r} not in:\n{text}"
    assert text.count("wrangler deploy --name") == 1, "each command once, as it runs"
    assert "to approve, type" not in text, "a 🔴 gate asks for go"
    c, buf = plain_console()
    gate_panel(c, content(marker="💥", review=Review(confirm="orders-dev", resources=("WORKER orders-dev",))))
    assert "to approve, type orders-dev (the name of what it destroys)" in buf.getvalue()


def test_a_destructive_gate_takes_only_its_word(monkeypatch: pytest.MonkeyPatch) -> None:
    from director.run.gates import Review

    c, _buf = plain_console()
    answers = iter(["go", "destroy", "orders-dev"])
    monkeypatch.setattr(builtins, "input", lambda *_: next(answers))
    p = TerminalPrompter(c)
    boom = content(marker="💥", review=Review(confirm="orders-dev"))
    assert [p.ask_go(boom), p.ask_go(boom), p.ask_go(boom)] == [False, False, True]

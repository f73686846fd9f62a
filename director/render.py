"""Rich output only: the operator's view of a run, the gate panel, prompts, summaries."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.panel import Panel
from rich.prompt import Prompt
from rich.spinner import Spinner
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from director.approve import GateContent
from director.events import Event
from director.model import Input
from director.writeback import strip_ansi

VERDICT_STYLE = {
    "in-sync": ("✓ in sync", "green"),
    "applied": ("✓ applied", "bold green"),
    "verified": ("✓ verified", "bold green"),
    "observed": ("· observed", "dim"),
    "failed": ("✗ failed", "bold red"),
    "awaiting-approval": ("⏸ awaiting approval", "bold yellow"),
    "will-apply": ("→ will apply", "yellow"),
    "needs-approval": ("⏸ needs approval", "bold yellow"),
    "blocked": ("… blocked", "dim yellow"),
    "will-verify": ("✔ will verify", "cyan"),
}


def verdict_text(verdict: str) -> Text:
    label, style = VERDICT_STYLE.get(verdict, (verdict, ""))
    return Text(label, style=style)


class PlainReporter:
    """Line-oriented view: one line per event that matters, output lines indented; no control sequences."""

    def __init__(self, console: Console) -> None:
        self.c = console
        self._partial: dict[tuple[str, int], str] = {}

    def __call__(self, ev: Event) -> None:
        t = ev["type"]
        c = self.c
        if t == "run.start":
            how = "resuming" if ev.get("resumed") else "starting"
            c.print(f"director: {how} {ev['kind']} run {ev['run_id']} (target {ev.get('target')})")
        elif t == "inputs":
            vals = ", ".join(f"{k}={v} ({ev['how'].get(k)})" for k, v in ev["values"].items())
            c.print(f"inputs: {vals or '(none)'}")
        elif t == "section.start":
            c.print(f"── {ev['label']} {ev['title']}")
        elif t == "step.start":
            rerun = " (re-run: it was running when Director died)" if ev.get("rerun") else ""
            attempt = f" attempt {ev['attempt']}" if ev.get("attempt", 1) > 1 else ""
            c.print(f"   ▶ {ev['role']} block (line {ev['line']}){attempt}{rerun}")
        elif t == "step.output":
            key = (ev["section"], ev["block"])
            buf = self._partial.get(key, "") + ev["text"].replace("\r\n", "\n").replace("\r", "\n")
            *lines, rest = buf.split("\n")
            self._partial[key] = rest
            for ln in lines:
                c.print(Text("     │ " + strip_ansi(ln)))
        elif t == "step.end":
            key = (ev["section"], ev["block"])
            rest = self._partial.pop(key, "")
            if rest:
                c.print(Text("     │ " + strip_ansi(rest)))
            mark = "ok" if ev["ok"] else f"exit {ev['exit_code']}"
            if ev.get("timed_out"):
                mark = "timed out"
            if ev.get("waited_for_input"):
                mark = "waited for keyboard input (non-interactive run)"
            c.print(f"   ■ {ev['role']} {mark} in {ev['duration_s']:.2f}s")
        elif t == "step.skip":
            c.print(f"   · {ev['role']} block {ev['block']}: {ev['reason']}")
        elif t == "step.retry":
            c.print(f"   ⏳ retrying in {ev['delay_s']:.1f}s (attempt {ev['attempt']} failed)")
        elif t == "section.verdict":
            label, _style = VERDICT_STYLE.get(ev["verdict"], (ev["verdict"], ""))
            detail = f" — {ev['detail']}" if ev.get("detail") else ""
            c.print(f"   {label}{detail}")
        elif t == "gate" and ev.get("approved") is False:
            c.print(f"   ⏸ {ev['marker']} gate: {ev['how']} (content sha256 {ev['sha256'][:12]}…)")
        elif t == "approval":
            c.print(f"   ✓ approved ({ev['how']}) sha256 {ev['sha256'][:12]}…")
        elif t == "check.warning":
            c.print(f"   ⚠ inconclusive: {ev['text']}")
        elif t == "target":
            c.print(f"   ⚙ target: {ev['op']}")
        elif t == "run.state" and ev["to"] not in ("running",):
            c.print(f"run {ev['run_id']}: {ev['to']} — {ev.get('reason', '')}")


class LiveReporter:
    """A live view at a terminal: sections with their state, the running block's spinner and output tail."""

    def __init__(self, console: Console, sections: list[tuple[str, str, str]]) -> None:
        self.c = console
        self.rows: dict[str, list[str]] = {k: [label, title, "pending", ""] for k, label, title in sections}
        self.order = [k for k, _l, _t in sections]
        self.current: tuple[str, int, str] | None = None
        self.started = 0.0
        self.tail: list[str] = []
        self.partial = ""
        self.live = Live(console=console, refresh_per_second=8, transient=False,
                         get_renderable=self._render)  # type: ignore[call-arg]

    def start(self) -> None:
        self.live.start()

    def stop(self) -> None:
        self.live.stop()

    def pause(self) -> None:
        self.live.stop()

    def resume(self) -> None:
        self.live.start()

    def _render(self) -> Group:
        table = Table(show_header=False, box=None, padding=(0, 1))
        for key in self.order:
            label, title, state, detail = self.rows[key]
            if state == "running" and self.current and self.current[0] == key:
                el = time.monotonic() - self.started
                cell: Any = Spinner("dots", text=Text(f"{self.current[2]} {el:4.1f}s", style="cyan"))
            else:
                cell = verdict_text(state) if state != "pending" else Text("· pending", style="dim")
            table.add_row(Text(label, style="bold"), Text(title), cell, Text(detail, style="dim"))
        parts: list[Any] = [table]
        if self.current and self.tail:
            parts.append(Panel(Text("\n".join(self.tail[-8:])), title="output", border_style="dim"))
        return Group(*parts)

    def __call__(self, ev: Event) -> None:
        t = ev["type"]
        if t == "section.start" and ev["section"] in self.rows:
            self.rows[ev["section"]][2] = "running"
            self.rows[ev["section"]][3] = ""
        elif t == "step.start":
            self.current = (ev["section"], ev["block"], ev["role"])
            self.started = time.monotonic()
            self.tail, self.partial = [], ""
        elif t == "step.output":
            buf = self.partial + ev["text"].replace("\r\n", "\n").replace("\r", "\n")
            *lines, self.partial = buf.split("\n")
            self.tail.extend(strip_ansi(ln) for ln in lines)
            self.tail = self.tail[-50:]
        elif t == "step.retry":
            if ev["section"] in self.rows:
                self.rows[ev["section"]][3] = f"⏳ retry in {ev['delay_s']:.0f}s"
        elif t == "section.verdict" and ev["section"] in self.rows:
            self.rows[ev["section"]][2] = ev["verdict"]
            self.rows[ev["section"]][3] = ev.get("detail", "")[:60]
            self.current = None
        self.live.refresh()


class TerminalPrompter:
    """Asks at a terminal: the interview (closed options, default on Enter) and the gate's typed `go`."""

    def __init__(self, console: Console, around: Callable[[], Any] | None = None) -> None:
        self.c = console
        self.pause: Callable[[], None] = lambda: None
        self.resume: Callable[[], None] = lambda: None

    def ask_input(self, inp: Input) -> str:
        self.pause()
        try:
            opts = " / ".join(f"[bold]{o}[/]" if o == inp.default else o for o in inp.options)
            self.c.print(f"[bold]{inp.number}. {inp.question}[/]  ({opts}; sets {inp.knob})")
            return Prompt.ask("  choose", choices=list(inp.options), default=inp.default, console=self.c)
        finally:
            self.resume()

    def ask_go(self, content: GateContent) -> bool:
        self.pause()
        try:
            gate_panel(self.c, content)
            answer = Prompt.ask("Type [bold]go[/] to run these commands (anything else declines)", console=self.c,
                                default="", show_default=False)
            return answer.strip() == "go"
        finally:
            self.resume()


def gate_panel(c: Console, content: GateContent) -> None:
    """The gate: why it is gated, the plan's note, what exists, and the exact commands."""
    kind = "destructive" if content.marker == "💥" else "gate"
    note = f" — {content.note}" if content.note else ""
    parts: list[Any] = [Text(f"{content.marker} {kind}: §{content.section_key} {content.title}{note}", style="bold")]
    for q in content.quotes:
        parts.append(Text("> " + q.replace("\n", "\n> "), style="italic"))
    if content.context:
        t = Table(title="what the ledger says exists", show_header=False, box=None)
        for k, v in content.context.items():
            t.add_row(k, v)
        parts.append(t)
    if content.inputs:
        parts.append(Text("inputs: " + ", ".join(f"{k}={v}" for k, v in content.inputs.items())))
    if content.variables:
        parts.append(Text("variables: " + ", ".join(f"{k}={v}" for k, v in content.variables.items()), style="dim"))
    for cmd in content.commands:
        parts.append(Syntax(cmd.rstrip("\n"), "bash", theme="ansi_dark", word_wrap=True))
    parts.append(Text(f"content sha256 {content.sha256}", style="dim"))
    c.print(Panel(Group(*parts), border_style="red" if content.marker == "💥" else "yellow"))


def summary_table(c: Console, reports: list[Any], title: str = "summary") -> None:
    """The end-of-run table: section, outcome, duration, attempts."""
    t = Table(title=title)
    t.add_column("section")
    t.add_column("outcome")
    t.add_column("detail", overflow="fold")
    t.add_column("time", justify="right")
    for r in reports:
        t.add_row(f"{r.key} {r.title}"[:48], verdict_text(r.verdict), r.detail, f"{r.duration_s:.1f}s")
    c.print(t)


def make_console(plain: bool, stderr: bool = False) -> Console:
    """A console that is plain (no colour, no control sequences) without a terminal or with NO_COLOR/--plain."""
    import os

    stream = sys.stderr if stderr else sys.stdout
    if plain or os.environ.get("NO_COLOR") or not stream.isatty():
        return Console(file=stream, no_color=True, force_terminal=False, highlight=False, emoji=False,
                       width=max(100, Console(file=stream).width), color_system=None, soft_wrap=True)
    return Console(file=stream, highlight=False)

"""The operator's view of a run: what both views share, the plain one, and the console every command uses.

Two views subscribe to the event bus (`director.run.events`):
- `PlainReporter` (here): one line per event that matters, block output indented; never a control sequence
  (CI logs, pipes, `NO_COLOR`, `--plain`);
- `LiveReporter` (`director.ui.board`): a rich `Live` board at a terminal.

rich is imported where it is used, never at module level: a plain run imports this module and prints only
plain lines (`make_console` gives it a `PlainConsole`, which imports rich only if something needs it).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, cast

from director.plan.model import key_label
from director.run.events import Flusher
from director.ui.lines import LineBuffer as LineBuffer  # re-exported: the views import it from here
from director.ui.lines import clean as clean
from director.ui.plainconsole import PlainConsole

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

    from director.run.events import Event

VERDICT_STYLE = {
    "pending": ("· pending", "dim"),
    "running": ("▶ running", "cyan"),
    "in-sync": ("✓ in sync", "green"),
    "applied": ("✓ applied", "bold green"),
    "verified": ("✓ verified", "bold green"),
    "observed": ("· observed", "dim"),
    "failed": ("✗ failed", "bold red"),
    "interrupted": ("✗ interrupted", "bold red"),
    "awaiting-approval": ("⏸ awaiting approval", "bold yellow"),
    "will-apply": ("→ will apply", "yellow"),
    "needs-approval": ("⏸ needs approval", "bold yellow"),
    "blocked": ("… blocked", "dim yellow"),
    "will-verify": ("✔ will verify", "cyan"),
    "skipped": ("· skipped", "dim"),
    "unconfirmed": ("⚠ unconfirmed", "yellow"),
    "absent": ("✓ absent", "green"),  # `check`: not there, as the ledger records (gone, not created)
    "drift": ("✗ drift", "bold red"),  # `check`: not as the ledger records
    "present": ("· present", "cyan"),  # `check` of a plan never applied here: there, nothing to drift from
}

# Run states after which nothing runs any more in this invocation.
FINAL_RUN_STATES = frozenset({"completed", "failed", "interrupted", "awaiting-approval", "cancelled"})



def seconds(value: object) -> str:
    """A time as a human reads it: RFC 3339 to the second (`2026-05-01T09:13:11+00:00`), whatever precision
    the journal keeps; anything that is not a time, as it is (`—` for none)."""
    from datetime import datetime

    if value is None or value == "":
        return "—"
    try:
        when = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    except ValueError:
        return str(value)
    return when.isoformat(timespec="seconds")


def fields(data: object, limit: int = 100) -> str:
    """A record's data as a human reads it -- `kind=apply, text=<2591 chars>` --, never a Python repr: a
    nested value as compact JSON, times to the second; cut to `limit` characters."""
    import json
    from datetime import date

    if isinstance(data, dict):
        parts = []
        for k, v in data.items():
            if isinstance(v, date):  # a YAML timestamp (`resolved_at`)
                v = seconds(v) if hasattr(v, "hour") else v.isoformat()
            shown = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)
            parts.append(f"{k}={shown}")
        text = ", ".join(parts)
    elif data is None:
        text = ""
    else:
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
    one = " ".join(clean(text).split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def is_plain(c: Console) -> bool:
    """A console for logs and pipes (`make_console`'s plain one): no colour, no box drawing, no padding."""
    return c.color_system is None and not c.is_terminal


def processes_words(ev: Event) -> str:
    """`stopped what an earlier attempt left: pid 41 (python3, SIGTERM)` (docs/processes.md)."""
    procs = ", ".join(
        f"pid {p['pid']} ({p['command']}" + (f", {p['signal']})" if "signal" in p else ")")
        for p in ev["processes"]
    )
    what = "stopped what an earlier attempt left" if ev["action"] == "stopped" else "still running"
    return f"{what}: {procs}"


def step_mark(ev: Event) -> str:
    """How a step ended, in words: `ok`, `exit 3`, `timed out`; never `ok` for a non-zero exit."""
    code = ev.get("exit_code")
    if ev.get("timed_out"):
        return "timed out"
    if ev.get("waited_for_input"):
        return "waited for keyboard input (non-interactive run)"
    if not ev.get("ok"):
        return f"exit {code}"
    if code not in (0, None):
        # judged, not failed: bash's status is a false precondition's (docs/verify-semantics.md, rule 4)
        return f"exit {code}: a precondition was false, its checks were skipped"
    return "ok"


def approval_words(ev: Event) -> str:
    """Who approved and how: `by alice at the prompt`, `with the receipt alice@host recorded at …`."""
    how = str(ev.get("how", ""))
    who = ev.get("operator", "")
    if how.startswith("receipt"):
        return f"with {how}"
    signed = f", signed by {ev['principal']} with {ev.get('fingerprint')}" if ev.get("principal") else ""
    return {
        "prompt": f"by {who} at the prompt",
        "flag": f"by {who} with --approve",
        "auto": f"by {who} with --auto-approve",
    }.get(how, f"by {who} ({how})") + signed


def target_words(target: object, fmt: str = " · target {}") -> str:
    """The target as a run's header names it; nothing for a plan that uses none."""
    return "" if target in (None, "", "none") else fmt.format(target)


def target_op(ev: Event) -> str:
    """What a `target` event says: a file template written (any plan), or the target's own operation."""
    if ev.get("op") == "template-written":
        return f"✎ wrote {ev.get('detail')}"
    return f"⚙ target: {ev.get('op')}"


def verdict_text(verdict: str) -> Text:
    """A section verdict as a short styled label."""
    from rich.text import Text

    label, style = VERDICT_STYLE.get(verdict, (verdict, ""))
    return Text(label, style=style)


class PlainReporter:
    """Line-oriented view: one line per event that matters, output lines indented; no control sequences."""

    def __init__(self, console: Console) -> None:
        self.c = console
        self._buffers: dict[tuple[str, int], LineBuffer] = {}
        self._flusher = Flusher(console.file)
        self._headed: set[str] = set()  # sections whose `── §N title` line was printed

    def _say(self, line: str) -> None:
        # A plain line as it is: no markup (titles, details and block output may contain `[...]`), no style,
        # no wrapping, so rich's render pipeline (about 0.1 ms a line: a resume says 1,000 of them) is not
        # needed; flushed whenever Director may wait next (`Flusher`), so that a pipe follows the run live.
        self.c.file.write(clean(line).rstrip() + "\n")

    def _out(self, line: str) -> None:
        self._say("     │ " + line)

    def __call__(self, ev: Event) -> None:
        self._show(ev)
        self._flusher.after(ev["type"])

    def _show(self, ev: Event) -> None:
        t = ev["type"]
        say = self._say
        if t == "run.start":
            how = "resuming" if ev.get("resumed") else "starting"
            target = target_words(ev.get("target"), " (target {})")
            say(f"director: {how} {ev['kind']} run {ev['run_id']}{target}")
        elif t == "inputs":
            vals = ", ".join(f"{k}={v} ({ev['how'].get(k)})" for k, v in ev["values"].items())
            say(f"inputs: {vals or '(none)'}")
        elif t == "section.start":
            self._headed.add(ev["section"])
            say(f"── {ev.get('label') or key_label(ev['section'])} {ev['title']}")
        elif t == "step.start":
            rerun = " (re-run: it was running when Director died)" if ev.get("rerun") else ""
            attempt = f" attempt {ev['attempt']}" if ev.get("attempt", 1) > 1 else ""
            say(f"   ▶ {ev['role']} block (line {ev['line']}){attempt}{rerun}")
        elif t == "step.output":
            buf = self._buffers.setdefault((ev["section"], ev["block"]), LineBuffer())
            for ln in buf.feed(ev["text"]):
                self._out(ln)
        elif t == "step.end":
            buf = self._buffers.pop((ev["section"], ev["block"]), LineBuffer())
            for ln in buf.flush():
                self._out(ln)
            say(f"   ■ {ev['role']} {step_mark(ev)} in {ev['duration_s']:.2f}s")
        elif t == "step.input":
            if ev.get("prompt") is not None:
                say(f"   ⌨ waiting for your input: {ev['prompt']}")
        elif t == "step.skip":
            say(f"   · {ev['role']} block {ev['block']}: {ev['reason']}")
        elif t == "step.retry":
            say(f"   ⏳ retrying in {ev['delay_s']:.1f}s (attempt {ev['attempt']} failed)")
        elif t == "section.verdict":
            if ev["section"] not in self._headed:  # `plan`/`check`: a verdict names its section first
                self._headed.add(ev["section"])
                say(f"── {ev.get('label') or key_label(ev['section'])} {ev.get('title', '')}")
            label, _style = VERDICT_STYLE.get(ev["verdict"], (ev["verdict"], ""))
            detail = f" — {ev['detail']}" if ev.get("detail") else ""
            say(f"   {label}{detail}")
        elif t == "gate" and ev.get("approved") is False:
            say(f"   ⏸ {ev['marker']} gate: {ev['how']} (content sha256 {ev['sha256'][:12]}…)")
        elif t == "approval":
            say(f"   ✓ approved {approval_words(ev)} (content sha256 {ev['sha256'][:12]}…)")
        elif t == "approval.refused":
            say(f"   ✗ {ev['reason']}")
        elif t == "check.warning":
            say(f"   ⚠ inconclusive: {ev['text']}")
        elif t == "target":
            say(f"   {target_op(ev)}")
        elif t == "processes":
            say(f"   ⚙ {processes_words(ev)}")
        elif t == "run.state" and ev["to"] != "running":
            say(f"run {ev['run_id']}: {ev['to']} — {ev.get('reason', '')}")


def make_console(plain: bool, stderr: bool = False) -> Console:
    """A plain console (no colour, no control sequences) without a terminal or with NO_COLOR/--plain."""
    stream = sys.stderr if stderr else sys.stdout
    if plain or os.environ.get("NO_COLOR") or not stream.isatty():
        # rich's plain console, imported when something needs more than a plain line (`PlainConsole`)
        return cast("Console", PlainConsole(stream))
    from rich.console import Console

    return Console(file=stream, highlight=False)

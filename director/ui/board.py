"""The live board at a terminal (rich `Live`): every section with its state, the running block with a spinner
and its elapsed time, the tail of its output, ⏳ retry waits; at the end, the run's summary.

The interview and a gate pause it (the board is erased, the question or the gate panel is printed and stays
in the scrollback: the gate has the whole screen, and the board is on it once); a block waiting at its
prompt holds it (the board stays on screen as it is, the prompt goes below it, typing echoes); it resumes
below the answer. When the run ends the board is the summary: every section with its outcome and time, and
the last lines of each step that failed or waited for input.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from director.plan.model import key_label
from director.ui.render import (
    FINAL_RUN_STATES,
    VERDICT_STYLE,
    LineBuffer,
    approval_words,
    clean,
    processes_words,
    step_mark,
    target_op,
    target_words,
    verdict_text,
)

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.live import Live
    from rich.table import Table

    from director.run.events import Event

@dataclass
class _Row:
    """One section on the board."""

    key: str
    label: str
    title: str
    state: str = "pending"
    detail: str = ""
    started: float | None = None
    duration: float | None = None


@dataclass
class _Block:
    """The block running now (or the last one, until its section's verdict)."""

    section: str
    block: int
    role: str
    line: int
    attempt: int
    started: float
    ended: float | None = None
    output: LineBuffer = field(default_factory=lambda: LineBuffer(overwrite=True))
    tail: list[str] = field(default_factory=list)
    prompted: str | None = None  # the prompt it waited at for the operator's input, if it did


TAIL_LINES = 8
KEPT_LINES = 6  # lines kept on the final board of each step that failed or waited for input
STATE_WIDTH = 26  # the state column: `verify (attempt 2)  12.3s` with its spinner
DETAIL_MIN = 24
TITLE_KEEP = 32  # a title's characters kept on a narrow board before its detail is squeezed


class LiveReporter:
    """A live view at a terminal: sections with their state, the running block's spinner and output tail.

    Events arrive on the engine's thread, rich refreshes on its own: state changes happen under a lock and
    the board is rendered from that state, so a refresh never sees half an update. Stopping or starting the
    `Live` happens outside the lock (stopping waits for the refresh thread, which may be waiting for it).
    """

    def __init__(self, console: Console, sections: list[tuple[str, str, str]],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.c = console
        self.clock = clock
        self.rows: dict[str, _Row] = {k: _Row(k, label, title) for k, label, title in sections}
        self.current: _Block | None = None
        self.retry: tuple[str, float, int] | None = None  # section, until (clock), attempt that failed
        self.header = ""  # `apply run 3 (resumed)`
        self.header_rest = ""  # ` · target local · AUTH=token`: what an 80-column line may cut
        self.note = ""
        self.outcome: str | None = None
        self.run_started: float | None = None
        self.run_id: int | None = None
        self.kind = ""
        self.waiting: tuple[str, str] | None = None  # (section, prompt) while a block waits for the operator
        self.kept: list[tuple[str, list[str]]] = []  # (title, last lines) of steps that failed or waited
        self._held_for_input = False
        self._lock = threading.RLock()
        self.live: Live = self._new_live()

    def _new_live(self) -> Live:
        from rich.live import Live

        return Live(console=self.c, refresh_per_second=8, transient=False, get_renderable=self._render)

    # -------------------------------------------------------------- lifecycle

    def start(self) -> None:
        """Show the board."""
        if self.live.is_started:
            return
        # A fresh Live each time: a stopped one remembers the height it last drew (and would move the cursor
        # up over the prompt and answer printed since) and leaves its overflow "visible".
        self.live = self._new_live()
        self.live.start(refresh=True)

    def stop(self) -> None:
        """Leave the final board on the screen: it is the run's summary. Before a run started (Ctrl-C at
        the interview) there is nothing to sum up: the board of pending sections is erased."""
        with self._lock:
            self.current = None
            self.waiting = None
        self._held_for_input = False
        if self.run_id is None:
            self.pause()
            return
        self.live.stop()

    def pause(self) -> None:
        """Erase the board so a question has the screen; `resume` draws it again below the answer."""
        if not self.live.is_started:
            return
        self.live.transient = True
        try:
            self.live.stop()
        finally:
            self.live.transient = False

    def hold(self) -> None:
        """Stop redrawing and leave the board on screen as it is: a gate panel or a prompt goes below it."""
        if self.live.is_started:
            self.live.stop()

    def resume(self) -> None:
        """Draw the board again after a prompt."""
        self.start()

    # -------------------------------------------------------------- rendering

    def _row_cell(self, row: _Row, now: float) -> RenderableType:
        from rich.spinner import Spinner
        from rich.text import Text

        cur = self.current
        if self.waiting is not None and self.waiting[0] == row.key:
            return Text("⌨ waiting for your input", style="bold yellow")
        if self.retry is not None and self.retry[0] == row.key and row.state == "running":
            left = max(0.0, self.retry[1] - now)
            return Spinner("dots", text=Text(f"⏳ retry {self.retry[2] + 1} in {left:.1f}s", style="yellow"))
        if row.state == "running" and cur is not None and cur.section == row.key and cur.ended is None:
            attempt = f" (attempt {cur.attempt})" if cur.attempt > 1 else ""
            return Spinner("dots", text=Text(f"{cur.role}{attempt} {now - cur.started:4.1f}s", style="cyan"))
        if row.state == "running":
            return Text("▶ running", style="cyan")
        return verdict_text(row.state)

    def _visible_rows(self) -> list[_Row]:
        if self.kind == "teardown":  # a teardown runs §0 and the Teardown section, not the numbered steps
            return [r for r in self.rows.values() if r.state != "pending" or r.key == "teardown"]
        return list(self.rows.values())

    def _board_rows(self, budget: int) -> list[_Row | str]:
        """The rows that fit in `budget` lines: finished sections fold first, then those not reached yet."""
        rows: list[_Row | str] = list(self._visible_rows())
        if len(rows) <= budget:
            return rows
        lead = 0
        for r in rows:
            if isinstance(r, str) or r.state in ("pending", "running", "awaiting-approval"):
                break
            lead += 1
        fold = min(lead, len(rows) - budget + 1)
        if fold > 1:
            rows = [f"✓ {fold} sections done", *rows[fold:]]
        if len(rows) > budget:
            keep = max(1, budget - 1)
            hidden = len(rows) - keep
            rows = [*rows[:keep], f"· {hidden} more not reached yet"]
        return rows

    def _render(self) -> RenderableType:
        with self._lock:
            return self._render_locked()

    def _table(self, rows: list[_Row | str], now: float) -> Table:
        from rich.table import Table
        from rich.text import Text

        width = self.c.size.width
        labels = [r.label for r in rows if isinstance(r, _Row)] or [""]
        label_w = max(len(x) for x in labels)
        titles = [len(clean(r.title)) if isinstance(r, _Row) else len(r) for r in rows] or [0]
        details = [
            len(f"{r.duration:.1f}s " if r.duration is not None else "") + len(clean(r.detail))
            for r in rows
            if isinstance(r, _Row)
        ] or [0]
        # The final board's states are short labels; a running board keeps room for a spinner and its time.
        state_w = STATE_WIDTH if not self.outcome else 1 + max(
            [len(VERDICT_STYLE.get(r.state, (r.state, ""))[0]) for r in rows if isinstance(r, _Row)] or [9]
        )
        # The title gets what it needs, the detail what is left; on a narrow terminal (80 columns) the title
        # keeps what the details leave it, at least TITLE_KEEP characters: the detail is the first to be cut.
        avail = width - label_w - state_w - 3
        leave = min(max(details), DETAIL_MIN)
        title_w = max(1, min(max(titles), max(avail - leave, min(avail - 8, TITLE_KEEP))))
        detail_w = max(1, width - label_w - title_w - state_w - 3)
        table = Table.grid(padding=(0, 1))
        table.add_column(no_wrap=True, width=label_w)
        table.add_column(no_wrap=True, overflow="ellipsis", width=title_w)
        table.add_column(no_wrap=True, overflow="ellipsis", width=state_w)
        table.add_column(no_wrap=True, overflow="ellipsis", style="dim", max_width=detail_w)
        for row in rows:
            if isinstance(row, str):
                table.add_row(Text(""), Text(row, style="dim"), Text(""), Text(""))
                continue
            dur = f"{row.duration:.1f}s " if row.duration is not None and row.state != "running" else ""
            table.add_row(Text(row.label, style="bold"), Text(clean(row.title)), self._row_cell(row, now),
                          Text(dur + clean(row.detail)))
        return table

    def _render_locked(self) -> RenderableType:
        from rich.console import Group
        from rich.panel import Panel
        from rich.text import Text

        now = self.clock()
        parts: list[RenderableType] = []
        elapsed = f" · {now - self.run_started:.0f}s" if self.run_started is not None else ""
        head = Text(no_wrap=True, overflow="ellipsis")
        head.append("director ", style="bold")
        head.append(self.header or "starting", style="dim")
        if self.outcome:  # before what may be cut: an 80-column line always says how the run ended
            head.append(f" · {self.outcome}", style=_outcome_style(self.outcome))
        head.append(self.header_rest + elapsed, style="dim")
        parts.append(head)
        if self.outcome:
            # The final board is the run's summary: every row, and what failed or waited said.
            parts.append(self._table(list(self._visible_rows()), now))
            for title, lines in self.kept:
                parts.append(Panel(Text("\n".join(lines), no_wrap=True, overflow="ellipsis"), title=title,
                                   title_align="left", border_style="dim", height=len(lines) + 2))
            return Group(*parts)

        height = max(6, self.c.size.height - 2)  # keep a line for the cursor and the prompt that may follow
        cur = self.current
        tail: list[str] = []
        if cur is not None:
            tail = list(cur.tail)
            if cur.output.partial and self.waiting is None:  # a prompt is shown on its own line below
                tail.append(cur.output.partial)
        tail = tail[-TAIL_LINES:]
        waiting_line = 1 if self.waiting is not None else 0
        panel_h = len(tail) + 2 if tail else 0
        board_budget = height - 1 - (1 if self.note else 0) - waiting_line
        if panel_h and board_budget - panel_h < min(len(self.rows), 3):
            tail = tail[-max(0, board_budget - min(len(self.rows), 3) - 2):] if board_budget > 5 else []
            panel_h = len(tail) + 2 if tail else 0
        board_budget -= panel_h
        parts.append(self._table(self._board_rows(max(1, board_budget)), now))
        if self.note:
            parts.append(Text(clean(self.note), style="dim", no_wrap=True, overflow="ellipsis"))
        if cur is not None and tail:
            body = Text("\n".join(tail), no_wrap=True, overflow="ellipsis")
            title = self._block_title(cur) + ("" if cur.ended is None else " · done")
            parts.append(Panel(body, title=title, title_align="left", border_style="dim",
                               height=len(tail) + 2))
        if self.waiting is not None:
            parts.append(Text(f"⌨ waiting for your input: {clean(self.waiting[1])}", style="bold yellow",
                              no_wrap=True, overflow="ellipsis"))
        return Group(*parts)

    def _block_title(self, cur: _Block) -> str:
        label = self.rows[cur.section].label if cur.section in self.rows else key_label(cur.section)
        attempt = f" · attempt {cur.attempt}" if cur.attempt > 1 else ""
        return f"{label} {cur.role} · plan line {cur.line}{attempt}"

    # -------------------------------------------------------------- events

    def _row(self, key: str, title: str = "", label: str | None = None) -> _Row:
        if key not in self.rows:
            self.rows[key] = _Row(key, label or key_label(key), title)
        return self.rows[key]

    def __call__(self, ev: Event) -> None:
        t = ev["type"]
        with self._lock:
            changed = self._apply(t, ev)
        if changed == "hold":
            if self.live.is_started:
                self._held_for_input = True
                self.hold()
        elif self._held_for_input and self.waiting is None:
            self._held_for_input = False
            self.resume()
        elif changed and self.live.is_started:
            self.live.refresh()

    def _keep(self, cur: _Block, why: str) -> None:
        lines = [ln for ln in cur.tail if ln.strip()][-KEPT_LINES:]
        if cur.prompted is not None and (not lines or lines[-1] != cur.prompted):
            lines = [*lines, cur.prompted][-KEPT_LINES:]
        self.kept.append((f"{self._block_title(cur)} · {why}", lines or ["(no output)"]))

    def _apply(self, t: str, ev: Event) -> bool | str:
        now = self.clock()
        if t == "run.start":
            resumed = " (resumed)" if ev.get("resumed") else ""
            self.header = f"{ev['kind']} run {ev['run_id']}{resumed}"
            self.header_rest = target_words(ev.get("target"))
            self.run_started, self.run_id, self.outcome = now, ev.get("run_id"), None
            self.kind = str(ev.get("kind", ""))
        elif t == "inputs":
            vals = " ".join(f"{k}={v}" for k, v in ev.get("values", {}).items())
            if vals:
                self.header_rest += f" · {vals}"
        elif t == "section.start":
            row = self._row(ev["section"], ev.get("title", ""), ev.get("label"))
            row.state, row.detail, row.started, row.duration = "running", "", now, None
        elif t == "step.start":
            self.retry = None
            self.waiting = None
            self.current = _Block(ev["section"], ev["block"], ev["role"], ev.get("line", 0),
                                  ev.get("attempt", 1), now)
            row = self._row(ev["section"])
            if row.state != "running":
                row.state, row.started = "running", row.started or now
            row.detail = ""
        elif t == "step.output":
            cur = self.current
            if cur is None or (cur.section, cur.block) != (ev["section"], ev["block"]):
                return False
            cur.tail = [*cur.tail, *cur.output.feed(ev["text"])][-50:]
            return False  # the refresh thread draws it: a refresh per chunk costs more than the block
        elif t == "step.input":
            prompt = ev.get("prompt")
            if prompt is None:
                self.waiting = None
                row = self._row(ev["section"])
                row.detail = "input received"
                return True
            cur = self.current
            if cur is not None and (cur.section, cur.block) == (ev["section"], ev["block"]):
                cur.prompted = str(prompt)
            self.waiting = (ev["section"], str(prompt))
            self._row(ev["section"]).detail = f"block {ev['block']} asks; type your answer below"
            return "hold"
        elif t == "step.end":
            self.waiting = None
            cur = self.current
            if cur is not None and (cur.section, cur.block) == (ev["section"], ev["block"]):
                cur.ended = now
                cur.tail = [*cur.tail, *cur.output.flush()][-50:]
                if not ev.get("ok") and ev.get("role") != "observe":
                    self._keep(cur, step_mark(ev))
                elif cur.prompted is not None:
                    self._keep(cur, "waited for your input")
            if not ev.get("ok"):
                why = "timed out" if ev.get("timed_out") else f"exit {ev.get('exit_code')}"
                if ev.get("waited_for_input"):
                    why = "waited for keyboard input"
                note = "not in place yet" if ev.get("role") == "observe" else "failed"
                self._row(ev["section"]).detail = f"{ev.get('role')} {why}: {note}"
        elif t == "step.skip":
            self._row(ev["section"]).detail = f"{ev.get('role')} block {ev.get('block')}: {ev.get('reason')}"
        elif t == "step.retry":
            self.retry = (ev["section"], now + float(ev.get("delay_s", 0.0)), int(ev.get("attempt", 1)))
            self._row(ev["section"]).detail = f"attempt {ev.get('attempt')} failed"
        elif t == "section.verdict":
            row = self._row(ev["section"], label=ev.get("label"))
            row.state, row.detail = ev["verdict"], ev.get("detail") or ""
            if ev.get("duration_s") is not None:
                row.duration = float(ev["duration_s"])  # the engine's: a human's wait at a gate excluded
            else:
                row.duration = now - row.started if row.started is not None else None
            cur = self.current
            if cur is not None and cur.section == ev["section"]:
                self.current = None
            if self.retry is not None and self.retry[0] == ev["section"]:
                self.retry = None
        elif t == "gate":
            row = self._row(ev["section"], ev.get("title", ""))
            row.state = "awaiting-approval"
            word = (ev.get("content") or {}).get("review", {}).get("confirm") or "go"
            how = str(ev.get("how", ""))
            asking = ev.get("approved") is None and how == "prompt"
            row.detail = f"waiting for a typed {word}" if asking else {
                "elsewhere": "waiting for an approval from elsewhere"}.get(how, how)  # fmt: skip
            self.current = None
        elif t == "approval":
            row = self._row(ev["section"])
            row.state, row.detail = "running", f"approved {approval_words(ev)}"
        elif t == "check.warning":
            self._row(ev["section"]).detail = f"⚠ inconclusive: {ev.get('text')}"
        elif t == "target":
            self.note = target_op(ev)
        elif t == "processes":
            self.note = f"⚙ {processes_words(ev)}"
        elif t == "run.state":
            to = str(ev.get("to"))
            if to not in FINAL_RUN_STATES or ev.get("run_id") != self.run_id:
                return False
            self.outcome = to
            self.waiting = None
            for row in self.rows.values():
                if row.state == "running":
                    row.state = {"interrupted": "interrupted", "failed": "failed"}.get(to, row.state)
                    row.duration = now - row.started if row.started is not None else None
            self.retry = None
            self.current = None
            self.note = ""
        else:
            return False
        return True


def _outcome_style(outcome: str) -> str:
    return {"completed": "bold green", "awaiting-approval": "bold yellow"}.get(outcome, "bold red")

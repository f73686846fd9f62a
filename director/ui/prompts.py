"""At a terminal: the interview, the gate panel and the typed `go`; Ctrl-C at a prompt cancels it."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.text import Text

from director.plan import markers
from director.plan.model import key_label
from director.ui.render import clean

if TYPE_CHECKING:
    from director.plan.model import Input
    from director.run.gates import Arrival, Elsewhere, GateContent


@contextmanager
def _cancellable() -> Iterator[None]:
    """Ctrl-C at a prompt cancels it (the run's own handler only stops a running block, and would leave the
    operator stuck at the question)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def cancel(_sig: int, _frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, cancel)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


class TerminalPrompter:
    """Asks at a terminal: the interview (closed options, default on Enter) and the gate's typed `go`
    (for 💥, the resource's name or `destroy`: what the panel says).

    Ctrl-C (or end of input) at the interview cancels the command; at a gate, Ctrl-C interrupts the run and
    end of input declines. `pause` (erase the live view), `hold` (freeze it where it is: the gate panel goes
    below the board) and `resume` are set by the caller.
    """

    def __init__(self, console: Console) -> None:
        self.c = console
        self.pause: Callable[[], None] = lambda: None
        self.hold: Callable[[], None] = lambda: None
        self.resume: Callable[[], None] = lambda: None

    def ask_input(self, inp: Input) -> str:
        """One Provisioning Inputs question; re-asked until the answer is one of its options."""
        from rich.prompt import Prompt

        self.pause()
        try:
            q = Text()
            q.append(f"{inp.number}. {clean(inp.question)}", style="bold")
            q.append("  (")
            for i, o in enumerate(inp.options):
                q.append(" / " if i else "")
                q.append(o, style="bold" if o == inp.default else "")
            q.append(f"; sets {inp.knob}")
            if inp.gates and inp.gates.strip() not in ("—", "-"):
                q.append(f"; {clean(inp.gates)}", style="dim")
            q.append(")")
            self.c.print(q)
            with _cancellable():
                try:
                    return Prompt.ask("  choose", choices=list(inp.options), default=inp.default,
                                      console=self.c, case_sensitive=False)
                except EOFError:
                    raise KeyboardInterrupt from None
        finally:
            self.resume()

    def ask_go(self, content: GateContent, elsewhere: Elsewhere | None = None) -> bool | Arrival:
        """Show the gate below the board; only the typed confirmation (`go`, for 💥 stronger) approves.
        With `elsewhere`, an approval from elsewhere arriving first answers instead (`ui.race`)."""
        self.hold()
        try:
            if elsewhere is None or elsewhere.panel:
                gate_panel(self.c, content)
            if elsewhere is None:
                return confirm(self.c, content, "to run these commands")
            from director.ui.race import race

            with _cancellable():
                return race(self.c, content, "to run these commands", elsewhere)
        finally:
            self.resume()


def confirm(c: Console, content: GateContent, what: str) -> bool:
    """Ask for the gate's confirmation word; True only when it is typed exactly (end of input: False)."""
    from rich.prompt import Prompt

    word = content.review.confirm or "go"
    question = Text("Type ")
    question.append(word, style="bold")
    question.append(f" {what} (anything else declines: the run stops here)")
    with _cancellable():
        try:
            answer = Prompt.ask(question, console=c, default="", show_default=False)
        except EOFError:
            return False
    return answer.strip() == word


def gate_panel(c: Console, content: GateContent) -> None:
    """The gate: which section, why gated, why it acts now, what it changes (ledger, files, resources),
    the exact commands (and their variables expanded), and what the operator types to approve."""
    from rich.syntax import Syntax

    from director.ui.render import is_plain

    plain = is_plain(c)
    rv = content.review
    row = markers.by_glyph(content.marker) or markers.rule(markers.Marker.GATE)
    parts: list[RenderableType] = []

    def heading(text: str) -> None:
        parts.append(Text(text, style="bold"))

    def listing(lines: list[str] | tuple[str, ...], style: str = "") -> None:
        for ln in lines:
            parts.append(Text("  " + clean(ln), style=style))

    why = Text()
    why.append("why gated: ", style="bold")
    why.append(clean(content.note) if content.note else "the plan marks this section " + row.gate_reason)
    parts.append(why)
    for q in content.quotes:
        parts.append(Text("> " + clean(q).replace("\n", "\n> "), style="italic"))
    if rv.reasked:
        parts.append(Text(clean(rv.reasked), style="bold yellow"))
        if rv.receipt_diff:
            parts.append(_diff_text(rv.receipt_diff))
    if rv.reasons:
        heading("why it acts now (not in sync):")
        listing(rv.reasons)
    if content.context:
        heading("what the ledger says exists:")
        width = max(len(k) for k in content.context)
        listing([f"{k:<{width}}  {v}" for k, v in content.context.items()])
    if rv.resources:
        heading("resources named:")
        listing(rv.resources)
    if rv.ledger:
        heading("Live State changes:")
        for ln in rv.ledger:
            style = {"+": "green", "-": "red", "~": "yellow"}.get(ln[:1], "")
            parts.append(Text("  " + clean(ln), style=style))
    if content.inputs:
        parts.append(Text("inputs: " + ", ".join(f"{k}={v}" for k, v in content.inputs.items())))
    if content.variables:
        parts.append(Text("variables: " + ", ".join(f"{k}={clean(v)}" for k, v in content.variables.items()),
                          style="dim"))
    diffs = dict(rv.diffs)
    act = [cmd for cmd in content.commands if not cmd.startswith("# write ")]
    writes = [cmd for cmd in content.commands if cmd.startswith("# write ")]
    for cmd in writes:
        path, _, body = cmd.removeprefix("# write ").partition("\n")
        if path in diffs:
            heading(f"file {path} will be written (against what is on disk):")
            parts.append(_diff_text(diffs[path]))
        else:
            heading(f"file {path} will be written (unchanged on disk):")
            parts.append(Text(body.rstrip("\n"), style="dim"))
    n = len(act)
    for i, cmd in enumerate(act, start=1):
        heading(f"commands about to run{f' ({i} of {n})' if n > 1 else ''}:")
        parts.append(Text(cmd.rstrip("\n")) if plain
                     else Syntax(cmd.rstrip("\n"), "bash", theme="ansi_dark", word_wrap=True))
        exp = rv.expanded[i - 1] if i - 1 < len(rv.expanded) else ""
        if exp:
            parts.append(Text("  with its variables expanded:", style="dim"))
            listing(exp.splitlines(), style="cyan")
    if not act and not writes:
        parts.append(Text("no command: the approval covers the section as written", style="dim"))
    parts.append(Text(f"content sha256 {content.sha256}", style="dim"))
    word = rv.confirm or "go"
    if word != "go":
        say = Text("to approve, type ", style="bold red")
        say.append(word, style="bold")
        say.append(" (the name of what it destroys)" if word != "destroy" else " (no resource is named)")
        parts.append(say)
    where = f"{key_label(content.section_key)} {clean(content.title)}"
    title = Text(f"{content.marker} {row.gate_title} · {where}", style="bold")
    if plain:
        # logs and pipes: the same content without a box (no drawing characters, no padding)
        for part in [title, *parts]:
            c.print(part, markup=False, highlight=False, soft_wrap=True)
        return
    c.print(Panel(Group(*parts), title=title, title_align="left", border_style=row.gate_style))


def _diff_text(diff: str) -> Text:
    out = Text()
    for i, ln in enumerate(diff.splitlines()):
        style = "green" if ln.startswith("+") else "red" if ln.startswith("-") else "dim"
        if ln.startswith(("+++", "---", "@@")):
            style = "dim"
        out.append(("\n" if i else "") + "  " + clean(ln), style=style)
    return out

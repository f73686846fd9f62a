"""At a terminal: the interview, the gate panel and the typed `go`; Ctrl-C at a prompt cancels it."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from director.plan import markers
from director.plan.model import key_label
from director.ui.render import clean

if TYPE_CHECKING:
    from director.plan.model import Input
    from director.run.gates import GateContent


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
    """Asks at a terminal: the interview (closed options, default on Enter) and the gate's typed `go`.

    Ctrl-C (or end of input) at the interview cancels the command; at a gate, Ctrl-C interrupts the run and
    end of input declines. `pause`/`resume` are set by the caller to get the live view out of the way.
    """

    def __init__(self, console: Console) -> None:
        self.c = console
        self.pause: Callable[[], None] = lambda: None
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

    def ask_go(self, content: GateContent) -> bool:
        """Show the gate; only a typed `go` approves."""
        from rich.prompt import Prompt

        self.pause()
        try:
            gate_panel(self.c, content)
            with _cancellable():
                try:
                    answer = Prompt.ask(
                        "Type [bold]go[/] to run these commands (anything else declines: the run stops here)",
                        console=self.c, default="", show_default=False)
                except EOFError:
                    return False
            return answer.strip() == "go"
        finally:
            self.resume()


def gate_panel(c: Console, content: GateContent) -> None:
    """The gate: which section, why it is gated, the plan's note, what exists, and the exact commands."""
    from rich.syntax import Syntax

    row = markers.by_glyph(content.marker) or markers.rule(markers.Marker.GATE)
    parts: list[RenderableType] = []
    why = Text()
    why.append("why gated: ", style="bold")
    if content.note:
        why.append(clean(content.note))
    else:
        why.append("the plan marks this section " + row.gate_reason)
    parts.append(why)
    for q in content.quotes:
        parts.append(Text("> " + clean(q).replace("\n", "\n> "), style="italic"))
    if content.context:
        t = Table(title="what the ledger says exists", show_header=False, box=None, title_justify="left")
        for k, v in content.context.items():
            t.add_row(Text(clean(k)), Text(clean(v)))
        parts.append(t)
    if content.inputs:
        parts.append(Text("inputs: " + ", ".join(f"{k}={v}" for k, v in content.inputs.items())))
    if content.variables:
        parts.append(Text("variables: " + ", ".join(f"{k}={clean(v)}" for k, v in content.variables.items()),
                          style="dim"))
    n = len(content.commands)
    for i, cmd in enumerate(content.commands, start=1):
        parts.append(Text(f"commands about to run{f' ({i} of {n})' if n > 1 else ''}:", style="bold"))
        parts.append(Syntax(cmd.rstrip("\n"), "bash", theme="ansi_dark", word_wrap=True))
    if not content.commands:
        parts.append(Text("no command: the approval covers the section as written", style="dim"))
    parts.append(Text(f"content sha256 {content.sha256}", style="dim"))
    c.print(Panel(Group(*parts), title=Text(f"{content.marker} {row.gate_title} · "
                                            f"{key_label(content.section_key)} {clean(content.title)}",
                                            style="bold"),
                  title_align="left", border_style=row.gate_style))

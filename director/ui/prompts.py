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
    end of input declines. `pause` (erase the live view: the interview and the gate panel get the screen),
    `hold` (freeze it where it is) and `resume` are set by the caller.
    """

    def __init__(self, console: Console) -> None:
        self.c = console
        self.pause: Callable[[], None] = lambda: None
        self.hold: Callable[[], None] = lambda: None
        self.resume: Callable[[], None] = lambda: None
        # where a gate's details are, by section key (`director plan PLAN --section N`); set by the caller
        self.details: Callable[[str], str] = lambda _key: ""

    def ask_input(self, inp: Input) -> str:
        """One Provisioning Inputs question; re-asked until the answer is one of its options."""
        from rich.prompt import Prompt

        self.pause()
        try:
            q = Text()
            q.append(f"{inp.number}. {clean(inp.question)}", style="bold")
            q.append("  (")
            from director.ui.render import is_plain

            for i, o in enumerate(inp.options):
                q.append(" / " if i else "")
                q.append(o, style="bold" if o == inp.default else "")
                if o == inp.default and is_plain(self.c):  # no bold without colour: say it
                    q.append(" (default)")
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
        """Show the gate (the board steps aside: it is drawn again, once, below the answer); only the typed
        confirmation (`go`, for 💥 stronger) approves. With `elsewhere`, an approval from elsewhere arriving
        first answers instead (`ui.race`)."""
        self.pause()
        try:
            hint = elsewhere_hint(elsewhere.hint) if elsewhere is not None else ""
            if elsewhere is None or elsewhere.panel:
                gate_panel(self.c, content, details=self.details(content.section_key), asking=GO, hint=hint)
            if elsewhere is None:
                return confirm(self.c, content, *GO)
            from director.ui.race import race

            asked = question(content, *GO)
            if not elsewhere.typed:  # said once; then only a receipt from elsewhere, or a line to stop
                hint, asked = waiting_hint(elsewhere.hint), Text(WAITING)
            if elsewhere.waiting:
                hint = f"{elsewhere.waiting}\n{hint}"
            with _cancellable():
                return race(self.c, content, asked, Text(hint), elsewhere)
        finally:
            self.resume()


# What the gate's question says: what typing the word does, and what anything else does.
GO = ("to run these commands", "the run stops, awaiting approval")


# What a prompt that cannot approve (docs/approvals.md) asks instead of the confirmation word.
WAITING = "Waiting for an approval from elsewhere; press Enter to stop waiting (the run stops, awaiting it)"


def elsewhere_hint(command: str) -> str:
    """The line above a racing prompt: the gate can be approved from elsewhere too."""
    return f"or approve from elsewhere: {command} (the first approval to arrive is used)"


def waiting_hint(command: str) -> str:
    """The line above a prompt that cannot approve: how to approve from elsewhere."""
    return f"approve from elsewhere: {command}"


def question(content: GateContent, what: str, declines: str) -> Text:
    """`Type go to run these commands (anything else declines: …): `, as `confirm` asks it."""
    word = content.review.confirm or "go"
    q = Text("Type ")
    q.append(word, style="bold")
    q.append(f" {what} (anything else declines: {declines})")
    return q


def confirm(c: Console, content: GateContent, what: str, declines: str) -> bool:
    """Ask for the gate's confirmation word; True only when it is typed exactly (end of input: False)."""
    from rich.prompt import Prompt

    word = content.review.confirm or "go"
    with _cancellable():
        try:
            answer = Prompt.ask(question(content, what, declines), console=c, default="", show_default=False)
        except EOFError:
            return False
    return answer.strip() == word


# ------------------------------------------------------------------------------------------ the gate panel

CONTINUED = "↪ "  # starts a command line's continuation, indented under it: never read as a new command
MIN_COMMAND_LINES = 3  # below this many lines for the commands, the panel only counts them


def screen_of(c: Console) -> tuple[int, int] | None:
    """(columns, rows) of the terminal the console writes to; None for a log or a pipe (no limit)."""
    import os

    from director.ui.render import is_plain

    if not is_plain(c):
        return (c.size.width, c.size.height) if c.is_terminal else None
    try:
        if not c.file.isatty():
            return None
        size = os.get_terminal_size(c.file.fileno())
    except (AttributeError, OSError, ValueError):
        return None
    return size.columns, size.lines


def wrap_command(line: str, width: int | None) -> list[tuple[int, int]]:
    """Where a command line is cut to fit `width` columns: (start, end) offsets of each piece. The first
    piece has `width` columns, every continuation `width - 4 - len(CONTINUED)` (it is indented under its
    line, after `CONTINUED`); cut at a space where one is near, else after a `/`, else anywhere."""
    if width is None or len(line) <= width:
        return [(0, len(line))]
    indent = len(line) - len(line.lstrip(" "))
    pieces: list[tuple[int, int]] = []
    start, room = 0, max(8, width)
    while len(line) - start > room:
        cut = line.rfind(" ", start + room // 2, start + room)
        if cut <= start:  # no space near: after a path's `/`, else anywhere
            cut = line.rfind("/", start + room // 3, start + room - 1)
        end = cut + 1 if cut > start else start + room
        pieces.append((start, end))
        start = end
        room = max(8, width - indent - 4 - len(CONTINUED))
    pieces.append((start, len(line)))
    return pieces


def command_lines(cmd: str, width: int | None, plain: bool) -> list[Text]:
    """A command as screen lines: each of its lines indented by two, a line too long for `width` cut into
    pieces whose continuations are indented under it and start with `CONTINUED` (never at column 0)."""
    from rich.syntax import Syntax

    cmd = clean(cmd.rstrip("\n"))
    lines = (
        [Text(ln) for ln in cmd.split("\n")] if plain
        else list(Syntax(cmd, "bash", theme="ansi_dark").highlight(cmd).split("\n"))
    )  # fmt: skip
    out: list[Text] = []
    avail = None if width is None else width - 2
    for ln in lines:
        ln.rstrip()
        text = ln.plain
        indent = " " * (len(text) - len(text.lstrip(" ")))
        for i, (a, b) in enumerate(wrap_command(text, avail)):
            if i:
                a += len(text[a:b]) - len(text[a:b].lstrip(" "))  # a continuation starts at its first word
            piece = ln[a:b]
            piece.rstrip()
            if i:
                lead = Text("  " + indent + "  ")
                lead.append(CONTINUED, style="dim")
                out.append(Text.assemble(lead, piece))
            else:
                out.append(Text.assemble("  ", piece) if piece.plain else Text(""))
    return out


def _one_line(text: str, style: str = "") -> Text:
    return Text(text, style=style, no_wrap=True, overflow="ellipsis")


def _file_lines(content: GateContent) -> list[tuple[str, str, str]]:
    """(path, how it is written, its diff or its body) for each file the gate writes."""
    diffs = dict(content.review.diffs)
    out = []
    for cmd in content.commands:
        if not cmd.startswith("# write "):
            continue
        path, _, body = cmd.removeprefix("# write ").partition("\n")
        if path in diffs:
            diff = diffs[path].splitlines()
            adds = sum(1 for ln in diff if ln[:1] == "+" and not ln.startswith("+++"))
            dels = sum(1 for ln in diff if ln[:1] == "-" and not ln.startswith("---"))
            created = any(ln.startswith("@@ -0,0 ") for ln in diff)  # against an empty (missing) file
            how = "created" if created else f"+{adds} −{dels} lines against the disk"
            out.append((path, how, diffs[path]))
        else:
            out.append((path, "unchanged on disk", body))
    return out


def _commands(content: GateContent) -> list[str]:
    """Each command once, as it will run (the values of its variables put in, secret ones masked)."""
    rv = content.review
    act = [cmd for cmd in content.commands if not cmd.startswith("# write ")]
    return [rv.expanded[i] if i < len(rv.expanded) and rv.expanded[i] else cmd for i, cmd in enumerate(act)]


def gate_panel(
    c: Console,
    content: GateContent,
    *,
    full: bool | None = None,
    details: str = "",
    asking: tuple[str, str] | None = None,
    hint: str = "",
) -> None:
    """The gate: which section, why gated, why it acts now, what it changes (ledger, files, resources),
    the exact commands, and what the operator types to approve.

    At a terminal it fits the screen with its first line and the question (`asking`, after `hint`) below
    it: what it changes always, then why it acts now, then as many lines of the commands as fit, and where
    the rest is (`details`: `director plan PLAN --section N`). `full` (a log, a pipe, `director plan
    --section`) shows everything: the section's quotes, the ledger's view, every command, the files'
    diffs, the variables.
    """
    from director.ui.render import is_plain

    plain = is_plain(c)
    screen = screen_of(c)
    if full is None:
        full = screen is None
    row = markers.by_glyph(content.marker) or markers.rule(markers.Marker.GATE)
    where = f"{key_label(content.section_key)} {clean(content.title)}"
    title = Text(f"{content.marker} {row.gate_title} · {where}", style="bold")
    width = None if screen is None else screen[0] - (0 if plain else 4)  # inside the box: 2 borders, 2 pads
    parts = _full_parts(content, width, plain) if full else _compact_parts(
        c, content, screen, width, plain, details, asking, hint
    )
    if full and details:
        parts.append(_one_line(f"details: {details}", "dim"))
    sha = f"content sha256 {content.sha256}"
    if not full and screen is not None and len(sha) > screen[0] - 8:
        sha = sha[:27] + "…"  # the rest: `details`
    if plain:
        # logs and pipes: the same content without a box (no drawing characters, no padding)
        for part in [title, *parts, Text(sha, style="dim")]:
            c.print(part, markup=False, highlight=False, soft_wrap=True)
        return
    c.print(Panel(Group(*parts), title=title, title_align="left", border_style=row.gate_style,
                  subtitle=Text(sha, style="dim"), subtitle_align="right"))


def _why(content: GateContent) -> Text:
    row = markers.by_glyph(content.marker) or markers.rule(markers.Marker.GATE)
    why = Text(no_wrap=True, overflow="ellipsis")
    why.append("why gated: ", style="bold")
    why.append(clean(content.note) if content.note else "the plan marks this section " + row.gate_reason)
    return why


def _confirm_word(content: GateContent) -> Text | None:
    word = content.review.confirm or "go"
    if word == "go":
        return None
    say = Text("to approve, type ", style="bold red")
    say.append(word, style="bold")
    say.append(" (the name of what it destroys)" if word != "destroy" else " (no resource is named)")
    return say


def _change_style(line: str) -> str:
    return {"+": "green", "-": "red", "~": "yellow", "!": "bold yellow"}.get(line[:1], "")


def _compact_parts(
    c: Console,
    content: GateContent,
    screen: tuple[int, int] | None,
    width: int | None,
    plain: bool,
    details: str,
    asking: tuple[str, str] | None,
    hint: str = "",
) -> list[RenderableType]:
    """What fits the screen, most important first; every line one screen line."""
    rv = content.review
    cols, rows = screen or (120, 10_000)
    asked = question(content, *asking).plain + ": go" if asking else ""
    prompt_rows = sum(-(-len(t) // cols) for t in (hint, asked) if t)
    budget = rows - prompt_rows - (1 if plain else 2) - 1  # the title (or the box's two borders), a spare
    head: list[RenderableType] = [_why(content)]
    if rv.reasked:
        head.append(_one_line(clean(rv.reasked), "bold yellow"))
    word = _confirm_word(content)
    if word is not None:
        head.append(word)
    tail: list[RenderableType] = [_one_line(f"details: {details}", "dim")] if details else []
    changes: list[RenderableType] = []
    shown = list(rv.ledger)
    for path, how, _diff in _file_lines(content):
        shown.append(f"✎ file {path}: {how}")
    if rv.resources:
        shown.append("named: " + ", ".join(rv.resources))
    room = max(2, budget - len(head) - len(tail) - 1)
    if len(shown) > room:
        shown = [*shown[: room - 1], f"… {len(shown) - room + 1} more (details below)"]
    if shown:
        changes.append(Text("changes:", style="bold"))
        changes += [_one_line("  " + clean(ln), _change_style(ln)) for ln in shown]
    left = budget - len(head) - len(tail) - len(changes)
    why_now: list[RenderableType] = []
    if rv.reasons and left > 0:
        text = Text.assemble(("why now: ", "bold"), "; ".join(clean(r) for r in rv.reasons))
        rows_for = 2 if left > MIN_COMMAND_LINES + 2 else 1  # a second line when the commands keep room
        wrapped = list(text.wrap(c, width - 2)) if width else [text]
        cut = [ln if i == 0 else Text.assemble("  ", ln) for i, ln in enumerate(wrapped[:rows_for])]
        for ln in cut:
            ln.no_wrap, ln.overflow = True, "ellipsis"
        if len(wrapped) > rows_for:
            cut[-1].append(" …")
        why_now = list[RenderableType](cut)
        left -= len(cut)
    if content.inputs and left > MIN_COMMAND_LINES + 1:
        why_now.append(_one_line("inputs: " + ", ".join(f"{k}={v}" for k, v in content.inputs.items())))
        left -= 1
    if content.closure and left > MIN_COMMAND_LINES + 4:  # a spare line: the commands come first
        from director.run import closure

        said = closure.summary(content.closure)
        if width is not None and len(said) > width - 2:
            said = said[: width - 3] + "…"  # one screen line: the rest is in `details`
        why_now.append(_one_line(said, "dim"))
        left -= 1
    cmds: list[RenderableType] = []
    commands = _commands(content)
    total = sum(len(cmd.rstrip("\n").split("\n")) for cmd in commands)
    if commands and left >= MIN_COMMAND_LINES:
        lines: list[Text] = []
        for cmd in commands:
            lines += command_lines(cmd, width, plain)
        fits = lines if len(lines) <= left - 1 else lines[: max(1, left - 2)]
        cmds.append(Text(f"commands ({total} line{'s' if total != 1 else ''}, as they run):", style="bold"))
        cmds += [ln.copy() for ln in fits]
        for t in cmds[1:]:
            assert isinstance(t, Text)
            t.no_wrap, t.overflow = True, "ellipsis"
        if len(fits) < len(lines):
            cmds.append(_one_line(f"  … {len(lines) - len(fits)} more lines: see details", "dim"))
    elif commands:
        cmds.append(_one_line(f"commands: {total} line{'s' if total != 1 else ''} (see details)", "bold"))
    elif not any(cmd.startswith("# write ") for cmd in content.commands):
        cmds.append(_one_line("no command: the approval covers the section as written", "dim"))
    return [*head, *why_now, *changes, *cmds, *tail]


def _full_parts(content: GateContent, width: int | None, plain: bool) -> list[RenderableType]:
    """Everything the gate stands for: for a log, a pipe, or `director plan --section N`."""
    rv = content.review
    parts: list[RenderableType] = []

    def heading(text: str) -> None:
        parts.append(Text(text, style="bold"))

    def listing(lines: list[str] | tuple[str, ...], style: str = "") -> None:
        for ln in lines:
            parts.append(Text("  " + clean(ln), style=style))

    why = _why(content)
    why.no_wrap = False
    parts.append(why)
    for q in content.quotes:
        parts.append(Text("> " + clean(q).replace("\n", "\n> "), style="italic"))
    if rv.reasked:
        parts.append(Text(clean(rv.reasked), style="bold yellow"))
        if rv.receipt_diff:
            parts.append(_diff_text(rv.receipt_diff))
    if rv.reasons:
        heading("why it acts now:")
        listing(rv.reasons)
    if content.context:
        heading("what the ledger says exists:")
        w = max(len(k) for k in content.context)
        listing([f"{k:<{w}}  {v}" for k, v in content.context.items()])
    if rv.resources:
        heading("resources named:")
        listing(rv.resources)
    if rv.ledger:
        heading("Live State changes:")
        for ln in rv.ledger:
            parts.append(Text("  " + clean(ln), style=_change_style(ln)))
    if content.inputs:
        parts.append(Text("inputs: " + ", ".join(f"{k}={v}" for k, v in content.inputs.items())))
    from director.run import closure  # the gate's own words for what it covers

    if content.variables:
        shown = ", ".join(f"{k}={clean(closure.shown(v))}" for k, v in content.variables.items())
        parts.append(Text("variables: " + shown, style="dim"))
    if content.closure:
        heading("what the act can read (the approval covers it all):")
        listing(closure.panel_lines(content.closure))
    for path, how, text in _file_lines(content):
        if how == "unchanged on disk":
            heading(f"file {path} will be written (unchanged on disk):")
            parts.append(Text(clean(text.rstrip("\n")), style="dim"))
        else:
            heading(f"file {path} will be written (against what is on disk):")
            parts.append(_diff_text(text))
    commands = _commands(content)
    n = len(commands)
    for i, cmd in enumerate(commands, start=1):
        heading(f"commands about to run{f' ({i} of {n})' if n > 1 else ''}, as they run:")
        parts.extend(command_lines(cmd, width, plain))
    if not commands and not any(cmd.startswith("# write ") for cmd in content.commands):
        parts.append(Text("no command: the approval covers the section as written", style="dim"))
    word = _confirm_word(content)
    if word is not None:
        parts.append(word)
    return parts


def _diff_text(diff: str) -> Text:
    out = Text()
    for i, ln in enumerate(diff.splitlines()):
        style = "green" if ln.startswith("+") else "red" if ln.startswith("-") else "dim"
        if ln.startswith(("+++", "---", "@@")):
            style = "dim"
        out.append(("\n" if i else "") + "  " + clean(ln), style=style)
    return out

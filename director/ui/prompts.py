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
from director.ui import gatelines
from director.ui.gatelines import DESTROYS_MARK, highlighted, wrapped
from director.ui.render import clean

if TYPE_CHECKING:
    from director.plan.model import Input
    from director.run.gates import Arrival, Elsewhere, GateContent


@contextmanager
def _cancellable(reader: Any = None) -> Iterator[None]:
    """Ctrl-C at a prompt cancels it (the run's own handler only stops a running block, and would leave the
    operator stuck at the question). With a `PolledLine` `reader`, the KeyboardInterrupt is raised where it
    reads (never in the middle of printing the question, which would leave it in rich's buffer)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def cancel(_sig: int, _frame: Any) -> None:
        if reader is not None and not reader.reading:
            reader.cancelled = True  # raised when it reads
            return
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
        # Read answers by polling standard input (`PolledLine`) rather than blocking in it: set by a family,
        # whose other threads may be the one the kernel hands a Ctrl-C to (docs/families.md).
        self.polled = False

    def _stream(self) -> Any:
        from director.ui.race import PolledLine

        return PolledLine() if self.polled else None

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
            stream = self._stream()
            with _cancellable(stream):
                try:
                    return Prompt.ask("  choose", choices=list(inp.options), default=inp.default,
                                      console=self.c, case_sensitive=False, stream=stream)
                except EOFError:
                    raise KeyboardInterrupt from None
        finally:
            self.resume()

    def ask_go(self, content: GateContent, elsewhere: Elsewhere | None = None) -> bool | Arrival:
        """Show the gate (the board steps aside: it is drawn again, once, below the answer); only the typed
        confirmation (`go`, for 💥 stronger) approves. With `elsewhere`, an approval from elsewhere arriving
        first answers instead (`ui.race`). When the approval is asked again for changed content, `d` pages
        the diff (what was approved against this), then the gate is shown and asked again."""
        self.pause()
        try:
            hint = elsewhere_hint(elsewhere.hint) if elsewhere is not None else ""
            details = self.details(content.section_key)

            def panel() -> None:
                gate_panel(self.c, content, details=details, asking=GO, hint=hint)

            page = None
            if content.review.receipt_diff and screen_of(self.c) is not None:

                def page() -> None:
                    page_diff(self.c, content.review.receipt_diff)
                    panel()
                    if hint:
                        self.c.print(Text(hint))

            if elsewhere is None or elsewhere.panel:
                panel()
            if elsewhere is None:
                return confirm(self.c, content, *GO, page=page, stream=self._stream())
            from director.ui.race import race

            asked, above = question(content, *GO, page=page is not None), hint
            if not elsewhere.typed:  # said once; then only a receipt from elsewhere, or a line to stop
                above, asked = waiting_hint(elsewhere.hint), Text(WAITING)
            if elsewhere.waiting:
                above = f"{elsewhere.waiting}\n{above}"
            with _cancellable():
                return race(self.c, content, asked, Text(above), elsewhere, page=page)
        finally:
            self.resume()


# What the gate's question says: what typing the word does, and what anything else does.
GO = ("to run these commands", "the run stops, awaiting approval")
PAGE = "d"  # typed at a gate asked again for changed content: the diff, paged


# What a prompt that cannot approve (docs/approvals.md) asks instead of the confirmation word.
WAITING = "Waiting for an approval from elsewhere; press Enter to stop waiting (the run stops, awaiting it)"


def elsewhere_hint(command: str) -> str:
    """The line above a racing prompt: the gate can be approved from elsewhere too."""
    return f"or approve from elsewhere: {command} (the first approval to arrive is used)"


def waiting_hint(command: str) -> str:
    """The line above a prompt that cannot approve: how to approve from elsewhere."""
    return f"approve from elsewhere: {command}"


def question(content: GateContent, what: str, declines: str, *, page: bool = False) -> Text:
    """`Type go to run these commands (anything else declines: …): `, as `confirm` asks it (`page`: `d`
    pages the diff of a changed approval)."""
    word = content.review.confirm or "go"
    q = Text("Type ")
    q.append(word, style="bold")
    q.append(f" {what}")
    if page:
        q.append(", ")
        q.append(PAGE, style="bold")
        q.append(" to page the diff")
    q.append(f" (anything else declines: {declines})")
    return q


def confirm(
    c: Console,
    content: GateContent,
    what: str,
    declines: str,
    *,
    page: Callable[[], None] | None = None,
    stream: Any = None,
) -> bool:
    """Ask for the gate's confirmation word; True only when it is typed exactly (end of input: False).
    With `page`, `d` calls it and asks again; `stream`: where the answer is read (standard input)."""
    from rich.prompt import Prompt

    word = content.review.confirm or "go"
    while True:
        with _cancellable(stream):
            try:
                answer = Prompt.ask(question(content, what, declines, page=page is not None), console=c,
                                    default="", show_default=False, stream=stream)  # fmt: skip
            except EOFError:
                return False
        if page is not None and answer.strip() == PAGE and word != PAGE:
            with _cancellable():
                page()
            continue
        return answer.strip() == word


def page_diff(c: Console, diff: str) -> None:
    """A changed approval's diff, a screen at a time (Enter: the next screen, q: back to the gate)."""
    screen = screen_of(c)
    cols, rows = screen or (120, 10_000)
    lines: list[Text] = []
    for ln in diff.splitlines():
        style = "dim" if ln.startswith(("+++", "---", "@@")) else "green" if ln[:1] == "+" else \
            "red" if ln[:1] == "-" else ""  # fmt: skip
        for piece in wrapped(Text(clean(ln), style=style), cols):
            piece.no_wrap = True
            lines.append(piece)
    per = max(3, rows - 2)
    c.print(Text("what changed since the approval (approved → now):", style="bold"))
    for start in range(0, len(lines), per):
        for t in lines[start : start + per]:
            c.print(t, markup=False, highlight=False)
        end = min(start + per, len(lines))
        if end >= len(lines):
            break
        try:
            more = c.input(f"-- diff lines {start + 1}–{end} of {len(lines)}: Enter for more, q to stop -- ")
        except EOFError:
            break
        if more.strip().lower().startswith("q"):
            break


# ------------------------------------------------------------------------------------------ the gate panel

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
    return [shown for _orig, shown in _command_pairs(content)]


def _command_pairs(content: GateContent) -> list[tuple[str, str]]:
    """(as written, as it will run) for each command: the analyser reads the first, the screen the second."""
    rv = content.review
    act = [cmd for cmd in content.commands if not cmd.startswith("# write ")]
    return [
        (cmd, rv.expanded[i] if i < len(rv.expanded) and rv.expanded[i] else cmd) for i, cmd in enumerate(act)
    ]


def _ranked(content: GateContent) -> list[gatelines.Line]:
    """The commands' lines ranked by what they do (a 💥 gate: a file removed is what it destroys)."""
    pairs = _command_pairs(content)
    weak = content.marker == markers.Marker.DESTRUCTIVE.value
    return gatelines.ranked([o for o, _ in pairs], [x for _, x in pairs], weak_destroys=weak)


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
    else:
        c.print(Panel(Group(*parts), title=title, title_align="left", border_style=row.gate_style,
                      subtitle=Text(sha, style="dim"), subtitle_align="right"))
    if not full and details:
        for line in _details_lines(details, screen):
            c.print(line, markup=False, highlight=False, soft_wrap=True)


def _details_lines(details: str, screen: tuple[int, int] | None) -> list[Text]:
    """Where the whole gate is (`director plan PLAN --section N`), below the box so that no border is copied
    with it: on the `details:` line when it fits, else alone on the next line, which the terminal wraps
    (a wrapped line is still one line to copy); never cut."""
    if screen is None or len("details: " + details) <= screen[0]:
        return [Text.assemble(("details: ", "dim"), details)]
    return [Text("details:", style="dim"), Text(details)]


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


def _rows(text: str, cols: int) -> int:
    """Screen rows a line of `text` takes at `cols` columns (the terminal wraps it)."""
    return max(1, -(-len(text) // cols))


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
    """What fits the screen; every line one screen line. Whatever the height: why it is gated, what the
    operator types, and every line of a command the analyser calls destructive (`gatelines`). Then, as
    room allows: the first lines of a changed approval's diff (the rest paged with `d`), what changes, why it
    acts now, the other commands before the comments. `details` is printed below the box, whole."""
    rv = content.review
    cols, rows = screen or (120, 10_000)
    asked = question(content, *asking, page=bool(rv.receipt_diff)).plain + ": go" if asking else ""
    below = sum(_rows(t.plain, cols) for t in _details_lines(details, screen)) if details else 0
    below += sum(len(Text(t).wrap(c, cols)) for t in (hint, asked) if t)  # rich wraps these at words
    budget = rows - below - (1 if plain else 2) - 1  # the title (or the box's two borders), a spare
    head: list[RenderableType] = [_why(content)]
    if rv.reasked:
        head.append(_one_line(clean(rv.reasked), "bold yellow"))
    word = _confirm_word(content)
    head_rows = len(head)
    if word is not None:
        head.append(word)  # whole, however long: it is what the operator types
        head_rows += len(word.wrap(c, width)) if width else 1

    lines = _ranked(content)
    total = len(lines)
    destroys = [ln for ln in lines if ln.rank == gatelines.DESTROYS]
    cache: dict[int, list[Text]] = {}
    lit = [highlighted(cmd, plain) for cmd in _commands(content)]

    def screen_lines(ln: gatelines.Line) -> list[Text]:
        key = id(ln)
        if key not in cache:
            gutter = DESTROYS_MARK if ln.rank == gatelines.DESTROYS else "  "
            cache[key] = wrapped(lit[ln.block][ln.row].copy(), width, gutter)
        return cache[key]

    must = 0  # the commands' heading, every destructive line's rows, the `⋮` between them, the `…` line
    if total:
        least = gatelines.choose(lines, 0, lambda ln: len(screen_lines(ln)))
        hidden = total - len(least.shown)
        must = 1 + sum(len(screen_lines(lines[i])) for i in least.shown) + len(least.gaps) + bool(hidden)
    left = budget - head_rows - must
    if left < 0 and word is not None:  # too short a screen: the question says the word too, the box keeps
        head.pop()  # the commands that destroy
        left += head_rows - len(head)

    diff: list[RenderableType] = []
    if rv.reasked and rv.receipt_diff:
        changed = [
            ln for ln in rv.receipt_diff.splitlines() if ln[:1] in "+-" and ln[:3] not in ("+++", "---")
        ]
        room = max(1, min(len(changed), left - 4))  # a few lines; the commands keep theirs
        for d in changed[:room]:
            diff.append(_one_line("  " + clean(d), "green" if d.startswith("+") else "red"))
        more = len(rv.receipt_diff.splitlines())
        diff.append(_one_line(f"  the diff: {more} lines — type d at the question to page it", "dim"))
        left -= len(diff)

    changes: list[RenderableType] = []
    shown = list(rv.ledger)
    for path, how, _diff in _file_lines(content):
        shown.append(f"✎ file {path}: {how}")
    if rv.resources:
        shown.append("named: " + ", ".join(rv.resources))
    others = total - len(destroys)
    room = max(1, left - 1 - (min(MIN_COMMAND_LINES, others) if others else 0))
    if left <= 0:
        shown = []  # in `details`: what destroys keeps the rows
    elif len(shown) > room and room == 1:
        changes.append(_one_line(f"changes: {len(shown)} (see details)", "bold"))
        shown = []
    elif len(shown) > room:
        shown = [*shown[: room - 1], f"… {len(shown) - room + 1} more (details below)"]
    if shown:
        changes.append(Text("changes:", style="bold"))
        changes += [_one_line("  " + clean(ln), _change_style(ln)) for ln in shown]
    left -= len(changes)

    why_now: list[RenderableType] = []
    if rv.reasons and left > 0:
        text = Text.assemble(("why now: ", "bold"), "; ".join(clean(r) for r in rv.reasons))
        rows_for = 2 if left > MIN_COMMAND_LINES + 2 else 1  # a second line when the commands keep room
        said_lines = list(text.wrap(c, width - 2)) if width else [text]
        cut = [ln if i == 0 else Text.assemble("  ", ln) for i, ln in enumerate(said_lines[:rows_for])]
        for ln in cut:
            ln.no_wrap, ln.overflow = True, "ellipsis"
        if len(said_lines) > rows_for:
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
    if total:
        said = f"{total} line{'s' if total != 1 else ''}, as they run"
        if destroys:
            said += f"; {DESTROYS_MARK.strip()} destroys"
        cmds.append(Text(f"commands ({said}):", style="bold"))

        def rows_of(ln: gatelines.Line) -> int:
            return len(screen_lines(ln))

        room = left + must - 1  # what the destructive lines reserved, and the rest
        pick = gatelines.choose(lines, room, rows_of)
        if len(pick.shown) < total:  # a line says what is not shown: choose again without its row
            pick = gatelines.choose(lines, room - 1, rows_of)
        body: list[Text] = []
        for k, i in enumerate(pick.shown):
            if k in pick.gaps:
                body.append(_one_line("    ⋮", "dim"))
            body += [t.copy() for t in screen_lines(lines[i])]
        for t in body:
            t.no_wrap, t.overflow = True, "ellipsis"
        cmds += body
        hidden, comments = pick.hidden(lines)
        if hidden:
            what = f" ({comments} comment or blank)" if comments else ""
            cmds.append(_one_line(f"  … {hidden} more line{'s' if hidden != 1 else ''}{what}: see details",
                                  "dim"))
    elif not any(cmd.startswith("# write ") for cmd in content.commands):
        cmds.append(_one_line("no command: the approval covers the section as written", "dim"))
    return [*head, *diff, *why_now, *changes, *cmds]


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
    ranks = {(ln.block, ln.row): ln.rank for ln in _ranked(content)}
    marked = any(r == gatelines.DESTROYS for r in ranks.values())
    for i, cmd in enumerate(commands):
        heading(f"commands about to run{f' ({i + 1} of {n})' if n > 1 else ''}, as they run"
                f"{f' ({DESTROYS_MARK.strip()} destroys)' if marked else ''}:")  # fmt: skip
        for r, line in enumerate(highlighted(cmd, plain)):
            destroys = ranks.get((i, r)) == gatelines.DESTROYS
            parts.extend(wrapped(line, width, DESTROYS_MARK if destroys else "  "))
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

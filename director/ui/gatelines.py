"""A gate's commands on screen: which lines a screen of limited height shows, chosen by structure, and
how a line too long for the screen is cut.

A gate panel at 80×24 cannot show every line of a long teardown. What it must show first is what destroys:
the lines of every command the bash analyser calls destructive (`plan.bash.destructions`, the rule lint's
`destructive-outside-teardown` reads), then the other commands, then comments and blank lines. Nothing here
reads a comment's words: a line's rank is what the parser says it is (a command's rows, a comment's row).
The lines shown keep their order in the block; a run of hidden lines that holds a command is marked where it
is (`⋮`), so two shown lines are never read as adjacent when something runs between them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from director.ui.render import clean

if TYPE_CHECKING:
    from rich.text import Text

DESTROYS = 0  # a row of a destructive command
COMMAND = 1  # any other row that is part of what runs (commands, heredoc bodies, `fi`, `done`)
COMMENT = 2  # a comment alone on its row, or a blank row


@dataclass(frozen=True)
class Line:
    """One line of a gate's commands as it runs, and how much it matters on a short screen."""

    text: str  # as shown: the command's line with its variables' values put in
    rank: int  # DESTROYS, COMMAND or COMMENT
    block: int  # which command (act block) it belongs to
    row: int  # its row in that block


def ranked(originals: Sequence[str], shown: Sequence[str], *, weak_destroys: bool) -> list[Line]:
    """Every line of the commands, ranked by what the bash analyser finds in the original text (`shown`
    is the same text with values put in, line for line). A strong destruction (`rm -r`, `… delete`, `DROP
    TABLE`) always ranks DESTROYS; a weak one (`rm -f file`, `> file`) only when `weak_destroys` (a 💥
    section, where removing a file is the destruction)."""
    from director.plan import bash

    out: list[Line] = []
    for i, (orig, disp) in enumerate(zip(originals, shown, strict=True)):
        rows = disp.rstrip("\n").split("\n")
        script = bash.parse(orig)
        span: dict[int, int] = {}  # a command's first row -> its last (a `\` continuation, a heredoc)
        run: set[int] = set()
        for c in script.commands:
            span[c.row] = max(span.get(c.row, c.row), c.end_row)
            run.update(range(c.row, c.end_row + 1))
        destroys: set[int] = set()
        for d in bash.destructions(orig):
            if d.strong or weak_destroys:
                destroys.update(range(d.row, span.get(d.row, d.row) + 1))
        comments = {row for row, _ in script.comments}
        for r, text in enumerate(rows):
            if r in destroys:
                rank = DESTROYS
            elif not text.strip() or (r in comments and r not in run):
                rank = COMMENT
            else:
                rank = COMMAND
            out.append(Line(text, rank, i, r))
    return out


@dataclass(frozen=True)
class Choice:
    """What fits: the indexes of the lines shown (in order) and where hidden commands sit between them."""

    shown: tuple[int, ...]
    gaps: frozenset[int]  # a `⋮` goes before shown[k] for each k here (and at the end: len(shown))

    def hidden(self, lines: Sequence[Line]) -> tuple[int, int]:
        """(lines hidden, of which comments or blank)."""
        seen = set(self.shown)
        rest = [ln for i, ln in enumerate(lines) if i not in seen]
        return len(rest), sum(1 for ln in rest if ln.rank == COMMENT)


def _gaps(lines: Sequence[Line], shown: Sequence[int]) -> frozenset[int]:
    """Before which shown line (by position in `shown`; len(shown) for the end) a hidden command sits."""
    out: set[int] = set()
    prev = -1
    for k, i in enumerate([*shown, len(lines)]):
        if any(lines[j].rank != COMMENT for j in range(prev + 1, i)):
            out.add(k)
        prev = i
    return frozenset(out)


def choose(lines: Sequence[Line], budget: int, rows_of: Callable[[Line], int]) -> Choice:
    """The lines a budget of `budget` screen rows shows: every DESTROYS line whatever the budget, then
    COMMAND lines, then COMMENT lines, each rank in order, while the rows they take (`rows_of`: a long
    line wraps) and the `⋮` marks between them fit."""
    chosen = sorted(i for i, ln in enumerate(lines) if ln.rank == DESTROYS)
    used = sum(rows_of(lines[i]) for i in chosen)

    def cost(shown: list[int]) -> int:
        return len(_gaps(lines, shown))

    for rank in (COMMAND, COMMENT):
        for i, ln in enumerate(lines):
            if ln.rank != rank:
                continue
            extra = rows_of(ln)
            if used + extra > budget:
                continue
            trial = sorted([*chosen, i])
            if used + extra + cost(trial) <= budget:
                chosen, used = trial, used + extra
    return Choice(tuple(chosen), _gaps(lines, chosen))


# ---------------------------------------------------------------------------------------------------
# A command's lines on screen

CONTINUED = "↪ "  # starts a command line's continuation, indented under it: never read as a new command
# The gutter of a line the analyser calls destructive (`plan.bash.destructions`); others have two spaces.
DESTROYS_MARK = "» "


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


def highlighted(cmd: str, plain: bool) -> list[Text]:
    """A command's lines as Texts (highlighted as bash unless plain), control characters made safe."""
    from rich.syntax import Syntax
    from rich.text import Text

    cmd = clean(cmd.rstrip("\n"))
    return (
        [Text(ln) for ln in cmd.split("\n")] if plain
        else list(Syntax(cmd, "bash", theme="ansi_dark").highlight(cmd).split("\n"))
    )  # fmt: skip


def wrapped(ln: Text, width: int | None, gutter: str = "  ") -> list[Text]:
    """One command line as screen lines: after `gutter` (two columns), a line too long for `width` cut into
    pieces whose continuations are indented under it and start with `CONTINUED` (never at column 0)."""
    from rich.text import Text

    out: list[Text] = []
    avail = None if width is None else width - 2
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
            lead = Text(gutter, style="bold red") if gutter.strip() else Text(gutter)
            out.append(Text.assemble(lead, piece) if piece.plain else Text(""))
    return out


def command_lines(cmd: str, width: int | None, plain: bool) -> list[Text]:
    """A command as screen lines: each of its lines indented by two, a line too long for `width` cut into
    pieces whose continuations are indented under it and start with `CONTINUED` (never at column 0)."""
    out: list[Text] = []
    for ln in highlighted(cmd, plain):
        out += wrapped(ln, width)
    return out

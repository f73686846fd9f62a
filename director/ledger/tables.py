"""Markdown pipe tables in the ledger: cells located by column, rewritten with their column's width.

The text is handled as lines with their own endings (`Lines`), so a CRLF file stays CRLF and every
untouched line stays byte-identical.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from director.errors import LedgerWriteError
from director.plan.model import Table


class UnknownLedgerKey(KeyError):
    """An update names a kv key or check row the plan's Live State does not have (a programming error)."""

    def __str__(self) -> str:
        # KeyError's str() is the repr of its argument; a sentence reads better in a traceback.
        return str(self.args[0]) if self.args else "unknown ledger key"


@dataclass
class Lines:
    """A text as line contents plus each line's own ending, so untouched lines stay byte-identical."""

    contents: list[str]
    endings: list[str]

    @classmethod
    def of(cls, text: str) -> Lines:
        contents: list[str] = []
        endings: list[str] = []
        for raw in text.splitlines(keepends=True):
            # \n, \r\n and a lone \r end a Markdown line (markdown-it's newlines: the parser's line numbers);
            # str.splitlines also splits on \x0b, \x1c, U+2028 … which markdown-it does not: re-joined below.
            if raw.endswith("\r\n"):
                body, end = raw[:-2], "\r\n"
            elif raw.endswith(("\n", "\r")):  # a lone CR ends a line for markdown-it too
                body, end = raw[:-1], raw[-1]
            else:
                body, end = raw, ""
            if contents and endings[-1] == "":
                contents[-1] += body
                endings[-1] = end
            else:
                contents.append(body)
                endings.append(end)
        return cls(contents, endings)

    def text(self) -> str:
        return "".join(c + e for c, e in zip(self.contents, self.endings, strict=True))


def split_cells(line: str) -> list[tuple[int, int]]:
    """[start, end) of each cell of a pipe-table row, padding included, between unescaped `|`."""
    pipes = [i for i, ch in enumerate(line) if ch == "|" and (i == 0 or line[i - 1] != "\\")]
    bounds: list[tuple[int, int]] = []
    stripped_start = len(line) - len(line.lstrip())
    stripped_end = len(line.rstrip())
    leading = bool(pipes) and pipes[0] == stripped_start
    trailing = bool(pipes) and pipes[-1] == stripped_end - 1 and (len(pipes) > 1 or not leading)
    edges = list(pipes)
    if not leading:
        edges.insert(0, stripped_start - 1)
    if not trailing:
        edges.append(stripped_end)
    for a, b in itertools.pairwise(edges):
        bounds.append((a + 1, b))
    return bounds


# A table row is one line of UTF-8 text: a line break in a value (a realized value that spans lines) is
# shown as the two characters `\n` (`\r` for a carriage return), and a byte that is not UTF-8 (bash
# gives values as bytes; Director holds such a byte as a lone surrogate) as `\xNN`, as a shell's `$'…'`
# would write them (docs/limits.md, *Live State cells*).
_LINE_BREAKS = str.maketrans({"\n": "\\n", "\r": "\\r"})
_SURROGATE = re.compile("[\ud800-\udfff]")


def _shown(m: re.Match[str]) -> str:
    code = ord(m.group(0))
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def escape_cell(value: str) -> str:
    """The cell's Markdown: `|` escaped, line breaks shown as `\\n`/`\\r` and bytes that are not UTF-8
    as `\\xNN`; edge whitespace dropped (Markdown would drop it anyway)."""
    text = value.strip().translate(_LINE_BREAKS).replace("|", "\\|")
    return _SURROGATE.sub(_shown, text) if not text.isascii() else text


def cell_text(value: str, width: int) -> str:
    """` value ` padded to the column width when it fits (the rest of the table is not re-flowed)."""
    escaped = escape_cell(value)
    return " " + escaped + " " * max(1, width - 1 - len(escaped))


def column_widths(lines: Lines, table: Table) -> list[int]:
    """Each column's width as the delimiter row (`|----|----|`) draws it, else as the header does."""
    for index in (table.span.start + 1, table.span.start):
        if index < len(lines.contents):
            row = lines.contents[index]
            cells = split_cells(row)
            if len(cells) >= len(table.header):
                return [b - a for a, b in cells]
    return [0] * len(table.header)


def _padded(row: str, cells: list[tuple[int, int]], count: int) -> str:
    """`row` with empty cells added up to `count`, between outer pipes: a row may hold fewer cells than its
    table's header, and reads as if the rest were empty (GFM; a line right after a table that starts no
    new block, such as a fence's opening line that a backtick in its info string spoils, is such a row)."""
    indent = row[: len(row) - len(row.lstrip())]
    texts = [row[a:b].strip() for a, b in cells] + [""] * (count - len(cells))
    return indent + "| " + " | ".join(texts) + " |"


def set_cells(lines: Lines, index: int, values: Mapping[int, str], widths: Sequence[int]) -> None:
    row = lines.contents[index]
    cells = split_cells(row)
    if values and max(values) >= len(cells):
        row = _padded(row, cells, max(values) + 1)
        cells = split_cells(row)
    for column in sorted(values, reverse=True):  # last to first: earlier bounds stay valid
        if column >= len(cells):
            raise LedgerWriteError(f"table row on line {index + 1} has no column {column + 1}")
        a, b = cells[column]
        width = widths[column] if column < len(widths) else 0
        row = row[:a] + cell_text(values[column], width) + row[b:]
    lines.contents[index] = row
    # Check: the row splits into the same number of cells and the target cells read back as written.
    after = split_cells(row)
    if len(after) != len(cells) or any(
        row[after[c][0] : after[c][1]].strip() != escape_cell(v) for c, v in values.items()
    ):
        raise LedgerWriteError(f"table write-back on line {index + 1} did not read back: {row!r}")


def find_column(header: Sequence[str], name: str, fallback: int) -> int:
    for i, cell in enumerate(header):
        if cell.strip().strip("`*_ ").lower().startswith(name):
            return i
    return fallback


def norm(name: str) -> str:
    return " ".join(name.strip().strip("`").split()).casefold()


def row_index(rows: Mapping[str, int], name: str, what: str, where: str) -> int:
    if name in rows:
        return rows[name]
    loose = {norm(k): v for k, v in rows.items()}
    if norm(name) in loose:
        return loose[norm(name)]
    known = ", ".join(repr(k) for k in rows) or "none"
    raise UnknownLedgerKey(f"{where}: Live State has no {what} {name!r} (known: {known})")


# ---------------------------------------------------------------------------------------------------
# The whole update


def new_row(lines: Lines, table: Table, widths: Sequence[int], values: Mapping[int, str]) -> str:
    """A new row in the table's own style: same columns, same outer pipes, cells padded like the header."""
    header = lines.contents[table.span.start]
    indent = header[: len(header) - len(header.lstrip())]
    ncols = max(len(table.header), max(values) + 1)
    cells = [cell_text(values.get(c, ""), widths[c] if c < len(widths) else 0) for c in range(ncols)]
    body = "|".join(cells)
    stripped = header.strip()
    if stripped.startswith("|"):
        body = "|" + body
    if stripped.endswith("|"):
        body = body + "|"
    return indent + body

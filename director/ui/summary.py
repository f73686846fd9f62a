"""The end of a run: the summary (a table, aligned plain lines, or only a caption after the live board),
the realized values (outputs), and the console every command prints to."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from director.plan.model import key_label
from director.ui.render import VERDICT_STYLE, clean, is_plain, verdict_text

if TYPE_CHECKING:
    from rich.console import Console, RenderableType


def _caption(reports: list[Any]) -> str:
    counts: dict[str, int] = {}
    total = 0.0
    for r in reports:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
        total += float(r.duration_s or 0.0)
    return " · ".join(
        f"{n} {VERDICT_STYLE.get(v, (v, ''))[0].split(' ', 1)[-1]}" for v, n in counts.items()
    ) + (f" · {total:.1f}s" if total else "")


def summary_table(c: Console, reports: list[Any], title: str = "summary", *, live: bool = False) -> None:
    """The end of a run: section, outcome, detail, duration, and a caption that counts the outcomes.

    After the live board only the caption (the final board already lists every section); on a plain
    console aligned lines (no box, no trailing space); else a table.
    """
    if live:
        from rich.text import Text

        c.print(Text(_caption(reports), style="dim"))
        return
    timed = any(float(r.duration_s or 0.0) > 0 for r in reports)  # a preview times nothing: no column
    if is_plain(c):
        cells = [
            (
                f"{key_label(str(r.key))} {clean(str(r.title))}",
                VERDICT_STYLE.get(r.verdict, (r.verdict, ""))[0],
                f"{float(r.duration_s or 0.0):.1f}s" if timed else "",
                clean(str(r.detail or "")),
            )
            for r in reports
        ]
        w0 = max((len(x[0]) for x in cells), default=0)
        w1 = max((len(x[1]) for x in cells), default=0)
        w2 = max((len(x[2]) for x in cells), default=0)
        lines = [title] + [f"  {a:<{w0}}  {b:<{w1}}  {t:>{w2}}  {d}".rstrip() for a, b, t, d in cells]
        lines.append(_caption(reports))
        # Written as they are (cleaned above), like the plain run's own lines: rich's render pipeline per
        # line would cost 10 ms for 200 sections and adds nothing without colour or wrapping.
        c.file.write("".join(line.rstrip() + "\n" for line in lines))
        c.file.flush()
        return
    from rich.table import Table
    from rich.text import Text

    t = Table(title=title, title_justify="left")
    t.add_column("section", overflow="ellipsis", max_width=48)
    t.add_column("outcome", no_wrap=True)
    t.add_column("detail", overflow="fold")
    if timed:
        t.add_column("time", justify="right", no_wrap=True)
    for r in reports:
        row: list[RenderableType] = [
            Text(f"{key_label(str(r.key))} {clean(str(r.title))}"),
            verdict_text(r.verdict),
            Text(clean(str(r.detail or ""))),
        ]
        if timed:
            row.append(f"{float(r.duration_s or 0.0):.1f}s")
        t.add_row(*row)
    t.caption = _caption(reports)
    c.print(t)


def print_outputs(c: Console, values: dict[str, str], doubts: dict[str, str] | None = None) -> None:
    """The values the run realized (terraform's outputs), `KEY = value`, aligned; `director output` reads
    them again. A value whose check the ledger says failed is marked, with why (`doubts`)."""
    if not values:
        return
    doubts = doubts or {}
    w = max(len(k) for k in values)
    if is_plain(c):
        lines = ["outputs:"]
        for k, v in values.items():
            doubt = f"  (not holding: {clean(doubts[k])})" if k in doubts else ""
            lines.append(f"  {k:<{w}} = {clean(v)}{doubt}")
        for plain in lines:
            c.print(plain, markup=False, highlight=False, soft_wrap=True)
        return
    from rich.text import Text

    c.print(Text("outputs:", style="bold"), highlight=False)
    for k, v in values.items():
        line = Text(f"  {k:<{w}} = ")
        line.append(clean(v), style="bold" if k not in doubts else "bold red")
        if k in doubts:
            line.append(f"  (not holding: {clean(doubts[k])})", style="red")
        c.print(line, markup=False, highlight=False, soft_wrap=True)

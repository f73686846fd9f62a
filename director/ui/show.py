"""`director show`: a readable outline of a parsed plan (not a dump — `--json` is the dump)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from director.errors import LedgerWriteError
from director.ledger.yamlsplice import render_inline
from director.plan.model import (
    Block,
    BlockRole,
    CheckPolarity,
    MarkerSpec,
    Plan,
    Section,
    SectionKind,
    section_label,
)
from director.plan.templates import target_variables
from director.plan.verify import excerpt

_ROLE_STYLE = {
    BlockRole.ACT: "bold yellow",
    BlockRole.VERIFY: "bold green",
    BlockRole.TEMPLATE: "bold cyan",
}


def marker_text(m: MarkerSpec) -> str:
    """`🔴 if TRIGGER=http (outward-facing)` / `🟡 if TRIGGER∈{cli,binding}` / `✔`."""
    out = m.marker.value
    if m.condition is not None:
        vals = m.condition.values
        cond = (
            f"{m.condition.knob}={vals[0]}" if len(vals) == 1 else f"{m.condition.knob}∈{{{','.join(vals)}}}"
        )
        out += f" if {cond}"
    if m.note:
        out += f" ({m.note})"
    return out


def markers_text(s: Section) -> str:
    """All markers of a section, ` · `-separated."""
    return " · ".join(marker_text(m) for m in s.markers)


def _first_line(b: Block) -> str:
    """The block's first non-blank line, as a short excerpt."""
    return excerpt(next((ln for ln in b.text.split("\n") if ln.strip()), ""), 90)


def _section_label(s: Section) -> str:
    """`§3 Deploy`; an unnumbered section by its title alone."""
    return f"{section_label(s)} {s.title}" if s.number is not None else s.title


def _gate_text(s: Section) -> str:
    gated = [m for m in s.markers if m.rule.gates]
    if not gated:
        return ""
    parts = []
    for m in gated:
        when = "always" if m.condition is None else marker_text(m).split(" if ", 1)[1].split(" (")[0]
        parts.append(f"human go required ({m.marker.value}, {when})")
    return "; ".join(parts)


def _target_text(b: Block, names: tuple[str, ...]) -> str:
    """`${SVC}.jsonc → $CONFIG`: the heading's path and the variable(s) that say where it lives."""
    out = f"[cyan]{escape(b.template_target or '')}[/]"
    if len(names) == 1:
        out += f" → [cyan]${names[0]}[/]"
    elif names:
        out += " → " + " or ".join(f"${n}" for n in names) + " [yellow](ambiguous)[/]"
    return out


def _render_block(b: Block, console: Console, target_vars: tuple[str, ...] = ()) -> None:
    style = _ROLE_STYLE.get(b.role, "dim")
    head = Text("    ")
    head.append(f"{b.role.value:<9}", style=style)
    head.append(f" line {b.span.first_line:<5}", style="dim")
    head.append(f" {b.lang or '(no lang)'}", style="dim")
    if b.retry is not None:
        r = b.retry
        timeout = f", timeout {r.timeout_s:g}s" if r.timeout_s is not None else ""
        head.append(f"  retries={r.retries} {r.backoff} delay {r.delay_s:g}s{timeout}", style="magenta")
    console.print(head)
    if b.role is BlockRole.TEMPLATE:
        console.print(
            f"      → writes {_target_text(b, target_vars)} "
            f"({sum(len(t.rules) for t in b.template_lines)} regeneration rules)"
        )
    elif b.role is BlockRole.VERIFY and b.verify_title:
        console.print(f"      ✔ {escape(b.verify_title)}")
    else:
        console.print(f"      [dim]{escape(_first_line(b))}[/]")
    for c in b.checks:
        mark = "[green]pass[/]" if c.polarity is CheckPolarity.PASS else "[red]fail[/]"
        label = f"[bold]{escape(c.label)}[/] " if c.label else ""
        amb = " [yellow](exit-0 alternative: inconclusive when printed)[/]" if c.soft else ""
        console.print(f"      {mark} {label}[dim]l.{c.line + 1}[/] {escape(c.message)}{amb}")
    for rz in b.realizations:
        console.print(
            f"      ↳ {rz.var} realized in §{escape(rz.section)} (placeholder {escape(rz.placeholder)})"
        )
    for h in b.hints:
        console.print(f"      → Live State: {escape(h)}")


def _render_section(
    s: Section, console: Console, targets: dict[tuple[str, int], tuple[str, ...]] | None = None
) -> None:
    title = Text()
    title.append(_section_label(s), style="bold")
    if s.markers:
        title.append("  " + markers_text(s))
    title.append(f"  [{s.kind.value}, line {s.span.first_line}]", style="dim")
    console.print(title)
    gate = _gate_text(s)
    if gate:
        console.print(f"    [bold red]gate:[/] {escape(gate)}")
    for h in s.hints:
        console.print(f"    → Live State: {escape(h)}")
    for b in s.blocks:
        if b.role in (BlockRole.ACT, BlockRole.VERIFY, BlockRole.TEMPLATE):
            _render_block(b, console, (targets or {}).get((s.key, b.index), ()))


def _family(plan: Plan, console: Console) -> None:
    """What the plan provides to other plans and requires from them (docs/plan-format.md, Families)."""
    from director.plan.family import declarations

    d = declarations(plan)
    for p in d.provides:
        keys = f"  [dim](Live State: {', '.join(p.keys)})[/]" if p.keys else ""
        expr = f"({p.expression})" if p.expression else ""
        console.print(f"provides [cyan]{escape(p.name)}{escape(expr)}[/]{keys}")
    for r in d.requires:
        how = [w for w, on in (("optional", r.optional), ("discovered", r.discovered)) if on]
        source = f" from {escape(r.plan)}" if r.plan else " [dim](by name)[/]"
        note = f"  [dim]({', '.join(how)})[/]" if how else ""
        console.print(f"requires [cyan]{escape(r.name)}[/]{source}{note}")


def render(plan: Plan, console: Console) -> None:
    """Print the plan's outline: inputs, sections in execution order, teardown, Live State."""
    console.print(Text(plan.title, style="bold underline"))
    if plan.path:
        console.print(f"[dim]{escape(plan.path)}[/]")
    for q in plan.preamble:
        first = q.split("\n", 1)[0]
        console.print(f"[dim]> {escape(first[:120])}{'…' if len(first) > 120 or chr(10) in q else ''}[/]")
    _family(plan, console)
    console.print()

    if plan.inputs:
        t = Table(title="Provisioning inputs", title_justify="left", show_lines=False)
        t.add_column("#", justify="right")
        t.add_column("question")
        plain = console.color_system is None  # NO_COLOR, a pipe: no bold to mark the default with
        t.add_column("options (default marked *)" if plain else "options (default in bold)")
        t.add_column("knob", style="cyan")
        for i in plan.inputs:
            opts = Text()
            for k, o in enumerate(i.options):
                if k:
                    opts.append(" / ")
                default = o == i.default
                opts.append(o + ("*" if plain and default else ""), style="bold reverse" if default else "")
            t.add_row(str(i.number), i.question, opts, i.knob)
        console.print(t)
        console.print()

    if plan.contract:
        console.print("[bold]Acceptance contract[/]")
        for c in plan.contract:
            console.print(f"  {c.number}. {escape(c.title)}")
        console.print()

    console.print("[bold]Execution order[/]")
    targets = target_variables(plan)
    for s in plan.executable_sections:
        _render_section(s, console, targets)
    console.print()
    td = plan.teardown
    if td is not None:
        console.print("[bold]Teardown[/]")
        _render_section(td, console, targets)
        console.print()
    others = [s for s in plan.sections if s.kind in (SectionKind.UPDATE, SectionKind.PROSE)]
    if others:
        console.print("[dim]Not executed: " + escape(" · ".join(s.title for s in others)) + "[/]")
        console.print()

    ls = plan.live_state
    if ls is None:
        console.print("[yellow]No Live State section.[/]")
        return
    console.print(f"[bold]Live State[/] [dim](line {ls.span.first_line})[/]")
    for data_key, v in ls.data.items():
        console.print(f"  {escape(str(data_key))}: {escape(_yaml_value(v))}")
    if ls.kv_rows:
        kv = Table(show_header=True, title_justify="left")
        kv.add_column("key", style="cyan")
        kv.add_column("value (template)")
        for kv_row in ls.kv_rows:
            kv.add_row(kv_row.key, kv_row.value)
        console.print(kv)
    if ls.check_rows:
        ct = Table(show_header=True)
        ct.add_column("✔ check")
        ct.add_column("fed by")
        ct.add_column("result")
        for row in ls.check_rows:
            fed = ", ".join(row.fed_by) if row.fed_by else "[red]nothing[/]"
            ct.add_row(escape(row.name), fed, escape(row.result))
        console.print(ct)


def _yaml_value(value: Any) -> str:
    """A Live State value as YAML reads: a mapping or list in flow style, `null`, `true`; a string as is."""
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return str(value)
    try:
        return render_inline(value)
    except LedgerWriteError:
        return str(value)

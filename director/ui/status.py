"""`director status` for a terminal: the data `director.commands.status` computed, as lines and tables."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from director.ui.render import seconds


def render_status(c: Console, out: dict[str, Any]) -> None:
    """Title, Live State keys, last run, lease, per-section last success, sessions."""
    c.print(f"[bold]{out['title']}[/]  ({out['plan']})")
    for k, v in (out["live_state"] or {}).items():
        if k not in ("kv", "checks") and v is not None:  # the rows are in the plan itself; `--json` has them
            c.print(f"  {k:14} {v}", markup=False, highlight=False)
    lr = out["last_run"]
    if lr:
        extra = f", waiting on §{lr['waiting_on']}" if lr["waiting_on"] else ""
        target = f" on target {lr['target']}" if lr.get("target") not in (None, "", "none") else ""
        c.print(f"  last run       {lr['kind']} #{lr['id']}{target}: {lr['state']}{extra} "
                f"({seconds(lr['updated_at'])})", markup=False, highlight=False)
    else:
        c.print("  last run       none here (its Live State is the published template's)")
    state = out.get("state") or {}
    if state.get("backend") == "postgresql":  # the shared backend: where, and which plan key it uses
        c.print(f"  state          {state['where']}, plan key {state['key']} ({state['key_detail']})")
    if out["lease"]:
        lease = out["lease"]
        gone = " (not running: the next apply resumes the run)" if lease.get("alive") is False else ""
        c.print(f"  lease          held by pid {lease['pid']} on {lease['host']}{gone}")
    if lr:  # a plan never run here has no section to say anything of
        t = Table("section", "title", "last success")
        for s in out["sections"]:
            t.add_row(s["key"], s["title"], seconds(s["last_success"]))
        c.print(t)
    else:
        c.print("  sections       none run here yet", markup=False, highlight=False)
    if out["sessions"]:
        st = Table("worker", "pid", "port", "url", "health", title="local sessions")
        for s in out["sessions"]:
            st.add_row(
                str(s.get("name")),
                str(s.get("pid")),
                str(s.get("port")),
                str(s.get("url")),
                "healthy" if s.get("healthy") else ("alive" if s.get("alive") else "dead"),
            )
        c.print(st)
    if out.get("processes"):
        pt = Table("pid", "command", "started by", "run", title="processes the plan started, still running")
        for p in out["processes"]:
            by = f"§{p['section']} block {p['block']}" if p.get("section") else "?"
            by += " (processes=keep)" if p["kept"] else ""
            pt.add_row(str(p["pid"]), p["command"], by, str(p["run_id"]))
        c.print(pt)


def family_lines(
    c: Console, labels: list[str], docs: list[dict[str, Any]], edges: list[dict[str, str]]
) -> None:
    """A family's status, one line a plan in dependency order: its name, what exists (`not-created` for a plan
    never run here, whatever its published template says), its last run, what it requires from whom. At a
    terminal a line too long for it puts what it requires on the next line. `--details` has the rest."""
    from director.ui.family import display_names
    from director.ui.prompts import screen_of

    names = display_names(labels)
    size = screen_of(c)
    width = size[0] if size is not None else None
    rows = []
    for label, doc in zip(labels, docs, strict=True):
        lr = doc["last_run"]
        status = str((doc["live_state"] or {}).get("status") or "—").split("#", 1)[0].strip()
        if lr is None:
            status, last = "not-created", "never run here"
        else:
            waiting = f" at §{lr['waiting_on']}" if lr.get("waiting_on") else ""
            last = f"{lr['kind']} #{lr['id']} {lr['state']}{waiting} {_minute(lr['updated_at'])}"
            if doc.get("lease"):
                last += f"; running (pid {doc['lease']['pid']})"
        if doc.get("processes"):
            n = len(doc["processes"])
            last += f"; {n} process{'es' if n != 1 else ''} still run{'s' if n == 1 else ''}"
        needs = [f"{e['name']} from {names.get(e['provider'], e['provider'])}" for e in edges
                 if e["consumer"] == label]  # fmt: skip
        rows.append((names[label], status, last, "requires " + ", ".join(needs) if needs else ""))
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    out = [f"{len(rows)} plans, in dependency order; times UTC (each plan's whole status: --details)"]
    for name, status, last, required in rows:
        line = f"  {name:<{w0}}  {status:<{w1}}  {last}"
        if required and width is not None and len(line) + 2 + len(required) > width:
            out += [line, " " * (w0 + 4) + required]
        else:
            out.append(f"{line}  {required}".rstrip())
    for line in out:
        c.print(line, markup=False, highlight=False, soft_wrap=True)


def _minute(value: object) -> str:
    """A journal time (UTC) to the minute (`2026-12-06 08:24`): a one-line status's column."""
    from datetime import UTC, datetime

    try:
        when = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    except ValueError:
        return seconds(value)
    if when.tzinfo is not None:
        when = when.astimezone(UTC)
    return when.strftime("%Y-%m-%d %H:%M")

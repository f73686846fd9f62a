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
        c.print("  last run       none")
    state = out.get("state") or {}
    if state.get("backend") == "postgresql":  # the shared backend: where, and which plan key it uses
        c.print(f"  state          {state['where']}, plan key {state['key']} ({state['key_detail']})")
    if out["lease"]:
        lease = out["lease"]
        gone = " (not running: the next apply resumes the run)" if lease.get("alive") is False else ""
        c.print(f"  lease          held by pid {lease['pid']} on {lease['host']}{gone}")
    t = Table("section", "title", "last success")
    for s in out["sections"]:
        t.add_row(s["key"], s["title"], seconds(s["last_success"]))
    c.print(t)
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

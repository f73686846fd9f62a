"""`director audit` at a terminal: the journal's history as tables (rich)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from director.ui.render import fields, seconds


def _cut(text: Any, n: int = 60) -> str:
    return fields(text, n)


def render_audit(c: Console, data: dict[str, Any]) -> None:
    """Runs with their transitions, steps, approvals and events, oldest first; the chain's breaks first."""
    breaks = (data.get("chain") or {}).get("breaks", [])
    if breaks:
        c.print(f"✗ the journal was tampered with: {len(breaks)} break(s) in its hash chain", markup=False,
                highlight=False)  # fmt: skip
        for b in breaks:
            c.print(f"  ✗ {b['row']} {b['detail']}", markup=False, highlight=False)
    runs = data.get("runs", [])
    if not runs:
        c.print("no runs recorded")
    for run in runs:
        rid = run["id"]
        target = f" on {run['target']}" if run.get("target") not in (None, "", "none") else ""
        c.print(
            f"[bold]run {rid}[/] {run['kind']}{target} by {escape(str(run.get('operator')))}: "
            f"[bold]{run['state']}[/] (created {seconds(run.get('created_at'))})"
        )
        for tr in (t for t in data.get("transitions", []) if t["run_id"] == rid):
            frm = tr.get("from_state") or "∅"
            c.print(f"  {seconds(tr['at'])}  {frm} → {tr.get('to_state')}  {_cut(tr.get('reason'), 90)}",
                    markup=False, highlight=False)
        steps = [s for s in data.get("steps", []) if s["run_id"] == rid]
        if steps:
            t = Table("step", "role", "attempt", "state", "exit", "secs", "flags", "output", box=None)
            for s in steps:
                t.add_row(
                    s["step_key"],
                    s["role"],
                    str(s["attempt"]),
                    s["state"],
                    str(s.get("exit_code")),
                    f"{(s.get('duration_s') or 0):.2f}",
                    _cut(s.get("flags"), 30),
                    _cut(s.get("output"), 50),
                )
            c.print(t)
        for ev in (e for e in data.get("events", []) if e.get("run_id") == rid):
            c.print(f"  event {seconds(ev['at'])} {ev['kind']}: {_event_words(ev)}", markup=False,
                    highlight=False)
    approvals = data.get("approvals", [])
    if approvals:
        t = Table("id", "section", "operator", "host", "at", "how", "sha256", title="approval receipts")
        for a in approvals:
            t.add_row(str(a["id"]), a["section_key"], a["operator"], a["host"], seconds(a["at"]), a["how"],
                      a["sha256"][:16] + "…")  # fmt: skip
        c.print(t)
        checked = _signatures(data.get("events", []))
        broken = {b["id"]: b for b in breaks if b["table"] == "approvals"}
        for a in approvals:
            signed = f"signed by {a['principal']} (not checked yet)" if a.get("principal") else ""
            said = checked.get(a["id"]) or signed
            if str(a["id"]) in broken:
                said = f"✗ tampered: {broken[str(a['id'])]['detail']}"
            elif breaks and said.startswith("✓"):  # what a gate once said is no evidence once tampered with
                said = "✗ not trusted: " + said.removeprefix("✓ ") + " (the journal was tampered with)"
            if said:
                c.print(f"  receipt {a['id']}: {said}", markup=False, highlight=False)
    other = [e for e in data.get("events", []) if e.get("run_id") is None]
    for ev in other:
        c.print(f"event {seconds(ev['at'])} {ev['kind']}: {_event_words(ev)}", markup=False, highlight=False)


def _event_words(ev: dict[str, Any]) -> str:
    """An event's data as a line: whose approval released a gate, a revocation and a warning in words
    (never cut where the signer or the file would be lost); any other event, its data cut."""
    d = ev.get("data") or {}
    kind = ev.get("kind")
    if kind == "approval-used":
        signed = f" signed by {d['principal']} with {d.get('fingerprint')}" if d.get("principal") else ""
        return f"released §{d.get('section')} on receipt {d.get('approval_id')}{signed}"
    if kind == "approval-revoked":
        why = f": {_cut(d.get('reason'), 80)}" if d.get("reason") else ""
        return f"receipt {d.get('approval_id')} revoked by {d.get('operator')}@{d.get('host')}{why}"
    if kind == "trust-uncommitted":
        return str(d.get("warning"))
    return _cut(d, 100)


def _signatures(events: list[dict[str, Any]]) -> dict[Any, str]:
    """Receipt id -> what the last gate that checked its signature said: the verified principal and key
    fingerprint, or why it was not accepted (`approval-verified` / `approval-refused` events)."""
    out: dict[Any, str] = {}
    for ev in events:
        d = ev.get("data") or {}
        if ev.get("kind") == "approval-verified":
            out[d.get("approval_id")] = f"✓ verified: {d.get('principal')}, key {d.get('fingerprint')}"
        elif ev.get("kind") == "approval-refused":
            out[d.get("approval_id")] = "✗ not accepted: " + _cut(d.get("reason"), 200)
    return out

"""The effects edge of every command: files, journal, lease, target, shell, signals, prompts, rendering."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from director import cli as codes
from director.errors import DirectorError, UsageError


@dataclass(frozen=True)
class Paths:
    """Where a plan's machine state lives."""

    state: Path
    journal: Path
    lock: Path
    workspace: Path


def paths_for(plan_path: Path, state_dir: Path | None, workdir: Path | None) -> Paths:
    """`.director/<plan file name>/` beside the plan unless told otherwise."""
    plan_path = plan_path.resolve()
    if state_dir is None:
        root = plan_path.parent / ".director"
        state = root / plan_path.name
    else:
        root = state_dir.resolve()
        state = root
    return Paths(
        state,
        state / "journal.sqlite3",
        state / "lease.lock",
        (workdir.resolve() if workdir else state / "workspace"),
    )


def _prepare_dirs(p: Paths) -> None:
    p.state.mkdir(parents=True, exist_ok=True)
    p.workspace.mkdir(parents=True, exist_ok=True)
    ignore = p.state.parent / ".gitignore" if p.state.parent.name == ".director" else p.state / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# Director's journal, leases and workspaces: machine state, not for git\n*\n")


def _secret_values(names: list[str]) -> list[str]:
    from director.exec.secrets import is_secret_name

    marked = {n.upper() for n in names}
    return [v for k, v in os.environ.items() if v and (is_secret_name(k) or k.upper() in marked)]


@contextmanager
def _sigint(handler: Any) -> Iterator[None]:
    """Route Ctrl-C (and SIGTERM) to the engine so the running block stops and the run is journaled."""

    def on_signal(*_: Any) -> None:
        if not handler():
            # No block is running (a prompt, a journal write…): stop here, the engine journals it.
            raise KeyboardInterrupt

    old_int = signal.signal(signal.SIGINT, on_signal)
    old_term = signal.signal(signal.SIGTERM, on_signal)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old_int)
        signal.signal(signal.SIGTERM, old_term)


def uses_wrangler(plan: Any) -> bool:
    """Whether any executable block of the plan runs wrangler (targets only matter then)."""
    from director.plan import bash

    return any(bash.calls(b.text, "wrangler") for s in plan.sections for b in s.executable_blocks)


def run_command(
    *,
    kind: str,
    mode: str,
    plan_path: Path,
    target: str,
    state_dir: Path | None,
    workdir: Path | None,
    secrets: list[str],
    events: str | None,
    plain: bool,
    sets: list[str] = [],  # noqa: B006 - never mutated
    approve: list[str] = [],  # noqa: B006 - never mutated
    auto_approve: bool = False,
    non_interactive: bool = True,
    restart: bool = False,
    operator: str | None = None,
    step_timeout: float = 600.0,
    max_recoveries: int = 5,
) -> int:
    """apply / teardown / plan / check."""
    from director.exec.secrets import Redactor
    from director.exec.shell import Shell
    from director.ledger.planfile import PlanFile
    from director.plan import knobs
    from director.run.config import RunConfig
    from director.run.engine import Engine
    from director.run.events import Bus, JsonlWriter
    from director.run.gates import operator_name
    from director.state.journal import Journal
    from director.state.lease import acquire
    from director.targets import get_target
    from director.ui.render import LiveReporter, PlainReporter, TerminalPrompter, make_console, summary_table

    if not plan_path.exists():
        raise UsageError(f"PLAN: no such file: {plan_path}")
    if step_timeout <= 0:
        raise UsageError("--step-timeout must be > 0 seconds")
    if max_recoveries < 0:
        raise UsageError("--max-recoveries must be >= 0")
    pf = PlanFile.load(plan_path, secret_values=_secret_values(secrets))
    plan = pf.plan
    given = knobs.parse_sets(plan, sets)
    interactive = (
        not non_interactive and not os.environ.get("CI") and sys.stdin.isatty() and sys.stdout.isatty()
    )
    events_to_stdout = events == "-"
    console = make_console(plain or events_to_stdout or not sys.stdout.isatty(), stderr=events_to_stdout)
    p = paths_for(plan_path, state_dir, workdir)
    _prepare_dirs(p)
    who = operator_name(operator)

    def progress(msg: str) -> None:
        from rich.text import Text

        console.print(Text(msg, style="" if plain else "dim"))

    tgt = get_target(target, p.state, progress=progress)
    calls_wrangler = uses_wrangler(plan)
    if calls_wrangler:
        tgt.check_prerequisites()
        tenv = tgt.block_environment()
    else:
        # A plan that never calls wrangler needs no account, no shim and no npm install.
        from director.targets import TargetEnv

        tenv = TargetEnv(description=f"{target} (the plan calls no wrangler)")

    bus = Bus()
    live: LiveReporter | None = None
    use_live = interactive and not plain and console.is_terminal and not os.environ.get("NO_COLOR")
    if use_live:
        live = LiveReporter(
            console,
            [
                (s.key, f"§{s.key}" if s.number is not None else s.key, s.title)
                for s in plan.executable_sections
            ]
            + (
                [(plan.teardown.key, "teardown", plan.teardown.title)]
                if kind == "teardown" and plan.teardown
                else []
            ),
        )
        bus.subscribe(live)
    else:
        bus.subscribe(PlainReporter(console))
    events_file = None
    if events:
        if events_to_stdout:
            bus.subscribe(JsonlWriter(sys.stdout))
        else:
            events_file = open(events, "a", encoding="utf-8")  # noqa: SIM115 - closed in finally
            bus.subscribe(JsonlWriter(events_file))

    prompter = None
    if interactive:
        tp = TerminalPrompter(console)
        if live is not None:
            tp.pause, tp.resume = live.pause, live.resume
        prompter = tp

    from director.exec.secrets import secret_name_predicate

    journal = Journal.open(p.journal, is_secret=secret_name_predicate(secrets))
    base_env = dict(os.environ)
    base_env.update(tenv.env)
    redactor = Redactor(_secret_values(secrets))
    shell = Shell(
        base_env, p.workspace, interactive=interactive, path_prepend=tenv.path_prepend, redactor=redactor
    )
    cfg = RunConfig(
        kind="teardown" if kind == "teardown" else "apply",
        mode="check" if mode == "check" else "preview" if mode == "preview" else "run",
        interactive=interactive,
        restart=restart,
        approve=tuple(approve),
        auto_approve=auto_approve,
        operator=who,
        step_timeout_s=step_timeout,
        max_recoveries=max_recoveries,
        target=target if calls_wrangler else "none",  # the target a run really used
        sets=given,
        secret_names=tuple(secrets),
    )
    engine = Engine(
        plan_file=pf,
        journal=journal,
        shell=shell,
        target=tgt,
        bus=bus,
        prompter=prompter,
        config=cfg,
        workdir=p.workspace,
    )

    def resolve(previous: dict[str, str] | None) -> knobs.Resolution:
        ask = prompter.ask_input if prompter is not None else None

        def ask_knob(knob: str) -> str:
            assert ask is not None
            return ask(plan.knob_inputs()[knob])

        return knobs.resolve(plan, given, previous, ask_knob if ask else None)

    lease_cm: Any = acquire(p.lock, journal, run_kind=kind) if mode == "run" else nullcontext()
    try:
        with lease_cm as lease, _sigint(engine.interrupt):
            if lease is not None:
                # The holder row names its run and stays fresh, so `status` and a takeover can tell;
                # at most one heartbeat commit a second, so trivial blocks do not pay an fsync each.
                beat = [time.monotonic()]

                def _lease_events(ev: dict[str, Any]) -> None:
                    if ev["type"] == "run.start":
                        lease.attach_run(ev["run_id"])
                    elif ev["type"] == "step.end" and time.monotonic() - beat[0] >= 1.0:
                        beat[0] = time.monotonic()
                        lease.heartbeat()

                bus.subscribe(_lease_events)
            if live is not None:
                live.start()
            try:
                if mode == "run":
                    journal.record_event(None, "plan-before-run", {"text": pf.plan.source, "kind": kind})
                result = engine.execute(resolve)
            finally:
                if live is not None:
                    live.stop()
    except BaseException:
        if events_file is not None:
            events_file.close()
        raise
    finally:
        shell.close()
        journal.close()

    if result.sections and (mode != "run" or not events_to_stdout):
        summary_table(
            console,
            result.sections,
            title={"preview": "plan", "check": "check"}.get(mode, f"{kind} run {result.run_id}"),
        )
    code = _report(console, result, mode, kind)
    bus.emit("run.end", **_end_fields(result, mode, code))
    if events_file is not None:
        events_file.close()
    return code


def _end_fields(result: Any, mode: str, code: int) -> dict[str, Any]:
    return {
        "run_id": result.run_id,
        "mode": mode,
        "outcome": result.outcome,
        "section": result.section,
        "message": result.message,
        "exit_code": code,
    }


def _report(console: Any, result: Any, mode: str, kind: str) -> int:
    from director.ui.render import clean

    def say(line: str) -> None:
        # Messages carry block output: never read them as rich markup.
        console.print(clean(line), markup=False, highlight=False)

    if mode == "preview":
        say("changes pending" if result.changes else "no changes: everything is in sync")
        return codes.EXIT_CHANGES if result.changes else codes.EXIT_OK
    if mode == "check":
        for d in result.drift:
            say(f"drift: {d}")
        say("drift found" if result.drift else "in sync with the ledger")
        return codes.EXIT_CHANGES if result.drift else codes.EXIT_OK
    outcome = result.outcome
    if outcome == "completed":
        say(f"{kind} completed: {result.message}")
        if result.unconfirmed:
            for note in result.unconfirmed:
                say(f"unconfirmed: {note}")
            return codes.EXIT_UNCONFIRMED
        return codes.EXIT_OK
    if outcome == "awaiting-approval":
        say(f"awaiting approval: {result.message}")
        say(f"approve with:  {result.approve_hint}   (or re-run with --approve {result.section})")
        return codes.EXIT_AWAITING_APPROVAL
    if outcome == "interrupted":
        say(f"interrupted: {result.message}; `director {kind}` resumes")
        return codes.EXIT_INTERRUPTED
    say(f"failed: {result.message}")
    return codes.EXIT_STEP_FAILED


def _open_journal(plan_path: Path, state_dir: Path | None) -> Any:
    from director.state.journal import Journal

    p = paths_for(plan_path, state_dir, None)
    if not p.journal.exists():
        return None
    return Journal.open(p.journal)


def approve_command(plan_path: Path, selector: str, *, operator: str | None, state_dir: Path | None) -> int:
    """Record a receipt for a gate's content as it stands (the waiting run's session and inputs)."""
    from director.plan import knobs
    from director.plan.parse import parse_file
    from director.run.gates import GateContent, make_receipt, matches, operator_name
    from director.ui.render import gate_panel, make_console

    if not plan_path.exists():
        raise UsageError(f"PLAN: no such file: {plan_path}")
    plan = parse_file(str(plan_path))
    section = next((s for s in plan.sections if matches(selector, s.key, s.slug, s.title)), None)
    if section is None:
        raise UsageError(f"SECTION: the plan has no section {selector!r}")
    journal = _open_journal(plan_path, state_dir)
    if journal is None:
        raise DirectorError(f"{plan_path}: no run yet; run `director apply` first (it stops at the gate)")
    console = make_console(False)
    try:
        run = journal.latest_run("teardown" if section.kind.value == "teardown" else "apply")
        if run is None:
            raise DirectorError(
                f"{plan_path}: no run has reached {selector!r} yet; run `director apply` first"
            )
        kn = dict(run.inputs or {})
        if knobs.gate_of(section, kn) is None:
            raise UsageError(f"SECTION: {selector!r} is not gated for inputs {kn}")
        content = _content_as_it_stands(plan, section, run, journal, kn)
        gate_panel(console, content)
        who = operator_name(operator)
        r = make_receipt(content, who, "approve-command")
        journal.record_approval(
            None, r.section_key, r.sha256, r.operator, "approve-command", content.to_json()
        )
        console.print(f"approved §{section.key} for {who}@{r.host} at {r.at}: sha256 {r.sha256}")
        assert isinstance(content, GateContent)
    finally:
        journal.close()
    return codes.EXIT_OK


def _content_as_it_stands(plan: Any, section: Any, run: Any, journal: Any, kn: dict[str, str]) -> Any:
    """The gate content from the current plan text with the run's session, inputs and realized values."""
    from director.exec.shell import SessionState
    from director.plan import knobs
    from director.run.approval import gate_content
    from director.run.sections import render_templates

    session = SessionState(cwd=str(paths_for(Path(run.plan_path), None, None).workspace))
    for step in journal.steps(run.id):
        if step.state == "succeeded" and step.session is not None and step.role != "section":
            session = SessionState.from_json(step.session)
    realized: dict[str, str] = {}
    for ev in journal.events(kind="realized"):
        realized.update(ev.data.get("values", {}))
    texts = {b.index: knobs.block_text(section, b, kn, realized) for b in section.executable_blocks}
    templates = render_templates(section, session, kn) if section.template_blocks else {}
    return gate_content(plan, section, kn, texts, templates, session.variables)


def status_command(plan_path: Path, *, state_dir: Path | None, as_json: bool) -> int:
    """`director status`."""
    import socket

    from director.plan.parse import parse_file
    from director.state import lease as lease_mod
    from director.ui.render import make_console

    if not plan_path.exists():
        raise UsageError(f"PLAN: no such file: {plan_path}")
    plan = parse_file(str(plan_path))
    ls = plan.live_state
    out: dict[str, Any] = {
        "plan": str(plan_path),
        "title": plan.title,
        "live_state": {k: ls.data.get(k) for k in ("status", "last_action", "last_verified", "target")}
        if ls
        else {},
        "last_run": None,
        "sections": [],
        "lease": None,
        "sessions": [],
    }
    journal = _open_journal(plan_path, state_dir)
    if journal is not None:
        try:
            run = journal.latest_run()
            if run is not None:
                waiting = None
                if run.state == "awaiting-approval":
                    evs = [e for e in journal.events(kind="gate-waiting") if e.run_id == run.id]
                    waiting = evs[-1].data.get("section") if evs else None
                out["last_run"] = {
                    "id": run.id,
                    "kind": run.kind,
                    "state": run.state,
                    "target": run.target,
                    "operator": run.operator,
                    "created_at": run.created_at,
                    "updated_at": run.updated_at,
                    "waiting_on": waiting,
                    "inputs": run.inputs,
                }
            for s in plan.executable_sections + ((plan.teardown,) if plan.teardown else ()):
                last = journal.last_success(f"{s.key}/section")
                out["sections"].append(
                    {"key": s.key, "title": s.title, "last_success": last.finished_at if last else None}
                )
            holder = journal.lease_holder()
            out["lease"] = (
                None
                if holder is None
                else {
                    "pid": holder.pid,
                    "host": holder.host,
                    "kind": holder.kind,
                    "started_at": holder.started_at.isoformat(),
                    "heartbeat_at": holder.heartbeat_at.isoformat(),
                    "run_id": holder.run_id,
                    # False: its process is gone (a crash; the next apply takes over). None: another host.
                    "alive": lease_mod.pid_alive(holder.pid) if holder.host == socket.gethostname() else None,
                }
            )
        finally:
            journal.close()
    p = paths_for(plan_path, state_dir, None)
    if (p.state / "local").exists():
        from director.targets import get_target

        try:
            tgt = get_target("local", p.state, progress=None)
            out["sessions"] = [s.to_dict() for s in tgt.sessions()]
        except DirectorError:
            out["sessions"] = []
    if as_json:
        print(json.dumps(out, indent=2, ensure_ascii=False, default=str))
        return codes.EXIT_OK
    c = make_console(False)
    from rich.table import Table

    c.print(f"[bold]{plan.title}[/]  ({plan_path})")
    for k, v in out["live_state"].items():
        c.print(f"  {k:14} {v}")
    lr = out["last_run"]
    if lr:
        extra = f", waiting on §{lr['waiting_on']}" if lr["waiting_on"] else ""
        c.print(f"  last run       {lr['kind']} #{lr['id']}: {lr['state']}{extra} ({lr['updated_at']})")
    else:
        c.print("  last run       none")
    if out["lease"]:
        lease = out["lease"]
        gone = " (not running: the next apply resumes the run)" if lease.get("alive") is False else ""
        c.print(f"  lease          held by pid {lease['pid']} on {lease['host']}{gone}")
    t = Table("section", "title", "last success")
    for s in out["sections"]:
        t.add_row(s["key"], s["title"], str(s["last_success"] or "—"))
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
    return codes.EXIT_OK


def diff_command(
    plan_path: Path, *, against: str, last_run: bool, state_dir: Path | None, as_json: bool
) -> int:
    """`director diff`."""
    from director.ledger.diff import live_state_diff, text_at_revision
    from director.ui.render import make_console

    if not plan_path.exists():
        raise UsageError(f"PLAN: no such file: {plan_path}")
    new = plan_path.read_text(encoding="utf-8")
    if last_run:
        journal = _open_journal(plan_path, state_dir)
        if journal is None:
            raise DirectorError(f"{plan_path}: no run recorded; nothing to compare with")
        try:
            evs = journal.events(kind="plan-before-run")
        finally:
            journal.close()
        if not evs:
            raise DirectorError(f"{plan_path}: no run recorded; nothing to compare with")
        old = evs[-1].data["text"]
    else:
        old = text_at_revision(plan_path, against)
    d = live_state_diff(old, new)
    if as_json:
        print(json.dumps(d.to_json(), indent=2, ensure_ascii=False))
    else:
        d.render(make_console(False))
    return codes.EXIT_OK if d.is_empty else codes.EXIT_FINDINGS


def audit_command(plan_path: Path, *, state_dir: Path | None, as_json: bool, jsonl: bool) -> int:
    """`director audit`."""
    from director.ui.render import make_console

    if not plan_path.exists():
        raise UsageError(f"PLAN: no such file: {plan_path}")
    journal = _open_journal(plan_path, state_dir)
    if journal is None:
        data: dict[str, Any] = {"runs": [], "transitions": [], "steps": [], "approvals": [], "events": []}
    else:
        try:
            data = journal.export_data()
        finally:
            journal.close()
    for ev in data.get("events", []):
        if ev.get("kind") == "plan-before-run":
            ev["data"] = {
                "kind": ev["data"].get("kind"),
                "text": f"<{len(ev['data'].get('text', ''))} chars>",
            }
    if as_json:
        print(json.dumps(data, indent=2, ensure_ascii=False, default=str))
        return codes.EXIT_OK
    if jsonl:
        for table, rows in data.items():
            if isinstance(rows, list):
                for row in rows:
                    print(json.dumps({"record": table.rstrip("s"), **row}, ensure_ascii=False, default=str))
        return codes.EXIT_OK
    from director.ui.audit import render_audit

    render_audit(make_console(False), data)
    return codes.EXIT_OK

"""What the operator sees of one plan's run: the live view or plain lines, the event sinks, the prompter,
and the end of the run (its summary, outputs, exit code and CI report). `commands.run` wires them."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from director.errors import ExitCode, UsageError

if TYPE_CHECKING:
    from rich.console import Console

    from director.plan.model import Plan
    from director.run.config import RunResult
    from director.run.events import Bus
    from director.run.gates import Prompter
    from director.ui.board import LiveReporter


@dataclass
class InFamily:
    """How one plan's run sits in a family run (`commands/family_run.py`): its lines go to `console`, its
    events also to `events`, its questions to `prompter` (the family asks one at a time), Ctrl-C reaches it
    through `interrupts` (the family owns the signals); `result` is what the run ended with."""

    label: str
    console: Console
    events: Callable[[dict[str, Any]], None] | None
    prompter: Prompter | None
    interrupts: Callable[[Callable[[str], bool]], AbstractContextManager[None]]
    result: RunResult | None = field(default=None)


def views(
    console: Console, plan: Plan, kind: str, interactive: bool, plain: bool, family: InFamily | None = None
) -> tuple[Bus, LiveReporter | None]:
    """The event bus with the screen on it: a live view at an interactive terminal, else plain lines (a
    family member's name the plan in every event, and its lines are plain)."""
    from director.run.events import Bus
    from director.ui.board import LiveReporter
    from director.ui.render import PlainReporter

    bus = Bus(fields={"plan": family.label} if family is not None else None)
    use_live = interactive and not plain and console.is_terminal and not os.environ.get("NO_COLOR")
    use_live = use_live and family is None
    if not use_live:
        bus.subscribe(PlainReporter(console))
        return bus, None
    rows = [
        (s.key, f"§{s.key}" if s.number is not None else s.key, s.title) for s in plan.executable_sections
    ]
    if kind == "teardown" and plan.teardown:
        rows.append((plan.teardown.key, "teardown", plan.teardown.title))
    live = LiveReporter(console, rows)
    bus.subscribe(live)
    return bus, live


def event_sinks(bus: Bus, events: str | None, closing: ExitStack) -> None:
    """`--events FILE|-`: JSONL events to a file (closed with `closing`) or to stdout."""
    from director.run.events import JsonlWriter, open_sink

    if not events:
        return
    if events == "-":
        bus.subscribe(JsonlWriter(sys.stdout))
        return
    try:
        sink = closing.enter_context(open_sink(events))
    except OSError as exc:
        raise UsageError(f"--events: cannot write {events}: {exc.strerror or exc}") from None
    bus.subscribe(JsonlWriter(sink))


def prompter(
    console: Console, live: LiveReporter | None, interactive: bool, plan_path: Path, kind: str
) -> Prompter | None:
    """Questions at the terminal (the live view steps aside while one is asked), or none."""
    if not interactive:
        return None
    from director.ui.prompts import TerminalPrompter

    tp = TerminalPrompter(console)
    preview = f"director plan {plan_path}" + (" --teardown" if kind == "teardown" else "")
    tp.details = lambda key: f"{preview} --section {key}"
    if live is not None:
        tp.pause, tp.hold, tp.resume = live.pause, live.hold, live.resume
    return tp


@contextmanager
def shown(live: LiveReporter | None) -> Iterator[None]:
    """The live view on screen while the engine runs (nothing to do for plain output)."""
    if live is None:
        yield
        return
    live.start()
    try:
        yield
    finally:
        live.stop()


def finish(
    console: Console,
    bus: Bus,
    result: RunResult,
    mode: str,
    kind: str,
    events_to_stdout: bool,
    *,
    live: bool = False,
    pf: Any = None,
    table: bool = True,
) -> ExitCode:
    """The summary, the outcome in words, the realized values, the `run.end` event; the exit code."""
    from director.ledger.compose import doubts, outputs
    from director.ui.summary import print_outputs, summary_table

    if table and result.sections and (mode != "run" or not events_to_stdout):
        summary_table(
            console,
            result.sections,
            title={"preview": "plan", "check": "check"}.get(mode, f"{kind} run {result.run_id}"),
            live=live,
        )
    if result.detail is not None:  # `plan --section N`: the gate in full, before the outcome
        from director.run.gates import GateContent
        from director.ui.prompts import gate_panel

        if isinstance(result.detail, GateContent):
            gate_panel(console, result.detail, full=True)
        else:
            console.print(str(result.detail), markup=False, highlight=False)
    code = report(console, result, mode, kind)
    realized = outputs(pf.plan) if pf is not None and mode == "run" and kind == "apply" else {}
    print_outputs(console, realized, doubts(pf.plan) if realized else {})
    bus.emit("run.end", **end_fields(result, mode, code), outputs=realized)
    return code


def end_fields(result: RunResult, mode: str, code: ExitCode) -> dict[str, Any]:
    return {
        "run_id": result.run_id,
        "mode": mode,
        "outcome": "not-created" if result.pristine and result.outcome == "check" else result.outcome,
        "section": result.section,
        "message": result.message,
        "exit_code": int(code),
    }


def report(console: Console, result: RunResult, mode: str, kind: str) -> ExitCode:
    """Say how the run ended, in one or a few lines, and pick its exit code."""
    from director.ui.render import clean

    def say(line: str) -> None:
        # Messages carry block output: never read them as rich markup.
        console.print(clean(line), markup=False, highlight=False)

    if mode == "preview":
        say("changes pending" if result.changes else "no changes: everything is in sync")
        return ExitCode.CHANGES if result.changes else ExitCode.OK
    if mode == "check" and result.pristine:
        say(
            "not created here: no run of this plan is recorded in its journal, so its Live State is the "
            "published template's, not evidence of what exists; `director plan` says what apply would do"
        )
        return ExitCode.NOT_CREATED
    if mode == "check":
        for d in result.drift:
            say(f"drift: {d}")
        say("drift found" if result.drift else "in sync with the ledger")
        return ExitCode.CHANGES if result.drift else ExitCode.OK
    outcome = result.outcome
    if outcome == "completed":
        say(f"{kind} completed: {result.message}")
        if result.unconfirmed:
            for note in result.unconfirmed:
                say(f"unconfirmed: {note}")
            return ExitCode.UNCONFIRMED
        return ExitCode.OK
    if outcome == "awaiting-approval":
        say(f"awaiting approval: {result.message}")
        say(f"approve with:  {result.approve_hint}   (or re-run with --approve {result.section})")
        return ExitCode.AWAITING_APPROVAL
    if outcome == "interrupted":
        say(f"interrupted: {result.message}; `director {kind}` resumes")
        return ExitCode.INTERRUPTED
    say(f"failed: {result.message}")
    return ExitCode.STEP_FAILED


def github_report(
    plan: Plan, plan_path: Path, result: RunResult, mode: str, kind: str, code: ExitCode, out: Any
) -> None:
    """On GitHub Actions: annotations at the sections concerned, and a Markdown job summary (docs/ci.md)."""
    from director.ci import Level, annotation, append_summary, md_cell
    from director.plan.model import section_label

    path = str(plan_path)
    command = {"preview": "plan", "check": "check"}.get(mode, kind)

    def line_of(key: str | None) -> int:
        for s in plan.sections:
            if s.key == key:
                return s.span.first_line
        return plan.title_line + 1

    def line_of_drift(text: str) -> int:
        ls = plan.live_state
        m = re.match(r"check row '(.*)':", text)
        if m and ls is not None:
            return next((r.line + 1 for r in ls.check_rows if r.name == m.group(1)), ls.span.first_line)
        for s in plan.sections:
            label = section_label(s)
            if text == label or text.startswith((f"{label}:", f"{label} ")):
                return s.span.first_line
        return plan.title_line + 1

    title = f"director {command}"

    def say(level: Level, msg: str, key: str | None = None, line: int | None = None, name: str = "") -> None:
        where = line if line is not None else line_of(key)
        print(annotation(level, msg, file=path, line=where, title=name or title), file=out, flush=True)

    if mode == "preview":
        for r in result.sections:
            if r.verdict in ("will-apply", "needs-approval"):
                say("notice", f"{r.verdict}: {r.detail}", r.key)
            elif r.verdict in ("blocked", "failed"):
                say("error", f"{r.verdict}: {r.detail}", r.key)
    elif mode == "check":
        for d in result.drift:
            say("error", f"drift: {d}", line=line_of_drift(d), name=f"{title}: drift")
    elif result.outcome == "awaiting-approval":
        msg = f"awaiting approval: {result.message}; approve with: {result.approve_hint}"
        say("warning", msg, result.section)
    elif result.outcome in ("failed", "interrupted"):
        msg = f"{result.outcome}: {result.message}"
        say("error", msg, result.section, name=f"{title} {result.outcome}")
    for note in result.unconfirmed:
        say("warning", f"unconfirmed: {note}", result.section)

    if mode == "preview":
        outcome = "changes pending" if result.changes else "no changes: everything is in sync"
    elif mode == "check":
        outcome = "drift found" if result.drift else "in sync with the ledger"
    else:
        outcome = f"{kind} {result.outcome}" + (f": {result.message}" if result.message else "")
    md = [f"### `director {command}` · `{md_cell(path)}`", ""]
    md += [f"**{md_cell(outcome)}** (exit {int(code)})", ""]
    if result.sections:
        md += ["| section | verdict | detail |", "| --- | --- | --- |"]
        for r in result.sections:
            s = next((x for x in plan.sections if x.key == r.key), None)
            name = f"{section_label(s)} {s.title}" if s is not None else r.key
            md.append(f"| {md_cell(name)} | {md_cell(r.verdict)} | {md_cell(r.detail)} |")
        md.append("")
    if result.drift:
        md += ["Drift:", "", *[f"- {md_cell(d)}" for d in result.drift], ""]
    if result.unconfirmed:
        md += ["Unconfirmed:", "", *[f"- {md_cell(n)}" for n in result.unconfirmed], ""]
    if result.outcome == "awaiting-approval" and result.approve_hint:
        md += [f"Approve with `{result.approve_hint}` or re-run with `--approve {result.section}`.", ""]
    append_summary("\n".join(md))


def result_document(
    command: str, plan_path: Path, result: RunResult, code: ExitCode, realized: dict[str, str]
) -> dict[str, Any]:
    """`apply|teardown|plan|check --json`: how one plan's run ended, as one `director.result/1` document
    (director/schemas/result.json, docs/json.md)."""
    return {
        "schema": "director.result/1",
        "command": command,
        "plan": str(plan_path),
        "run_id": result.run_id,
        "outcome": "not-created" if result.pristine and result.outcome == "check" else result.outcome,
        "exit_code": int(code),
        "message": result.message,
        "section": result.section,
        "approve_hint": result.approve_hint or None,
        "changes": result.changes,
        "drift": list(result.drift),
        "unconfirmed": list(result.unconfirmed),
        "sections": [
            {
                "key": s.key,
                "title": s.title,
                "verdict": s.verdict,
                "detail": s.detail,
                "duration_s": round(s.duration_s, 3),
                "attempts": s.attempts,
            }
            for s in result.sections
        ],
        "outputs": realized,
    }


def print_result(command: str, plan_path: Path, result: RunResult, code: ExitCode, pf: Any) -> None:
    """The `--json` result document on stdout, once the run has ended."""
    import json

    from director.ledger.compose import outputs

    realized = outputs(pf.plan) if command == "apply" else {}
    doc = result_document(command, plan_path, result, code, realized)
    sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")

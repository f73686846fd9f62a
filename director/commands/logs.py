"""`director logs PLAN [SECTION]`: the full output of every step of a run, as the journal keeps it."""

from __future__ import annotations

from pathlib import Path

from director.commands.paths import load_plan, open_journal
from director.errors import ExitCode, JournalError, UsageError


def logs_command(
    plan_path: Path,
    selector: str | None,
    *,
    run_id: int | None,
    state_dir: Path | None,
    state_url: str | None = None,
) -> ExitCode:
    """Each step of the run (the latest unless `--run`), in order: a header, then what it printed.

    The journal keeps a step's output bounded (its first 16 KiB and last 48 KiB); colours and other
    control sequences are removed.
    """
    from rich.text import Text

    from director.plan.model import key_label
    from director.run.gates import matches
    from director.ui.render import clean, make_console

    plan = load_plan(plan_path)
    key: str | None = None
    if selector is not None:
        section = next((s for s in plan.sections if matches(selector, s.key, s.slug, s.title)), None)
        if section is None:
            raise UsageError(f"SECTION: the plan has no section {selector!r}")
        key = section.key
    journal = open_journal(plan_path, state_dir, state_url)
    if journal is None:
        raise UsageError(f"{plan_path}: no run yet: nothing has printed anything")
    c = make_console(False)
    try:
        try:
            run = journal.run(run_id) if run_id is not None else journal.latest_run()
        except JournalError as exc:
            raise UsageError(f"--run: no run {run_id} in the journal") from exc
        if run is None:
            raise UsageError(f"{plan_path}: no run yet: nothing has printed anything")
        steps = [
            s for s in journal.steps(run.id) if s.role != "section" and (key is None or s.section_key == key)
        ]
        if not steps:
            where = f" of {key_label(key)}" if key is not None else ""
            c.print(f"run {run.id} ({run.kind}): no step{where} ran", markup=False, highlight=False)
            return ExitCode.OK
        lines = {(sec.key, b.index): b.span.first_line for sec in plan.sections for b in sec.blocks}
        for s in steps:
            exit_code = "—" if s.exit_code is None else str(s.exit_code)
            attempt = f" · attempt {s.attempt}" if s.attempt > 1 else ""
            at = lines.get((s.section_key, s.block_index))
            head = (
                f"── {key_label(s.section_key)} {s.role}{f' (plan line {at})' if at else ''}{attempt}"
                f" · run {run.id} · {getattr(s.state, 'value', s.state)} · exit {exit_code}"
                f" · {float(s.duration_s or 0.0):.1f}s"
            )
            c.print(Text(head, style="bold"), markup=False, highlight=False, soft_wrap=True)
            for line in (s.output or "").replace("\r\n", "\n").split("\n"):
                text = clean(line.split("\r")[-1] if "\r" in line else line).rstrip()
                c.print(Text("   " + text if text else ""), markup=False, highlight=False, soft_wrap=True)
    finally:
        journal.close()
    return ExitCode.OK

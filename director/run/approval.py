"""Gates: a 🔴/💥 section acts only on an approval made for exactly its content, or the run waits.

An approval is a receipt (operator, host, time, how, sha256 of what it covers). It comes from a receipt
made by `director approve` (from any terminal), an `--approve` flag, `--auto-approve` (never 💥) or the
operator's `go` at the prompt; it covers one application of the section. At a terminal the prompt and
receipts from elsewhere race: whichever comes first releases the gate. Without one, the run stops in
`awaiting-approval` (a wait for a human event, resumed by the next apply). With an allowed-signers file
in force, only a receipt whose signature verifies releases a gate (`signatures`).
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

from director.exec.secrets import is_secret_name
from director.exec.shell import SessionState, Shell
from director.ledger import cells
from director.plan import bash, knobs, markers
from director.plan.model import Plan, Section, SectionKind
from director.run import closure, history, signatures
from director.run.config import Stop
from director.run.context import Run
from director.run.fingerprint import Templates
from director.run.gates import (
    Arrival,
    Elsewhere,
    GateContent,
    Review,
    canonical,
    make_receipt,
    matches,
    operator_name,
)
from director.run.reasons import ledger_changes, realized_value, ticked
from director.run.signatures import Tally
from director.state.lifecycle import RunState
from director.state.records import ApprovalRecord
from director.state.store import ApprovalHow, StateStore

# what `director approve` uses of the gates, besides this module's own
__all__ = ["GateContent", "Review", "canonical", "make_receipt", "matches", "operator_name"]


def sealer(run: Run) -> closure.Sealer:
    """How this run seals what must not be kept (its closure key, its redactor, its secret names)."""
    return preview_sealer(run.cfg.closure_key, run.shell.redactor.redact, run.is_secret)


def reach(
    shell: Shell, state: SessionState, section: Section, texts: Mapping[int, str], templates: Templates,
    seal: closure.Sealer, workdir: Path,
) -> closure.Reach:
    """What this section's act can read, live: the session it starts in, the environment, the bash."""
    reads = [n for b in section.act_blocks for n in bash.reads(texts[b.index])]
    return closure.live_reach(state, shell.environment, templates, seal, shell.bash, str(workdir), reads)


def preview_sealer(
    key: bytes, redact: Callable[[str], str], is_secret: Callable[[str], bool]
) -> closure.Sealer:
    """How `director plan` seals: as apply does, with the plan's closure key."""
    return closure.Sealer(key or closure.process_key(), redact, is_secret)


def display_env(content: GateContent) -> dict[str, str]:
    """The values the panel puts into the commands it shows (sealed ones as `***`)."""
    return closure.Reach.from_json(content.reach).display()


def has_receipt(journal: StateStore, section_key: str, sha256: str) -> bool:
    """Whether an unspent receipt from `director approve` exists for exactly this content."""
    found = history.receipts(journal)
    return any(
        a.sha256 == sha256 and found.usable_from_journal(a) and a.id > found.last_spent(section_key, sha256)
        for a in found.for_section(section_key)
    )


def recorded_reach(waiting: history.Waiting) -> closure.Reach:
    """What the act can read, as the run that reached the gate recorded it (secrets sealed)."""
    return closure.Reach.from_json(waiting.reach)


def recorded_templates(where: closure.Reach) -> Templates:
    """The files a gate's templates write, as recorded (their text redacted): for the panel's diffs."""
    return {i: (path, str(t.get("text", ""))) for i, (path, t) in enumerate(where.templates.items())}


def content_for(
    plan: Plan, section: Section, knob_values: Mapping[str, str], texts: Mapping[int, str],
    where: closure.Reach,
) -> GateContent | None:
    """The gate content: the act's closure (`director.run.closure.gate_content`, the one function)."""
    return closure.gate_content(plan, section, knob_values, texts, where)


# ------------------------------------------------------------------------------ the consequences


_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_QUOTED_HEREDOC = re.compile(r"<<-?\s*(?:'([^']+)'|\"([^\"]+)\"|\\(\w+))")
_MAX_DIFF_LINES = 60


def _expand_line(line: str, env: Mapping[str, str], own: frozenset[str] = frozenset()) -> str:
    """A command line with `$NAME`/`${NAME}` replaced by their values outside single quotes (display);
    a variable the block assigns itself (`own`) stays `$NAME`: its value is known only when it runs."""
    out, quoted, i = [], False, 0
    while i < len(line):
        ch = line[i]
        if ch == "'" and (i == 0 or line[i - 1] != "\\"):
            quoted = not quoted
        if ch == "$" and not quoted:
            m = _VAR.match(line, i)
            if m is not None:
                name = m.group(1) or m.group(2)
                if name in env and name not in own:
                    out.append("***" if is_secret_name(name) else env[name])
                    i = m.end()
                    continue
        out.append(ch)
        i += 1
    return "".join(out)


def expanded(command: str, env: Mapping[str, str]) -> str:
    """The command as it will run, with the values of its variables put in (display: secret-named ones
    masked; one the block assigns itself left as `$NAME`); comments and the bodies of quoted heredocs are
    left as written."""
    own = bash.assigns(command)
    lines: list[str] = []
    until: str | None = None
    for line in command.splitlines():
        if until is not None:
            if line.strip() == until:
                until = None
            lines.append(line)
            continue
        m = _QUOTED_HEREDOC.search(line)
        if m is not None:
            until = m.group(1) or m.group(2) or m.group(3)
        lines.append(line if line.lstrip().startswith("#") else _expand_line(line, env, own))
    return "\n".join(lines)


_ticked = ticked
_realized_value = realized_value


def _diff(old: str, new: str, old_name: str, new_name: str) -> str:
    lines = list(
        difflib.unified_diff(old.splitlines(), new.splitlines(), old_name, new_name, n=2, lineterm="")
    )
    if len(lines) > _MAX_DIFF_LINES:
        lines = [*lines[:_MAX_DIFF_LINES], f"… {len(lines) - _MAX_DIFF_LINES} more lines"]
    return "\n".join(lines)


def _resources(
    plan: Plan,
    commands: Sequence[str],
    env: Mapping[str, str],
    knob_values: Mapping[str, str],
    realized: Mapping[str, str],
    templates: Templates,
) -> tuple[str, ...]:
    """The ledger's resources these commands name: in their words, or in the files they are given."""
    ls = plan.live_state
    if ls is None:
        return ()
    text = "\n".join(expanded(c, env) for c in commands)
    files: dict[str, str] = {p: c for p, c in templates.values()}
    for path in re.findall(r"(/[\w./@+-]+)", text):
        p = Path(path)
        if path not in files and p.is_file() and p.stat().st_size < 65536:
            try:
                files[path] = p.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
    discovered = {v: env.get(v, "") for v in cells.discovered_vars(plan)}
    out: list[str] = []
    for row in ls.kv_rows:
        if "discovered" in row.value.lower() or is_secret_name(row.key):
            continue
        cell = cells.realize_cell(row.value, row.key, env, knob_values, realized, discovered)
        value = _realized_value(cell)
        if value is None or len(value) < 3:
            continue
        word = re.compile(rf"(?<![\w-]){re.escape(value)}(?![\w-])")
        if word.search(text):
            out.append(f"{row.key} {value}")
            continue
        inside = [Path(p).name for p, c in files.items() if word.search(c)]
        if inside:
            out.append(f"{row.key} {value} (in {', '.join(inside)})")
    return tuple(out)


def _approval_text(content: Mapping[str, Any]) -> str:
    """What an approval covered, as text (to show what changed since): the closure too."""
    parts = ["# commands"] + [str(c).rstrip("\n") for c in content.get("commands", [])]
    variables = sorted(dict(content.get("variables", {})).items())
    parts += ["# variables", *(f"{k}={closure.shown(str(v))}" for k, v in variables)]
    parts += ["# inputs"] + [f"{k}={v}" for k, v in sorted(dict(content.get("inputs", {})).items())]
    parts += ["# what the act can read", *closure.describe(dict(content.get("closure") or {}))]
    return "\n".join(parts)


def _reasked(journal: StateStore | None, content: GateContent) -> tuple[str, str]:
    """Why the operator is asked again, and the approved text against this one (when it changed); or,
    with no approval to compare with, what changed since the gate was last shown (a value that differs on
    every run makes every approval stale: docs/approvals.md)."""
    if journal is None:
        return "", ""
    found = history.receipts(journal)
    earlier = found.for_section(content.section_key)
    if not earlier:
        last_gate = history.gate(journal, content.section_key)
        if last_gate is None or last_gate.content.get("sha256", content.sha256) == content.sha256:
            return "", ""
        was = last_gate.content
        if list(was.get("commands", [])) != list(content.commands) or was.get("inputs") != content.inputs:
            return "", ""
        diff = _diff(_approval_text(was), _approval_text(content.to_json()), "last asked", "now")
        return "changed since this gate was last shown, though the plan did not (the diff below)", diff
    last = earlier[-1]
    who = f"{last.operator}@{last.host} at {last.at.isoformat(timespec='seconds')} ({last.how})"
    if last.sha256 != content.sha256:
        diff = _diff(_approval_text(last.content), _approval_text(content.to_json()), "approved", "now")
        what = closure.changed(dict(last.content.get("closure") or {}), content.closure)
        if list(last.content.get("commands", [])) != list(content.commands):
            what.insert(0, "the commands")
        if dict(last.content.get("inputs", {})) != content.inputs:
            what.insert(0, "the inputs")
        names = f": {', '.join(what[:8])}{' …' if len(what) > 8 else ''} changed" if what else ""
        return f"asked again: the approval by {who} was for other content{names} (the diff below)", diff
    if last.id in found.spent:
        return (
            f"asked again: the approval by {who} was spent when the section acted on it "
            "(an approval covers one application)",
            "",
        )
    if last.how in history.OWN_HOWS:
        return f"asked again: the approval by {who} belonged to the run it was given in", ""
    return "", ""


def confirm_word(marker: str, resources: Sequence[str]) -> str:
    """What the operator types to approve: `go`; for 💥, the first resource's name, or `destroy`."""
    if marker != markers.Marker.DESTRUCTIVE.value:
        return "go"
    for r in resources:
        name = r.split(" ", 2)[1] if r.count(" ") else ""
        if name and re.fullmatch(r"[\w.@:/+-]+", name):
            return name
    return "destroy"


def review(
    plan: Plan,
    section: Section,
    content: GateContent,
    *,
    kind: str,
    env: Mapping[str, str],
    knob_values: Mapping[str, str],
    realized: Mapping[str, str],
    templates: Templates,
    reasons: Sequence[str] = (),
    journal: StateStore | None = None,
    kv_templates: Mapping[str, str] | None = None,
    redact: Callable[[str], str] = lambda s: s,
    acted_before: bool = False,
) -> GateContent:
    """The gate content with its consequences: what changes in the ledger and on disk, what is named, why."""
    act = [c for c in content.commands if not c.startswith("# write ")]
    diffs = []
    for path, new in templates.values():
        try:
            old = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            old = ""
        if old != new:
            diffs.append((path, redact(_diff(old, new, f"{path} (on disk)", f"{path} (regenerated)"))))
    resources = _resources(plan, act, env, knob_values, realized, templates)
    if section.kind is SectionKind.TEARDOWN and not resources and plan.live_state is not None:
        resources = tuple(
            f"{r.key} {v}" for r in plan.live_state.kv_rows
            if (v := _realized_value(r.value)) is not None and "discovered" not in r.value.lower()
        )  # fmt: skip
    reasked, receipt_diff = _reasked(journal, content)
    ledger = ledger_changes(
        plan, section, kind, env, knob_values, realized, kv_templates or {}, acted_before=acted_before
    )
    rv = Review(  # every line redacted: what the panel, `plan --section` and `approve` show
        reasons=tuple(redact(r) for r in reasons),
        ledger=tuple(redact(ln) for ln in ledger),
        diffs=tuple(diffs),
        resources=tuple(redact(r) for r in resources),
        expanded=tuple(redact(expanded(c, env)) for c in act),
        reasked=redact(reasked),
        receipt_diff=redact(receipt_diff),
        confirm=confirm_word(content.marker, resources),
    )
    return dataclasses.replace(content, review=rv)


def _emit_gate(run: Run, section: Section, content: GateContent, approved: bool | None, how: str) -> None:
    run.bus.emit(
        "gate",
        section=section.key,
        title=section.title,
        marker=content.marker,
        note=content.note,
        sha256=content.sha256,
        approved=approved,
        how=how,
        content=content.to_json(),
    )


def consumed(journal: StateStore, approval_id: int) -> bool:
    """Whether a receipt was spent: an application started on it."""
    return approval_id in history.receipts(journal).spent


def _wait(run: Run, section: Section, content: GateContent, why: str) -> NoReturn:
    """No approval: the run stops awaiting one (exit 4); the message says how to give it."""
    run.journal.record_event(run.run_id, history.GATE_WAITING, _waiting_data(run, section, content))
    _emit_gate(run, section, content, False, why)
    run.report(section, "awaiting-approval", why, emit=False)  # the `gate` event says it
    msg = f"{run.label(section)} {content.marker} {section.title}: {why}"
    result = run.finish(RunState.AWAITING_APPROVAL, section.key, msg)
    result.approve_hint = _hint(run, section)
    raise Stop(result)


def _hint(run: Run, section: Section) -> str:
    """The `director approve` command that gives this gate an approval (with the key option when
    approvals must be signed: an unsigned one would be refused)."""
    hint = f"director approve {run.pf.path} {section.key}"
    return f"{hint} --sign-with KEYFILE" if run.cfg.allowed_signers is not None else hint


def gate(run: Run, section: Section, texts: dict[int, str], templates: Templates) -> None:
    """Obtain the approvals this section's content needs as it stands (its gate's policy: how many, from
    whom), or stop the run awaiting them: the act's closure (`director.run.closure`) from the session
    the act starts in."""
    if knobs.gate_of(section, run.knobs) is None:
        return
    run.journal.commit()  # nothing held open while a gate deliberates (a signing key may ask its passphrase)
    where = reach(run.shell, run.session, section, texts, templates, sealer(run), run.workdir)
    content = content_for(run.plan, section, run.knobs, texts, where)
    if content is None:
        return
    content = review(
        run.plan,
        section,
        dataclasses.replace(content, reach=where.to_json()),
        kind=run.cfg.kind,
        env=where.display(),
        knob_values=run.knobs,
        realized=run.realized,
        templates=templates,
        reasons=run.why.get(section.key, ()),
        journal=run.journal,
        kv_templates=run.kv_templates() if run.plan.live_state is not None else {},
        redact=run.shell.redactor.redact,
        acted_before=run.successes.last(f"{section.key}/section") is not None,
    )
    marker = markers.by_glyph(content.marker)
    rule = run.cfg.policy.for_gate(content.marker, section)
    own: list[ApprovalRecord] = []
    method: ApprovalHow | None = None
    if any(matches(sel, section.key, section.slug, section.title) for sel in run.cfg.approve):
        method = "flag"
    elif run.cfg.auto_approve and marker is not None and marker.auto_approvable:
        method = "auto"
    found = signatures.tally(run, section, content, rule)  # receipts from elsewhere first, as before
    if method is not None and not found.complete:
        mine = signatures.own_receipt(run, section, content, method)
        if signatures.judge(run, section, content, mine, rule):
            own.append(mine)
            found = signatures.tally(run, section, content, rule, own)
    if not found.complete and run.prompter is not None:
        found = _ask(run, section, content, own, found)
    elif not found.complete:
        found = _await_receipts(run, section, content, own, found)  # the same unless `--wait-for-approval`
        if not found.complete:
            _wait(run, section, content, _needs(run, section, "needs a human go", content, found))
    run.journal.require_intact()  # never released across a break in the journal's chain (exit 13)
    _release(run, section, content, found, own)


def _needs(
    run: Run, section: Section, why: str, content: GateContent | None = None, found: Tally | None = None
) -> str:
    """Why the gate stops, with the approvals it has (a policy of several), the last receipt refused for
    it, and why it was asked again."""
    refused = [said for key, said in run.refused.values() if key == section.key]
    have = found.progress(run.signers) if found is not None else ""
    why = f"{why}: {have}" if have else why
    why = f"{why}; {refused[-1]}" if refused else why
    reasked = content.review.reasked if content is not None else ""
    return f"{why}; {reasked}" if reasked else why


def _release(
    run: Run, section: Section, content: GateContent, found: Tally, own: list[ApprovalRecord]
) -> None:
    """The gate passes on the receipts counted: said (whose approvals, and their verified signers), and
    spent now -- its act starts next (an approval covers one application, even one Ctrl-C or a crash
    cuts short)."""
    mine = {r.id for r in own}
    elsewhere = [r for r in found.counted if r.id not in mine]
    for receipt in found.counted:
        run.gate_receipts[section.key] = receipt.id
        v = run.signers.get(receipt.id)
        data = {"approval_id": receipt.id, "section": section.key, **(v or {})}
        run.journal.record_event(run.run_id, history.SPENT, data)
        how: str = receipt.how
        at = receipt.at.isoformat(timespec="seconds")
        if receipt.id not in mine:  # the event's documented form (docs/events.md); the signer in its fields
            signed = f", signed by {v['principal']} with {v['fingerprint']}" if v else ""
            how = f"receipt ({receipt.how} by {receipt.operator}@{receipt.host} at {at}{signed})"
        extra = {"principal": v["principal"], "fingerprint": v["fingerprint"]} if v else {}
        run.bus.emit(
            "approval", section=section.key, sha256=content.sha256, operator=receipt.operator, how=how,
            **extra,
        )
    if elsewhere:  # the summary: the verified signer first, then what the row says
        run.approved_with[section.key] = "approved with " + " and ".join(
            signatures.summary_words(r, run.signers.get(r.id)) for r in elsewhere
        )


# -- at a terminal: the typed confirmation races approvals from elsewhere -----------------------------------


def _ask(run: Run, section: Section, content: GateContent, own: list[ApprovalRecord], found: Tally) -> Tally:
    """Ask at the terminal while waiting for receipts from elsewhere (`director approve` in another
    terminal or on another machine): whichever completes the gate's approvals first releases it. The run
    is `awaiting-approval` meanwhile (`status` says so). A typed confirmation is this run's own receipt,
    signed with `--sign-with`; where it cannot count (approvals must be signed and the run has no key,
    the policy refuses the run's own operator) the prompt says so once and only waits; where it was
    refused, or counted and more are needed, likewise: never the same question, or refusal, again.
    `--wait-for-approval TIMEOUT` bounds the wait here too."""
    assert run.prompter is not None
    prompter = run.prompter
    rule = found.rule
    mine = [a.id for a in run.journal.approvals() if a.section_key == section.key]
    after = [max(mine, default=0)]
    timeout = run.cfg.wait_for_approval
    deadline = None if timeout is None or timeout == float("inf") else time.monotonic() + timeout
    now = [found]

    def wait(seconds: float) -> Arrival:
        if deadline is not None:
            seconds = min(seconds, deadline - time.monotonic())
            if seconds <= 0:
                return Arrival(timed_out=True)
        before = set(run.refused)
        found = run.journal.wait_for_approval(section.key, content.sha256, after[0], seconds)
        if found is None:
            return Arrival()
        after[0] = max(after[0], found.id)
        was, now[0] = now[0], signatures.tally(run, section, content, rule, own)
        said = tuple(s for i, (_, s) in run.refused.items() if i not in before)
        said += tuple(n for n in now[0].notes if n not in was.notes)
        if now[0].complete:
            last = now[0].counted[-1]
            signer = run.signers.get(last.id)
            return Arrival(last, said, said=signatures.released(now[0].counted, run.signers),
                           principal=signer["principal"] if signer else None)  # fmt: skip
        if len(now[0].counted) > len(was.counted):
            said += (now[0].progress(run.signers),)
        return Arrival(None, said)

    hint = f"director approve {run.pf.path} {section.key}"
    _waiting(run, section, content, f"{run.label(section)} asks at the terminal and waits for `{hint}`")
    hint = _hint(run, section)  # an unsigned approval would be refused
    cannot = signatures.typed_cannot(run, section, rule)
    _emit_gate(run, section, content, None, "elsewhere" if cannot else "prompt")
    asked = time.monotonic()
    shown: set[int] = set()
    result: tuple[Tally | None, str]
    first = True
    try:
        while True:
            earlier = tuple(s for i, (key, s) in run.refused.items() if key == section.key and i not in shown)
            shown |= set(run.refused)
            why = cannot or now[0].progress(run.signers)
            elsewhere = Elsewhere(wait, hint, timeout, earlier, panel=first, typed=not cannot, waiting=why)
            answer = prompter.ask_go(content, elsewhere)
            first = False
            if isinstance(answer, Arrival):
                result = (now[0], "") if answer.receipt is not None else (None, "no approval in time")
                break
            if not answer:
                result = (None, "stopped waiting at the prompt" if cannot else "declined at the prompt")
                break
            typed = signatures.own_receipt(run, section, content, "prompt")
            after[0] = max(after[0], typed.id)
            if signatures.judge(run, section, content, typed, rule):
                own.append(typed)
                now[0] = signatures.tally(run, section, content, rule, own)
                if now[0].complete:
                    result = (now[0], "")
                    break
                cannot = f"your approval counts: {now[0].progress(run.signers)}"
            else:
                cannot = (
                    f"this prompt cannot approve {run.label(section)}: its typed {content.review.confirm} "
                    "was refused (above)"
                )
    finally:
        # the human's time at the gate is not the section's
        run.waited[section.key] = run.waited.get(section.key, 0.0) + time.monotonic() - asked
    done, why = result
    back = f"approved ({signatures.released(done.counted, run.signers)})" if done is not None else why
    run.journal.transition(run.run_id, RunState.RUNNING, back)
    if done is None:
        _wait(run, section, content, _needs(run, section, why, content, now[0]))
    return done


def _waiting(run: Run, section: Section, content: GateContent, why: str, wait_s: float | None = None) -> None:
    """Journal that the gate waits for a human (`gate-waiting`) and the run is `awaiting-approval`."""
    data = _waiting_data(run, section, content)
    if wait_s is not None:
        data["wait_s"] = wait_s
    run.journal.record_event(run.run_id, history.GATE_WAITING, data)
    run.journal.transition(run.run_id, RunState.AWAITING_APPROVAL, why)


def _waiting_data(run: Run, section: Section, content: GateContent) -> dict[str, Any]:
    """A `gate-waiting` event: the gate's content as the act will read it (secrets sealed), and who runs
    the run (for `director approve`: a policy refusing self-approval refuses them)."""
    return {"section": section.key, "sha256": content.sha256, "content": content.to_json(),
            "operator": sorted(signatures.run_identities(run))}  # fmt: skip


# -- `apply --wait-for-approval [TIMEOUT]`: the gate waits for receipts instead of stopping -----------------


def _await_receipts(
    run: Run, section: Section, content: GateContent, own: list[ApprovalRecord], found: Tally
) -> Tally:
    """Wait, `awaiting-approval`, for new receipts for exactly this content (`director approve` from any
    terminal or, with `--state-url`, any machine) until the gate's approvals are complete; the tally as
    it stands when the option is off or the time ran out (the run then stops as it would without the
    option). The store waits: LISTEN/NOTIFY on PostgreSQL, a read of the file every 0.25 s on SQLite. A
    receipt refused is said, audited, and the wait goes on."""
    rule = found.rule
    timeout = run.cfg.wait_for_approval
    if timeout is None:
        return found
    known = [a.id for a in run.journal.approvals() if a.section_key == section.key]
    after = max(known, default=0)
    limit = "" if timeout == float("inf") else f" up to {timeout:g} s"
    why = f"{run.label(section)} waits{limit} for `{_hint(run, section)}`"
    have = found.progress(run.signers)
    _waiting(run, section, content, f"{why} ({have})" if have else why, timeout)
    run.bus.emit("run.state", run_id=run.run_id, to=RunState.AWAITING_APPROVAL.value, reason=why)
    _emit_gate(run, section, content, None, "waiting for a receipt")
    asked = time.monotonic()
    deadline = asked + timeout
    while not found.complete and (left := deadline - time.monotonic()) > 0:
        arrived = run.journal.wait_for_approval(section.key, content.sha256, after, left)
        if arrived is None:
            break
        found = signatures.tally(run, section, content, rule, own)
        after = max(after, arrived.id)
    run.waited[section.key] = run.waited.get(section.key, 0.0) + time.monotonic() - asked  # not the section's
    back = "no receipt in time"
    if found.complete:
        back = signatures.released(found.counted, run.signers)
    run.journal.transition(run.run_id, RunState.RUNNING, back)
    run.bus.emit("run.state", run_id=run.run_id, to=RunState.RUNNING.value, reason=back)
    return found


def approval_used(run: Run, section: Section) -> None:
    """The section this approval let act succeeded (the receipt was spent when its act started)."""
    run.gate_receipts.pop(section.key, None)

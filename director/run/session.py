"""The shell session a run carries from block to block, as the journal may keep it (never a secret).

A section records what it changed in the session (its delta), so that a later run that finds it in sync
can apply that change without re-running it. Secrets are never journaled: a secret-named variable, or
one whose value holds a secret, is withheld, and a resumed run takes back what §0 can recompute.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from director.exec.shell import BlockResult, SessionState
from director.plan import bash, knobs
from director.plan.model import SectionKind
from director.run.context import Run


def delta(before: SessionState | None, after: SessionState) -> SessionState:
    """What a section changed in the session (applied again when the section is later in sync)."""
    if before is None:
        return after
    variables = {k: v for k, v in after.variables.items() if before.variables.get(k) != v}
    exported = frozenset(k for k in after.exported if k in variables or k not in before.exported)
    functions = after.functions if after.functions != before.functions else ""
    cwd = after.cwd if after.cwd != before.cwd else ""
    arrays = {k: v for k, v in after.arrays.items() if before.arrays.get(k) != v}
    return SessionState(variables, exported, functions, cwd, {}, arrays)


def apply_delta(cur: SessionState, change: SessionState) -> SessionState:
    """The current session with a section's recorded changes applied."""
    return SessionState(
        {**cur.variables, **change.variables},
        cur.exported | change.exported,
        change.functions or cur.functions,
        change.cwd or cur.cwd,
        cur.attributes,
        {**cur.arrays, **change.arrays},
    )


def persistable(run: Run, state: SessionState) -> SessionState:
    """What may be journaled: no secret-named variables, and secret values masked inside the others."""
    kept = state.persistable(run.is_secret)
    red = run.shell.redactor
    if not red:
        return kept
    return SessionState(
        {k: red.redact(v) for k, v in kept.variables.items()},
        kept.exported,
        red.redact(kept.functions),
        kept.cwd,
        kept.attributes,
        {k: red.redact(v) for k, v in kept.arrays.items()},
    )


def as_journaled(run: Run, state: SessionState) -> dict[str, Any]:
    """The session as journaled: what may be stored, and the names of the variables it had to withhold."""
    kept = persistable(run, state)
    withheld = {k for k in state.variables if run.is_secret(k)}
    withheld |= {k for k, v in kept.variables.items() if v != state.variables.get(k)}
    data = kept.to_json()
    if withheld:
        data["variables"] = {k: v for k, v in data["variables"].items() if k not in withheld}
        data["exported"] = [k for k in data["exported"] if k not in withheld]
        data["withheld"] = sorted(withheld)
    return data


def withhold(run: Run, session_json: dict[str, Any]) -> None:
    """Remember the names a restored session lacks because the journal could not keep them."""
    for name in session_json.get("withheld") or ():
        if name not in run.session.variables and not run.shell.inherits(name):
            run.withheld.add(str(name))


def adopt(run: Run, session_json: dict[str, Any]) -> None:
    """Apply a section's journaled change to the session (the section is in sync, not re-run)."""
    run.session = apply_delta(run.session, SessionState.from_json(session_json))
    withhold(run, session_json)


def recompute_withheld(run: Run) -> None:
    """§0 is pure: run it again in a scratch session and take back the withheld values it defines."""
    if not run.withheld:
        return
    scratch = SessionState(variables={}, exported=frozenset(), functions="", cwd=str(run.workdir))
    for section in run.plan.executable_sections:
        if section.kind is SectionKind.VARIABLES:
            for b in section.act_blocks:
                text = knobs.block_text(section, b, run.knobs, run.realized)
                r = run.shell.run(text, scratch, timeout_s=run.cfg.step_timeout_s, on_output=None)
                if not r.ok:
                    return
                scratch = r.state
    back = {n: scratch.variables[n] for n in run.withheld if n in scratch.variables}
    if back:
        s = run.session
        run.session = SessionState(
            {**s.variables, **back},
            s.exported | {n for n in back if n in scratch.exported},
            s.functions,
            s.cwd,
            s.attributes,
            s.arrays,
        )
        run.withheld -= set(back)


def unless_unlearned(run: Run, text: str, res: BlockResult) -> BlockResult:
    """`res`, or `res` without its output when the block sets a secret whose value Director never learned.

    A block that mints a secret (`export DB_PASSWORD=$(…)`) and prints it is redacted once its session
    says the value. If bash died before reporting its session (killed, SIGKILL), the value is unknown and
    nothing could mask it: its output is then kept from the journal, the failure message and the plan.
    """
    if res.ok:
        return res
    secret = sorted(n for n in bash.assigns(text) if run.is_secret(n))
    if not secret or (res.state is not run.session and all(n in res.state.variables for n in secret)):
        return res
    note = (
        f"[director] output not stored: the block sets {', '.join(secret)} and ended before Director "
        "could learn the value, so it could not be masked\n"
    )
    return dataclasses.replace(res, output=note)


def learn_secrets(run: Run) -> None:
    """Values a block put in secret-named variables are redacted from then on (screen, journal, file)."""
    new = [v for v in run.session.secret_values(run.is_secret) if v not in run.known_secrets]
    if new:
        run.known_secrets.update(new)
        run.shell.redactor = run.shell.redactor.extended(new)
        run.pf.secret_values = [*run.pf.secret_values, *new]


def kept_by(state: SessionState, text: str) -> bool:
    """Whether block `text` cannot change session `state` (`bash.keeps_session`, the session's own functions
    counted): the shell then skips capturing the session after the block."""
    functions = bash.function_names(state.functions) if state.functions else frozenset()
    return bash.keeps_session(text, functions)

"""The shell session a run carries from block to block, as the journal may keep it (never a secret).

A section records what it changed in the session (its delta), so that a later run that finds it in sync
can apply that change without re-running it. Secrets are never journaled, and nothing is journaled with a
mask in place of a secret: a secret-named variable or array, a variable whose value holds a secret (or a
fragment of one, `director.exec.secrets`), an array with such an element and a function whose text holds
one are *withheld* (their names journaled, not their values). A resumed run takes back what §0 can
recompute; a block that reads (or calls) anything else withheld is refused (`steps._refuse_withheld`),
never run with an empty or masked value.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from director.exec.session import INHERITED, split_functions
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
    # a changed variable keeps its attributes (`readonly`, `-i`): the session after the section has them
    attributes = {k: v for k, v in after.attributes.items() if k in variables or k in arrays}
    # "" is Director's own umask and limits: a section that set one back to it changed it
    umask = (after.umask or INHERITED) if after.umask != before.umask else ""
    dirstack = (after.dirstack or ()) if after.dirstack != before.dirstack else None  # (): emptied
    limits = {k: after.limits.get(k, INHERITED) for k in sorted(after.limits.keys() | before.limits.keys())
              if after.limits.get(k) != before.limits.get(k)}  # fmt: skip
    return SessionState(variables, exported, functions, cwd, attributes, arrays, umask, dirstack, limits)


def apply_delta(cur: SessionState, change: SessionState) -> SessionState:
    """The current session with a section's recorded changes applied."""
    return SessionState(
        {**cur.variables, **change.variables},
        cur.exported | change.exported,
        change.functions or cur.functions,
        change.cwd or cur.cwd,
        {**cur.attributes, **change.attributes},
        {**cur.arrays, **change.arrays},
        "" if change.umask == INHERITED else change.umask or cur.umask,
        cur.dirstack if change.dirstack is None else (change.dirstack or None),
        {k: v for k, v in {**cur.limits, **change.limits}.items() if v != INHERITED},
    )


def persistable(run: Run, state: SessionState) -> SessionState:
    """What may be journaled: no secret-named variable or array, and nothing that holds a secret (a scalar
    holding one is masked here and withheld by `as_journaled`; an array or a function is left out whole)."""
    kept = state.persistable(run.is_secret)
    red = run.shell.redactor
    if not red:
        return kept
    functions = kept.functions
    if functions and red.redact(functions) != functions:
        functions = "".join(f for f in split_functions(functions).values() if red.redact(f) == f)
    return dataclasses.replace(
        kept,
        variables={k: red.redact(v) for k, v in kept.variables.items()},
        functions=functions,
        arrays={k: v for k, v in kept.arrays.items() if red.redact(v) == v},
    )


def as_journaled(run: Run, state: SessionState) -> dict[str, Any]:
    """The session as journaled: what may be stored, and the names of what it had to withhold (`withheld`;
    `withheld_arrays` and `withheld_functions` say which of them are arrays, functions)."""
    kept = persistable(run, state)
    withheld = {k for k in state.variables if run.is_secret(k)}
    withheld |= {k for k, v in kept.variables.items() if v != state.variables.get(k)}
    arrays = set(state.arrays) - set(kept.arrays)
    functions: set[str] = set()
    if kept.functions != state.functions:
        functions = set(split_functions(state.functions)) - set(split_functions(kept.functions))
    data = kept.to_json()
    if withheld or arrays or functions:
        data["variables"] = {k: v for k, v in data["variables"].items() if k not in withheld}
        data["exported"] = [k for k in data["exported"] if k not in withheld]
        data["withheld"] = sorted(withheld | arrays | functions)
    if arrays:
        data["withheld_arrays"] = sorted(arrays)
    if functions:
        data["withheld_functions"] = sorted(functions)
    return data


def withhold(run: Run, session_json: dict[str, Any]) -> None:
    """Remember the names a restored session lacks because the journal could not keep them."""
    arrays = {str(n) for n in session_json.get("withheld_arrays") or ()}
    functions = {str(n) for n in session_json.get("withheld_functions") or ()}
    defined = split_functions(run.session.functions) if functions else {}
    for raw in session_json.get("withheld") or ():
        name = str(raw)
        if name in functions:
            if name not in defined:
                run.withheld_functions.add(name)
        elif name not in run.session.variables and name not in run.session.arrays:
            if name in arrays:
                run.withheld_arrays.add(name)
                run.withheld.add(name)
            elif not run.shell.inherits(name):
                run.withheld.add(name)


def adopt(run: Run, session_json: dict[str, Any]) -> None:
    """Apply a journaled change to the session (a section in sync, a step that finished earlier in this
    run: not re-run); what the journal could not keep is recomputed from §0, or withheld."""
    run.session = apply_delta(run.session, SessionState.from_json(session_json))
    withhold(run, session_json)
    recompute_withheld(run)


def recompute_withheld(run: Run) -> None:
    """§0 is pure: run it again in a scratch session (once per run) and take back the withheld values
    (scalars and arrays) it defines."""
    if not run.withheld:
        return
    if run.zero_scratch is None:
        scratch = SessionState(variables={}, exported=frozenset(), functions="", cwd=str(run.workdir))
        for section in run.plan.executable_sections:
            if section.kind is SectionKind.VARIABLES:
                for b in section.act_blocks:
                    text = knobs.block_text(section, b, run.knobs, run.realized)
                    r = run.shell.run(text, scratch, timeout_s=run.cfg.step_timeout_s, on_output=None)
                    if not r.ok:
                        run.zero_scratch = SessionState()
                        return
                    scratch = r.state
        run.zero_scratch = scratch
    scratch = run.zero_scratch
    back = {n: scratch.variables[n] for n in run.withheld if n in scratch.variables}
    back_arrays = {n: scratch.arrays[n] for n in run.withheld if n in scratch.arrays}
    if back or back_arrays:
        s = run.session
        run.session = dataclasses.replace(
            s,
            variables={**s.variables, **back},
            exported=s.exported | {n for n in back if n in scratch.exported},
            arrays={**s.arrays, **back_arrays},
        )
        run.withheld -= set(back) | set(back_arrays)
        run.withheld_arrays -= set(back_arrays)


def unless_unlearned(run: Run, text: str, res: BlockResult, begin: SessionState) -> BlockResult:
    """`res`, or `res` without its output when the block sets a secret whose value Director never learned.

    A block that mints a secret (`export DB_PASSWORD=$(…)`) and prints it is redacted once its session
    says the value. If bash died before reporting its session (killed, SIGKILL), the value is unknown and
    nothing could mask it: its output is then kept from the journal, the failure message and the plan.
    """
    if res.ok:
        return res
    secret = sorted(n for n in bash.assigns(text) if run.is_secret(n))
    if not secret or (res.state is not begin and all(n in res.state.variables for n in secret)):
        return res
    note = (
        f"[director] output not stored: the block sets {', '.join(secret)} and ended before Director "
        "could learn the value, so it could not be masked\n"
    )
    return dataclasses.replace(res, output=note)


def learn_secrets(run: Run, state: SessionState) -> None:
    """Values a block put in secret-named variables are redacted from then on (screen, journal, file)."""
    new = [v for v in state.secret_values(run.is_secret) if v not in run.known_secrets]
    if new:
        run.known_secrets.update(new)
        run.shell.redactor = run.shell.redactor.extended(new)
        run.pf.secret_values = [*run.pf.secret_values, *new]


def kept_by(state: SessionState, text: str) -> bool:
    """Whether block `text` cannot change session `state` (`bash.keeps_session`, the session's own functions
    counted): the shell then skips capturing the session after the block."""
    functions = bash.function_names(state.functions) if state.functions else frozenset()
    return bash.keeps_session(text, functions)

"""What a plan's runs created, by identity: which exist, which a run replaces, which a teardown removes.

DESIGN, "Identity and replacement". What an apply creates has an *identity*: the values of the plan's
identity keys -- the Live State key/value rows whose template is built from the session (`${SVC}-${ENV}`),
known once §0 ran, before any act (as Terraform's arguments that force a replacement are known at plan
time; a URL an act prints is an output, not an identity). An apply that acts records its identity as
existing (`identity`, with the inputs it was made with) before its first act; a teardown that completes for
an identity records it gone (`identity-gone`). When an input changes the identity (`ENV=dev` → `stg`:
`WORKER orders-dev → orders-stg`), that is a replacement: the gate and `plan` say so and what happens to
the old one. A runbook may not know how to delete one section alone, so the honest design is Terraform's
`-/+` without the destroy: the old identity is left as it is and stays recorded as existing, the Live State
lists it (`also_exists`), and `director teardown` runs the teardown once per identity the journal says
exists -- §0 with that identity's inputs, the teardown blocks with the values it realized -- until each is
gone. Nothing Director created becomes unreachable because an input changed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from director.exec.secrets import is_secret_name
from director.plan import knobs
from director.plan.model import Plan
from director.state.store import StateStore

EXISTS = "identity"  # event: an apply began acting on this identity (it may exist from here)
GONE = "identity-gone"  # event: a teardown of this identity completed (it is gone)
PASS = "identity-teardown"  # event: a teardown's pass over this identity begins (with its inputs)

_TICKED = re.compile(r"`([^`]*)`")


@dataclass(frozen=True)
class Identity:
    """One identity the journal says exists: its key values, the inputs it was made with, its last run."""

    keys: dict[str, str]
    inputs: dict[str, str] = field(default_factory=dict)
    run_id: int = 0

    @property
    def name(self) -> str:
        """`WORKER=orders-dev WF_NAME=orders-wf-dev` ("" for a plan without identity keys)."""
        return name_of(self.keys)

    def describe(self) -> str:
        """`WORKER=orders-dev (env=dev)`: the identity, and the inputs it was made with."""
        inputs = ", ".join(f"{k.lower()}={v}" for k, v in sorted(self.inputs.items()))
        head = self.name or "the plan's resources"
        return f"{head} ({inputs})" if inputs else head


def name_of(keys: Mapping[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in keys.items())


def identity_keys(plan: Plan, kv_templates: Mapping[str, str]) -> list[str]:
    """The key/value rows that name what the plan creates: a template built from session variables
    (`${SVC}-${ENV}`); never a discovered (upstream) row, nor a secret-named one."""
    ls = plan.live_state
    if ls is None:
        return []
    out = []
    for row in ls.kv_rows:
        cell = kv_templates.get(row.key, row.value)
        m = _TICKED.search(cell)
        if m is None or "$" not in m.group(1) or "discovered" in cell.lower() or is_secret_name(row.key):
            continue
        out.append(row.key)
    return out


def of(
    plan: Plan, kv_templates: Mapping[str, str], env: Mapping[str, str], knob_values: Mapping[str, str]
) -> dict[str, str]:
    """The identity the session after §0 names: each identity key's template expanded (a key whose
    template names a variable §0 does not set, or that does not apply for these inputs, is left out)."""
    out: dict[str, str] = {}
    for key in identity_keys(plan, kv_templates):
        ls = plan.live_state
        assert ls is not None
        cell = kv_templates.get(key, next(r.value for r in ls.kv_rows if r.key == key))
        cond = knobs.kv_condition(cell)
        if cond is not None and knob_values.get(cond[0]) not in (None, cond[1]):
            continue
        m = _TICKED.search(cell)
        assert m is not None
        try:
            out[key] = knobs.expand(m.group(1), env)
        except knobs.TemplateError:
            continue
    return out


def existing(journal: StateStore) -> list[Identity]:
    """Every identity the journal says exists (oldest first), with the inputs of its latest run."""
    found: dict[str, Identity] = {}
    evs = sorted([*journal.events(kind=EXISTS), *journal.events(kind=GONE)], key=lambda e: e.id)
    for ev in evs:
        if ev.kind == EXISTS:
            keys = {str(k): str(v) for k, v in dict(ev.data.get("keys", {})).items()}
            ident = Identity(keys, {str(k): str(v) for k, v in dict(ev.data.get("inputs", {})).items()},
                             ev.run_id or 0)  # fmt: skip
            found.pop(ident.name, None)
            found[ident.name] = ident
        elif ev.kind == GONE:
            found.pop(name_of({str(k): str(v) for k, v in dict(ev.data.get("keys", {})).items()}), None)
    return list(found.values())


def replaced(
    old: Mapping[str, str], current: Mapping[str, str], exist: Sequence[Identity]
) -> tuple[str, ...]:
    """What a section that last succeeded under identity `old` replaces when it acts under `current`: each
    key whose value changes (`WORKER orders-dev → orders-stg`), while the old identity still exists; ()
    when it is the same identity, or the old one is gone."""
    if not old or not current or name_of(old) == name_of(current):
        return ()
    if name_of(old) not in {i.name for i in exist}:
        return ()
    return tuple(f"{k} {old[k]} → {v}" for k, v in current.items() if k in old and old[k] != v)

"""What a plan's family says about it when it runs (docs/families.md): the values its providers realized
(`DIRECTOR_PROVIDED_*`, and where they keep their state), whether a plan is live here, and the refusal of a
provider's teardown while a consumer beside it is live (audited, and overridable).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from director.commands.paths import backend_for, paths_for
from director.errors import DirectorError, UpstreamGuard, UsageError

if TYPE_CHECKING:
    from director.plan.family import Declarations
    from director.plan.model import Plan

#: Where a consumer's blocks (and the local target's shim) find its providers' state directories.
ENV_PROVIDER_STATES = "DIRECTOR_PROVIDER_STATE_DIRS"
_DECLARES = ("**provides**", "**requires**", "**discovers**", "**discovered**")


# ---------------------------------------------------------------------------------------------------
# What a family says about one plan


def declares(path: Path) -> bool:
    """Whether the plan's text declares anything for a family (a cheap look before parsing it)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace").lower()
    except OSError:
        return False  # run_command says what is wrong with it
    return any(k in text for k in _DECLARES)


def parse(path: Path) -> Plan:
    from director.plan.parse import parse_file

    return parse_file(str(path))


def decl_of(plan: Plan) -> Declarations:
    from director.plan.family import declarations

    return declarations(plan)


def _latest(path: Path, state_url: str | None) -> tuple[str, str] | None:
    """(kind, state) of the plan's latest run, or None when nothing ran for it here."""
    journal = backend_for(path, None, state_url).open(create=False)
    if journal is None:
        return None
    try:
        latest = journal.latest_run()
        return None if latest is None else (latest.kind, str(latest.state))
    finally:
        journal.close()


def is_live(path: Path, state_url: str | None) -> bool:
    """Applied here and not torn down since: its latest run is anything but a completed teardown, and its
    Live State says something of it exists (a run that created nothing -- stopped at its discovery, its
    interview or its first gate -- leaves it `not-created`, a finished teardown `gone`)."""
    latest = _latest(path, state_url)
    if latest is None or latest == ("teardown", "completed"):
        return False
    return _ledger_status(path) not in _NOTHING_EXISTS


_NOTHING_EXISTS = ("not-created", "gone")


def _ledger_status(path: Path) -> str:
    """The plan's Live State status as its runs here wrote it (`live`, `partially applied`, `gone`…), without
    its `(unconfirmed)` note; "" when the plan cannot be read (then it counts as live: nothing is assumed
    gone)."""
    try:
        ls = parse(path).live_state
    except DirectorError:
        return ""
    if ls is None:
        return ""
    return str(ls.data.get("status", "")).split(" (", 1)[0].strip()


def applied(path: Path, state_url: str | None) -> bool:
    """A provider whose latest run is a completed apply: what it provides is realized."""
    return _latest(path, state_url) == ("apply", "completed")


def provided_env(
    consumer: Path, decl: Declarations, providers: dict[str, tuple[Path, Any]]
) -> dict[str, str]:
    """`DIRECTOR_PROVIDED_*` for each requirement whose provider is known (name → (plan path, Provide)), read
    from the provider's Live State as it is now, and where the providers keep their state."""
    from director.ledger.compose import outputs
    from director.run.family import provided_env as env_for

    out: dict[str, str] = {}
    states: list[str] = []
    for r in decl.requires:
        if r.name not in providers:
            continue
        path, provide = providers[r.name]
        out.update(env_for(r, provide, outputs(parse(path))))
        states.append(str(paths_for(path, None, None).state))
    if states:
        out[ENV_PROVIDER_STATES] = os.pathsep.join(dict.fromkeys(states))
    return out


def provided_alone(
    path: Path, decl: Declarations, state_url: str | None, *, need_live: bool
) -> dict[str, str]:
    """A plan run alone receives what the providers it names realized; an apply needs them applied."""
    from director.errors import PlanError

    providers: dict[str, tuple[Path, Any]] = {}
    for r in decl.requires:
        if r.plan is None:
            continue
        target = (path.resolve().parent / r.plan).resolve()
        if not target.is_file():
            if r.optional or r.discovered:
                continue
            raise PlanError(
                f"requires `{r.name}` from {r.plan}, which does not exist ({target}): a missing provider; "
                "nothing was run",
                path=str(path),
                line=r.line,
            )
        provide = decl_of(parse(target)).provide(r.name)
        if provide is None:
            raise PlanError(
                f"requires `{r.name}` from {r.plan}, which does not provide it", path=str(path), line=r.line
            )
        if need_live and not (r.optional or r.discovered) and not applied(target, state_url):
            raise UsageError(
                f"{path}: requires `{r.name}` from {r.plan}, which is not applied here (its latest run is "
                f"not a completed apply); nothing was run. Apply it first, or both: director apply "
                f"{shown(target)} {path}"
            )
        providers[r.name] = (target, provide)
    return provided_env(path, decl, providers)


def consumers_beside(path: Path, decl: Declarations) -> dict[Path, list[str]]:
    """The plans in the provider's directory that require what it provides (by naming it, or by name), and
    the names each requires."""
    names = {p.name for p in decl.provides}
    if not names:
        return {}
    me = path.resolve()
    found: dict[Path, list[str]] = {}
    for other in sorted(me.parent.glob("*.md")):
        if other.resolve() == me or not declares(other):
            continue
        try:
            od = decl_of(parse(other))
        except DirectorError:
            continue  # a sibling that does not parse binds nothing
        for r in od.requires:
            named = r.plan is not None and (other.parent / r.plan).resolve() == me
            if r.name in names and (named or r.plan is None):
                found.setdefault(other.resolve(), []).append(r.name)
    return found


def guard_teardown(
    path: Path,
    plan: Plan,
    decl: Declarations,
    leaving: set[Path],
    state_url: str | None,
    operator: str | None,
    override: bool,
) -> None:
    """A provider's teardown is refused while a consumer is live, unless that consumer is torn down in this
    run (`leaving`) or `--orphan-consumers` says so; the refusal and the override are audited."""
    bound = consumers_beside(path, decl)
    live = [c for c in bound if c not in leaving and is_live(c, state_url)]
    if not live:
        return
    from director.run.gates import operator_name

    names = ", ".join(f"{shown(c)} ({', '.join(bound[c])})" for c in live)
    who = operator_name(operator)
    _audit(path, state_url, "teardown-consumers-orphaned" if override else "teardown-refused",
           {"consumers": [str(c) for c in live], "operator": who})  # fmt: skip
    if override:
        return
    it = "it" if len(live) == 1 else "them"
    raise UpstreamGuard(
        f"{path}: teardown refused: {names} still require{'s' if len(live) == 1 else ''} what this plan "
        f"provides; tear {it} down first or in the same run (director teardown "
        f"{' '.join(shown(c) for c in live)} {path}), or pass --orphan-consumers (audited); nothing was run"
    )


def shown(path: Path) -> str:
    """A path as short as it can be said from here."""
    rel = os.path.relpath(path)
    return rel if len(rel) < len(str(path)) else str(path)


def _audit(path: Path, state_url: str | None, kind: str, data: dict[str, Any]) -> None:
    """An audit event in the plan's journal (none is made for a plan that never ran here)."""
    journal = backend_for(path, None, state_url).open(create=False)
    if journal is None:
        return
    try:
        journal.record_event(None, kind, data)
    finally:
        journal.close()

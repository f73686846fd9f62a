"""What a plan's family says about it when it runs (docs/families.md): the values its providers realized
(`DIRECTOR_PROVIDED_*`, and where they keep their state), whether a plan is live here, and the refusal of a
provider's teardown while a consumer beside it is live (audited, and overridable).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from director.commands.paths import backend_of, paths_for, where
from director.errors import DirectorError, UpstreamGuard, UsageError

if TYPE_CHECKING:
    from director.commands.paths import Site
    from director.plan.family import Declarations, Provide
    from director.plan.model import Plan
    from director.run.config import RunRequest
    from director.state.backends import StateBackend

#: Where a consumer's blocks (and the local target's shim) find its providers' state directories.
ENV_PROVIDER_STATES = "DIRECTOR_PROVIDER_STATE_DIRS"
_DECLARES = ("**provides**", "**requires**", "**discovers**", "**discovered**")


# ---------------------------------------------------------------------------------------------------
# What a family says about one plan


@dataclass(frozen=True)
class Provider:
    """A plan that provides what another requires: its path, the declaration, the plan as read now, and
    where it keeps its state (a consumer's blocks find it there: `DIRECTOR_PROVIDER_STATE_DIRS`)."""

    path: Path
    provide: Provide
    plan: Plan
    state: Path


def provider(path: Path, provide: Provide, plan: Plan) -> Provider:
    """A provider a family run names (its state directory located beside it)."""
    return Provider(path, provide, plan, paths_for(path, None, None).state)


@dataclass(frozen=True)
class Beside:
    """Another plan of the family, read once: the plan, what it declares, its latest run here (kind,
    state) and where it keeps its state. What a family says about one plan is decided from these after
    they were read (`alone`), never by reading again."""

    path: Path
    plan: Plan
    provides: dict[str, Provide]  # what it declares it provides, by name
    latest: tuple[str, str] | None
    state: Path

    @property
    def applied(self) -> bool:
        """Its latest run is a completed apply: what it provides is realized."""
        return self.latest == ("apply", "completed")

    @property
    def live(self) -> bool:
        """Applied here and not torn down since: its latest run is anything but a completed teardown, and
        its Live State says something of it exists (a run that created nothing -- stopped at its
        discovery, its interview or its first gate -- leaves it `not-created`, a finished teardown
        `gone`)."""
        if self.latest is None or self.latest == ("teardown", "completed"):
            return False
        ls = self.plan.live_state
        # the status as its runs here wrote it (`live`, `partially applied`, `gone`…), without `(unconfirmed)`
        status = str(ls.data.get("status", "")).split(" (", 1)[0].strip() if ls is not None else ""
        return status not in _NOTHING_EXISTS


_NOTHING_EXISTS = ("not-created", "gone")


def read_beside(path: Path, plan: Plan, decl: Declarations, state_url: str | None) -> Beside:
    """The one place a family reads another plan's journal (its latest run) and locates its state."""
    state, backend = where(path, plan, state_url)
    return Beside(path, plan, {p.name: p for p in decl.provides}, _latest(backend), state)


def alone(site: Site, request: RunRequest) -> dict[str, str]:
    """What a family says about one plan run alone, read from the plan as already parsed. First the plans
    beside it are read, once (the providers it names; for a teardown, the consumers beside it), then
    decided: a provider's teardown is refused while a consumer beside it is live (`refuse_teardown`); the
    plan receives what the providers it names realized, and an apply needs them applied (`received`)."""
    path, plan, decl = site.path, site.file.plan, site.decl
    if not (decl.provides or decl.requires):
        return {}
    state_url = request.state.state_url
    teardown = request.mode == "run" and request.kind == "teardown"
    consumers = consumers_beside(path, decl, state_url) if teardown else {}
    providers = providers_named(path, decl, state_url)
    if teardown:
        a = request.approval
        refuse_teardown(path, plan, consumers, set(), state_url, a.operator, request.orphan_consumers)
    return received(path, decl, providers, need_live=request.mode == "run" and request.kind == "apply")


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


def _latest(backend: StateBackend) -> tuple[str, str] | None:
    """(kind, state) of the plan's latest run, or None when nothing ran for it here."""
    journal = backend.open(create=False)
    if journal is None:
        return None
    try:
        latest = journal.latest_run()
        return None if latest is None else (latest.kind, str(latest.state))
    finally:
        journal.close()


def is_live(path: Path, plan: Plan, state_url: str | None) -> bool:
    """Applied here and not torn down since (`Beside.live`)."""
    return read_beside(path, plan, decl_of(plan), state_url).live


def readable(path: Path) -> Plan | None:
    """The plan at `path`, or None when it cannot be read or parsed."""
    try:
        return parse(path)
    except DirectorError:
        return None


def applied(backend: StateBackend) -> bool:
    """A provider whose latest run is a completed apply: what it provides is realized."""
    return _latest(backend) == ("apply", "completed")


def provided_env(consumer: Path, decl: Declarations, providers: dict[str, Provider]) -> dict[str, str]:
    """`DIRECTOR_PROVIDED_*` for each requirement whose provider is known (name → provider, its Live State as
    read now), and where the providers keep their state (pure)."""
    from director.ledger.compose import outputs
    from director.run.family import provided_env as env_for

    out: dict[str, str] = {}
    states: list[str] = []
    for r in decl.requires:
        if r.name not in providers:
            continue
        pr = providers[r.name]
        out.update(env_for(r, pr.provide, outputs(pr.plan)))
        states.append(str(pr.state))
    if states:
        out[ENV_PROVIDER_STATES] = os.pathsep.join(dict.fromkeys(states))
    return out


def providers_named(path: Path, decl: Declarations, state_url: str | None) -> dict[str, Beside | Path]:
    """Each provider the plan names, read (requirement name → the plan beside it; its path when there is
    no such file)."""
    found: dict[str, Beside | Path] = {}
    for r in decl.requires:
        if r.plan is None:
            continue
        target = (path.resolve().parent / r.plan).resolve()
        if target.is_file():
            plan = parse(target)
            found[r.name] = read_beside(target, plan, decl_of(plan), state_url)
        else:
            found[r.name] = target
    return found


def received(
    path: Path, decl: Declarations, providers: dict[str, Beside | Path], *, need_live: bool
) -> dict[str, str]:
    """What a plan run alone receives from the providers it names, as read (`providers_named`); an apply
    needs them applied (pure: raises what is wrong)."""
    from director.errors import PlanError

    given: dict[str, Provider] = {}
    for r in decl.requires:
        if r.name not in providers:
            continue
        other = providers[r.name]
        if not isinstance(other, Beside):
            if r.optional or r.discovered:
                continue
            raise PlanError(
                f"requires `{r.name}` from {r.plan}, which does not exist ({other}): a missing provider; "
                "nothing was run",
                path=str(path),
                line=r.line,
            )
        provide = other.provides.get(r.name)
        if provide is None:
            raise PlanError(
                f"requires `{r.name}` from {r.plan}, which does not provide it", path=str(path), line=r.line
            )
        if need_live and not (r.optional or r.discovered) and not other.applied:
            raise UsageError(
                f"{path}: requires `{r.name}` from {r.plan}, which is not applied here (its latest run is "
                f"not a completed apply); nothing was run. Apply it first, or both: director apply "
                f"{shown(other.path)} {path}"
            )
        given[r.name] = Provider(other.path, provide, other.plan, other.state)
    return provided_env(path, decl, given)


def consumers_beside(
    path: Path, decl: Declarations, state_url: str | None
) -> dict[Path, tuple[Beside, list[str]]]:
    """The plans in the provider's directory that require what it provides (by naming it, or by name): each
    read, and the names it requires."""
    names = {p.name for p in decl.provides}
    if not names:
        return {}
    me = path.resolve()
    found: dict[Path, tuple[Beside, list[str]]] = {}
    for other in sorted(me.parent.glob("*.md")):
        if other.resolve() == me or not declares(other):
            continue
        plan = readable(other)
        if plan is None:
            continue  # a sibling that does not parse binds nothing
        decl_other = decl_of(plan)
        requires = [
            r.name for r in decl_other.requires
            if r.name in names and (r.plan is None or (other.parent / r.plan).resolve() == me)
        ]  # fmt: skip
        if requires:
            found[other.resolve()] = (read_beside(other.resolve(), plan, decl_other, state_url), requires)
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
    """A provider's teardown is refused while a consumer beside it is live (`refuse_teardown`)."""
    consumers = consumers_beside(path, decl, state_url)
    refuse_teardown(path, plan, consumers, leaving, state_url, operator, override)


def refuse_teardown(
    path: Path,
    plan: Plan,
    consumers: dict[Path, tuple[Beside, list[str]]],
    leaving: set[Path],
    state_url: str | None,
    operator: str | None,
    override: bool,
) -> None:
    """A provider's teardown is refused while a consumer (as read) is live, unless that consumer is torn
    down in this run (`leaving`) or `--orphan-consumers` says so; the refusal and the override are audited
    in the provider's journal (none is made for a plan that never ran here)."""
    live = [c for c, (b, _) in consumers.items() if c not in leaving and b.live]
    if not live:
        return
    from director.run.gates import operator_name

    names = ", ".join(f"{shown(c)} ({', '.join(consumers[c][1])})" for c in live)
    who = operator_name(operator)
    journal = backend_of(path, plan, None, state_url).open(create=False)  # audited where it ran (if it did)
    if journal is not None:
        try:
            journal.record_event(None, "teardown-consumers-orphaned" if override else "teardown-refused",
                                 {"consumers": [str(c) for c in live], "operator": who})  # fmt: skip
        finally:
            journal.close()
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

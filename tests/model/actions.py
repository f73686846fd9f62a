"""What an operator does, as small printable values (hypothesis shows a failing sequence as a list of them).

Sections are named by number and folded onto the plan's sections (`fold`), so one sequence strategy serves
plans of any size and shrinks well.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hypothesis import strategies as st

from tests.model.plans import ENVS, TIERS, PlanSpec


@dataclass(frozen=True)
class KillAt:
    """Send `signal` when `at` happens: the act of section `section` starts / ends / writes its `.rev` file
    (`mid`), or Director prints its `section`-th observe line (`observe`) or verify line (`verify`: an act
    before it ended and was journaled, its verify is starting)."""

    signal: str = "SIGKILL"
    at: str = "act-start"
    section: int = 1


@dataclass(frozen=True)
class Apply:
    """`director apply` (non-interactive): `approve` is `none` | `auto` (`--auto-approve`) | a section number
    (`--approve N`) | `all` (`--approve` every gated section); `set_env`/`set_tier` add `--set`;
    `env_conflict` puts `ENV=<value>` in the operator's environment; `signed` adds `--sign-with` (the key the
    allowed-signers file lists, when one is in force); `kill` interrupts it."""

    approve: str = "none"
    set_env: str | None = None
    set_tier: str | None = None
    env_conflict: str | None = None
    signed: bool = True
    kill: KillAt | None = None


@dataclass(frozen=True)
class Teardown:
    """`director teardown` (non-interactive), with `--approve teardown` or not; `env_conflict` puts
    `ENV=<value>` in the operator's environment (which never changes what a teardown reaches or what its
    approval covers: each pass acts on an identity with the inputs that made it)."""

    approve: bool = True
    set_env: str | None = None
    signed: bool = True
    kill: KillAt | None = None
    env_conflict: str | None = None


@dataclass(frozen=True)
class Approve:
    """`director approve PLAN N --yes` from another process, signed or not: N = -1 is the gate the last run
    stopped at (what an operator copies from Director's `approve with:` line), 0 the teardown."""

    section: int = -1
    signed: bool = True


@dataclass(frozen=True)
class GoThenCtrlC:
    """`director apply` at a terminal: type the gate's word at its prompt, then Ctrl-C at once or once the
    gated act has started."""

    when: str = "act-start"


@dataclass(frozen=True)
class Break:
    """Out of band: delete section N's file / kill its server / empty its list (in the current env)."""

    section: int = 1


@dataclass(frozen=True)
class Heal:
    """Out of band: put back what the last Break of section N took (a server restarted on its port)."""

    section: int = 1


@dataclass(frozen=True)
class Edit:
    """Edit section N's act (its `rev` line): the plan changes outside Live State."""

    section: int = 1


@dataclass(frozen=True)
class Check:
    """`director check`: drift, read-only."""


Action = Apply | Teardown | Approve | GoThenCtrlC | Break | Heal | Edit | Check


def fold(section: int, n: int) -> int:
    """A drawn section number (1-4) as one of the plan's n sections."""
    return (section - 1) % n + 1


_sections = st.integers(1, 4)
_kill = st.builds(
    KillAt,
    signal=st.sampled_from(["SIGKILL", "SIGINT"]),
    at=st.sampled_from(["act-start", "act-end", "mid", "observe", "verify"]),
    section=_sections,
)
_teardown_kill = st.builds(
    KillAt, signal=st.sampled_from(["SIGKILL", "SIGINT"]), at=st.sampled_from(["act-start", "act-end", "observe"]),
    section=st.just(0),
)  # fmt: skip
_apply = st.builds(
    Apply,
    approve=st.sampled_from(["none", "none", "auto", "auto", "all", "1", "2", "3"]),
    set_env=st.none() | st.sampled_from(ENVS),
    set_tier=st.none() | st.sampled_from(TIERS),
    env_conflict=st.none() | st.sampled_from(ENVS),
    signed=st.booleans() | st.just(True),
    kill=st.none() | st.none() | _kill,
)
_teardown = st.builds(
    Teardown,
    approve=st.booleans() | st.just(True),
    set_env=st.none() | st.none() | st.sampled_from(ENVS),
    signed=st.just(True) | st.booleans(),
    kill=st.none() | st.none() | _teardown_kill,
    env_conflict=st.none() | st.none() | st.sampled_from(ENVS),
)

actions = st.one_of(
    _apply,
    _apply,
    _apply,
    _apply,
    _teardown,
    st.builds(Approve, section=st.sampled_from([-1, -1, -1, 0, 1, 2, 3, 4]), signed=st.booleans()),
    st.builds(GoThenCtrlC, when=st.sampled_from(["at-once", "act-start"])),
    st.builds(Break, section=_sections),
    st.builds(Heal, section=_sections),
    st.builds(Edit, section=_sections),
    st.just(Check()),
)


def sequences(max_size: int = 8) -> st.SearchStrategy[list[Action]]:
    """Operator sequences; half of them start from a plan that is live (`apply --auto-approve` first), where
    the deeper orders begin (a teardown after it, a changed input on it, a break of what runs)."""
    body = st.lists(actions, min_size=min(2, max_size), max_size=max_size)
    return st.tuples(st.booleans(), body).map(lambda t: ([Apply(approve="auto")] if t[0] else []) + t[1])


def features(spec: PlanSpec, actions: Sequence[Action], signing: bool) -> frozenset[str]:
    """The choices of a plan and sequence that are not the simplest (what hypothesis shrinks away when it can):
    a shrunk failing example's features are its culprits (bench/soak_model.py)."""
    f: set[str] = set()
    for s in spec.sections:
        if s.kind != "file":
            f.add(f"kind:{s.kind}")
        if s.gate:
            f.add(f"gate:{s.gate}")
        if s.verify != "status":
            f.add(f"verify:{s.verify}")
        f.update(name for name in ("assigns", "readonly", "secret_var", "hides_trace", "umask", "nofile") if getattr(s, name))
        if s.assigns and s.shares_var:
            f.add("shares_var")
    if spec.knobs != "assign":
        f.add(f"knobs:{spec.knobs}")
    f.update(name for name in ("tier", "acceptance") if getattr(spec, name))
    if spec.teardown_check != "status":
        f.add(f"teardown_check:{spec.teardown_check}")
    if signing:
        f.add("signing")
    for a in actions:
        if not isinstance(a, Apply | Teardown):
            f.add(type(a).__name__)
        if isinstance(a, Apply | Teardown):
            if isinstance(a, Teardown):
                f.add("Teardown")
            if a.kill is not None:
                f.add(f"kill:{a.kill.signal}")
            if a.set_env:
                f.add("set_env")
            if a.env_conflict:
                f.add("env_conflict")
        if isinstance(a, Apply):
            if a.approve != "none":
                f.add("approve-flag")
            if a.set_tier:
                f.add("set_tier")
    return frozenset(f)

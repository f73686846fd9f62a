"""A family of plans: the graph their Provides/Requires make, its order, and a scheduler that runs it.

Nothing of the single-plan engine knows it is in a family: a member's run is a unit (`run_one`), handed in
by the command layer. This module only orders (dependency order, whatever the command-line order; reverse
for teardown), runs independent members in parallel (at most `jobs` at once), stops the dependents of a
member that did not succeed, and lets the members' threads ask the operator through the main thread, one
question at a time (`Scheduler.in_main`): a gate or an interview is never interleaved with another.
Terragrunt's `run --all` is the reference for order and parallelism.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from director.errors import PlanError, UsageError
from director.plan.family import Declarations, Provide, Require, env_name, key_candidates

__all__ = ["Edge", "Graph", "Member", "Scheduler", "Skipped", "build_graph", "provided_env"]


@dataclass(frozen=True)
class Member:
    """One plan of the family."""

    path: Path  # resolved
    label: str  # how the family names it on screen and in events (the path as given)
    decl: Declarations


@dataclass(frozen=True)
class Edge:
    """`consumer` requires `require`, which `provider` provides as `provide`."""

    consumer: Path
    provider: Path
    require: Require
    provide: Provide


@dataclass(frozen=True)
class External:
    """A requirement whose named provider is a plan outside this run (found beside the consumer, or not)."""

    consumer: Path
    provider: Path
    require: Require
    exists: bool


@dataclass
class Graph:
    """The members, the edges between them, and the named providers outside the run."""

    members: list[Member]
    edges: list[Edge]
    external: list[External] = field(default_factory=list)

    def member(self, path: Path) -> Member:
        return next(m for m in self.members if m.path == path)

    def providers_of(self, path: Path) -> list[Path]:
        return list(dict.fromkeys(e.provider for e in self.edges if e.consumer == path))

    def consumers_of(self, path: Path) -> list[Path]:
        return list(dict.fromkeys(e.consumer for e in self.edges if e.provider == path))

    def order(self) -> list[Member]:
        """Dependency order (providers first); members that do not depend on each other by label."""
        done: set[Path] = set()
        out: list[Member] = []
        pending = sorted(self.members, key=lambda m: m.label)
        while pending:
            ready = [m for m in pending if set(self.providers_of(m.path)) <= done]
            assert ready, "a cycle survived build_graph"
            for m in ready:
                out.append(m)
                done.add(m.path)
            pending = [m for m in pending if m.path not in done]
        return out

    def deps(self, reverse: bool = False) -> dict[Path, set[Path]]:
        """What each member waits for: its providers (or, for teardown, its consumers)."""
        return {
            m.path: set(self.consumers_of(m.path) if reverse else self.providers_of(m.path))
            for m in self.members
        }


def _where(m: Member | Path, line: int) -> str:
    return f"{m.label if isinstance(m, Member) else m}:{line}"


def build_graph(members: Sequence[Member]) -> Graph:
    """The edges the members' declarations make; a cycle, an ambiguous name, a named provider that does not
    provide the name, or a required one that does not exist is a `PlanError` naming file:line."""
    by_path = {m.path: m for m in members}
    providers: dict[str, list[Member]] = {}
    for m in members:
        for p in m.decl.provides:
            providers.setdefault(p.name, [])
            if m not in providers[p.name]:
                providers[p.name].append(m)
    edges: list[Edge] = []
    external: list[External] = []
    for m in members:
        for r in m.decl.requires:
            if r.plan is not None:
                target = (m.path.parent / r.plan).resolve()
                provider = by_path.get(target)
                if provider is None:
                    exists = target.is_file()
                    if not exists and not (r.optional or r.discovered):
                        raise PlanError(
                            f"requires `{r.name}` from {r.plan}, which does not exist ({target}): "
                            "a missing provider; nothing was run",
                            path=m.label,
                            line=r.line,
                        )
                    external.append(External(m.path, target, r, exists))
                    continue
                provide = provider.decl.provide(r.name)
                if provide is None:
                    offered = ", ".join(f"`{p.name}`" for p in provider.decl.provides) or "nothing"
                    raise PlanError(
                        f"requires `{r.name}` from {r.plan}, which provides {offered}; nothing was run",
                        path=m.label,
                        line=r.line,
                    )
                if provider.path != m.path:
                    edges.append(Edge(m.path, provider.path, r, provide))
                continue
            found = [p for p in providers.get(r.name, []) if p.path != m.path]
            if len(found) > 1:
                names = " and ".join(p.label for p in found)
                raise PlanError(
                    f"requires `{r.name}`, which {names} both provide: name the providing plan after it "
                    f"(`{r.name}` (`{found[0].path.name}`)); nothing was run",
                    path=m.label,
                    line=r.line,
                )
            if found:
                provide = found[0].decl.provide(r.name)
                assert provide is not None
                edges.append(Edge(m.path, found[0].path, r, provide))
    graph = Graph(list(members), edges, external)
    _refuse_cycle(graph)
    return graph


def _refuse_cycle(graph: Graph) -> None:
    """A cycle is an error naming each requirement on it."""
    state: dict[Path, int] = {}  # 1: on the path being walked, 2: done
    stack: list[Edge] = []

    def visit(path: Path) -> None:
        state[path] = 1
        for e in graph.edges:
            if e.consumer != path:
                continue
            if state.get(e.provider) == 1:
                start = next(i for i, s in enumerate(stack) if s.consumer == e.provider) if stack else 0
                loop = [*stack[start:], e]
                said = ", ".join(
                    f"{_where(graph.member(x.consumer), x.require.line)} requires `{x.require.name}` "
                    f"from {graph.member(x.provider).label}"
                    for x in loop
                )
                first = graph.member(loop[0].consumer)
                raise PlanError(
                    f"the family has a cycle: {said}; nothing was run",
                    path=first.label,
                    line=loop[0].require.line,
                )
            if state.get(e.provider) is None:
                stack.append(e)
                visit(e.provider)
                stack.pop()
        state[path] = 2

    for m in sorted(graph.members, key=lambda m: m.label):
        if m.path not in state:
            visit(m.path)


def provided_env(require: Require, provide: Provide, realized: Mapping[str, str]) -> dict[str, str]:
    """The variables a consumer's blocks get for one requirement: `DIRECTOR_PROVIDED_<NAME>_<KEY>` for each
    key the provider's Live State realized, and `DIRECTOR_PROVIDED_<NAME>` (the expression with the values
    put in; a bare key's value) once every key is realized."""
    out: dict[str, str] = {}
    values: dict[str, str] = {}
    for key in provide.keys:
        value = next((realized[k] for k in key_candidates(key) if k in realized), None)
        if value is not None:
            values[key] = value
            out[env_name(require.name, key)] = value
    if provide.keys and len(values) == len(provide.keys):
        whole = provide.expression
        for key in sorted(values, key=len, reverse=True):
            whole = whole.replace(key, values[key])
        out[env_name(require.name)] = whole
    return out


# ---------------------------------------------------------------------------------------------------
# Running the graph

R = TypeVar("R")


@dataclass(frozen=True)
class Skipped:
    """A member that did not run, and why (a provider that did not succeed, an interruption)."""

    reason: str


class Scheduler(Generic[R]):
    """Runs members in dependency order on worker threads, at most `jobs` at once.

    The main thread stays in `run`: it starts what is ready, collects what finished, and runs the calls
    members make through `in_main` (questions to the operator), one at a time, in the order they came.
    """

    def __init__(
        self,
        order: Sequence[Member],
        deps: Mapping[Path, set[Path]],
        jobs: int,
        run_one: Callable[[Member], R],
        succeeded: Callable[[R], bool],
    ) -> None:
        self._order = list(order)
        self._deps = deps
        self._jobs = max(1, jobs)
        self._run_one = run_one
        self._succeeded = succeeded
        self._mail: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._stopped: str | None = None
        self.started_at: dict[Path, float] = {}
        self.ended_at: dict[Path, float] = {}
        self.errors: dict[Path, BaseException] = {}

    def stop(self, reason: str) -> None:
        """Start nothing more (an interruption); what runs finishes on its own."""
        self._stopped = self._stopped or reason

    def in_main(self, fn: Callable[[], Any]) -> Any:
        """Run `fn` on the main thread (between the scheduler's own steps) and return what it returns."""
        if threading.current_thread() is threading.main_thread():
            return fn()
        box: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=1)
        self._mail.put(("call", (fn, box)))
        ok, value = box.get()
        if ok:
            return value
        raise value

    def run(self) -> dict[Path, R | Skipped]:
        """Run the whole graph; every member gets a result or a `Skipped`."""
        results: dict[Path, R | Skipped] = {}
        running: set[Path] = set()
        pending = list(self._order)
        while pending or running:
            for m in list(pending):
                blocked = [d for d in self._deps.get(m.path, set()) if d in results]
                failed = [d for d in blocked if not self._ok(results[d])]
                if failed:
                    names = ", ".join(str(d.name) for d in sorted(failed))
                    results[m.path] = Skipped(f"not run: {names} did not succeed")
                    pending.remove(m)
                elif self._stopped is not None:
                    results[m.path] = Skipped(f"not run: {self._stopped}")
                    pending.remove(m)
                elif len(blocked) == len(self._deps.get(m.path, set())) and len(running) < self._jobs:
                    pending.remove(m)
                    running.add(m.path)
                    self._start(m)
            if not running:
                continue  # what is left was skipped above (or becomes ready now)
            kind, payload = self._mail.get()
            if kind == "done":
                path, result = payload
                running.discard(path)
                results[path] = result
            else:
                fn, box = payload
                try:
                    box.put((True, fn()))
                except BaseException as exc:  # KeyboardInterrupt at a prompt reaches the member that asked
                    box.put((False, exc))
        return results

    def _ok(self, result: R | Skipped) -> bool:
        return not isinstance(result, Skipped) and self._succeeded(result)

    def _start(self, m: Member) -> None:
        def work() -> None:
            self.started_at[m.path] = time.monotonic()
            try:
                result: R | Skipped = self._run_one(m)
            except BaseException as exc:  # an error of one member is its result, not the family's end
                self.errors[m.path] = exc
                result = Skipped(f"stopped by an error: {exc}")
            self.ended_at[m.path] = time.monotonic()
            self._mail.put(("done", (m.path, result)))

        threading.Thread(target=work, name=f"member {m.label}", daemon=True).start()


def family_usage(members: Sequence[Member]) -> None:
    """Two arguments naming the same plan are one member: refuse the repetition (it would race itself)."""
    seen: dict[Path, str] = {}
    for m in members:
        if m.path in seen:
            raise UsageError(f"PLAN: {m.label} and {seen[m.path]} are the same plan")
        seen[m.path] = m.label

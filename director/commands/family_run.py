"""`director apply|plan|check|teardown PLAN… | DIR`: one plan, or a family of them (docs/families.md).

One plan runs as it always did, plus what its family says about it (`commands/family.py`): the values its
named providers realized, and, for a provider's teardown, the refusal while a consumer beside it is live.

A family run: several plans (or a directory of them) applied, torn down, previewed or checked as one.

Each member is one `run_command` call (its own journal, lease, gates and Live State) on a worker thread of
`director.run.family.Scheduler`; this module wires the parts around them: the members and their graph, the
checks made before anything runs (cycles, missing providers, a provider's teardown while a consumer outside
the run is live), `--set`/`--approve` per member, one screen and one event stream for all, questions asked
one at a time on the main thread, Ctrl-C to every member, and the family's summary and exit code.
"""

from __future__ import annotations

import dataclasses
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from director.commands.family import (
    Provider,
    alone,
    applied,
    decl_of,
    guard_teardown,
    parse,
    provided_env,
    provider,
    shown,
)
from director.commands.paths import backend_for, locate, require_plan
from director.errors import DirectorError, ExitCode, UsageError, most_severe

if TYPE_CHECKING:
    from rich.console import Console

    from director.plan.model import Input, Plan
    from director.run.config import RunRequest, RunResult
    from director.run.events import Bus
    from director.run.family import Graph, Member, Scheduler
    from director.run.gates import Arrival, Elsewhere, GateContent, Prompter
    from director.ui.family import Screen


def run_plans(plans: list[Path], request: RunRequest) -> ExitCode:
    """One plan (a file), or a family (several, or a directory), as `request` asks."""
    from director.commands.prereqs import check_engine
    from director.commands.run import check_request, run_command

    check_request(request)
    check_engine()  # bash ≥ 4.1 and /proc, before anything is read or created
    if len(plans) == 1 and not plans[0].is_dir():
        path = plans[0]
        site = locate(path, request)  # the one parse of this plan: its family declarations read from it
        provided = alone(site, request)
        return run_command(request, site, provided=provided or None)
    return FamilyRun(plans, request).run()


@dataclass
class Outcome:
    """How one member's run ended."""

    code: ExitCode
    result: RunResult | None
    error: str | None
    duration_s: float
    waited_s: float = 0.0  # of `duration_s`, the time its questions waited for the operator


def members(args: list[Path]) -> tuple[Graph, dict[Path, Plan]]:
    """The family the arguments name: its graph (errors before anything runs), and each member's plan."""
    from director.run.family import Member, build_graph, family_usage

    plans: dict[Path, Plan] = {}
    found: list[Member] = []
    for label, path in collect(args):
        plan = parse(path)
        found.append(Member(path.resolve(), label, decl_of(plan)))
        plans[path.resolve()] = plan
    family_usage(found)
    return build_graph(found), plans


def collect(args: list[Path]) -> list[tuple[str, Path]]:
    """(label, path) of every plan named: a file as given, a directory's `*.md` plans (those with a block
    to run), in name order."""
    out: list[tuple[str, Path]] = []
    for arg in args:
        if arg.is_dir():
            found = [
                (str(f), f)
                for f in sorted(arg.glob("*.md"))
                if f.is_file() and any(s.executable_blocks for s in parse(f).sections)
            ]
            if not found:
                raise UsageError(f"PLAN: the directory {arg} holds no plan (no *.md with a block to run)")
            out += found
        else:
            require_plan(arg)
            out.append((str(arg), arg))
    return out


class _Asker:
    """A member's prompter: each question goes to the main thread, which asks one at a time while the
    other members' lines wait (`Screen.held`); a Ctrl-C there interrupts the family, and no question is
    asked once the family is interrupted (one Ctrl-C ends the interview, whichever member asked).
    `waited_s` is the time the member's questions waited for the operator (the family shows it apart)."""

    def __init__(self, run: FamilyRun, real: Prompter, label: str, name: str) -> None:
        self._run = run
        self._real = real
        self._label = label
        self._name = name
        self.waited_s = 0.0

    def _ask(self, fn: Callable[[], Any]) -> Any:
        from director.ui.prompts import TerminalPrompter

        def in_main() -> Any:
            if self._run.interrupted is not None:
                raise KeyboardInterrupt  # the family is ending: nothing more is asked
            if isinstance(self._real, TerminalPrompter):  # where this member's gate is, whole
                teardown = " --teardown" if self._run.kind == "teardown" else ""
                preview = f"director plan {self._label}{teardown}"
                self._real.details = lambda key: f"{preview} --section {key}"
            with self._run.screen.held():
                self._run.say(f"── {self._name} asks:")
                try:
                    return fn()
                except KeyboardInterrupt:
                    self._run.interrupt("Ctrl-C")
                    raise

        assert self._run.scheduler is not None
        asked = time.monotonic()
        try:
            return self._run.scheduler.in_main(in_main)
        finally:
            self.waited_s += time.monotonic() - asked

    def ask_input(self, inp: Input) -> str:
        return str(self._ask(lambda: self._real.ask_input(inp)))

    def ask_go(self, content: GateContent, elsewhere: Elsewhere | None = None) -> bool | Arrival:
        # No race with receipts from elsewhere here: the question is asked on the main thread, and a
        # member's journal belongs to its own (an SQLite connection is used by the thread that made it).
        return bool(self._ask(lambda: self._real.ask_go(content)))


class FamilyRun:
    """One family command from start to exit code."""

    def __init__(self, plans: list[Path], request: RunRequest) -> None:
        self.args = plans
        self.request = request
        self.kind = request.kind
        self.mode = request.mode
        self.scheduler: Scheduler[Outcome] | None = None
        self.screen: Screen
        self.console: Console
        self._handlers: set[Callable[[str], bool]] = set()
        self._handlers_lock = threading.Lock()
        self._events_lock = threading.Lock()
        self._sink: Callable[[dict[str, Any]], None] | None = None
        self.interrupted: str | None = None  # by what (Ctrl-C, SIGTERM), once the family is interrupted
        self.names: dict[str, str] = {}  # label -> as the screen names it (`ui.family.display_names`)
        self.width: int | None = None  # the terminal's columns (None: a log or a pipe)

    # -- before anything runs ----------------------------------------------------------------------

    def _members(self) -> tuple[Graph, dict[Path, Plan]]:
        state = self.request.state
        for flag, value in (("--state-dir", state.state_dir), ("--workdir", state.workdir)):
            if value is not None:
                raise UsageError(f"{flag} names one plan's state: run one plan at a time with it")
        return members(self.args)

    def _check_before(self, graph: Graph, plans: dict[Path, Plan]) -> None:
        """What would stop the family is said before anything runs."""
        state_url = self.request.state.state_url
        if self.mode == "run" and self.kind == "apply":
            for ext in graph.external:
                r = ext.require
                if r.optional or r.discovered or not ext.exists:
                    continue
                if not applied(backend_for(ext.provider, None, state_url)):
                    m = graph.member(ext.consumer)
                    raise UsageError(
                        f"{m.label}: requires `{r.name}` from {r.plan}, which is neither in this run nor "
                        f"applied here; nothing was run. Add it: director apply {shown(ext.provider)} …"
                    )
        if self.mode == "run" and self.kind == "teardown":
            leaving = {m.path for m in graph.members}
            for m in graph.members:
                if m.decl.provides:
                    guard_teardown(Path(m.label), plans[m.path], m.decl, leaving, state_url,
                                   self.request.approval.operator, self.request.orphan_consumers)  # fmt: skip

    def _scoped(
        self, graph: Graph, plans: dict[Path, Plan]
    ) -> tuple[dict[Path, list[str]], dict[Path, list[str]]]:
        """`--set`/`--approve` per member: `PLAN:VALUE` for one plan, a bare value for every plan it fits."""
        from director.run.gates import matches

        def member_of(prefix: str) -> Member | None:
            for m in graph.members:
                if prefix in (m.label, m.path.name, str(m.path)):
                    return m
            return None

        sets: dict[Path, list[str]] = {m.path: [] for m in graph.members}
        approve: dict[Path, list[str]] = {m.path: [] for m in graph.members}
        for raw in self.request.step.sets:
            head, colon, rest = raw.partition(":")
            m = member_of(head) if colon and "=" not in head else None
            if m is not None:
                sets[m.path].append(rest)
                continue
            knob = raw.partition("=")[0].strip().lower()
            fits = [x for x in graph.members if any(i.knob.lower() == knob for i in plans[x.path].inputs)]
            if not fits:
                raise UsageError(f"--set {raw!r}: no plan of the family has an input setting {knob!r}")
            for x in fits:
                sets[x.path].append(raw)
        for raw in self.request.approval.approve:
            head, colon, rest = raw.rpartition(":")
            m = member_of(head) if colon else None
            if m is not None:
                approve[m.path].append(rest)
                continue
            fits = [
                x
                for x in graph.members
                if any(matches(raw, s.key, s.slug, s.title) for s in plans[x.path].sections)
            ]
            if not fits:
                raise UsageError(f"--approve: no plan of the family has a section {raw!r}")
            for x in fits:
                approve[x.path].append(raw)
        return sets, approve

    # -- running -----------------------------------------------------------------------------------

    def say(self, line: str) -> None:
        from director.ui.family import say

        say(self.console, line)

    def interrupt(self, by: str) -> None:
        """Ctrl-C/SIGTERM: start nothing more, ask nothing more, stop the running blocks of every member."""
        self.interrupted = self.interrupted or by
        if self.scheduler is not None:
            self.scheduler.stop(f"interrupted ({by})")
        with self._handlers_lock:
            handlers = list(self._handlers)
        for h in handlers:
            h(by)

    @contextmanager
    def _interrupts(self, handler: Callable[[str], bool]) -> Iterator[None]:
        with self._handlers_lock:
            self._handlers.add(handler)
        try:
            yield
        finally:
            with self._handlers_lock:
                self._handlers.discard(handler)

    @contextmanager
    def _signals(self) -> Iterator[None]:
        def on_signal(signum: int, _frame: Any) -> None:
            self.interrupt("SIGTERM" if signum == signal.SIGTERM else "Ctrl-C")

        old_int = signal.signal(signal.SIGINT, on_signal)
        old_term = signal.signal(signal.SIGTERM, on_signal)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, old_int)
            signal.signal(signal.SIGTERM, old_term)

    def _event(self, ev: dict[str, Any]) -> None:
        if self._sink is not None:
            with self._events_lock:
                self._sink(ev)

    def _events(self, closing: ExitStack) -> Bus:
        """The family's event stream (`--events`), which every member writes to as well."""
        from director.run.events import Bus, JsonlWriter, open_sink

        events = self.request.screen.events
        if events == "-":
            self._sink = JsonlWriter(sys.stdout)
        elif events:
            try:
                handle = closing.enter_context(open_sink(events))
            except OSError as exc:
                raise UsageError(f"--events: cannot write {events}: {exc.strerror or exc}") from None
            self._sink = JsonlWriter(handle)
        bus = Bus()
        bus.subscribe(self._event)
        return bus

    def _provided(self, graph: Graph, m: Member) -> dict[str, str]:
        """What the member's providers realized, read from their Live State now (after they ran)."""
        providers: dict[str, Provider] = {}
        for e in graph.edges:
            if e.consumer == m.path:
                providers[e.require.name] = provider(e.provider, e.provide, parse(e.provider))
        for ext in graph.external:
            if ext.consumer == m.path and ext.exists:
                plan = parse(ext.provider)
                provide = decl_of(plan).provide(ext.require.name)
                if provide is not None:
                    providers[ext.require.name] = provider(ext.provider, provide, plan)
        return provided_env(m.path, m.decl, providers)

    def run(self) -> ExitCode:
        from director.ci import in_ci
        from director.run.family import Scheduler, Skipped
        from director.ui.family import Screen, display_names
        from director.ui.prompts import screen_of
        from director.ui.render import make_console

        graph, plans = self._members()
        self._check_before(graph, plans)
        sets, approve = self._scoped(graph, plans)
        screen = self.request.screen
        to_stdout = screen.events == "-" or screen.json
        self.console = make_console(screen.plain or to_stdout or not sys.stdout.isatty(), stderr=to_stdout)
        size = screen_of(self.console)
        self.width = size[0] if size is not None else None
        self.screen = Screen(self.console.file, self.width)
        self.names = display_names([m.label for m in graph.members])
        interactive = (
            not screen.non_interactive
            and not in_ci()
            and sys.stdin.isatty()
            and sys.stdout.isatty()
        )
        real: Prompter | None = None
        if interactive:
            from director.ui.prompts import TerminalPrompter

            real = TerminalPrompter(self.console)
            real.polled = True  # a Ctrl-C may reach a member's thread: the question must still end at once
        teardown = self.kind == "teardown" and self.mode == "run"
        order = graph.order()[::-1] if teardown else graph.order()
        observe_only = self.mode != "run"
        deps = {m.path: set() for m in graph.members} if observe_only else graph.deps(reverse=teardown)
        jobs = self.request.jobs or len(order)
        label = {m.path: m.label for m in graph.members}

        def one(m: Member) -> Outcome:
            return self._run_member(graph, m, real, sets[m.path], approve[m.path])

        def succeeded(o: Outcome) -> bool:
            return o.code in (ExitCode.OK, ExitCode.UNCONFIRMED)

        with ExitStack() as closing:
            bus = self._events(closing)
            command = {"preview": "plan", "check": "check"}.get(self.mode, self.kind)
            bus.emit("family.start", command=command, plans=[m.label for m in order], jobs=jobs)
            joined = (", " if observe_only else " → ").join(self.names[m.label] for m in order)
            where = _where(order)
            self.say(f"director: {command} of {len(order)} plans{where}, {jobs} at a time: {joined}")
            self.scheduler = Scheduler(order, deps, jobs, one, succeeded)
            with self._signals():
                results = self.scheduler.run()
            code, rows = self._summary(order, results, label)
            for m in order:
                r = results[m.path]
                if isinstance(r, Skipped):
                    bus.emit("family.skip", plan=m.label, reason=r.reason)
            from director.ui.family import as_dict, family_table

            family_table(self.console, f"family {command}", rows, self.width)
            bus.emit("family.end", members=[as_dict(r) for r in rows], exit_code=int(code))
        if self.request.screen.json:
            self._print_result(command, order, results, rows, code)
        for exc in (self.scheduler.errors if self.scheduler else {}).values():
            if not isinstance(exc, (DirectorError, KeyboardInterrupt)):
                raise exc  # a bug in one member: its traceback, once every member has stopped
        return code

    def _print_result(
        self, command: str, order: list[Member], results: dict[Path, Any], rows: list[Any], code: ExitCode
    ) -> None:
        """`--json`: one `director.family-result/1` document, each member's `director.result/1` in it."""
        import json

        from director.commands.run_screen import result_document
        from director.ledger.compose import outputs

        by_label = {m.label: results[m.path] for m in order}
        members = []
        for row in rows:
            r = by_label[row.plan]
            res = getattr(r, "result", None)
            doc = None
            if res is not None:
                realized = outputs(parse(Path(row.plan))) if command == "apply" else {}
                doc = result_document(command, Path(row.plan), res, ExitCode(r.code), realized)
            members.append({"plan": row.plan, "outcome": row.outcome, "exit_code": row.exit_code,
                            "detail": row.detail, "result": doc})  # fmt: skip
        document = {"schema": "director.family-result/1", "command": command, "exit_code": int(code),
                    "members": members}  # fmt: skip
        sys.stdout.write(json.dumps(document, ensure_ascii=False, indent=2) + "\n")

    def _run_member(
        self, graph: Graph, m: Member, real: Prompter | None, sets: list[str], approve: list[str]
    ) -> Outcome:
        from director.commands.run import run_command
        from director.commands.run_screen import InFamily
        from director.ui.family import gutter_names
        from director.ui.plainconsole import PlainConsole

        limit = None if self.width is None else max(12, self.width // 4)
        gutter = gutter_names([self.names[x.label] for x in graph.members], limit)
        stream = self.screen.member(gutter[self.names[m.label]], max(len(g) for g in gutter.values()))
        console: Any = PlainConsole(stream)  # type: ignore[arg-type]
        asker = _Asker(self, real, m.label, self.names[m.label]) if real is not None else None
        seat = InFamily(
            label=m.label,
            console=console,
            events=self._event if self._sink is not None else None,
            prompter=asker,
            interrupts=self._interrupts,
        )
        request = dataclasses.replace(
            self.request,
            step=dataclasses.replace(self.request.step, sets=tuple(sets)),
            approval=dataclasses.replace(self.request.approval, approve=tuple(approve)),
            screen=dataclasses.replace(self.request.screen, events=None, json=False),
        )
        started = time.monotonic()
        error: str | None = None
        try:
            provided = self._provided(graph, m)  # a teardown's §0 reads them too (consumers go first)
            code = run_command(request, locate(Path(m.label), request), provided=provided or None,
                               family=seat)  # fmt: skip
        except DirectorError as exc:
            code, error = ExitCode(exc.exit_code), str(exc)
            console.print(f"error: {exc}", markup=False, highlight=False)
        except KeyboardInterrupt:
            code, error = ExitCode.INTERRUPTED, "interrupted"
        finally:
            stream.close()
        waited = asker.waited_s if asker is not None else 0.0
        return Outcome(code, seat.result, error, time.monotonic() - started, waited)

    def _summary(
        self, order: list[Member], results: dict[Path, Any], label: dict[Path, str]
    ) -> tuple[ExitCode, list[Any]]:
        from director.run.family import Skipped
        from director.ui.family import Row

        rows: list[Row] = []
        codes: list[int] = []
        started = self.scheduler.started_at if self.scheduler else {}
        ran = sorted((m for m in order if m.path in started), key=lambda m: started[m.path])
        for m in [*ran, *(m for m in order if m.path not in started)]:
            r = results[m.path]
            name = self.names.get(label[m.path], label[m.path])
            if isinstance(r, Skipped):
                rows.append(Row(label[m.path], "skipped", None, None, r.reason, name=name))
                continue
            codes.append(int(r.code))
            res = r.result
            outcome = _outcome(self.mode, r)
            detail = r.error or (res.message if res is not None and res.message else "")
            own = max(0.0, r.duration_s - r.waited_s)  # a human's wait is not the member's time
            rows.append(Row(label[m.path], outcome, int(r.code), own, detail, r.waited_s, name))
        code = most_severe(codes)
        if code == ExitCode.OK and any(isinstance(results[m.path], Skipped) for m in order):
            code = ExitCode.INTERRUPTED  # nothing failed, yet members did not run: an interruption
        return code, rows


def _where(order: list[Member]) -> str:
    """` in DIR` when every member is in one directory other than this one."""
    import os

    dirs = {os.path.dirname(os.path.normpath(m.label)) for m in order}
    return f" in {next(iter(dirs))}/" if len(dirs) == 1 and "" not in dirs else ""


def _outcome(mode: str, o: Outcome) -> str:
    """The member's outcome in a word or two: an interrupted member says so; an exit 10 is unconfirmed
    (completed, but a check after an act was inconclusive), never `completed`."""
    if o.code == ExitCode.INTERRUPTED:
        return "interrupted"
    if o.error is not None and o.result is None:
        return "error"
    if mode == "run" and o.code == ExitCode.UNCONFIRMED:
        return "unconfirmed"
    res = o.result
    if mode == "preview":
        return "changes pending" if res is not None and res.changes else "no changes"
    if mode == "check":
        return "drift" if res is not None and res.drift else "in sync"
    return res.outcome if res is not None else "error"

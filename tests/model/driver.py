"""One generated plan, one operator sequence, the model of the world, every promise checked after every step.

`run_sequence(spec, actions, root)` creates the sandbox (plan, state dir, workdir, act log, an ssh key), runs
each action through the real CLI, updates the model from what the world says, checks the invariants, and
removes everything it started. A broken promise raises `Violation` naming it, the step and what was seen.

The model (the oracle) holds what only the test can know: which inputs each run must have resolved, which
approvals exist and whether they were spent, which acts were interrupted and what they left running, which
sections Director has verified since they last changed, what the plan's bytes outside Live State must be.
What exists is read from the world each time, never remembered and never taken from Director.
"""

from __future__ import annotations

import json
import secrets
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from director.errors import ExitCode
from tests.model import invariants as inv
from tests.model import ledger
from tests.model.actions import (
    Action,
    Apply,
    Approve,
    Break,
    Check,
    Edit,
    GoThenCtrlC,
    Heal,
    KillAt,
    Teardown,
    fold,
)
from tests.model.operator import ActLine, Kill, Operator, Outcome
from tests.model.plans import ENVS, SETTINGS, PlanSpec, check_title, default_ifs_hex, default_settings, render
from tests.model.world import World, alive, alive_ours, listeners, plan_processes

_IFS_DEFAULT = default_ifs_hex()
_SETTINGS_DEFAULT = default_settings()
# an approval's content: the section, its revision, the inputs, the variables the operator's environment adds
Key = tuple[str, int, tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]


@dataclass
class Receipt:
    section: str
    key: Key
    valid: bool
    spent: bool = False


@dataclass
class Interrupted:
    base: str
    pids: list[int]


@dataclass
class Model:
    """What the test knows that the world does not show."""

    spec: PlanSpec
    signing: bool
    revs: dict[int, int] = field(default_factory=dict)
    outside: tuple[str, str] = ("", "")
    last_knobs: dict[str, str] | None = None  # the latest resolution (any run)
    run_knobs: dict[str, dict[str, str]] = field(default_factory=dict)  # per kind: the latest run's inputs
    run_env: dict[str, dict[str, str]] = field(default_factory=dict)  # per kind: what its environment added
    # what exists by identity (the base's ENV) with the inputs that last acted on it, the latest last: a
    # teardown acts on each with its own inputs (an approval of its pass is for those)
    identities: dict[str, dict[str, str]] = field(default_factory=dict)
    receipts: list[Receipt] = field(default_factory=list)
    interrupted: dict[str, Interrupted] = field(default_factory=dict)
    fresh: set[int] = field(default_factory=set)  # must act before the plan completes (after a teardown)
    acted_since_teardown: bool = False
    settled: dict[int, dict[str, str]] = field(
        default_factory=dict
    )  # verified since changed, with these inputs
    waiting: tuple[str, Key] | None = None  # the gate the last apply/teardown stopped at
    # the inputs of the pass the last teardown started last (`director approve teardown` hashes its gate with
    # them, whatever ran since): the identity whose act started last, else the one it stopped at or reached
    teardown_pass: dict[str, str] | None = None
    release_pending: str = ""  # why the next run must pass `waiting` (a matching receipt since the stop)
    live: dict[str, str] | None = None  # inputs of the last completed apply, while its world stands
    broken: dict[tuple[int, str], dict[str, bytes]] = field(default_factory=dict)  # (section, env) -> to heal
    # (section, env) whose act ended in an apply stopped before it ended: its verify may not have run (a
    # resumed run does not run the act again, and sees what a break since did to its world)
    unverified: set[tuple[int, str]] = field(default_factory=set)
    completed: bool = False  # the last step was an apply that exited 0
    # per setting (`umask`, `nofile`), the identities (ENV) whose act that sets it ended in an apply since their
    # last teardown started: a later act of theirs starts with it, whether that section acts again or is in sync
    set_for: dict[str, set[str]] = field(default_factory=lambda: {s: set() for s in SETTINGS})
    ledger_fresh: bool = True  # no SIGKILL since a run last wrote the ledger (a killed run may not have)

    def key(self, section: str, knobs: dict[str, str], env: dict[str, str] | None = None) -> Key:
        """The content an approval of `section` covers: its act as edited, the inputs, and the environment
        (an approval is for everything the act can read: `ENV` in the operator's environment is exported
        to its processes)."""
        rev = self.revs.get(int(section), 1) if section.isdigit() else 0
        return (section, rev, tuple(sorted(knobs.items())), tuple(sorted((env or {}).items())))

    def next_pass(self, knobs: dict[str, str]) -> dict[str, str]:
        """The inputs of the pass a teardown takes next: the oldest identity left (none recorded: `knobs`,
        the teardown's own)."""
        return dict(next(iter(self.identities.values()), knobs))

    def resolve(self, sets: dict[str, str]) -> dict[str, str]:
        base = self.last_knobs or self.spec.defaults()
        return {k: sets.get(k, base.get(k, v)) for k, v in self.spec.defaults().items()}


@dataclass
class Grant:
    """The approvals an invocation carries itself."""

    flags: set[str] = field(default_factory=set)  # sections approved by --approve / --auto-approve
    go: str | None = None  # the section whose prompt got a typed go


class Sandbox:
    def __init__(self, spec: PlanSpec, root: Path, signing: bool = False) -> None:
        self.spec = spec
        self.root = root
        root.mkdir(parents=True)
        self.plan = root / f"{spec.svc}.md"
        text = render(spec)
        self.plan.write_text(text, encoding="utf-8")
        self.mark = secrets.token_hex(8)
        self.op = Operator(root, self.plan, self.mark)
        self.op.out.mkdir()
        self.op.work.mkdir()
        self.op.make_key(allowed=signing)
        self.world = World(spec, self.op.work, self.mark)
        self.model = Model(
            spec, signing, revs={k: 1 for k in range(1, spec.n + 1)}, outside=ledger.outside(text)
        )
        self.model.fresh = set(range(1, spec.n + 1))
        self.log: list[str] = []
        self.soft: list[inv.Violation] = []  # violations the caller already knows of (`known`), kept going
        self.known: Callable[[inv.Violation], bool] = lambda _v: False
        self.where = ""
        self.before: set[int] = set()  # the listeners alive before the current run
        self.env_added: dict[str, str] = {}  # what the operator's environment adds for the current run

    def ok(self, check: Callable[..., None], *args: Any, **kwargs: Any) -> None:
        """Run one invariant; a violation raises (as its own class: hypothesis tells bugs apart by it), unless
        the caller knows it already, then it is kept and the sequence goes on."""
        try:
            check(*args, **kwargs)
        except inv.Violation as v:
            seen = inv.Violation(v.invariant, f"{self.where}: {v.detail}\nsteps so far: {self.log}")
            if self.known(seen):
                self.soft.append(seen)
                return
            raise inv.violation_class(v.invariant)(v.invariant, seen.detail) from None

    # -- helpers ---------------------------------------------------------------------------------------------

    def env_of(self, knobs: dict[str, str]) -> str:
        return knobs["ENV"]

    def base(self, knobs: dict[str, str]) -> str:
        return str(self.world.base(self.env_of(knobs)))

    def env_at(self, base: str) -> str:
        """The ENV whose resources live under `base` (an act line's `base=`)."""
        return next((e for e in ENVS if str(self.world.base(e)) == base), base)

    def sign_args(self, signed: bool) -> list[str]:
        return ["--sign-with", str(self.op.key)] if signed else []

    def gate_marker(self, section: str, knobs: dict[str, str]) -> bool:
        return section == "teardown" or self.spec.gated(int(section), knobs)

    def status_json(self) -> Any:
        r = self.op.read(["status", str(self.plan), "--json", "--state-dir", str(self.op.state)])
        self.ok(inv.invocation_ends_cleanly, r)
        return json.loads(r.output) if r.rc == 0 else {}

    # -- one step ---------------------------------------------------------------------------------------------

    def step(self, action: Action) -> None:
        handlers: dict[type, Callable[[Any], None]] = {
            Apply: self._apply, Teardown: self._teardown, Approve: self._approve, GoThenCtrlC: self._pty,
            Break: self._break, Heal: self._heal, Edit: self._edit, Check: self._check,
        }  # fmt: skip
        self.model.completed = False
        if isinstance(action, Apply | Teardown | GoThenCtrlC | Check):
            self.world.settle(ENVS)
        handlers[type(action)](action)
        # Director's outputs are compared after Director ran: a break, heal, edit or receipt leaves them be.
        self.check_ledger(compare=isinstance(action, Apply | Teardown | GoThenCtrlC | Check))

    def _kill(self, k: KillAt | None) -> Kill | None:
        if k is None:
            return None
        if k.at in ("observe", "verify"):
            return Kill(k.signal, k.at, str(k.section or 1))
        section = "teardown" if k.section == 0 else str(fold(k.section, self.spec.n))
        if k.at == "mid":
            return Kill(
                k.signal, "mid", self.spec.resource(int(section)) if section.isdigit() else "teardown"
            )
        return Kill(k.signal, k.at, section)

    def _apply(self, a: Apply) -> None:
        m, n = self.model, self.spec.n
        args = ["apply", self.plan.name, *self.op.common()]
        sets: dict[str, str] = {}
        if a.set_env:
            sets["ENV"] = a.set_env
        if a.set_tier and self.spec.tier:
            sets["TIER"] = a.set_tier
        args += [x for k, v in sets.items() for x in ("--set", f"{k.lower()}={v}")]
        grant = Grant()
        if a.approve == "auto":
            args.append("--auto-approve")
            grant.flags = {str(k) for k in range(1, n + 1)}
        elif a.approve == "all":
            args += [x for k in range(1, n + 1) for x in ("--approve", str(k))]
            grant.flags = {str(k) for k in range(1, n + 1)}
        elif a.approve != "none":
            k = fold(int(a.approve), n)
            args += ["--approve", str(k)]
            grant.flags = {str(k)}
        if grant.flags:
            args += self.sign_args(a.signed)
            if m.signing and not a.signed:
                grant.flags = set()
        extra = {"ENV": a.env_conflict} if a.env_conflict else None
        self.env_added = dict(extra or {})
        self.before = {p.pid for p, _ in listeners(self.mark)}
        out = self.op.run(args, extra, self._kill(a.kill))
        how = f"--set {sets}" if sets else "the previous answers"
        self.after_run(
            "apply", out, sets, grant, how + (f", ENV={a.env_conflict} in the environment" if extra else "")
        )

    def _pty(self, a: GoThenCtrlC) -> None:
        knobs = self.model.resolve({})
        args = ["apply", self.plan.name, *self.op.common()]
        args += [x for k, v in knobs.items() for x in ("--set", f"{k.lower()}={v}")]
        args += self.sign_args(True)
        self.before = {p.pid for p, _ in listeners(self.mark)}
        self.env_added = {}
        out = self.op.gate_then_ctrl_c(args, a.when)
        self.after_run("apply", out, knobs, Grant(go=out.gate), "answers given at the terminal")

    def _teardown(self, t: Teardown) -> None:
        args = ["teardown", self.plan.name, *self.op.common()]
        sets = {"ENV": t.set_env} if t.set_env else {}
        args += [x for k, v in sets.items() for x in ("--set", f"{k.lower()}={v}")]
        grant = Grant()
        if t.approve:
            args += ["--approve", "teardown", *self.sign_args(t.signed)]
            if t.signed or not self.model.signing:
                grant.flags = {"teardown"}
        self.before = {p.pid for p, _ in listeners(self.mark)}
        extra = {"ENV": t.env_conflict} if t.env_conflict else None
        self.env_added = dict(extra or {})
        out = self.op.run(args, extra, self._kill(t.kill))
        how = f"--set {sets}" if sets else "the previous answers"
        self.after_run("teardown", out, sets, grant, how + (f", ENV={t.env_conflict} in the environment" if extra else ""))

    def _approve(self, a: Approve) -> None:
        m = self.model
        if a.section == -1:
            section = m.waiting[0] if m.waiting is not None else str(fold(1, self.spec.n))
        else:
            section = "teardown" if a.section == 0 else str(fold(a.section, self.spec.n))
        args = [
            "approve",
            self.plan.name,
            section,
            "--yes",
            "--state-dir",
            str(self.op.state),
            *self.sign_args(a.signed),
        ]
        out = self.op.run(args)
        self.ok(inv.invocation_ends_cleanly, out)
        self.log.append(f"approve §{section} signed={a.signed}: exit {out.rc}")
        kind = "teardown" if section == "teardown" else "apply"
        if out.rc != 0 or kind not in m.run_knobs:
            return
        if m.waiting is not None and m.waiting[0] == section:
            # `approve` hashes the act as the plan has it now, with what the waiting run recorded it can read
            key = m.key(section, dict(m.waiting[1][2]), dict(m.waiting[1][3]))
        elif section == "teardown":
            # the gate of the pass the last teardown reached (an apply since does not change it): its identity's
            # inputs, and the environment that teardown recorded (docs/approvals.md: every variable the act's
            # processes inherit, a knob's name too, even where §0 assigns it)
            key = m.key(section, m.teardown_pass or m.run_knobs[kind], m.run_env.get(kind))
        else:
            key = m.key(section, m.run_knobs[kind], m.run_env.get(kind))
        r = Receipt(section, key, valid=a.signed or not m.signing)
        m.receipts.append(r)
        if m.waiting is not None and r.valid and m.waiting == (section, r.key):
            m.release_pending = f"`director approve` recorded a receipt for §{section} as it waits"

    def _break(self, b: Break) -> None:
        m = self.model
        k = fold(b.section, self.spec.n)
        env = self.env_of(m.resolve({}))
        saved = self.world.break_(k, env)
        self.log.append(f"break §{k} ({env}): {'done' if saved else 'nothing there'}")
        if saved is not None:
            m.broken[(k, env)] = saved
            m.settled.pop(k, None)
            m.release_pending = ""

    def _heal(self, h: Heal) -> None:
        m = self.model
        k = fold(h.section, self.spec.n)
        env = self.env_of(m.resolve({}))
        saved = m.broken.pop((k, env), None)
        if saved is None:
            self.log.append(f"heal §{k}: nothing broken")
            return
        self.world.heal(k, env, saved, self.op.env)
        self.log.append(f"heal §{k}")
        m.release_pending = ""

    def _edit(self, e: Edit) -> None:
        m = self.model
        k = fold(e.section, self.spec.n)
        text = self.plan.read_text(encoding="utf-8")
        old, new = self.spec.rev_line(k, m.revs[k]), self.spec.rev_line(k, m.revs[k] + 1)
        assert text.count(old) == 1, old
        text = text.replace(old, new)
        self.plan.write_text(text, encoding="utf-8")
        m.revs[k] += 1
        m.outside = ledger.outside(text)
        m.settled.pop(k, None)
        m.live = None
        m.release_pending = ""
        self.log.append(f"edit §{k} → rev {m.revs[k]}")

    def _check(self, _c: Check) -> None:
        m = self.model
        out = self.op.run(["check", self.plan.name, *self.op.common()])
        self.ok(inv.invocation_ends_cleanly, out)
        self.log.append(f"check: exit {out.rc}")
        # `check` resolves the inputs as a run does (the last resolution, a teardown's `--set` too); the model
        # knows the world's verdict when they name the live stack: otherwise it holds `check` to acting on
        # nothing only (an input that changed is drift whatever exists)
        if m.live is not None and m.resolve({}) == m.live:
            env = self.env_of(m.live)
            # in sync only on evidence: a check no run can confirm is drift whatever the world holds
            holds = {k: self.world.resource(k, env).holds and self.spec.section(k).confirmable
                     for k in range(1, self.spec.n + 1)}  # fmt: skip
            self.ok(inv.check_agrees_with_world, out.rc, holds, out)
        else:
            self.ok(inv.check_acts_on_nothing, out)

    # -- what a run did ----------------------------------------------------------------------------------------

    def after_run(self, kind: str, out: Outcome, sets: dict[str, str], grant: Grant, how: str) -> None:
        m = self.model
        self.log.append(
            f"{' '.join(out.argv[3:])}: exit {out.rc}" + (f" ({out.killed} sent)" if out.killed else "")
        )
        self.ok(inv.invocation_ends_cleanly, out)
        self.ok(inv.no_block_outlives_director, out)
        stopped_at = m.waiting
        pending, m.release_pending, m.waiting = m.release_pending, "", None
        if out.rc in (64, 65):
            self.ok(inv.refused_before_anything_runs, out)
            return
        m.ledger_fresh = out.rc is not None
        knobs = m.resolve(sets)
        m.last_knobs = dict(knobs)
        m.run_knobs[kind] = dict(knobs)
        m.run_env[kind] = dict(self.env_added)
        if kind == "apply" and m.live is not None and m.live != knobs:
            m.live = None
        base = self.base(knobs)
        stopped = out.rc not in (0, 4) and (out.rc is None or out.rc == 130 or out.killed is not None)
        # broken since its act ended in a stopped apply: this run, resumed, need not look at it again
        shaky = {k for k, e in m.unverified if (k, e) in m.broken and e == self.env_of(knobs)}
        to_check: list[tuple[str, list[int]]] = []
        open_acts: dict[str, ActLine] = {}
        if kind == "teardown":
            m.teardown_pass = m.next_pass(knobs)
        for line in out.acts:
            if line.what == "end":
                open_acts.pop(line.section, None)
                for setting, envs in m.set_for.items():
                    if kind == "apply" and line.section == str(self.spec.sets(setting)):
                        envs.add(self.env_at(line.base))
                if kind == "apply" and line.section.isdigit():
                    # made anew by its act: what a break took is not missing any more (a heal would add a second)
                    ended = (int(line.section), self.env_at(line.base))
                    m.broken.pop(ended, None)
                    (m.unverified.add if stopped else m.unverified.discard)(ended)
                continue
            open_acts[line.section] = line
            s = line.section
            # a teardown acts on each identity with the inputs that made it (an apply, on today's inputs)
            kn = knobs if kind == "apply" else m.identities.get(self.env_at(line.base), knobs)
            if kind == "teardown":
                m.teardown_pass = dict(kn)
                for envs in m.set_for.values():
                    envs.discard(self.env_at(line.base))
            if kind == "apply":
                m.identities.pop(self.env_at(line.base), None)
                m.identities[self.env_at(line.base)] = dict(knobs)
            m.live = None
            m.acted_since_teardown = True
            if kind == "apply":
                self.ok(inv.set_wins_or_refused, line, base, how)
                k = int(s)
                j = self.spec.ifs_section()
                self.ok(inv.act_sees_plain_bash_session, line, self.spec.probe_var(k))
                if j is None or k <= j:
                    self.ok(inv.act_sees_plain_bash_ifs, line, _IFS_DEFAULT)
                for setting, value in SETTINGS.items():
                    u = self.spec.sets(setting)
                    if u is None or k <= u:
                        self.ok(inv.act_sees_plain_bash_setting, line, setting, _SETTINGS_DEFAULT[setting],
                                "no act before it sets one")  # fmt: skip
                    elif self.env_at(line.base) in m.set_for[setting]:
                        self.ok(inv.act_sees_plain_bash_setting, line, setting, value, f"§{u}'s act set it")
                if m.settled.get(k) == knobs:
                    self.ok(inv.settled_section_not_reapplied, s, out.output)
                m.settled.pop(k, None)
                m.fresh.discard(k)
            else:
                m.settled.clear()
            if self.gate_marker(s, kn):
                self.ok(inv.gated_act_had_approval, s, self._approval(s, kn, grant), f"{how}; grant {grant}")
            earlier = m.interrupted.pop(s, None)
            if earlier is not None and earlier.base == line.base:
                to_check.append((s, earlier.pids))
        for s, pids in to_check:
            self.ok(inv.interrupted_attempt_processes_stopped, s, [p for p in pids if alive_ours(p, self.mark)])
        for s, line in open_acts.items():
            # what the interrupted attempt left: the section's listeners that were not there before the run
            pids = []
            if s.isdigit() and self.spec.section(int(s)).kind == "server":
                pids = [p for p in self.world.servers(int(s), self.env_of(knobs)) if p not in self.before]
            m.interrupted[s] = Interrupted(line.base, pids)
        if stopped:
            return
        m.unverified.clear()  # the run ended: each section it reached was looked at again, or acted anew
        if kind == "apply":
            self._apply_ended(out, knobs, grant, stopped_at, pending, shaky)
        else:
            self._teardown_ended(out, knobs, grant, stopped_at, pending)

    def _approval(self, section: str, knobs: dict[str, str], grant: Grant) -> str | None:
        """How this act was approved (None: it was not), spending a receipt if that is what approved it."""
        m = self.model
        if section in grant.flags:
            return "flag"
        if grant.go == section:
            return "typed go"
        key = m.key(section, knobs, self.env_added)
        for r in m.receipts:
            if r.section == section and r.key == key and r.valid and not r.spent:
                r.spent = True
                return "receipt"
        return None

    def _waiting_on(self) -> str | None:
        st = self.status_json()
        run = st.get("last_run") or {}
        w = run.get("waiting_on")
        return str(w) if w is not None else None

    def _apply_ended(self, out: Outcome, knobs: dict[str, str], grant: Grant,
                     stopped_at: tuple[str, Key] | None, pending: str, shaky: set[int]) -> None:  # fmt: skip
        """`shaky`: sections broken since their act ended in a stopped apply. A resumed run does not run a
        finished act again (promise 1): it may pass them as finished (exit 0, the break unseen: still to heal),
        or verify them in the broken world (failed, exit 3; or unconfirmed, exit 10). The next apply looks."""
        m, n = self.model, self.spec.n
        # a completed apply confirms every check, or says which it could not (a check that hides its trace
        # and exits 0 either way: promise 11)
        done = 0 if self.spec.all_confirmable else int(ExitCode.UNCONFIRMED)
        if out.rc == 0 and done:
            self.ok(inv.unconfirmable_check_never_confirmed, "apply", out)
        if out.rc == done:
            self.ok(inv.no_success_memory_across_teardown, m.fresh)
            self.ok(
                inv.interrupted_act_runs_again,
                [s for s, i in m.interrupted.items() if s.isdigit() and i.base == self.base(knobs)],
                out.output,
            )
            for k in range(1, n + 1):
                if k not in shaky and self.spec.section(k).confirmable:
                    m.settled[k] = dict(knobs)
                if self.spec.section(k).kind == "server" and k not in shaky:
                    r = self.world.resource(k, self.env_of(knobs))
                    self.ok(
                        inv.one_server_per_identity,
                        k,
                        sorted(self.world.servers(k, self.env_of(knobs))),
                        r.pid,
                    )
            m.broken = {key: v for key, v in m.broken.items() if key[1] != self.env_of(knobs) or key[0] in shaky}
            m.live = dict(knobs)
            m.completed = True
            return
        if out.rc == 4:
            gate = self._waiting_on()
            if gate is None:
                self.ok(inv.a_sound_plan_applies, out, "exit 4 but `status --json` names no gate it waits on")
                return
            if gate in grant.flags or grant.go == gate:
                self.ok(
                    inv.approval_releases_the_gate,
                    gate,
                    f"this run approves it ({'flag' if gate in grant.flags else 'go'})",
                )
            if (
                stopped_at is not None
                and stopped_at[0] == gate
                and pending
                and stopped_at[1] == m.key(gate, knobs, self.env_added)
            ):
                self.ok(inv.approval_releases_the_gate, gate, pending)
            m.waiting = (gate, m.key(gate, knobs, self.env_added))
            if gate.isdigit():
                for k in range(1, int(gate)):
                    if str(k) not in m.interrupted and k not in shaky and self.spec.section(k).confirmable:
                        m.settled[k] = dict(knobs)
            return
        if out.rc in (3, 10) and shaky:
            self.log.append(f"§{sorted(shaky)} broken after its act, before its verify: exit {out.rc}")
            return
        self.ok(inv.a_sound_plan_applies, out, "an apply that nothing interrupted did not complete")

    def _teardown_ended(self, out: Outcome, knobs: dict[str, str], grant: Grant,
                        stopped_at: tuple[str, Key] | None, pending: str) -> None:  # fmt: skip
        m = self.model
        done = 0 if self.spec.teardown_check == "status" else int(ExitCode.UNCONFIRMED)
        if out.rc == 0 and done:
            self.ok(inv.unconfirmable_check_never_confirmed, "teardown", out)
        if out.rc == done:
            self.ok(inv.interrupted_act_runs_again, [s for s in m.interrupted if s == "teardown"], out.output)
            left = self.world.leftovers()
            left += [f"pid {p.pid} ({p.comm}) carries the plan's mark" for p in plan_processes(self.mark, self.plan.name)
                     if p.pid not in {q.pid for q, _ in listeners(self.mark)}]  # fmt: skip
            self.ok(inv.teardown_removes_everything, left, out)
            m.fresh = set(range(1, self.spec.n + 1))
            m.identities.clear()
            m.interrupted.clear()
            m.settled.clear()
            m.acted_since_teardown = False
            m.live = None
            m.broken.clear()
            return
        if out.rc == 4:
            gate = self._waiting_on() or "teardown"
            for line in out.acts:  # the passes that completed: those identities are gone
                if line.what == "end" and line.section == "teardown":
                    m.identities.pop(self.env_at(line.base), None)
            # it waits at the pass of the oldest identity left (with none recorded: today's inputs)
            knobs = m.teardown_pass = m.next_pass(knobs)
            if gate in grant.flags:
                self.ok(inv.approval_releases_the_gate, gate, "this run approves it (--approve teardown)")
            # (the receipt is for the content the waiting run recorded: a run whose own differs is asked again)
            if stopped_at is not None and stopped_at == (gate, m.key(gate, knobs, self.env_added)) and pending:
                self.ok(inv.approval_releases_the_gate, gate, pending)
            m.waiting = (gate, m.key(gate, knobs, self.env_added))
            return
        self.ok(inv.teardown_completes, out)

    # -- after every step: the ledger --------------------------------------------------------------------------

    def check_ledger(self, compare: bool = True) -> None:
        m = self.model
        text = self.plan.read_text(encoding="utf-8")
        self.ok(inv.plan_bytes_outside_live_state_unchanged, ledger.outside(text), m.outside)
        ls = ledger.parse(text)
        if compare:
            self._compare(ls)
        if m.ledger_fresh:
            self.ok(inv.nothing_recorded_when_nothing_exists, ls, m.acted_since_teardown)
        if m.live is not None:
            env = self.env_of(m.live)
            keys = {k: self.spec.realized_key(k) for k in range(1, self.spec.n + 1)}
            world = {k: self.world.resource(k, env) for k in keys}
            rows = {k: check_title(self.spec, k) for k in keys}
            broken = [k for k, e in m.broken if e == env]
            unconfirmable = [k for k in keys if not self.spec.section(k).confirmable]
            self.ok(inv.live_state_equals_world, ls, f"{self.spec.svc}-{env}", keys, world, broken, rows,
                    completed=m.completed, unconfirmable=unconfirmable)  # fmt: skip

    def _compare(self, ls: ledger.LiveState) -> None:
        o = self.op.read(["output", str(self.plan), "--json"])
        before = {p.pid for p in plan_processes(self.mark, self.plan.name)}
        status = self.status_json()
        self.ok(inv.invocation_ends_cleanly, o)
        # the document (`director.output/1`) carries the values and the ledger's own doubts about them
        output = json.loads(o.output).get("values") if o.rc == 0 else None
        self.ok(inv.live_state_agrees_with_output_and_status, ls, output, status)
        if status:
            after = {p.pid for p in plan_processes(self.mark, self.plan.name)}
            gone = {int(p["pid"]) for p in status.get("processes", []) if not alive(int(p["pid"]))}
            self.ok(inv.status_lists_the_plans_processes, status, before, after, gone)

    def close(self) -> None:
        self.op.cleanup()


def run_sequence(
    spec: PlanSpec, actions: Sequence[Action], root: Path, signing: bool = False, *,
    on_step: Callable[[int, Action], None] | None = None, known: Callable[[inv.Violation], bool] | None = None,
    keep: Path | None = None,
) -> list[inv.Violation]:  # fmt: skip
    """Run `actions` against a fresh sandbox for `spec` under `root`, every invariant after every step: the
    first violation raises, except those `known` says are known (returned, the sequence carried on). With
    `keep`, a violation first copies the sandbox there as it is (its plan, journal and world), for a post-mortem
    of a finding its replay may not show again."""
    sb = Sandbox(spec, root, signing)
    if known is not None:
        sb.known = known
    try:
        for i, a in enumerate(actions):
            if on_step is not None:
                on_step(i, a)
            sb.where = f"step {i + 1} ({a})"
            sb.step(a)
        return sb.soft
    except inv.Violation:
        if keep is not None:
            shutil.copytree(root, keep, symlinks=True, dirs_exist_ok=True)
        raise
    finally:
        sb.close()

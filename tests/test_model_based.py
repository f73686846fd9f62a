"""The model-based test of Director as a whole (issue 32): generated plans, generated operator sequences through
the real CLI, a model of the world as the oracle, every promise checked after every step (tests/model/).

Three parts:
- the generator's own test: every generated plan runs cleanly under plain bash in document order (acts, then
  verifies, then the teardown), each act sees a session without its own verify's assignments, nothing is left;
- the search, bounded for the suite (derandomized: the same examples on every run; `DIRECTOR_MODEL_EXAMPLES`
  raises the count; `bench/soak_model.py` runs it at length and shrinks what it finds);
- each bug the search found, kept as a fixed plan and sequence with a comment naming its class.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from director.plan.lint import lint
from director.plan.parse import parse
from tests import plainbash
from tests.model import invariants as inv
from tests.model import world
from tests.model.actions import (
    Action,
    Apply,
    Approve,
    Break,
    Check,
    GoThenCtrlC,
    Heal,
    KillAt,
    Teardown,
    features,
    sequences,
)
from tests.model.driver import run_sequence
from tests.model.invariants import violation_class
from tests.model.operator import read_acts
from tests.model.plans import (
    SETTINGS,
    PlanSpec,
    SectionSpec,
    default_ifs_hex,
    default_settings,
    plan_specs,
    render,
)

pytestmark = pytest.mark.slow

EXAMPLES = int(os.environ.get("DIRECTOR_MODEL_EXAMPLES", "8"))
_NO_HEALTH = list(HealthCheck)


# -- the generator ----------------------------------------------------------------------------------------


@settings(max_examples=8, derandomize=True, deadline=None, database=None, suppress_health_check=_NO_HEALTH)
@given(spec=plan_specs())
def test_every_generated_plan_runs_cleanly_under_plain_bash(
    spec: PlanSpec, tmp_path_factory: pytest.TempPathFactory
) -> None:
    tmp = tmp_path_factory.mktemp("plainbash")
    plan = tmp / "plan.md"
    text = render(spec)
    plan.write_text(text, encoding="utf-8")
    work, out = tmp / "work", tmp / "out"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("ENV", "TIER", "SVC", "BASE", "OUT")}
    env["MODEL_OUT"] = str(out)
    try:
        run = plainbash.run_plan(plan, work, tmp / "scratch", observe_first=False, teardown=True, env=env)
        failed = run.failures("apply", "teardown")
        assert not failed, run.report(failed)
        acts = read_acts(out / "acts")
        starts = [a for a in acts if a.what == "start" and a.section != "teardown"]
        assert [a.section for a in starts] == [str(k) for k in range(1, spec.n + 1)]
        ifs_from = spec.ifs_section()
        for a in starts:
            assert a.seen == 0, a  # under plain bash an act never sees its own verify's variable
            if ifs_from is None or int(a.section) <= ifs_from:
                assert a.ifs == default_ifs_hex(), a
            for setting, value in SETTINGS.items():
                since = spec.sets(setting)
                seen = getattr(a, setting)
                assert seen == (default_settings()[setting] if since is None or int(a.section) <= since else value), a
        assert not any(work.glob(f"{spec.svc}-*")), "the teardown left resources"
        assert plainbash.wait_no_processes(tmp) == [], "the teardown left processes"
    finally:
        plainbash.kill_processes_under(tmp)
    # The plan lints without errors (a plan whose §0 never assigns its knob's variable is the one exception:
    # issue 32 makes that an error, so a run refuses it before anything runs)
    errors = [f for f in lint(parse(text, path="plan.md")) if f.severity == "error"]
    assert spec.knobs == "unassigned" or not errors, errors


def test_an_edit_changes_exactly_one_line_of_the_act() -> None:
    spec = PlanSpec(sections=(SectionSpec(), SectionSpec(kind="server"), SectionSpec(kind="list")))
    before, after = render(spec), render(spec, {2: 2})
    changed = [(a, b) for a, b in zip(before.splitlines(), after.splitlines(), strict=True) if a != b]
    assert changed == [(spec.rev_line(2, 1), spec.rev_line(2, 2))]
    assert re.search(r"^## Live State$", before, re.M)


def test_a_sequences_features_name_each_choice_that_is_not_the_simplest() -> None:
    """`features` (what bench/soak_model.py calls a finding's culprits) takes every action the strategy draws."""
    spec = PlanSpec(sections=(SectionSpec(verify="message", hides_trace=True),), teardown_check="hidden-message")
    acts: list[Action] = [GoThenCtrlC(), Check(), Apply(env_conflict="dev"), Teardown(env_conflict="prod")]
    f = features(spec, acts, signing=False)
    assert {"GoThenCtrlC", "Check", "Teardown", "env_conflict", "hides_trace", "verify:message"} <= f
    assert "teardown_check:hidden-message" in f
    assert features(PlanSpec(), [Apply()], signing=False) == frozenset()


def test_the_harness_never_signals_a_pid_another_process_took() -> None:
    """The harness signals a server by the pid in its file, and ends a sandbox by the pids it listed: by then
    the pid may be another process's (pid_max is 32,768 here). Only a process carrying the sandbox's mark gets
    the signal."""
    other = subprocess.Popen(["sleep", "30"], env={"PATH": os.environ["PATH"], "MODEL_TRIAL": "another"})
    mine = subprocess.Popen(["sleep", "30"], env={"PATH": os.environ["PATH"], "MODEL_TRIAL": "mine"})
    for p in (other, mine):  # until it has exec'd, a child's environment is still this process's
        while Path(f"/proc/{p.pid}/cmdline").read_bytes().split(b"\0")[0] != b"sleep":
            time.sleep(0.01)
    try:
        assert not world.signal_if(other.pid, world.ours("mine"), signal.SIGKILL)
        assert other.poll() is None and world.alive_ours(other.pid, "another")
        assert not world.alive_ours(other.pid, "mine")
        assert world.signal_if(mine.pid, world.ours("mine"), signal.SIGKILL)
        assert mine.wait(timeout=30) == -signal.SIGKILL
        assert not world.signal_if(mine.pid, world.ours("mine"), signal.SIGKILL)  # gone: nothing is sent
    finally:
        for p in (other, mine):
            p.kill()
            p.wait()


def test_status_may_list_a_process_that_ended_while_it_read_but_never_a_live_stranger() -> None:
    """The comparison of `status --json` with the model's two scans: a listed pid that neither scan saw is
    allowed only when it was gone by the second (it started and ended while `status` read /proc)."""
    status = {"processes": [{"pid": 10, "command": "bash", "section": "1"}, {"pid": 11, "command": "sleep"}]}
    inv.status_lists_the_plans_processes(status, {10}, {10}, gone={11})
    inv.status_lists_the_plans_processes(status, {10, 11}, {10}, gone=set())  # ended after the first scan
    with pytest.raises(inv.Violation, match=r"11 \(sleep"):
        inv.status_lists_the_plans_processes(status, {10}, {10}, gone=set())  # alive, never marked
    with pytest.raises(inv.Violation):
        inv.status_lists_the_plans_processes(status, {10, 12}, {10, 12}, gone={11})  # 12 left out


# -- the search ---------------------------------------------------------------------------------------------


@settings(
    max_examples=EXAMPLES, derandomize=True, deadline=None, database=None, suppress_health_check=_NO_HEALTH,
    phases=[Phase.explicit, Phase.generate],  # shrinking is bench/soak_model.py's (minutes per finding)
)  # fmt: skip
@given(spec=plan_specs(), actions=sequences(6), signing=st.booleans())
def test_director_keeps_its_promises(
    spec: PlanSpec, actions: list[Action], signing: bool, tmp_path_factory: pytest.TempPathFactory
) -> None:
    run_sequence(spec, actions, tmp_path_factory.mktemp("model") / "sandbox", signing)


# -- what the search found -------------------------------------------------------------------------------------

FILE = SectionSpec(kind="file")
GATED_FILE = SectionSpec(kind="file", gate="red")
REGRESSIONS: list[tuple[str, PlanSpec, list[Action], bool]] = [
    # 1: a resumed run skips an act interrupted after a teardown (its success before the teardown is remembered)
    (
        "1-resume-after-teardown-skips-the-interrupted-act",
        PlanSpec(sections=(FILE, SectionSpec(kind="server"))),
        [Apply(), Teardown(), Apply(kill=KillAt("SIGKILL", "mid", 2)), Apply()],
        False,
    ),
    # 2: a `go` typed at the prompt survives Ctrl-C and releases the gate on the next run
    (
        "2-typed-go-survives-ctrl-c",
        PlanSpec(sections=(GATED_FILE,)),
        [GoThenCtrlC("act-start"), Apply()],
        False,
    ),
    # 3: `--set` loses to the operator's environment when §0 does not assign the knob's variable
    (
        "3-set-loses-to-the-environment",
        PlanSpec(knobs="unassigned", sections=(FILE,)),
        [Apply(set_env="prod", env_conflict="dev")],
        False,
    ),
    # 4: `director approve` never matches when the verify assigns a variable the act reads
    (
        "4-approve-never-matches",
        PlanSpec(sections=(SectionSpec(kind="server", gate="red", assigns=True, shares_var=True),)),
        [Apply(), Approve(1), Apply()],
        False,
    ),
    # 5: a changed input leaves a live resource the teardown cannot reach
    (
        "5-changed-input-strands-a-resource",
        PlanSpec(sections=(FILE,)),
        [Apply(), Apply(set_env="stg"), Teardown()],
        False,
    ),
    # 6a: a check runs in a session plain bash never has: a `readonly` in a verify fails its second run
    (
        "6a-readonly-verify-fails-its-second-run",
        PlanSpec(sections=(SectionSpec(kind="file", readonly=True),)),
        [Apply()],
        False,
    ),
    # 6b: a check runs in a session plain bash never has: the observation's assignments reach the act
    (
        "6b-observation-reaches-the-act",
        PlanSpec(sections=(SectionSpec(kind="file", assigns=True),)),
        [Apply()],
        False,
    ),
    # 6c: a check runs in a session plain bash never has: a verify assigning a secret-looking variable is
    # refused on resume
    (
        "6c-secret-assigning-verify-refused-on-resume",
        PlanSpec(sections=(SectionSpec(kind="token", secret_var=True), GATED_FILE)),
        [Apply(), Apply(approve="auto")],
        False,
    ),
    # 6d: a check runs in a session plain bash never has: a resumed run's earlier check sees a later IFS
    (
        "6d-resumed-check-sees-a-later-ifs",
        PlanSpec(sections=(FILE, SectionSpec(kind="list", assigns=True), GATED_FILE)),
        [Apply(), Apply(approve="auto")],
        False,
    ),
    # Found beside them (the operator's environment has the knob's variable, although §0 assigns it):
    # N1: the Live State's `${SVC}-${ENV}` cell is never realized (NAME stays a template after a completed apply)
    (
        "N1-environment-knob-variable-leaves-the-name-unrealized",
        PlanSpec(sections=(FILE,)),
        [Apply(env_conflict="dev")],
        False,
    ),
    # N2: a re-apply runs a settled section's act again although nothing changed
    (
        "N2-environment-knob-variable-reruns-a-settled-act",
        PlanSpec(sections=(FILE,)),
        [Apply(), Apply(env_conflict="dev")],
        False,
    ),
    # The model's own mistakes, kept so they stay fixed:
    # M3: `check` resolves the inputs as a run does (here the teardown's `--set env=prod`, stopped at its gate):
    # the model judged it against the live dev stack (the soak's second finding)
    (
        "M3-check-after-a-teardown-of-other-inputs",
        PlanSpec(sections=(FILE,)),
        [Apply(), Teardown(approve=False, set_env="prod"), Check()],
        False,
    ),
    # M2: a server broken behind Director's back was dead but not yet reaped (init reaps on a timer here) when
    # the next apply's act asked `kill -0`, so it took the zombie for a live server (the soak's first finding)
    # (timing: with the old break it failed 2 runs in 4 on this VM, whose init reaps every 2 s)
    (
        "M2-a-broken-server-is-gone-before-the-next-apply",
        PlanSpec(sections=(SectionSpec(kind="server"), FILE)),
        [Apply(), Break(1), Apply()],
        False,
    ),
    # K1: an interrupted act ran again without the observation before it, so a check that exits 0 whatever it
    # finds had no before to learn from and the apply ended unconfirmed (exit 10); found by bench/soak_model.py
    # (seed 35). Now the observation runs (deciding nothing) and the verify after the act is contrasted with it
    (
        "K1-interrupted-act-under-a-message-only-check-applies-confirmed",
        PlanSpec(sections=(SectionSpec(kind="file", verify="message"), FILE)),
        [Apply(kill=KillAt("SIGKILL", "act-start", 1)), Apply()],
        False,
    ),
    # M4: `approve` recorded a receipt while the run waited with `ENV` in the operator's environment; the next
    # apply ran without it, so the act would read another environment and Director asked again (an approval
    # covers what the act can read, the environment too): the model keyed receipts by the inputs alone
    (
        "M4-a-receipt-is-for-the-environment-the-waiting-run-had",
        PlanSpec(
            teardown_marker=False,
            sections=(
                SectionSpec(gate="red", shares_var=True),
                SectionSpec(kind="token", assigns=True, shares_var=True),
                SectionSpec(assigns=True, shares_var=True),
            ),
        ),
        [
            Apply(approve="auto"),
            Check(),
            Teardown(),
            Apply(env_conflict="dev", signed=False),
            Approve(section=4),
            Apply(),
        ],
        True,
    ),
    # M5: a teardown acts on each identity with the inputs that made it: the receipt `approve` recorded for the
    # dev pass approved that pass in a later teardown whose own inputs were prod (the model read today's)
    (
        "M5-a-teardown-pass-is-approved-for-its-own-identity",
        PlanSpec(
            tier=True,
            acceptance=True,
            teardown_marker=False,
            sections=(SectionSpec(assigns=True), SectionSpec(), SectionSpec(kind="token")),
        ),
        [
            Apply(approve="auto"),
            Teardown(approve=False),
            Approve(),
            Apply(set_env="prod", signed=False),
            Teardown(approve=False),
        ],
        True,
    ),
    # M6: a teardown SIGKILLed in its act had killed the server; the apply right after found its pid still there
    # (a zombie: this VM's init reaps on a 2 s timer), which the plan's `kill -0` guard takes for a live server,
    # as plain bash would. The operator's next command comes later: the model now waits until init reaped it
    (
        "M6-a-server-killed-by-an-interrupted-teardown-is-reaped-before-the-next-command",
        PlanSpec(tier=True, acceptance=True, sections=(SectionSpec(kind="server", gate="red", verify="function"),)),
        [Apply(approve="auto"), Teardown(kill=KillAt("SIGKILL", "act-start", 0)), Apply(approve="auto")],
        False,
    ),
    # M7: a list broken twice (its second line dropped, then again) was healed with what the second break
    # took, the list still broken, while the model took it for whole (Live State "live", the world not):
    # a break of a list that does not hold has nothing to take (bench/soak_model.py, seed 50, step 1,509)
    (
        "M7-a-list-broken-twice-is-healed-whole",
        PlanSpec(sections=(SectionSpec(kind="list"), FILE, FILE)),
        [Apply(approve="auto", signed=True), Break(section=1), Break(section=1), Heal(section=1)],
        False,
    ),
    # M8: a server broken, then made anew by an apply that stopped at a later gate (exit 4): the model still
    # held it broken, and its heal started a second listener beside Director's (one_server_per_identity).
    # An act that ends makes its resource anew: nothing is left to heal (bench/soak_model.py, seed 51)
    (
        "M8-a-server-made-anew-before-a-gate-is-not-healed-again",
        PlanSpec(sections=(SectionSpec(kind="server"), SectionSpec(kind="server", gate="red"))),
        [Apply(approve="auto"), Break(section=1), Break(section=2), Apply(), Heal(section=1), Apply(approve="2")],
        False,
    ),
    # M9: an apply killed once §1's act had ended (journaled), in its verify; the list broken; the resumed
    # apply did not run the finished act again and could not confirm §1 (exit 10, which the model now
    # accepts); the next apply said `§1 ✓ in sync -- unchanged since its last success; not observable`, exit
    # 0, the list still broken: a success no check confirmed was taken for evidence (bench/soak_model.py,
    # seed 51; tests/test_unconfirmed_success.py)
    (
        "M9-a-success-no-check-confirmed-is-no-evidence",
        PlanSpec(sections=(SectionSpec(kind="list", gate="red", verify="message"), FILE)),
        [Apply(approve="auto", kill=KillAt(signal="SIGKILL", at="verify", section=1)), Break(section=1),
         Apply(approve="auto"), Apply(approve="auto")],
        False,
    ),
    # M10: a teardown with `--set env=stg` stopped at the 💥 gate of its pass over the dev stack (the identity
    # an earlier input realized); an apply for stg; `director approve PLAN teardown`, which hashes the gate the
    # last teardown reached (dev's pass), and the next teardown ran that pass on the receipt. The model held
    # the receipt to stg's inputs (the teardown's own, and the operator's environment) and took the act for
    # unapproved: the apply in between had cleared the gate it remembered (bench/soak_model.py, seed 54)
    (
        "M10-approve-teardown-covers-the-pass-the-last-teardown-reached",
        PlanSpec(sections=(SectionSpec(),)),
        [Apply(approve="auto"), Teardown(approve=False, set_env="stg"), Apply(approve="auto", set_env="stg"),
         Approve(section=0), Teardown(approve=False)],
        False,
    ),
    # U1: a check that turns tracing off quietly (`{ set +x; } 2>/dev/null`) and exits 0 either way: Director
    # read the trace it got (the `set +x` alone) as the whole run, the missing path as a change its act made,
    # and said ✅, exit 0. No run can confirm such a check: exit 10, never ✅, its act runs on every apply, and
    # `check` says drift (tests/test_untraced_checks.py is the same bug on a hand-written plan); fails on f6981dd
    (
        "U1-a-check-that-hides-its-trace-is-never-confirmed",
        PlanSpec(sections=(SectionSpec(kind="file", verify="message", hides_trace=True), FILE)),
        [Apply(), Apply(), Check()],
        False,
    ),
    # U2: a teardown whose check turns tracing off (`set +x`) and prints a line either way (`[ -e … ] && echo
    # there || echo gone`): before the teardown its pass line by position printed, which read as "already
    # gone: nothing to delete"; the act never ran and the server it stops still listened (the teardown then
    # failed on it, exit 3). Now the teardown acts, and ends unconfirmed (exit 10); fails on 9305e18
    (
        "U2-a-teardown-whose-check-hides-its-trace-never-says-already-gone",
        PlanSpec(sections=(SectionSpec(kind="server"),), teardown_check="hidden-message"),
        [Apply(), Teardown(), Apply(), Teardown()],
        False,
    ),
    # M1: `check` on a plan never applied here exits 12 (not created), a documented code the model did not know
    (
        "M1-check-on-a-never-applied-plan",
        PlanSpec(tier=True, acceptance=True, sections=(FILE,)),
        [Check()],
        False,
    ),
    # M11: as M4, for a teardown: the receipt `approve` recorded for the waiting teardown is for the environment
    # that run had; a teardown started with ENV=prod in the operator's environment is asked again (the model
    # had held a teardown's content to its identity's inputs alone, against docs/approvals.md)
    (
        "M11-a-teardown-receipt-is-for-the-environment-the-waiting-run-had",
        PlanSpec(sections=(FILE,)),
        [Apply(approve="auto"), Teardown(approve=False), Approve(section=-1, signed=False),
         Teardown(approve=False, env_conflict="prod"), Teardown(approve=False)],
        False,
    ),
    # S1, S2: a umask or a limit an act sets is session state: a later act starts with it in the run that set it,
    # in a run resumed after a SIGKILL (the journal keeps it), and in a run where that section is in sync
    (
        "S1-an-acts-umask-reaches-later-acts-resumed-and-in-sync",
        PlanSpec(sections=(SectionSpec(kind="token", umask=True), FILE, FILE)),
        [Apply(kill=KillAt("SIGKILL", "act-start", 3)), Apply(), Break(3), Apply()],
        False,
    ),
    (
        "S2-an-acts-ulimit-reaches-later-acts-resumed-and-in-sync",
        PlanSpec(sections=(SectionSpec(kind="server", nofile=True), FILE, FILE)),
        [Apply(kill=KillAt("SIGKILL", "act-start", 3)), Apply(), Break(3), Apply()],
        False,
    ),
]


# Known, not fixed: what the search found that Director does not do yet (strict: an xfail that passes fails,
# so a fix is noticed and the case moves up into REGRESSIONS).
KNOWN: list[tuple[str, str, PlanSpec, list[Action], bool, str]] = []


if KNOWN:  # empty while every finding is fixed (an empty parameter set would be a skip)

    @pytest.mark.parametrize(
        ("spec", "actions", "signing"),
        [
            pytest.param(
                s,
                a,
                g,
                id=name,
                marks=pytest.mark.xfail(strict=True, reason=why, raises=violation_class(broken)),
            )
            for name, broken, s, a, g, why in KNOWN
        ],
    )
    def test_known(spec: PlanSpec, actions: list[Action], signing: bool, tmp_path: Path) -> None:
        run_sequence(spec, actions, tmp_path / "sandbox", signing)


@pytest.mark.parametrize(
    ("spec", "actions", "signing"), [pytest.param(s, a, g, id=name) for name, s, a, g in REGRESSIONS]
)
def test_found(spec: PlanSpec, actions: list[Action], signing: bool, tmp_path: Path) -> None:
    run_sequence(spec, actions, tmp_path / "sandbox", signing)

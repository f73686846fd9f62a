"""Director's promises (DESIGN.md, "What Director promises"), one named check each.

Each raises `Violation(<its name>, what was seen)`; the driver calls them after every step, with what the model
knows and what the world says. None reads a message of Director's to decide: exit codes, the act log, files,
sockets and /proc decide; Director's JSON is compared, never believed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from director.errors import ExitCode
from tests.model.ledger import LiveState
from tests.model.operator import ActLine, Outcome
from tests.model.world import Resource

# the one table of exit codes (COMMON.md): a code Director adds there is documented by being there
DOCUMENTED = frozenset(int(c) for c in ExitCode)


class Violation(AssertionError):
    """A promise broke: `invariant` names it."""

    def __init__(self, invariant: str, detail: str) -> None:
        self.invariant, self.detail = invariant, detail
        super().__init__(f"[{invariant}] {detail}")


_CLASSES: dict[str, type[Violation]] = {}


def violation_class(invariant: str) -> type[Violation]:
    """One subclass per invariant, so that hypothesis keeps the failures of different promises apart."""
    if invariant not in _CLASSES:
        _CLASSES[invariant] = type(f"Broke_{invariant}", (Violation,), {})
    return _CLASSES[invariant]


def _tail(out: Outcome, n: int = 1500) -> str:
    return out.output[-n:]


# -- every invocation -------------------------------------------------------------------------------------


def invocation_ends_cleanly(out: Outcome) -> None:
    """It ends (no timeout), with a documented exit code, without a traceback."""
    if out.timed_out:
        raise Violation("invocation_ends_cleanly", f"{' '.join(out.argv[2:4])} did not end:\n{_tail(out)}")
    if "Traceback (most recent call last)" in out.output:
        raise Violation("invocation_ends_cleanly", f"a traceback:\n{_tail(out, 3000)}")
    if out.rc is not None and out.rc not in DOCUMENTED:
        raise Violation("invocation_ends_cleanly", f"exit {out.rc}, not a documented code:\n{_tail(out)}")


def no_block_outlives_director(out: Outcome) -> None:
    """A SIGKILLed Director takes its running block with it (its pty closes): nothing acts on unseen."""
    if out.left:
        raise Violation("no_block_outlives_director", f"still running 15 s after the SIGKILL: {out.left}")


def plan_bytes_outside_live_state_unchanged(now: tuple[str, str], expected: tuple[str, str]) -> None:
    if now != expected:
        which = "before" if now[0] != expected[0] else "after"
        a, b = (now[0], expected[0]) if which == "before" else (now[1], expected[1])
        i = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
        raise Violation(
            "plan_bytes_outside_live_state_unchanged",
            f"the text {which} Live State changed at char {i}: {a[max(0, i - 80) : i + 80]!r} "
            f"(expected {b[max(0, i - 80) : i + 80]!r})",
        )


# -- the ledger against Director's own outputs and against the world ---------------------------------------


def live_state_agrees_with_output_and_status(ls: LiveState, output: Any, status: Any) -> None:
    """`director output --json` and `director status --json` say what the plan's Live State says."""
    if output != ls.realized():
        raise Violation("live_state_agrees_with_output_and_status",
                        f"`output --json` {output} but Live State realizes {ls.realized()}")  # fmt: skip
    sls = status.get("live_state") or {}
    if sls.get("status") != ls.status:
        raise Violation("live_state_agrees_with_output_and_status",
                        f"`status --json` says status {sls.get('status')!r}, Live State {ls.status!r}")  # fmt: skip
    kv = {r["key"]: r["value"] for r in sls.get("kv", [])}
    if kv != ls.kv:
        raise Violation(
            "live_state_agrees_with_output_and_status", f"`status --json` kv {kv} != Live State {ls.kv}"
        )
    rows = {r["name"]: (r["observed"], r["result"]) for r in sls.get("checks", [])}
    if {k: v[1] for k, v in rows.items()} != {k: v[1] for k, v in ls.rows.items()}:
        raise Violation("live_state_agrees_with_output_and_status",
                        f"`status --json` check results {rows} != Live State {ls.rows}")  # fmt: skip


def status_lists_the_plans_processes(status: Any, before: set[int], after: set[int], gone: set[int]) -> None:
    """`director status --json` lists every live process the plan's blocks started (found here by the step
    marker in /proc/*/environ, scanned just `before` and `after` it), and no other: every process alive in
    both scans, none alive in neither unless it is `gone` (no longer alive once `after` was read). One may
    start or end while `status` reads /proc: after a SIGKILL a block's processes are still ending, and a
    process in the middle of its exit has no environment left to read, so neither scan sees it while
    `status` rightly lists it as a child of a marked process (soak seed 53)."""
    procs = status.get("processes", [])
    listed = {int(p["pid"]) for p in procs}
    if not (before & after) <= listed or not listed - gone <= (before | after):
        seen = ", ".join(f"{p['pid']} ({p.get('command')}, §{p.get('section')})" for p in procs)
        raise Violation("status_lists_the_plans_processes",
                        f"`status --json` lists {seen or 'no process'}; alive with the plan's marker: "
                        f"{sorted(before)} before it, {sorted(after)} after it; gone by then: {sorted(gone)}")  # fmt: skip


def live_state_equals_world(
    ls: LiveState, name: str, keys: Mapping[int, str], world: Mapping[int, Resource], broken: Iterable[int],
    rows: Mapping[int, str], *, completed: bool, unconfirmable: Iterable[int] = (),
) -> None:  # fmt: skip
    """A `live` ledger names what exists: each realized key is the world's value (a server's URL is where
    its live listener answers, a path a file with the right content, a fingerprint the token's); after a
    completed apply every section's check row says ✅, except the `unconfirmable` ones' (a check that hides its
    trace and exits 0 either way), which never do. Sections broken behind Director's back are left out
    (it cannot know until it looks)."""
    if not ls.status.startswith("live"):
        if completed:
            raise Violation("live_state_equals_world", f"the apply completed, Live State says {ls.status!r}")
        return
    if ls.kv.get("NAME") != name:
        raise Violation("live_state_equals_world", f"NAME is {ls.kv.get('NAME')!r}; the inputs name {name!r}")
    skip, unsure = set(broken), set(unconfirmable)
    for k, key in keys.items():
        if k in skip:
            continue
        r = world[k]
        if not r.holds:
            raise Violation("live_state_equals_world", f"Live State is live but §{k}'s resource is not there "
                            f"({key} = {ls.kv.get(key)!r}; the world: {r})")  # fmt: skip
        if ls.kv.get(key) != r.value:
            raise Violation("live_state_equals_world",
                            f"{key} = {ls.kv.get(key)!r} in Live State, the world has {r.value!r} ({r})")  # fmt: skip
        said = ls.rows.get(rows[k], ("", ""))[1]
        if k in unsure:
            if said.startswith("✅"):
                raise Violation("unconfirmable_check_never_confirmed",
                                f"check row {rows[k]!r} says {said!r}: no run can confirm it")  # fmt: skip
        elif completed and not said.startswith("✅"):
            raise Violation("live_state_equals_world",
                            f"the apply completed, check row {rows[k]!r} says {ls.rows.get(rows[k])}")  # fmt: skip


def nothing_recorded_when_nothing_exists(ls: LiveState, acted_since_teardown: bool) -> None:
    """`not-created` / `gone` only while no act ran since the last completed teardown (or ever)."""
    if (ls.status in ("not-created", "gone")) and acted_since_teardown:
        raise Violation("nothing_recorded_when_nothing_exists",
                        f"Live State says {ls.status!r} but acts ran since the last teardown")  # fmt: skip


# -- gates --------------------------------------------------------------------------------------------------


def gated_act_had_approval(section: str, how: str | None, detail: str) -> None:
    """A 🔴/💥 act runs only on an approval of exactly its content, given in this run (flag, typed go) or by
    a receipt not yet spent (a receipt is spent when its act starts; a typed go belongs to its run)."""
    if how is None:
        raise Violation(
            "gated_act_had_approval", f"the gated act of §{section} ran without an approval: {detail}"
        )


def approval_releases_the_gate(section: str, why: str) -> None:
    """An approval of exactly the waiting content (a flag of this run, or a receipt `approve` recorded for the
    gate the last run stopped at) releases it: the run does not stop there again."""
    raise Violation("approval_releases_the_gate", f"stopped at §{section} again although {why}")


# -- acts ---------------------------------------------------------------------------------------------------


def act_sees_plain_bash_session(line: ActLine, probe_var: str) -> None:
    """An act sees the session plain bash's document order has before it: not what its own verify, run as the
    observation before it, assigned."""
    if line.seen:
        raise Violation("act_sees_plain_bash_session",
                        f"§{line.section}'s act started with {probe_var} set: only its own verify assigns it "
                        "(the observation's assignments reached the act)")  # fmt: skip


def act_sees_plain_bash_ifs(line: ActLine, ifs_default: str) -> None:
    """An act before the section whose verify sets IFS sees bash's default IFS (no later section's)."""
    if line.ifs != ifs_default:
        raise Violation("act_sees_plain_bash_ifs",
                        f"§{line.section}'s act started with {bytes.fromhex(line.ifs or '').decode(errors='replace')!r}")  # fmt: skip


def act_sees_plain_bash_setting(line: ActLine, setting: str, expected: str, why: str) -> None:
    """An act starts with the umask and open-files limit plain bash's document order gives it: the ones
    Director was started with before the section whose act sets one (no later section's), that one after it
    (a section in sync hands on what its act set, and a resumed run what its journal kept)."""
    if getattr(line, setting) != expected:
        raise Violation(f"act_sees_plain_bash_{setting}",
                        f"§{line.section}'s act started with {setting} {getattr(line, setting)}; {why}: {expected}")  # fmt: skip


def set_wins_or_refused(line: ActLine, expected_base: str, how: str) -> None:
    """`--set` wins over the environment (and the previous answer over the environment), or the run is refused
    before anything runs."""
    if line.base != expected_base:
        raise Violation("set_wins_or_refused",
                        f"§{line.section}'s act ran on {line.base}; the inputs ({how}) name {expected_base}")  # fmt: skip


def refused_before_anything_runs(out: Outcome) -> None:
    if out.acts:
        raise Violation("set_wins_or_refused", f"refused (exit {out.rc}) after acts ran: {out.acts}")


def settled_section_not_reapplied(section: str, said: str = "") -> None:
    """A section verified since its last change, and not touched since, is in sync: its act does not run.
    (`said`: what the run printed, for whoever reads the finding; it decides nothing.)"""
    raise Violation("settled_section_not_reapplied",
                    f"§{section}'s act ran again although nothing changed since Director verified it"
                    + (f"; the run said:\n{said[-4000:]}" if said else ""))  # fmt: skip


def interrupted_act_runs_again(sections: Iterable[str], said: str = "") -> None:
    """An act that was running when Director died or was interrupted runs again before its section counts.
    (`said`: what the run printed, for whoever reads the finding; it decides nothing.)"""
    left = sorted(sections)
    if left:
        raise Violation("interrupted_act_runs_again",
                        f"the apply completed without running again the interrupted act(s) of §{', §'.join(left)}"
                        + (f"; the run said:\n{said[-4000:]}" if said else ""))  # fmt: skip


def interrupted_attempt_processes_stopped(section: str, pids: Iterable[int]) -> None:
    """What an interrupted attempt left running is stopped before the act runs again."""
    alive = sorted(pids)
    if alive:
        raise Violation("interrupted_attempt_processes_stopped",
                        f"§{section}'s act ran again; the server(s) its interrupted attempt started still run: {alive}")  # fmt: skip


def no_success_memory_across_teardown(sections: Iterable[int]) -> None:
    """Memory of a success never survives a teardown: after one, every section acts before the plan is live."""
    left = sorted(sections)
    if left:
        raise Violation("no_success_memory_across_teardown",
                        f"the apply completed after a teardown without §{', §'.join(map(str, left))} acting")  # fmt: skip


def unconfirmable_check_never_confirmed(command: str, out: Outcome) -> None:
    """A check that hides its trace and exits 0 whatever it finds is never confirmed (promise 11, in sync only
    on evidence): a run that verified it does not exit 0, its ledger row never says ✅, and its act (a
    teardown's too) runs on every run instead of being passed as in sync or "already gone"."""
    raise Violation("unconfirmable_check_never_confirmed",
                    f"`{command}` exited 0 although a check it ran cannot be confirmed:\n{_tail(out)}")  # fmt: skip


def a_sound_plan_applies(out: Outcome, why: str) -> None:
    """A plan that runs cleanly under plain bash, applied without interruption and with every gate approved,
    completes (exit 0)."""
    raise Violation("a_sound_plan_applies", f"{why} (exit {out.rc}):\n{_tail(out)}")


def one_server_per_identity(section: int, pids: list[int], recorded: int | None) -> None:
    """After a completed apply one listener per server section and identity runs: the one its pid file names."""
    if pids != ([recorded] if recorded is not None else []):
        raise Violation("one_server_per_identity",
                        f"§{section}: listeners {pids} run, the pid file names {recorded}")  # fmt: skip


# -- teardown and check --------------------------------------------------------------------------------------


def teardown_removes_everything(left: list[str], out: Outcome) -> None:
    """A completed teardown leaves nothing of the plan, whatever inputs named it (resources of earlier inputs
    included), and no process of the plan runs."""
    if left:
        raise Violation(
            "teardown_removes_everything", f"after a completed teardown: {left}\n{_tail(out, 800)}"
        )


def teardown_completes(out: Outcome) -> None:
    """An approved teardown, not interrupted, completes (exit 0): it can reach everything the plan created."""
    raise Violation("teardown_completes", f"exit {out.rc}:\n{_tail(out)}")


def check_acts_on_nothing(out: Outcome) -> None:
    """`director check` runs no act, whatever it finds."""
    if out.acts:
        raise Violation("check_agrees_with_world", f"`check` ran acts: {out.acts}")


def check_agrees_with_world(rc: int | None, holds: Mapping[int, bool], out: Outcome) -> None:
    """`director check` says drift (2) exactly when a section's resource does not hold, in sync (0) when all do;
    and it acts on nothing."""
    check_acts_on_nothing(out)
    want = 0 if all(holds.values()) else 2
    if rc != want:
        raise Violation("check_agrees_with_world",
                        f"`check` exited {rc}; the world: {dict(holds)} (expected {want}):\n{_tail(out)}")  # fmt: skip

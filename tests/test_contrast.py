"""Verdicts by contrast (director/plan/contrast.py, bash/units.py, trace.unit_paths, state/worlds.py).

Every block runs under real bash with Director's trace, in worlds this test builds; the truth of each world
is the test's, never the block's words. The rules are C1–C9 of docs/verify-semantics.md.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from director.exec.shell import Shell
from director.plan import bash, contrast
from director.plan.contrast import Baseline, Family, Phase
from director.plan.contrast import Path as RunPath
from director.plan.verify import Evidence, Judgement, Verdict, judge
from director.state.journal import Journal
from director.state.pgjournal import PgJournal
from director.state.worlds import SeenPath


@pytest.fixture(scope="module")
def shell(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shell]:
    with Shell(dict(os.environ), tmp_path_factory.mktemp("contrast"), interactive=False) as sh:
        yield sh


def observe(
    shell: Shell, text: str, **env: str
) -> tuple[Judgement, dict[int, RunPath], bash.VerifyModel, dict[int, int], list[str]]:
    state = shell.initial_state()
    if env:
        state = shell.run("; ".join(f"export {k}={v!r}" for k, v in env.items()), state).state
    r = shell.run(text, state, trace=True)
    assert r.trace is not None
    model = bash.verify_model(text)
    ran = bash.executed(model, list(r.trace))
    lines = r.output.splitlines()
    return (
        judge(model, Evidence(r.exit_code, lines, ran)),
        bash.unit_paths(model, list(r.trace)),
        model,
        ran,
        lines,
    )


def verdict(
    shell: Shell,
    text: str,
    base: Mapping[int, Baseline] | None = None,
    *,
    phase: Phase = "observe",
    family: Family = "apply",
    before: Mapping[int, RunPath] | None = None,
    **env: str,
) -> tuple[Verdict, str, list[contrast.Learned], dict[int, RunPath]]:
    j, paths, model, ran, lines = observe(shell, text, **env)
    out, _, learned = contrast.judge(
        model, j, ran, paths, lines, base or {}, phase=phase, family=family, before=before
    )
    return out.verdict, out.reason, learned, paths


# ---------------------------------------------------------------------------------------------------
# Units: which statements can fail, read statically


@pytest.mark.parametrize(
    ("text", "can_fail"),
    [
        ('if [ -f "$F" ]; then echo Success; else echo Failure; fi', [False]),
        ('[ -f "$F" ] && echo up || echo down', [False]),
        ('[ -f "$F" ] && echo up', [True]),  # the block's last status: `[`'s
        ('[ -f "$F" ] && echo up\necho done', [False]),  # an unenforced assertion, then a header line
        ('[ -f "$F" ] || { echo "missing"; exit 1; }\necho ok', [True]),
        ('if [ ! -f "$F" ]; then echo "Error: missing"; exit 1; fi', [True]),
        ('set -e\nif [ -f "$F" ]; then echo a; else echo b; fi', [False]),  # a tested condition never aborts
        ('set -e\nif [ -f "$F" ]; then echo a; else grep -q x "$G"; echo b; fi', [True]),  # an untested grep does
        ('set -euo pipefail\nok() { [ -e "$1" ] && echo "✔ $1" || echo "✗ $1"; }\nok a\nok b', [False, False]),
        ('m() { if [ -e "$1" ]; then echo "✔ $1"; else echo "✗ $1"; fi; }\nm a\nm b', [False, False]),
        ('m() { [ -e "$1" ] || { echo "✗ $1"; exit 1; }; echo "✔ $1"; }\nm a\nm b', [True, True]),
        ('r() { [ -e "$1" ] || return 1; echo "ok $1"; }\nr a || echo "a missing"\nr b', [False, True]),
        ('if [ ! -s "$P" ]; then echo "not running"; exit 0; fi\necho "running"', [False]),
        ('for f in a b; do [ -e "$f" ] && echo "$f ok" || echo "$f missing"; done', [False]),
        # a poll that breaks out when it answers and just ends when it never does: `break` never fails
        ('set -e\nfor i in 1 2 3; do\n  echo "try $i"\n  if curl -sf "$U"; then break; fi\n  sleep 1\ndone', [False]),
    ],
)
def test_units_and_whether_they_can_fail(text: str, can_fail: list[bool]) -> None:
    model = bash.verify_model(text)
    assert [u.can_fail for u in model.units] == can_fail


def test_a_header_line_is_no_unit() -> None:
    model = bash.verify_model('echo "checking the cache…"\n[ -f "$F" ] && echo up || echo down')
    assert len(model.units) == 1 and model.units[0].row == 1


# ---------------------------------------------------------------------------------------------------
# Paths: positions, never words, counts or languages


def test_a_path_is_positions_not_words_nor_counts(shell: Shell, tmp_path: Path) -> None:
    block = (
        'for f in "$D"/*; do [ -s "$f" ] && echo "✔ $(basename "$f") $$" || echo "✗ $(basename "$f")"; done'
    )
    for n in (1, 3):
        (tmp_path / f"d{n}").mkdir()
        for i in range(n):
            (tmp_path / f"d{n}" / f"f{i}").write_text("x\n")
    _, one, *_ = observe(shell, block, D=str(tmp_path / "d1"))
    _, three, *_ = observe(shell, block, D=str(tmp_path / "d3"))
    assert one == three  # three rounds, other names, another pid: the same path
    (tmp_path / "d3" / "f1").write_text("")
    _, mixed, *_ = observe(shell, block, D=str(tmp_path / "d3"))
    assert mixed != one  # an empty file takes the other branch: another path


def test_a_function_path_counts_where_it_is_called(shell: Shell, tmp_path: Path) -> None:
    block = 'mark() { if [ -e "$D/$1" ]; then echo "✔ $1"; else echo "✗ $1"; fi; }\nmark a\nmark b'
    (tmp_path / "a").write_text("")
    _, paths, model, *_ = observe(shell, block, D=str(tmp_path))
    assert set(paths) == {0, 1} and paths[0] != paths[1]
    assert model.units[0].probes == model.units[1].probes  # the same function: the same positions


# ---------------------------------------------------------------------------------------------------
# The rules, C1–C9


BLOCK = 'if [ -f "$D/up" ]; then echo "Erfolg"; else echo "Fehler"; fi'


@pytest.fixture()
def worlds(shell: Shell, tmp_path: Path) -> tuple[dict[int, Baseline], str]:
    """The baselines a first apply learns for BLOCK: not held before the act, held after it."""
    d = str(tmp_path)
    _, _, _, before = verdict(shell, BLOCK, D=d)
    (tmp_path / "up").write_text("")
    v, why, learned, after = verdict(shell, BLOCK, phase="after-act", before=before, D=d)
    assert v is Verdict.PASSED and "changed" in why  # C5
    assert learned == [
        contrast.Learned(0, "not-held", before[0]),
        contrast.Learned(0, "held", after[0]),
    ]
    return {0: Baseline(frozenset({after[0]}), frozenset({before[0]}))}, d


def test_c1_exit_status_first(shell: Shell, tmp_path: Path) -> None:
    v, *_ = verdict(shell, 'if [ ! -f "$D/x" ]; then echo "Error: x missing"; exit 1; fi', D=str(tmp_path))
    assert v is Verdict.FAILED


def test_c2_c3_held_and_not_held(
    shell: Shell, tmp_path: Path, worlds: tuple[dict[int, Baseline], str]
) -> None:
    base, d = worlds
    assert verdict(shell, BLOCK, base, D=d)[0] is Verdict.PASSED
    (tmp_path / "up").unlink()
    v, why, *_ = verdict(shell, BLOCK, base, D=d)
    assert v is Verdict.FAILED and "before its act" in why


def test_c4_a_path_never_seen_is_a_change(shell: Shell, tmp_path: Path) -> None:
    block = 'case "$(cat "$D/state")" in running) echo up ;; stopped) echo down ;; *) echo "?" ;; esac'
    (tmp_path / "state").write_text("running\n")
    _, _, _, up = verdict(shell, block, D=str(tmp_path))
    (tmp_path / "state").write_text("stopped\n")
    _, _, _, down = verdict(shell, block, D=str(tmp_path))
    base = {0: Baseline(frozenset({up[0]}), frozenset({down[0]}))}
    (tmp_path / "state").write_text("degraded\n")
    v, why, *_ = verdict(shell, block, base, D=str(tmp_path))
    assert v is Verdict.INCONCLUSIVE and "never seen" in why


def test_c6_the_same_path_after_the_act(shell: Shell, tmp_path: Path) -> None:
    d = str(tmp_path)
    _, _, _, before = verdict(shell, BLOCK, D=d)
    v, why, learned, after = verdict(shell, BLOCK, phase="after-act", before=before, D=d)
    assert v is Verdict.INCONCLUSIVE and "same path before and after" in why
    assert learned == [contrast.Learned(0, "settled", after[0])]  # what "unchanged since the act" looks like
    v, why, *_ = verdict(shell, BLOCK, phase="after-act", family="teardown", before=before, D=d)
    assert v is Verdict.INCONCLUSIVE and "not shown gone" in why
    # a pass line by position that already printed before the act: what held need not change (apply only)
    (tmp_path / "up").write_text("")
    positional = '[ -f "$D/up" ] && echo "up" || echo "down"'
    _, _, _, before = verdict(shell, positional, D=d)
    assert verdict(shell, positional, phase="after-act", before=before, D=d)[0] is Verdict.PASSED
    v, *_ = verdict(shell, positional, phase="after-act", family="teardown", before=before, D=d)
    assert v is Verdict.INCONCLUSIVE


def test_c6_calls_of_one_function_share_what_they_learn(shell: Shell, tmp_path: Path) -> None:
    """`mark conf` printed ✔ before and after the act; `mark data` changed: conf's path is the held one."""
    block = 'mark() { if [ -e "$D/$1" ]; then echo "✔ $1"; else echo "✗ $1"; fi; }\nmark conf\nmark data'
    d = str(tmp_path)
    (tmp_path / "conf").write_text("")
    _, _, _, before = verdict(shell, block, D=d)
    (tmp_path / "data").write_text("")
    assert verdict(shell, block, phase="after-act", before=before, D=d)[0] is Verdict.PASSED
    (tmp_path / "conf").unlink()  # conf broken by the act: ✗ before? no: ✔ before, ✗ after
    v, why, *_ = verdict(shell, block, phase="after-act", before=before, D=d)
    assert v is Verdict.FAILED, why


def test_c6_settled_is_unchanged_never_evidence(shell: Shell, tmp_path: Path) -> None:
    """A check that did not change with its act is remembered as settled: the next observation of the same
    path is no evidence (skipped: only the journal can say the section is unchanged), another path is a change."""
    d = str(tmp_path)
    _, _, _, now = verdict(shell, BLOCK, D=d)
    base = {0: Baseline(settled=frozenset({now[0]}))}
    v, why, *_ = verdict(shell, BLOCK, base, D=d)
    assert v is Verdict.SKIPPED and "unchanged" in why
    (tmp_path / "up").write_text("")
    v, why, *_ = verdict(shell, BLOCK, base, D=d)
    assert v is Verdict.INCONCLUSIVE and "never seen" in why


def test_c7_nothing_seen_structure_only(shell: Shell, tmp_path: Path) -> None:
    d = str(tmp_path)
    v, why, *_ = verdict(shell, BLOCK, D=d)
    assert v is Verdict.INCONCLUSIVE and "not been seen in a known world" in why
    v, *_ = verdict(shell, '[ -f "$D/up" ] && echo up || echo down', D=d)
    assert v is Verdict.INCONCLUSIVE  # the exit-0 alternative printed
    (tmp_path / "up").write_text("")
    assert verdict(shell, '[ -f "$D/up" ] && echo up || echo down', D=d)[0] is Verdict.PASSED


def test_c8_a_teardown_is_never_gone_on_structure_alone(shell: Shell, tmp_path: Path) -> None:
    (tmp_path / "wf").write_text("")
    block = '[ -e "$D/wf" ] && echo "STILL PRESENT — re-run" || echo "gone"'
    v, why, *_ = verdict(shell, block, family="teardown", D=str(tmp_path))
    assert v is Verdict.INCONCLUSIVE and "not known gone" in why
    assert verdict(shell, block, D=str(tmp_path))[0] is Verdict.PASSED  # a section's check: by position


def test_c9_a_changed_block_starts_over() -> None:
    a = '# ✔ up\nif [ -f "$D/up" ]; then echo OK; else echo KO; fi'
    assert contrast.block_key(a) == contrast.block_key(a.replace("# ✔ up", "# ✔ the service answers"))
    assert contrast.block_key(a) != contrast.block_key(a.replace('up"', 'ready"'))


# ---------------------------------------------------------------------------------------------------
# The journal keeps them: SQLite and PostgreSQL


def _roundtrip(j: Journal | PgJournal) -> None:
    run = j.create_run("apply", "p.md", "cloudflare", "op", {})
    key = contrast.block_key("echo x")
    j.learn_paths(run, key, "apply", [SeenPath(0, "not-held", (2,)), SeenPath(0, "held", (1,))])
    j.learn_paths(run, key, "teardown", [SeenPath(0, "held", (2,))])
    assert j.seen_paths(key, "apply") == [SeenPath(0, "held", (1,)), SeenPath(0, "not-held", (2,))]
    j.learn_paths(run, key, "apply", [SeenPath(0, "not-held", (1,))])  # last seen wins
    assert j.seen_paths(key, "apply") == [SeenPath(0, "not-held", (1,)), SeenPath(0, "not-held", (2,))]
    assert j.seen_paths(key, "teardown") == [SeenPath(0, "held", (2,))]
    assert [e.kind for e in j.events(run) if e.kind == "paths-learned"] == ["paths-learned"] * 3
    exported = j.export_data()
    assert len(exported["verify_paths"]) == 3


def test_the_sqlite_journal_keeps_paths(tmp_path: Path) -> None:
    with Journal.open(tmp_path / "j.sqlite3") as j:
        _roundtrip(j)


def test_postgresql_keeps_paths(pg_url: str) -> None:
    with PgJournal.open(pg_url, "git:contrast.md") as j:
        _roundtrip(j)


def test_two_calls_of_one_function_each_show_their_own_line(shell: Shell, tmp_path: Path) -> None:
    block = 'mark() { if [ -e "$D/$1" ]; then echo "✔ $1 da"; else echo "✗ $1 fehlt"; fi; }\nmark konf\nmark daten'
    d = str(tmp_path)
    _, _, _, before = verdict(shell, block, D=d)
    (tmp_path / "konf").write_text("")
    (tmp_path / "daten").write_text("")
    j, paths, model, ran, lines = observe(shell, block, D=d)
    out, _, _ = contrast.judge(model, j, ran, paths, lines, {}, phase="after-act", family="apply", before=before)
    assert out.verdict is Verdict.PASSED
    assert out.observed == "✔ konf da · ✔ daten da"


def test_lint_reads_a_value_function_pipeline_as_a_value() -> None:
    block = 'wert() { sed -n "s/^x //p" "$F" | head -1; }\n[ "$(wert)" = 1 ] || { echo "x is not 1"; exit 1; }'
    assert [i.code for i in bash.verify_issues(block)] == []
    assert [i.code for i in bash.verify_issues("probe 2>&1 | tail -5")] == ["verify-exit-status"]


def test_c6_a_check_beside_one_that_changed(shell: Shell, tmp_path: Path) -> None:
    """After an act, a check whose path did not change beside one that did: the block showed the act's
    effect, so it holds (and is learned held) -- unless it printed its own exit-0 alternative both times,
    like the seed's worker line, which stays the one that could not confirm."""
    two = (
        'if [ -e "$D/conf" ]; then echo "conf da"; else echo "conf fehlt"; fi\n'
        'if [ -e "$D/data" ]; then echo "data da"; else echo "data fehlt"; fi'
    )
    d = str(tmp_path)
    (tmp_path / "conf").write_text("")
    _, _, _, before = verdict(shell, two, D=d)
    (tmp_path / "data").write_text("")
    v, why, learned, after = verdict(shell, two, phase="after-act", before=before, D=d)
    assert v is Verdict.PASSED, why
    assert contrast.Learned(0, "held", after[0]) in learned and contrast.Learned(1, "held", after[1]) in learned
    seed_like = (
        '[ -e "$D/wf" ] && echo "workflow STILL PRESENT" || echo "workflow gone"\n'
        '[ -e "$D/nope" ] && echo "worker gone" || echo "worker check inconclusive"'
    )
    (tmp_path / "wf").write_text("")
    _, _, _, present = verdict(shell, seed_like, family="teardown", D=d)
    (tmp_path / "wf").unlink()
    v, why, learned, _ = verdict(shell, seed_like, phase="after-act", family="teardown", before=present, D=d)
    assert v is Verdict.INCONCLUSIVE and "plan line 2" in why and "worker check inconclusive" in why, why
    assert [x.unit for x in learned if x.world == "held"] == [0]


def test_only_a_branch_of_its_own_is_a_choice() -> None:
    """The lines an if/else prints as its branches are what structure cannot tell apart; a pass line inside
    a branch's assertion (`probe && echo ok`, a knob choosing how to probe) keeps its position's reading."""
    alt = bash.verify_model('if [ -f "$F" ]; then echo "läuft"; else echo "gestoppt"; fi')
    assert alt.choices == frozenset(ln.probe for ln in alt.lines)
    knob = bash.verify_model(
        'if [ "$MODE" = http ]; then\n  curl -s "$URL" | grep -q ok && echo "front door answers"\n'
        'else\n  probe-cli\nfi\necho next'
    )
    assert knob.choices == frozenset()


def test_a_knobs_case_with_one_plain_line_is_no_choice() -> None:
    """`case "$LOG" in full) grep … && echo "3: with stats" ;; brief) echo "3: logged (brief)" ;; esac`: one
    arm says which ran, the other asserts; nothing is left for words to decide."""
    knob = bash.verify_model(
        'case "$LOG" in\n  full)  grep -q "^commit" "$F" && echo "3: logged with stats" ;;\n'
        '  brief) echo "3: logged (brief)" ;;\nesac'
    )
    assert knob.choices == frozenset()
    two = bash.verify_model('case "$S" in\n  up) echo "läuft" ;;\n  *) echo "steht" ;;\nesac')
    assert len(two.choices) == 2


def test_a_lone_exit_0_branch_beside_one_that_can_fail_is_a_choice() -> None:
    """`if [ -f "$F" ]; then deploy; else echo "F missing"; fi`: the `else` line is the exit-0 alternative
    of a check whose other branch is decided by its status; a branch a knob chooses is no such alternative
    (the same branch runs in every world)."""
    world = bash.verify_model('if [ -f "$F" ]; then\n  source "$F"\n  up --build\nelse\n  echo "$F missing"\nfi')
    assert world.choices == frozenset(ln.probe for ln in world.lines)
    probed = bash.verify_model('S=$(state)\ncase "$S" in\n  up) probe-cli ;;\n  *) echo "not up" ;;\nesac')
    assert len(probed.choices) == 1
    knob = bash.verify_model('if [ "$MODE" = full ]; then\n  probe-cli\nelse\n  echo "probe skipped (brief)"\nfi')
    assert knob.choices == frozenset()


def test_c6_a_doubt_before_the_act_is_learned_after_it(shell: Shell, tmp_path: Path) -> None:
    """Before the act the check took its exit-0 alternative; after it, the branch its status decides. What
    the act changed is learned even though the run after it printed no doubt: the alternative is then the
    path it took before its act."""
    block = 'if [ -f "$D/env" ]; then cat "$D/env"; else echo "env missing: create it"; fi'
    d = str(tmp_path)
    _, _, _, before = verdict(shell, block, D=d)
    (tmp_path / "env").write_text("REPOSITORY=x\n")
    v, _, learned, after = verdict(shell, block, phase="after-act", before=before, D=d)
    assert v is Verdict.PASSED
    assert learned == [contrast.Learned(0, "not-held", before[0]), contrast.Learned(0, "held", after[0])]
    base = {0: Baseline(frozenset({after[0]}), frozenset({before[0]}))}
    (tmp_path / "env").unlink()
    v, why, *_ = verdict(shell, block, base, D=d)
    assert v is Verdict.FAILED and "before its act" in why

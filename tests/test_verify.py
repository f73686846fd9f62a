"""Verify semantics (director/verify.py): each rule of docs/verify-semantics.md, judged on real bash runs.

Every case runs the block under real bash with Director's trace, in a world where the expected verdict is
the truth; tests/test_verify_corpus.py does the same through the CLI for apply, check and teardown.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from director.exec.shell import Shell
from director.plan import bash
from director.plan.verify import Evidence, Verdict, judge


@pytest.fixture(scope="module")
def shell(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shell]:
    with Shell(dict(os.environ), tmp_path_factory.mktemp("verify"), interactive=False) as sh:
        yield sh


def run(shell: Shell, text: str, **env: str) -> tuple[Verdict, dict[str, Verdict], str]:
    state = shell.initial_state()
    if env:
        state = shell.run("; ".join(f"export {k}={v!r}" for k, v in env.items()), state).state
    r = shell.run(text, state, trace=True)
    model = bash.verify_model(text)
    assert r.trace is not None
    j = judge(model, Evidence(r.exit_code, r.output.splitlines(), bash.executed(model, list(r.trace))))
    return j.verdict, {k: v.verdict for k, v in j.labels.items()}, j.reason


@pytest.fixture()
def w(tmp_path: Path) -> Path:
    (tmp_path / "present").write_text("x\n")
    return tmp_path


def test_rule1_exit_status_first(shell: Shell, w: Path) -> None:
    assert run(shell, f'grep -q x "{w}/present"')[0] is Verdict.PASSED
    assert run(shell, f'grep -q y "{w}/present"')[0] is Verdict.FAILED


def test_rule2_position_and_soft_alternatives(shell: Shell, w: Path) -> None:
    block = f'[ -f "{w}/$F" ] && echo "STILL PRESENT — re-run" || echo "gone"'
    assert run(shell, block, F="present")[0] is Verdict.PASSED  # by position, whatever the words say
    v, _, why = run(shell, block, F="absent")
    assert v is Verdict.INCONCLUSIVE and "`gone`" in why
    hard = f'[ -f "{w}/$F" ] && echo "up" || {{ echo "down"; exit 1; }}'
    assert run(shell, hard, F="absent")[0] is Verdict.FAILED


def test_rule3_assertions(shell: Shell, w: Path) -> None:
    assert run(shell, f'[ -f "{w}/absent" ] && echo "file written"')[0] is Verdict.FAILED
    v, _, why = run(shell, f'[ -f "{w}/absent" ] && echo "file written"\necho "next"')
    assert v is Verdict.INCONCLUSIVE and "did not hold" in why


def test_rule4_preconditions(shell: Shell, w: Path) -> None:
    block = (
        '[ -n "$BIND" ] && { grep -q "$BIND" '
        + f'"{w}/present"'
        + ' || { echo "$BIND missing"; exit 1; }; echo "bound $BIND"; }'
    )
    v, _, why = run(shell, block, BIND="")
    assert v is Verdict.SKIPPED and "precondition false" in why  # bash exited 1: the condition's
    assert run(shell, block, BIND="x")[0] is Verdict.PASSED
    assert run(shell, block, BIND="zz")[0] is Verdict.FAILED
    assert run(shell, f'if [ -n "$BIND" ]; then grep -q "$BIND" "{w}/present" && echo "ok"; fi', BIND="")[0] is (
        Verdict.SKIPPED
    )


def test_rule5_alternatives_share_a_label(shell: Shell, w: Path) -> None:
    block = (
        'if [ "$FMT" = json ]; then\n'
        f'  grep -q x "{w}/present" && echo "1: ok (json)" || {{ echo "1: bad"; exit 1; }}\n'
        "else\n"
        f'  grep -q x "{w}/present" && echo "1: ok (text)" || {{ echo "1: bad"; exit 1; }}\n'
        "fi"
    )
    for fmt in ("json", "text"):
        v, labels, _ = run(shell, block, FMT=fmt)
        assert (v, labels) == (Verdict.PASSED, {"1": Verdict.PASSED})
    case = 'case "$B" in\n  mem) echo "2: backend ok";;\n  *) echo "2: unknown"; exit 1;;\nesac'
    assert run(shell, case, B="mem")[1] == {"2": Verdict.PASSED}
    assert run(shell, case, B="disk")[1] == {"2": Verdict.FAILED}


def test_rule6_a_check_that_did_not_run_is_never_evidence(shell: Shell, w: Path) -> None:
    block = (
        f'[ -f "{w}/absent" ] && echo "1: first" || {{ echo "1: first failed"; exit 1; }}\n'
        'echo "2: second"'
    )
    v, labels, _ = run(shell, block)
    assert v is Verdict.FAILED and labels == {"1": Verdict.FAILED, "2": Verdict.NOT_RUN}


def test_rule7_skipped_only_when_nothing_was_checked(shell: Shell, w: Path) -> None:
    block = f'[ -n "$A" ] && {{ grep -q "$A" "{w}/present" || {{ echo "A missing"; exit 1; }}; }}\n'
    assert run(shell, block + 'echo "done"', A="")[0] is Verdict.SKIPPED
    assert run(shell, f'grep -q x "{w}/present"\n' + block, A="")[0] is Verdict.PASSED


def test_rule8_for_each_and_poll_loops(shell: Shell, w: Path) -> None:
    each = f'for f in present absent; do [ -e "{w}/$f" ] && echo "$f ok"; done; true'
    assert run(shell, each)[0] is Verdict.INCONCLUSIVE
    poll = f'for i in 1 2 3; do [ -e "{w}/present" ] && echo "up" && break; sleep 0.01; done'
    assert run(shell, poll)[0] is Verdict.PASSED


def test_identical_messages_are_told_apart_by_the_exit_status(shell: Shell, w: Path) -> None:
    block = f'[ -f "{w}/$F" ] && echo "tls: checked" || {{ echo "tls: checked"; exit 1; }}'
    assert run(shell, block, F="present")[0] is Verdict.PASSED
    assert run(shell, block, F="absent")[0] is Verdict.FAILED


def test_without_a_trace_only_printed_lines_count() -> None:
    model = bash.verify_model('[ -n "$X" ] && { probe || { echo "missing"; exit 1; }; }')
    j = judge(model, Evidence(1, [], None))
    assert j.verdict is Verdict.FAILED, "untraced, a false precondition cannot be told from a failure"


def test_stopped_blocks_fail() -> None:
    model = bash.verify_model('echo "ok"')
    assert judge(model, Evidence(0, ["ok"], {}, stopped="timeout")).verdict is Verdict.FAILED


@pytest.mark.parametrize(
    "block",
    [
        'command -v python3 >/dev/null && echo "ok: $(python3 -c "print(1); print(2)")" || { echo "py missing"; exit 1; }\necho next',
        'command -v bash >/dev/null && echo "ok: $(printf "it\'s %s" x)" || { echo "missing"; exit 1; }\necho next',
        'test -x /bin/sh && echo "ok: sh at $(command -v sh) ($(ls -l /bin/sh | wc -c) bytes)" \\\n  || { echo "no sh"; exit 1; }\necho next',
    ],
)
def test_a_command_substitution_is_part_of_its_message(shell: Shell, block: str) -> None:
    """`A && echo "ok: $(tool --version)" || { …; exit 1; }`: the pass line printed, whatever the tool said."""
    verdict, _, why = run(shell, block)
    assert verdict is Verdict.PASSED, why
    model = bash.verify_model(block)
    assert [ln.polarity for ln in model.lines][:2] == ["pass", "fail"]


@pytest.mark.parametrize(
    ("block", "world"),
    [
        (
            'if [ ! -f "$W/schema.sql" ]; then echo "Error: schema missing"; tail -3 "$W/log" 2>/dev/null; exit 1; fi\necho next',
            "present",
        ),
        (
            '[[ $(find "$W" -name "*.partial") ]] && echo "partial uploads left" && exit 1\necho "clean"',
            "present",
        ),
        (
            'F="$W/present"\n[ ! -f "$F" ] && echo "Error: $F missing" && exit 1\necho "archive present"',
            "present",
        ),
    ],
)
def test_a_failure_branch_is_never_a_precondition(shell: Shell, w: Path, block: str, world: str) -> None:
    """A branch or chain that ends in `exit N≠0` is a failure path: when its condition is false, the check
    passed (silently), never 'skipped' nor 'the condition did not hold'."""
    (w / "schema.sql").write_text("create table t(a);\n")
    verdict, _, why = run(shell, block, W=str(w))
    assert verdict is Verdict.PASSED, why
    assert not bash.verify_model(block).guards
    (w / "schema.sql").unlink()
    (w / "x.partial").write_text("")
    (w / "present").unlink()
    assert run(shell, block, W=str(w))[0] is Verdict.FAILED


def test_a_label_on_its_failure_line_only_passes_when_silent(shell: Shell, w: Path) -> None:
    """`probe || { echo "2: bad"; exit 1; }`: the check is silent when it holds; its label passes then."""
    block = f'grep -q x "{w}/$F" || {{ echo "2: manifest disagrees"; exit 1; }}\necho "done"'
    assert run(shell, block, F="present")[1] == {"2": Verdict.PASSED}
    assert run(shell, block, F="absent")[1] == {"2": Verdict.FAILED}

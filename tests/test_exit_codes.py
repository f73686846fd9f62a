"""README's exit-code table, checked against the real CLI: every code is reachable, every code the CLI can
return is an `ExitCode`, and only `lint` (findings) and `diff` (differences) ever exit 1."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from director import cli
from director.errors import DirectorError, ExitCode
from tests import forkserver
from tests.planmaker import CounterPlan, Step, write_plan
from tests.planmaker import director as run_director
from tests.pristine import SEED

# slow: end to end through the real CLI, many runs; CI runs it with the rest
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
BAD_PLAN = ROOT / "tests" / "plans" / "bad" / "unknown-marker.md"

Result = subprocess.CompletedProcess[str]


def _until_acting(
    cmd: list[str], tmp: Path, out: Path, *, stdout: int | None = None, stderr: int | None = None
) -> subprocess.Popen[str]:
    """`director …` started in the background, returned once its first act block is running."""
    env = dict(os.environ, COUNTER_OUT=str(out), CI="1", NO_COLOR="1")
    p = forkserver.Popen(
        [sys.executable, "-m", "director", *cmd], cwd=tmp, env=env, text=True, stdout=stdout, stderr=stderr
    )
    deadline = time.monotonic() + 30
    while not (out / "acts").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return p


# ------------------------------------------------------------------------------- every code, reached
# One scenario per documented code: small plans in tmp dirs, run through the real CLI (`python -m director`).


def _ok(tmp: Path, out: Path) -> list[Result]:
    plan = write_plan(tmp, CounterPlan([Step()]))
    return [run_director("apply", str(plan), cwd=tmp, out=out)]


def _findings_and_differences(tmp: Path, out: Path) -> list[Result]:
    plan = write_plan(tmp, CounterPlan([Step()]))
    assert run_director("apply", str(plan), cwd=tmp, out=out).returncode == 0
    return [
        run_director("diff", str(plan), "--last-run", cwd=tmp, out=out),  # differences
        run_director("lint", "--strict", str(SEED), cwd=tmp, out=out),  # findings (warnings, --strict)
    ]


def _changes_and_drift(tmp: Path, out: Path) -> list[Result]:
    plan = write_plan(tmp, CounterPlan([Step()]))
    pending = run_director("plan", str(plan), cwd=tmp, out=out)
    assert run_director("apply", str(plan), cwd=tmp, out=out).returncode == 0
    (out / "s1").unlink()
    return [pending, run_director("check", str(plan), cwd=tmp, out=out)]


def _not_created(tmp: Path, out: Path) -> list[Result]:
    plan = write_plan(tmp, CounterPlan([Step()]))  # never applied here: its Live State is the template's
    return [run_director("check", str(plan), cwd=tmp, out=out)]


def _step_failed(tmp: Path, out: Path) -> list[Result]:
    plan = write_plan(tmp, CounterPlan([Step(extra="exit 1")]))
    return [run_director("apply", str(plan), cwd=tmp, out=out)]


def _awaiting_approval(tmp: Path, out: Path) -> list[Result]:
    plan = write_plan(tmp, CounterPlan([Step(marker="🔴")]))
    return [run_director("apply", str(plan), cwd=tmp, out=out)]


def _approval_refused(tmp: Path, out: Path) -> list[Result]:
    from tests.approvalplans import SIGNERS, key, signer_line

    plan = write_plan(tmp, CounterPlan([Step(marker="🔴")]))
    (tmp / SIGNERS).write_text(signer_line("alice@example.com", key(tmp, "alice")) + "\n")
    assert run_director("apply", str(plan), cwd=tmp, out=out).returncode == 4
    return [run_director("approve", str(plan), "1", "--yes", cwd=tmp, out=out)]  # unsigned: it will be refused


def _lease_held(tmp: Path, out: Path) -> list[Result]:
    plan = write_plan(tmp, CounterPlan([Step(extra="sleep 30")]))
    first = _until_acting(["apply", str(plan)], tmp, out, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        return [run_director("apply", str(plan), cwd=tmp, out=out)]
    finally:
        first.send_signal(signal.SIGINT)
        first.wait(timeout=30)


def _prerequisites(tmp: Path, out: Path) -> list[Result]:
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    (bin_dir / "wrangler").write_text("#!/bin/sh\necho 'wrangler: broken' >&2\nexit 1\n")
    (bin_dir / "wrangler").chmod(0o755)
    plan = write_plan(tmp, CounterPlan([Step(extra="wrangler --version")]))
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    return [run_director("apply", str(plan), cwd=tmp, out=out, env=env)]


def _ledger_conflict(tmp: Path, out: Path) -> list[Result]:
    edit = 'sed -i "s/value (filled on apply)/value (edited by a block)/" "$PLAN_FILE"'
    plan = write_plan(tmp, CounterPlan([Step(extra=edit)]))
    return [run_director("apply", str(plan), cwd=tmp, out=out, env={"PLAN_FILE": str(plan)})]


def _crash_loop(tmp: Path, out: Path) -> list[Result]:
    # tests/test_crash.py's setup (the block SIGKILLs Director every time), but Director is found by its
    # command line: a block without background jobs runs right under Director, not under a session leader,
    # so "the parent of $PPID" would be this test's own process.
    kill = (
        'p=$PPID; while [ "$p" -gt 1 ]; do case "$(tr "\\0" " " < /proc/$p/cmdline)" in '
        '*"-m director apply"*) kill -9 "$p"; break;; esac; p=$(ps -o ppid= -p "$p" | tr -d " "); done; sleep 5'
    )
    plan = write_plan(tmp, CounterPlan([Step(extra=kill)]))
    for _ in range(8):
        r = run_director("apply", str(plan), cwd=tmp, out=out, timeout=60)
        if r.returncode != -signal.SIGKILL:
            break
    return [r]


def _upstream_guard(tmp: Path, out: Path) -> list[Result]:
    from tests.test_teardown import _guarded

    plan = _guarded(tmp, out, 'rm -rf "$BIND_DB"')
    return [run_director("teardown", str(plan), "--approve", "teardown", cwd=tmp, out=out)]


def _unconfirmed(tmp: Path, out: Path) -> list[Result]:
    strict = '[ -f "$OUT/s1" ] && echo "s1 present" || { echo "s1 missing"; exit 1; }'
    soft = '[ -f "$OUT/nothing" ] && echo "s1 present" || echo "s1 missing"'  # its F branch exits 0
    plan = tmp / "soft.md"
    plan.write_text(CounterPlan([Step()]).text().replace(strict, soft), encoding="utf-8")
    return [run_director("apply", str(plan), cwd=tmp, out=out)]


def _usage(tmp: Path, out: Path) -> list[Result]:
    plan = write_plan(tmp, CounterPlan([Step()]))
    no_teardown = tmp / "no-teardown.md"
    text = CounterPlan([Step()]).text()
    no_teardown.write_text(text[: text.index("## Teardown")], encoding="utf-8")
    return [
        run_director("apply", str(tmp / "missing.md"), cwd=tmp, out=out),
        run_director("apply", str(plan), "--no-such-option", cwd=tmp, out=out),
        run_director(cwd=tmp, out=out),  # no command: the help, as a usage error
        run_director("diff", str(plan), "--last-run", cwd=tmp, out=out),  # no run yet: nothing to compare
        run_director("approve", str(plan), "1", cwd=tmp, out=out),  # no run yet: nothing to approve
        run_director("teardown", str(no_teardown), cwd=tmp, out=out),  # nothing to tear down
    ]


def _plan_error(tmp: Path, out: Path) -> list[Result]:
    return [run_director(cmd, str(BAD_PLAN), cwd=tmp, out=out) for cmd in ("apply", "show", "lint")]


def _internal(tmp: Path, out: Path) -> list[Result]:
    plan = write_plan(tmp, CounterPlan([Step()]))
    journal = tmp / ".director" / plan.name / "journal.sqlite3"
    journal.parent.mkdir(parents=True)
    journal.write_text("not a database")
    return [run_director(cmd, str(plan), cwd=tmp, out=out) for cmd in ("status", "apply", "audit")]


def _state_unavailable(tmp: Path, out: Path) -> list[Result]:
    # nothing listens on port 1: the state database cannot be reached (a lost one mid-run: tests/test_pg_machines.py)
    plan = write_plan(tmp, CounterPlan([Step()]))
    url = "postgresql://director@127.0.0.1:1/director"
    return [run_director(cmd, str(plan), "--state-url", url, cwd=tmp, out=out) for cmd in ("apply", "status")]


def _journal_tampered(tmp: Path, out: Path) -> list[Result]:
    # the receipt a section spent is made to look unspent (its `approval-used` row deleted by hand), and the
    # world drifts so the gate is asked again: the gate refuses to release across the break
    plan = write_plan(tmp, CounterPlan([Step(marker="🔴")]))
    assert run_director("apply", str(plan), cwd=tmp, out=out).returncode == 4
    assert run_director("approve", str(plan), "1", "--yes", cwd=tmp, out=out).returncode == 0
    assert run_director("apply", str(plan), cwd=tmp, out=out).returncode == 0
    db = sqlite3.connect(tmp / ".director" / plan.name / "journal.sqlite3")
    with db:
        db.execute("DELETE FROM events WHERE kind = 'approval-used'")
    db.close()
    (out / "s1").unlink()
    return [run_director("apply", str(plan), cwd=tmp, out=out)]


def _interrupted(tmp: Path, out: Path) -> list[Result]:
    plan = write_plan(tmp, CounterPlan([Step(extra="sleep 60")]))
    p = _until_acting(["apply", str(plan)], tmp, out, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        p.send_signal(signal.SIGINT)
        stdout, stderr = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    interrupted = subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr)
    # the reader of the output went away (`director show --json | head -1`): cut short, as by an interrupt
    read, write = os.pipe()
    os.close(read)
    try:
        closed = forkserver.run(
            [sys.executable, "-m", "director", "show", str(plan), "--json"],
            cwd=tmp, stdout=write, stderr=subprocess.PIPE, text=True, timeout=60,
        )  # fmt: skip
    finally:
        os.close(write)
    assert "Exception ignored" not in closed.stderr, closed.stderr
    return [interrupted, closed]


SCENARIOS: dict[ExitCode, Callable[[Path, Path], list[Result]]] = {
    ExitCode.OK: _ok,
    ExitCode.FINDINGS: _findings_and_differences,
    ExitCode.CHANGES: _changes_and_drift,
    ExitCode.STEP_FAILED: _step_failed,
    ExitCode.AWAITING_APPROVAL: _awaiting_approval,
    ExitCode.LEASE_HELD: _lease_held,
    ExitCode.PREREQUISITES: _prerequisites,
    ExitCode.LEDGER_CONFLICT: _ledger_conflict,
    ExitCode.CRASH_LOOP: _crash_loop,
    ExitCode.UPSTREAM_GUARD: _upstream_guard,
    ExitCode.UNCONFIRMED: _unconfirmed,
    ExitCode.USAGE: _usage,
    ExitCode.PLAN_ERROR: _plan_error,
    ExitCode.INTERNAL: _internal,
    ExitCode.STATE_UNAVAILABLE: _state_unavailable,
    ExitCode.NOT_CREATED: _not_created,
    ExitCode.JOURNAL_TAMPERED: _journal_tampered,
    ExitCode.APPROVAL_REFUSED: _approval_refused,
    ExitCode.INTERRUPTED: _interrupted,
}
SLOW = {ExitCode.LEASE_HELD, ExitCode.CRASH_LOOP}  # a 30 s block held open; several SIGKILLed runs


def test_every_documented_code_has_a_scenario() -> None:
    assert set(SCENARIOS) == set(ExitCode)


@pytest.mark.parametrize(
    "code",
    [pytest.param(c, id=f"{int(c)}-{c.name.lower()}", marks=[pytest.mark.slow] if c in SLOW else []) for c in ExitCode],
)
def test_the_code_is_reachable_through_the_cli(tmp_path: Path, out: Path, code: ExitCode) -> None:
    for r in SCENARIOS[code](tmp_path, out):
        shown = f"director {' '.join(map(str, r.args[3:]))}\n{(r.stdout or '')[-3000:]}\n{r.stderr[-3000:]}"
        assert r.returncode == code, f"expected {int(code)}, got {r.returncode}: {shown}"
        assert "Traceback" not in r.stderr, shown  # tracebacks are for bugs only
        if code not in (ExitCode.OK, ExitCode.FINDINGS, ExitCode.CHANGES, ExitCode.USAGE, ExitCode.INTERRUPTED):
            assert r.stderr.count("error: ") <= 1, shown


# ----------------------------------------------------------------------- every code is an ExitCode


def test_the_table_is_the_readme_table() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("## Exit codes") :]
    documented = {int(line.split("|")[1]) for line in table.splitlines() if line.startswith("| ") and line.split("|")[1].strip().isdigit()}
    assert documented == {int(c) for c in ExitCode}


def _error_classes() -> set[type[DirectorError]]:
    for name in forkserver.cli_modules():
        importlib.import_module(name)
    found: set[type[DirectorError]] = set()
    todo: list[type[DirectorError]] = [DirectorError]
    while todo:
        cls = todo.pop()
        found.add(cls)
        todo += cls.__subclasses__()
    return found


def test_every_error_exits_with_an_exit_code_and_none_with_1() -> None:
    classes = _error_classes()
    assert {c.__name__ for c in classes} >= {"CrashLoop", "UpstreamGuard", "LedgerWriteError", "SecretInLedger"}
    for cls in classes:
        assert ExitCode(cls.exit_code) != ExitCode.FINDINGS, f"{cls.__name__} would read as findings/differences"
    assert DirectorError.exit_code == ExitCode.INTERNAL


def _exit_calls(tree: ast.AST) -> Iterator[ast.Call]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name in ("exit", "Exit", "SystemExit", "_exit"):
                yield node


def test_no_exit_with_a_bare_number_and_1_only_from_lint_and_diff() -> None:
    """Exits name their `ExitCode`; `FINDINGS` is returned by `lint` and `diff` only. (Not the wrangler shim's
    modules: the shim is wrangler, and exits with wrangler's codes, 1 for an API error.)"""
    for name in forkserver.cli_modules():
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None
        source = Path(spec.origin).read_text(encoding="utf-8")
        tree = ast.parse(source)
        for call in _exit_calls(tree):
            for arg in call.args:
                assert not isinstance(arg, ast.Constant), f"{name}:{call.lineno}: exit with a bare number"
        if "ExitCode.FINDINGS" in source:
            assert name in (
                "director.errors", "director.commands.lint", "director.commands.diff"
            ), name


def test_a_bug_exits_70_with_its_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(plan: object) -> list[object]:
        raise RuntimeError("a bug")

    monkeypatch.setattr("director.plan.lint.lint", broken)
    plan = write_plan(tmp_path, CounterPlan([Step()]))
    with pytest.raises(SystemExit) as exited:
        cli.main(["lint", str(plan)])
    assert exited.value.code == ExitCode.INTERNAL
    err = capsys.readouterr().err
    assert "Traceback" in err and "error: internal error: RuntimeError: a bug" in err


def test_a_director_error_is_one_error_line_and_its_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from director.errors import LedgerConflict

    def conflict(plan: object) -> list[object]:
        raise LedgerConflict("the ledger [bold]moved[/]")

    monkeypatch.setattr("director.plan.lint.lint", conflict)
    plan = write_plan(tmp_path, CounterPlan([Step()]))
    with pytest.raises(SystemExit) as exited:
        cli.main(["lint", str(plan)])
    assert exited.value.code == ExitCode.LEDGER_CONFLICT
    captured = capsys.readouterr()
    assert captured.err == "error: the ledger [bold]moved[/]\n" and captured.out == ""


def test_several_plans_exit_with_the_most_severe_code_not_the_largest() -> None:
    from director.errors import ExitCode, most_severe

    assert most_severe([ExitCode.UNCONFIRMED, ExitCode.STEP_FAILED]) is ExitCode.STEP_FAILED
    assert most_severe([ExitCode.NOT_CREATED, ExitCode.CHANGES]) is ExitCode.CHANGES
    assert most_severe([ExitCode.OK, ExitCode.UNCONFIRMED]) is ExitCode.UNCONFIRMED
    assert most_severe([ExitCode.STEP_FAILED, ExitCode.INTERRUPTED]) is ExitCode.INTERRUPTED
    assert most_severe([]) is ExitCode.OK
    assert set(ExitCode) <= set(__import__("director.errors", fromlist=["_SEVERITY"])._SEVERITY)

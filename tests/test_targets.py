"""The target registry: `--target` choices come from `TARGETS`, and a new target is one module plus one
registry line (tests/toy_target.py, run here through the real CLI, in this process so the line applies)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from director import cli
from director.plan.parse import parse_file
from director.targets import DEFAULT_TARGET, TARGETS, get_target
from tests.jsonschemas import validated, validated_lines
from tests.planmaker import CounterPlan, Step, write_plan
from tests.toy_target import ToyTarget


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """`director ARGS…` through `cli.main`, as the console script runs it."""
    with pytest.raises(SystemExit) as exited:
        cli.main(list(args))
    out, err = capsys.readouterr()
    code = exited.value.code
    assert isinstance(code, int)
    return code, out, err


@pytest.fixture
def out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "out"
    d.mkdir()
    monkeypatch.setenv("COUNTER_OUT", str(d))
    monkeypatch.setenv("NO_COLOR", "1")
    return d


def test_the_registry_names_the_targets() -> None:
    assert list(TARGETS) == ["cloudflare", "local"] and DEFAULT_TARGET in TARGETS
    assert {get_target(name, Path("/nonexistent")).name for name in TARGETS} == set(TARGETS)


def test_target_choices_come_from_the_registry(
    tmp_path: Path, out: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step()]))
    code, _, err = run_cli(capsys, "plan", str(plan), "--target", "toy", "--state-dir", str(tmp_path / "s"))
    assert code == 64 and "unknown target 'toy'; choose one of: cloudflare, local" in err
    monkeypatch.setitem(TARGETS, "toy", ToyTarget)
    code, _, err = run_cli(capsys, "plan", str(plan), "--target", "toy", "--state-dir", str(tmp_path / "s"))
    assert code == 2, err  # accepted: changes pending


def test_a_new_target_is_one_module_and_one_registry_line(
    tmp_path: Path, out: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(TARGETS, "toy", ToyTarget)  # the one line

    plan = write_plan(tmp_path, CounterPlan([Step(extra="toyctl up widget"), Step()]))
    state, events = tmp_path / "state", tmp_path / "events.jsonl"
    code, stdout, err = run_cli(
        capsys, "apply", str(plan), "--target", "toy", "--non-interactive", "--state-dir", str(state),
        "--events", str(events),
    )  # fmt: skip
    assert code == 0, stdout + err
    assert "toy: up widget" in stdout, "the block ran the target's toyctl, first on its PATH"
    assert (state / "toy" / "things" / "widget").exists()
    ls = parse_file(str(plan)).live_state
    assert ls is not None
    assert "on target toy" in str(ls.data["last_action"]), ls.data

    # the engine journaled the target's change and described it with the target's words
    toy = ToyTarget(state)
    change = {"kind": "up", "name": "widget"}
    target_events = validated_lines(events.read_text(), "event")
    assert [e["op"] for e in target_events if e["type"] == "target"] == [toy.describe_event(change)]
    code, stdout, _ = run_cli(capsys, "audit", str(plan), "--json", "--state-dir", str(state))
    audit: dict[str, Any] = validated(stdout)
    assert [e["data"] for e in audit["events"] if e["kind"] == "target"] == [change]

    # `status` asks every registered target for its sessions: no target name in the command
    code, stdout, _ = run_cli(capsys, "status", str(plan), "--json", "--state-dir", str(state))
    assert code == 0 and [s["name"] for s in validated(stdout)["sessions"]] == ["widget"]
    code, stdout, _ = run_cli(capsys, "status", str(plan), "--state-dir", str(state))
    assert code == 0 and "widget" in stdout


def test_a_plan_that_does_not_use_the_target_needs_nothing_from_it(
    tmp_path: Path, out: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(TARGETS, "toy", ToyTarget)
    plan = write_plan(tmp_path, CounterPlan([Step()]))
    state = tmp_path / "state"
    code, stdout, err = run_cli(
        capsys, "apply", str(plan), "--target", "toy", "--non-interactive", "--state-dir", str(state)
    )
    assert code == 0, stdout + err
    assert not (state / "toy").exists(), "no prerequisites checked, no environment made"
    ls = parse_file(str(plan)).live_state
    # the ledger names no target for a plan that uses none
    assert ls is not None and " target" not in str(ls.data["last_action"]) and "target" not in ls.data

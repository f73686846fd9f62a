"""`--events`: the JSONL stream (schema `director.event/1`, docs/events.md) through the real CLI.

A consumer that sees only the events must be able to tell how a run went: which sections were applied or in
sync, where it stopped for a gate, who approved what, and how it ended.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.jsonschemas import validated_lines
from tests.planmaker import CounterPlan, Step, acts, director, write_plan

# slow: end to end through the real CLI, many runs; CI runs it with the rest
pytestmark = pytest.mark.slow

GATE = "🔴 *(`MODE=a` — outward-facing)*  /  🟡 *(`b`)*"
DOC = Path(__file__).resolve().parent.parent / "docs" / "events.md"
FINAL = {"completed", "failed", "interrupted", "awaiting-approval", "cancelled"}


def read_jsonl(text: str) -> list[dict[str, Any]]:
    events = validated_lines(text, "event")
    assert all(isinstance(e, dict) for e in events)
    return events


@dataclass
class Invocation:
    """What one `apply` told its listeners."""

    run_id: int | None = None
    resumed: bool = False
    inputs: dict[str, str] = field(default_factory=dict)
    verdicts: dict[str, str] = field(default_factory=dict)
    states: list[str] = field(default_factory=list)
    waiting_on: str | None = None
    approvals: list[dict[str, Any]] = field(default_factory=list)
    acted: list[str] = field(default_factory=list)
    output: dict[str, str] = field(default_factory=dict)


@dataclass
class Run:
    """A run as the events tell it, across the invocations that worked on it."""

    invocations: list[Invocation]

    @property
    def final_state(self) -> str:
        return self.invocations[-1].states[-1]

    @property
    def sections(self) -> dict[str, str]:
        """A section's latest verdict, over all invocations."""
        merged: dict[str, str] = {}
        for inv in self.invocations:
            merged.update(inv.verdicts)
        return merged


def replay(events: list[dict[str, Any]]) -> Run:
    """Rebuild the run from the events alone (an invocation starts where `seq` starts again at 1)."""
    invocations: list[Invocation] = []
    for ev in events:
        assert ev["schema"] == "director.event/1"
        if ev["seq"] == 1:
            invocations.append(Invocation())
        inv = invocations[-1]
        t = ev["type"]
        if t == "run.start":
            inv.run_id, inv.resumed = ev["run_id"], ev["resumed"]
        elif t == "inputs":
            inv.inputs = ev["values"]
        elif t == "section.verdict":
            inv.verdicts[ev["section"]] = ev["verdict"]
        elif t == "run.state" and ev["run_id"] == inv.run_id:
            inv.states.append(ev["to"])
        elif t == "gate" and ev["approved"] is False:
            inv.waiting_on = ev["section"]
        elif t == "approval":
            inv.approvals.append(ev)
        elif t == "step.start" and ev["role"] == "act":
            inv.acted.append(ev["section"])
        elif t == "step.output":
            inv.output[ev["section"]] = inv.output.get(ev["section"], "") + ev["text"]
    return Run(invocations)


def test_a_gate_stop_an_approval_and_a_resume_can_be_told_from_the_events_alone(
        tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE), Step()]))
    stream = tmp_path / "events.jsonl"
    r = director("apply", str(plan), "--events", str(stream), cwd=tmp_path, out=out)
    assert r.returncode == 4, r.stdout + r.stderr
    a = director("approve", str(plan), "2", "--yes", "--operator", "alice", cwd=tmp_path, out=out)
    assert a.returncode == 0, a.stdout + a.stderr
    r = director("apply", str(plan), "--events", str(stream), cwd=tmp_path, out=out)  # appended
    assert r.returncode == 0, r.stdout + r.stderr

    run = replay(read_jsonl(stream.read_text(encoding="utf-8")))
    first, second = run.invocations
    # the first invocation: §0 and §1 applied, then it stopped at §2's gate, §2 untouched
    assert (first.run_id, first.resumed, first.inputs) == (1, False, {"MODE": "a"})
    assert first.verdicts == {"0": "applied", "1": "applied"}
    assert first.waiting_on == "2" and "2" not in first.acted
    assert first.states == ["running", "awaiting-approval"]
    # the second resumed the same run: what was done is in sync, §2 ran on alice's receipt, the rest applied
    assert (second.run_id, second.resumed) == (1, True)
    assert second.verdicts == {"0": "in-sync", "1": "in-sync", "2": "applied", "3": "applied", "4": "verified"}
    assert second.acted == ["2", "3"]
    [approval] = second.approvals
    assert approval["section"] == "2" and re.fullmatch(r"[0-9a-f]{64}", approval["sha256"])
    assert approval["how"].startswith("receipt (approve-command by alice@")
    assert second.states == ["running", "completed"]
    assert run.final_state == "completed"
    assert run.sections == {"0": "in-sync", "1": "in-sync", "2": "applied", "3": "applied", "4": "verified"}
    assert "1: chain holds" in second.output["4"]
    # and the events agree with what really ran
    assert acts(out) == ["s1", "s2", "s3"]


def test_events_to_stdout_are_pure_jsonl_and_the_view_goes_to_stderr(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(extra="printf '\\033[32mgreen\\033[0m\\n'"), Step()]))
    r = director("apply", str(plan), "--events", "-", cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stderr
    events = read_jsonl(r.stdout)  # every stdout line is a JSON object
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    for e in events:
        assert e["schema"] == "director.event/1"
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00", e["ts"])
    types = [e["type"] for e in events]
    assert types[0] == "run.start"
    assert types.count("section.start") == types.count("section.verdict") == 4
    assert [e["to"] for e in events if e["type"] == "run.state"] == ["running", "completed"]
    outputs = "".join(e["text"] for e in events if e["type"] == "step.output")
    assert "green\n" in outputs and "\x1b" not in outputs, "step.output carries the text without its colours"
    assert "director: starting apply run 1" in r.stderr and "│ green" in r.stderr
    assert "\x1b" not in r.stderr


def test_every_event_type_and_field_emitted_is_documented(tmp_path: Path, out: Path) -> None:
    flaky = 'n=$(cat "$OUT/tries" 2>/dev/null || echo 0); echo $((n+1)) > "$OUT/tries"; [ "$n" -ge 1 ] || exit 1'
    cp = CounterPlan([Step(extra=flaky, info="bash {retries=2 backoff=constant delay=50ms}"), Step(marker=GATE)])
    plan = write_plan(tmp_path, cp)
    stream = tmp_path / "e.jsonl"
    assert director("apply", str(plan), "--events", str(stream), cwd=tmp_path, out=out).returncode == 4
    assert director("apply", str(plan), "--approve", "2", "--events", str(stream),
                    cwd=tmp_path, out=out).returncode == 0
    assert director("plan", str(plan), "--events", str(stream), cwd=tmp_path, out=out).returncode == 0
    assert director("teardown", str(plan), "--approve", "teardown", "--events", str(stream),
                    cwd=tmp_path, out=out).returncode == 0
    doc = DOC.read_text(encoding="utf-8")
    assert "director.event/1" in doc
    seen: dict[str, set[str]] = {}
    for e in read_jsonl(stream.read_text(encoding="utf-8")):
        seen.setdefault(e["type"], set()).update(e)
    assert {"run.start", "inputs", "run.state", "section.start", "section.verdict", "step.start", "step.output",
            "step.end", "step.retry", "gate", "approval", "ledger.write"} <= set(seen)
    for type_, fields in seen.items():
        m = re.search(rf"^### `{re.escape(type_)}`\n(.*?)(?=^### |\Z)", doc, re.MULTILINE | re.DOTALL)
        assert m, f"docs/events.md has no section for {type_}"
        for f in fields - {"schema", "seq", "ts", "type"}:
            assert f"`{f}`" in m.group(1), f"docs/events.md: {type_} does not document `{f}`"


def test_a_run_ends_with_a_run_end_event_carrying_the_exit_code(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    r = director("apply", str(plan), "--events", "-", cwd=tmp_path, out=out)
    assert r.returncode == 4
    last = read_jsonl(r.stdout)[-1]
    assert last["type"] == "run.end"
    assert (last["outcome"], last["section"], last["exit_code"]) == ("awaiting-approval", "2", 4)


def test_the_approval_event_names_who_approved(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 4
    assert director("approve", str(plan), "2", "--yes", "--operator", "alice", cwd=tmp_path, out=out).returncode == 0
    r = director("apply", str(plan), "--operator", "bob", "--events", "-", cwd=tmp_path, out=out)
    assert r.returncode == 0
    [approval] = [e for e in read_jsonl(r.stdout) if e["type"] == "approval"]
    assert approval["operator"] == "alice"


def test_preview_events_cover_every_section_of_the_table(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan())
    r = director("plan", str(plan), "--events", "-", cwd=tmp_path, out=out)
    assert r.returncode == 2
    verdicts = {e["section"]: e["verdict"] for e in read_jsonl(r.stdout) if e["type"] == "section.verdict"}
    assert verdicts == {"0": "observed", "1": "will-apply", "2": "blocked", "3": "blocked", "4": "will-verify"}

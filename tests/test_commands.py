"""The read-side commands and the CLI's edges through the real CLI: diff, check, status, audit, line endings,
YAML comments, and bad input (clear errors, distinct exit codes, the plan file untouched)."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from director.plan.parse import parse_file
from tests.jsonschemas import validated, validated_lines
from tests.planmaker import CounterPlan, Step, acts, director, write_plan

# slow: end to end through the real CLI, many runs; CI runs it with the rest
pytestmark = pytest.mark.slow

GATE = "🔴 *(`MODE=a` — outward-facing)*  /  🟡 *(`b`)*"
FLAKY = 'n=$(cat "$OUT/tries" 2>/dev/null || echo 0); echo $((n+1)) > "$OUT/tries"; [ "$n" -ge 1 ] || exit 1'


def _git(tmp: Path, *args: str) -> None:
    subprocess.run(
        [
            "git",
            "-c",
            "user.name=Test",
            "-c",
            "user.email=test@example.com",
            "-c",
            "commit.gpgsign=false",
            *args,
        ],
        cwd=tmp,
        check=True,
        capture_output=True,
    )


def _committed_plan(tmp: Path, plan: CounterPlan) -> Path:
    path = write_plan(tmp, plan)
    _git(tmp, "init", "-q", ".")
    _git(tmp, "add", path.name)
    _git(tmp, "commit", "-q", "-m", "the plan")
    return path


def _json(r: subprocess.CompletedProcess[str]) -> Any:
    return validated(r.stdout)


# ----------------------------------------------------------------------------------------------- diff


def test_diff_against_head_shows_what_apply_realized(tmp_path: Path, out: Path) -> None:
    plan = _committed_plan(tmp_path, CounterPlan([Step(), Step()]))
    r = director("diff", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0 and "no changes" in r.stdout, r.stdout + r.stderr
    assert director("apply", str(plan), "--operator", "tester", cwd=tmp_path, out=out).returncode == 0

    r = director("diff", str(plan), "--json", cwd=tmp_path, out=out)
    assert r.returncode == 1, r.stdout + r.stderr
    d = _json(r)
    assert d["schema"] == "director.diff/1"
    yaml = {c["path"]: c for c in d["yaml"]}
    assert (yaml["status"]["op"], yaml["status"]["old"], yaml["status"]["new"]) == (
        "changed",
        "not-created",
        "live",
    )
    assert yaml["last_action"]["new"].endswith(
        "apply run 1: applied §0–§2; verified §3"
    )
    assert yaml["resolved_inputs.resolved_by"] == {
        "op": "added",
        "path": "resolved_inputs.resolved_by",
        "old": None,
        "new": "tester",
    }
    assert {c["key"]: (c["old"], c["new"]) for c in d["kv"]} == {
        "NAME": ("`chain-${MODE}` (the chain)", "`chain-a` (the chain)"),
        "V1": ("`${V1}`", "`value-1-a`"),
        "V2": ("`${V2}`", "`value-2-a`"),
    }
    checks = {(c["name"], c["field"]): (c["old"], c["new"]) for c in d["checks"]}
    assert checks[("s2 exists", "observed")] == ("—", "s2 present")
    assert checks[("chain complete", "observed")] == ("—", "1: chain holds")
    assert re.fullmatch(r"✅ \d{4}-\d\d-\d\d", checks[("chain complete", "result")][1])

    human = director("diff", str(plan), cwd=tmp_path, out=out)
    assert human.returncode == 1
    assert re.search(r"- status +not-created", human.stdout) and re.search(r"\+ status +live", human.stdout)
    assert re.search(r"\+ V1 +`value-1-a`", human.stdout)

    # commit the applied plan: nothing differs from HEAD any more, and HEAD~1 is the template
    _git(tmp_path, "commit", "-q", "-am", "applied")
    r = director("diff", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout
    r = director("diff", str(plan), "--against", "HEAD~1", "--json", cwd=tmp_path, out=out)
    assert r.returncode == 1 and {c["key"] for c in _json(r)["kv"]} == {"NAME", "V1", "V2"}


def test_diff_last_run_compares_with_the_plan_before_the_last_run(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step()]))
    r = director("diff", str(plan), "--last-run", cwd=tmp_path, out=out)
    assert r.returncode == 64 and "no run recorded" in r.stderr  # a usage problem, not "differences"
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    r = director("diff", str(plan), "--last-run", "--json", cwd=tmp_path, out=out)
    assert r.returncode == 1
    assert {c["key"] for c in _json(r)["kv"]} == {"NAME", "V1"}, "the first run realized the key/value cells"
    # a second, in-sync apply changes nothing: the plan file stays as the run before it left it
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    r = director("diff", str(plan), "--last-run", "--json", cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout
    d = _json(r)
    assert d["kv"] == [] and d["checks"] == [] and d["yaml"] == []


def test_diff_outside_git_or_at_an_unknown_revision_is_a_usage_error(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step()]))
    r = director("diff", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 64 and "not inside a git repository" in r.stderr
    _git(tmp_path, "init", "-q", ".")
    _git(tmp_path, "add", plan.name)
    _git(tmp_path, "commit", "-q", "-m", "plan")
    r = director("diff", str(plan), "--against", "no-such-rev", cwd=tmp_path, out=out)
    assert r.returncode == 64 and "no-such-rev" in r.stderr


# ---------------------------------------------------------------------------------------------- check


def test_check_reports_drift_after_a_resource_is_deleted_and_in_sync_after_reapply(
    tmp_path: Path, out: Path
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(), Step()]))
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    r = director("check", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0 and "in sync with the ledger" in r.stdout, r.stdout
    before = plan.read_bytes()

    (out / "s2").unlink()  # what §2 created is gone
    r = director("check", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 2, r.stdout + r.stderr
    drift = [ln for ln in r.stdout.splitlines() if ln.startswith("drift:")]
    assert drift == [
        "drift: §2 Step 2: observed: its verify failed (exit 1)",
        f"drift: check row 's2 exists': ledger says {parse_file(str(plan)).live_state.check_rows[2].result}, "  # type: ignore[union-attr]
        "observed: failed: s2 missing",
    ]
    assert plan.read_bytes() == before, "check is read-only"
    assert acts(out) == ["s1", "s2", "s3"], "check never acts"

    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0 and acts(out) == ["s1", "s2", "s3", "s2"]
    r = director("check", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0 and "in sync with the ledger" in r.stdout, r.stdout


# --------------------------------------------------------------------------------------------- status


def test_status_json_fields(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker=GATE)]))
    s = _json(director("status", str(plan), "--json", cwd=tmp_path, out=out))
    assert s["last_run"] is None and s["live_state"]["status"] == "not-created" and s["sections"] == []

    assert director("apply", str(plan), "--operator", "alice", cwd=tmp_path, out=out).returncode == 4
    s = _json(director("status", str(plan), "--json", cwd=tmp_path, out=out))
    assert set(s) == {"schema", "plan", "title", "live_state", "last_run", "sections", "lease", "sessions", "processes", "state"}
    assert s["schema"] == "director.status/1" and s["processes"] == []  # the counter plan starts none
    assert s["plan"] == str(plan) and s["title"] == "Counter — a plan written for Director's tests"
    assert set(s["live_state"]) == {"status", "last_action", "last_verified", "target", "kv", "checks"}
    kv = {r["key"]: r for r in s["live_state"]["kv"]}  # the clean value, its remark, the cell as written
    assert (kv["NAME"]["value"], kv["NAME"]["remark"], kv["NAME"]["cell"]) == ("chain-${MODE}", "the chain", "`chain-${MODE}` (the chain)")
    assert {r["name"] for r in s["live_state"]["checks"]} >= {"chain complete"}
    # §1 applied, the run waits at §2: the ledger says what exists; a plan that runs no wrangler has no target
    assert s["live_state"]["status"] == "partially applied" and s["live_state"]["target"] is None
    lr = s["last_run"]
    assert set(lr) == {
        "id",
        "kind",
        "state",
        "target",
        "operator",
        "created_at",
        "updated_at",
        "waiting_on",
        "inputs",
    }
    assert (lr["id"], lr["kind"], lr["state"], lr["operator"], lr["waiting_on"], lr["inputs"]) == (
        1,
        "apply",
        "awaiting-approval",
        "alice",
        "2",
        {"MODE": "a"},
    )
    sections = {x["key"]: x for x in s["sections"]}
    assert list(sections) == ["0", "1", "2", "3", "teardown"]
    assert sections["1"]["last_success"] is not None and sections["2"]["last_success"] is None
    assert s["lease"] is None and s["sessions"] == []

    assert director("apply", str(plan), "--approve", "2", cwd=tmp_path, out=out).returncode == 0
    s = _json(director("status", str(plan), "--json", cwd=tmp_path, out=out))
    assert (s["last_run"]["state"], s["last_run"]["waiting_on"], s["live_state"]["status"]) == (
        "completed",
        None,
        "live",
    )
    assert all(x["last_success"] for x in s["sections"] if x["key"] != "teardown")
    human = director("status", str(plan), cwd=tmp_path, out=out)
    assert human.returncode == 0 and "apply #1: completed" in human.stdout


# ---------------------------------------------------------------------------------------------- audit


def _audited_plan(tmp: Path, out: Path) -> Path:
    """A run with a retried step, a gate approved by `director approve`, then a teardown approved by flag."""
    plan = write_plan(
        tmp, CounterPlan([Step(extra=FLAKY, info="bash {retries=2 delay=10ms}"), Step(marker=GATE)])
    )
    assert (
        director("apply", str(plan), "--set", "mode=a", "--operator", "alice", cwd=tmp, out=out).returncode
        == 4
    )
    assert director("approve", str(plan), "2", "--yes", "--operator", "bob", cwd=tmp, out=out).returncode == 0
    assert director("apply", str(plan), "--operator", "alice", cwd=tmp, out=out).returncode == 0
    r = director("teardown", str(plan), "--approve", "teardown", "--operator", "carol", cwd=tmp, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    return plan


def test_audit_json_and_jsonl_show_runs_transitions_steps_approvals_and_inputs(
    tmp_path: Path, out: Path
) -> None:
    plan = _audited_plan(tmp_path, out)
    d = _json(director("audit", str(plan), "--json", cwd=tmp_path, out=out))
    assert [(r["id"], r["kind"], r["state"], r["operator"]) for r in d["runs"]] == [
        (1, "apply", "completed", "alice"),
        (2, "teardown", "completed", "carol"),
    ]
    assert [(t["from_state"], t["to_state"]) for t in d["transitions"] if t["run_id"] == 1] == [
        (None, "pending"),
        ("pending", "running"),
        ("running", "awaiting-approval"),
        ("awaiting-approval", "running"),
        ("running", "completed"),
    ]
    assert all(t["at"] and t["reason"] for t in d["transitions"])
    flaky = [
        (s["attempt"], s["state"], s["exit_code"])
        for s in d["steps"]
        if s["step_key"] == "1/0" and s["role"] == "act"
    ]
    assert flaky == [(1, "failed", 1), (2, "succeeded", 0)]
    assert all(
        {"started_at", "finished_at", "duration_s", "fingerprint", "output"} <= set(s) for s in d["steps"]
    )

    receipts = [(a["section_key"], a["operator"], a["how"], a["run_id"]) for a in d["approvals"]]
    assert receipts == [("2", "bob", "approve-command", None), ("teardown", "carol", "flag", 2)]
    for a in d["approvals"]:
        assert a["host"] and re.fullmatch(r"[0-9a-f]{64}", a["sha256"])
        assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", a["at"])
        assert a["content"]["commands"], "the receipt keeps what was approved"

    inputs = [e for e in d["events"] if e["kind"] == "inputs-resolved"]
    assert [(e["run_id"], e["data"]["values"], e["data"]["how"], e["data"]["operator"]) for e in inputs] == [
        (1, {"MODE": "a"}, {"MODE": "flag"}, "alice"),
        (1, {"MODE": "a"}, {"MODE": "previous"}, "alice"),
        (2, {"MODE": "a"}, {"MODE": "previous"}, "carol"),
    ]
    # the plan text each run started from is summarised, not dumped
    assert all(e["data"]["text"].endswith(" chars>") for e in d["events"] if e["kind"] == "plan-before-run")

    lines = validated_lines(director("audit", str(plan), "--jsonl", cwd=tmp_path, out=out).stdout)
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for rec in lines:
        by_kind.setdefault(rec["record"], []).append(rec)
    assert {"run", "transition", "step", "approval", "event"} <= set(by_kind)
    assert len(by_kind["run"]) == 2 and len(by_kind["approval"]) == 2
    assert len(by_kind["step"]) == len(d["steps"]) and len(by_kind["transition"]) == len(d["transitions"])


def test_audit_human_view(tmp_path: Path, out: Path) -> None:
    plan = _audited_plan(tmp_path, out)
    r = director("audit", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stderr
    assert "run 1 apply by alice: completed" in r.stdout
    assert "awaiting-approval → running" in r.stdout
    assert "approval receipts" in r.stdout and "bob" in r.stdout and "approve-command" in r.stdout


def test_audit_before_any_run(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step()]))
    d = _json(director("audit", str(plan), "--json", cwd=tmp_path, out=out))
    assert d["runs"] == [] and d["steps"] == []
    r = director("audit", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0 and "no runs recorded" in r.stdout


# ------------------------------------------------------------------------------ line endings, comments


def test_crlf_plan_keeps_crlf_on_every_line_through_apply_and_teardown(tmp_path: Path, out: Path) -> None:
    plan = tmp_path / "crlf.md"
    plan.write_bytes(CounterPlan([Step(), Step()]).text().replace("\n", "\r\n").encode())
    original = plan.read_bytes()
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    data = plan.read_bytes()
    assert data != original and b"live" in data
    assert re.findall(rb"(?<!\r)\n", data) == [], "every line still ends with CRLF"
    assert data.endswith(b"\r\n") and b"\r\r" not in data
    ls = parse_file(str(plan)).live_state
    assert ls is not None and ls.data["status"] == "live"
    assert {r.key: r.value for r in ls.kv_rows}["V2"] == "`value-2-a`"
    assert director("teardown", str(plan), "--approve", "teardown", cwd=tmp_path, out=out).returncode == 0
    data = plan.read_bytes()
    assert re.findall(rb"(?<!\r)\n", data) == [] and b"status:        gone" in data
    head = original.index(b"## Live State")
    assert data[:head] == original[:head]


def test_comments_in_the_live_state_yaml_survive_write_back_except_those_on_replaced_values(
    tmp_path: Path, out: Path
) -> None:
    text = (
        CounterPlan([Step()])
        .text()
        .replace(
            "```yaml\nstatus:",
            "```yaml\n# Director owns the values below; these comments are the author's.\nstatus:",
        )
        .replace("last_verified: —\n", "last_verified: —\n# a comment between keys\n")
    )
    plan = tmp_path / "commented.md"
    plan.write_text(text)
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    after = plan.read_text()
    block = after[after.index("```yaml") : after.index("```", after.index("```yaml") + 3)]
    lines = block.splitlines()
    assert lines[1] == "# Director owns the values below; these comments are the author's."
    # a comment at the end of a value Director replaced described that value (the template's): it goes
    assert lines[2] == "status:        live"
    assert "# a comment between keys" in lines
    assert lines.index("# a comment between keys") == 1 + lines.index(
        next(ln for ln in lines if ln.startswith("last_verified:"))
    )
    assert "#" not in next(ln for ln in lines if ln.startswith("resolved_inputs:"))


# ---------------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "cmd", ["apply", "teardown", "plan", "check", "status", "audit", "diff", "lint", "show"]
)
def test_missing_plan_file_is_a_usage_error(tmp_path: Path, out: Path, cmd: str) -> None:
    r = director(cmd, str(tmp_path / "nope.md"), cwd=tmp_path, out=out)
    assert r.returncode == 64, r.stdout + r.stderr
    assert f"no such file: {tmp_path / 'nope.md'}" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / ".director").exists()


def test_missing_plan_file_for_approve(tmp_path: Path, out: Path) -> None:
    r = director("approve", str(tmp_path / "nope.md"), "2", cwd=tmp_path, out=out)
    assert r.returncode == 64 and "no such file" in r.stderr


# name -> (how to mangle the plan text, the line it leaves that the error must name, the reason given)
MANGLES: dict[str, tuple[Callable[[str], str], str, str]] = {
    "marker": (
        lambda t: t.replace("## 2. Step 2  🟢", "## 2. Step 2  🟣"),
        "## 2. Step 2  🟣",
        "unknown marker",
    ),
    "duplicate": (
        lambda t: t.replace("## 3. Acceptance", "## 1. Acceptance"),
        "## 1. Acceptance  ✔",
        "duplicate section",
    ),
    "retry": (
        lambda t: t.replace('```bash\necho "s1"', '```bash {retries=many}\necho "s1"'),
        "```bash {retries=many}",
        "retries",
    ),
}


@pytest.mark.parametrize(
    ("cmd", "mangled"),
    [(cmd, "marker") for cmd in ("apply", "teardown", "plan", "check", "lint", "show", "status")]
    + [("apply", "duplicate"), ("apply", "retry")],
)
def test_malformed_plan_names_file_and_line_and_is_left_untouched(
    tmp_path: Path, out: Path, cmd: str, mangled: str
) -> None:
    mangle, line, reason = MANGLES[mangled]
    plan = tmp_path / "bad.md"
    plan.write_text(mangle(CounterPlan([Step(), Step()]).text()))
    before = plan.read_bytes()
    lineno = plan.read_text().splitlines().index(line) + 1
    r = director(cmd, str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 65, r.stdout + r.stderr
    assert f"{plan}:{lineno}:" in r.stderr and reason in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    assert plan.read_bytes() == before and acts(out) == []


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--set", "colour=red"), "--set 'colour=red': the plan has no input setting 'colour'"),
        (("--set", "mode"), "--set 'mode': expected KNOB=value"),
        (("--set", "mode=z"), "a / b"),
        # click's own words vary between versions ("(env var: …)", quotes): the parts Director controls
        (("--target", "mars"), "unknown target 'mars'; choose one of: cloudflare, local"),
        (("--step-timeout", "0"), "--step-timeout"),
        (("--no-such-option",), "--no-such-option"),
    ],
    ids=["unknown-knob", "no-equals", "bad-value", "unknown-target", "timeout", "unknown-option"],
)
def test_bad_options_are_usage_errors_that_name_the_option(
    tmp_path: Path, out: Path, args: tuple[str, ...], needle: str
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step()]))
    before = plan.read_bytes()
    r = director("apply", str(plan), *args, cwd=tmp_path, out=out)
    assert r.returncode == 64, r.stdout + r.stderr
    assert needle in r.stderr, r.stderr
    assert plan.read_bytes() == before and acts(out) == []
    assert not (tmp_path / ".director" / plan.name / "journal.sqlite3").exists(), "no run was recorded"


def test_exit_codes_are_distinct(tmp_path: Path, out: Path) -> None:
    """One plan walked through: changes (2), gate (4), failure (3), findings (1), ok (0) — never confused."""
    plan = write_plan(tmp_path, CounterPlan([Step(marker=GATE), Step(extra='[ -f "$OUT/fixed" ] || exit 1')]))
    assert director("plan", str(plan), cwd=tmp_path, out=out).returncode == 2
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 4
    assert director("apply", str(plan), "--approve", "1", cwd=tmp_path, out=out).returncode == 3
    (out / "fixed").touch()
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    assert director("plan", str(plan), cwd=tmp_path, out=out).returncode == 0

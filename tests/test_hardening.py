"""Issue 14 through the real CLI: temp files follow the lease (6), the audit names why a step re-ran (7),
`director unlock` (8)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from director.state.journal import Journal
from tests.planmaker import CounterPlan, Step, acts, director, write_plan

# slow: end to end through the real CLI, many runs; CI runs it with the rest
pytestmark = pytest.mark.slow


def _audit(plan: Path, tmp: Path, out: Path) -> dict[str, Any]:
    r = director("audit", str(plan), "--json", cwd=tmp, out=out)
    assert r.returncode == 0, r.stderr
    data: dict[str, Any] = json.loads(r.stdout)
    return data


def _acts_steps(data: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(s["step_key"], s["state"], s["flags"]) for s in data["steps"] if s["role"] == "act"]


# --------------------------------------------------------------- 6. temp files follow the lease

# Director, run with the atomic writer's test hook: SIGKILL itself once the plan's temp file is durable
# (right before the rename that would replace the plan).
_KILL_IN_LEDGER_WRITE = textwrap.dedent(
    """
    import glob, os, signal, sys
    from director import files
    from director.cli import main

    plan = os.path.abspath(sys.argv[2])
    pattern = os.path.join(os.path.dirname(plan), "." + os.path.basename(plan) + ".*.director-tmp")

    def hook():
        if glob.glob(pattern):
            os.kill(os.getpid(), signal.SIGKILL)

    files._before_replace = hook
    main(sys.argv[1:])
    """
)


def test_a_sigkill_during_a_ledger_write_leaves_a_temp_file_the_next_run_removes_at_once(
    tmp_path: Path, out: Path
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step()]))
    text = plan.read_bytes()
    env = dict(os.environ, COUNTER_OUT=str(out), CI="1", NO_COLOR="1")
    killed = subprocess.run(
        [sys.executable, "-c", _KILL_IN_LEDGER_WRITE, "apply", str(plan)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
    )
    assert killed.returncode == -signal.SIGKILL
    assert plan.read_bytes() == text  # the rename never happened
    [temp] = tmp_path.glob(".counter.md.*.director-tmp")
    owner = int(temp.name.split(".")[3])  # `.counter.md.<pid>.<random>.director-tmp`
    # The next run takes the lease over from that dead pid and removes its temp file at once (it is
    # seconds old: no age rule), then completes.
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert list(tmp_path.glob(".counter.md.*")) == []
    takeovers = [e for e in _audit(plan, tmp_path, out)["events"] if e["kind"] == "lease-takeover"]
    assert [t["data"]["previous"]["pid"] for t in takeovers] == [owner]


def test_a_live_writers_temp_file_is_never_taken(tmp_path: Path, out: Path) -> None:
    # Another plan's writer (or this plan's under another --state-dir) that is still running: its pid is
    # alive, so its temp file stays, however old.
    plan = write_plan(tmp_path, CounterPlan([Step()]))
    live = tmp_path / f".counter.md.{os.getpid()}.abcd1234.director-tmp"
    live.write_text("partial")
    os.utime(live, (1, 1))
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    assert live.exists()


# --------------------------------------------------------------------- 7. why a step re-ran

# Kills the Director process running the block (its nearest ancestor running `-m director`), once per
# marker file: the block is "running when Director died".
_KILL_ONCE = (
    '[ -e "$OUT/{m}" ] || {{ touch "$OUT/{m}"; p=$PPID; '
    'while [ "$p" -gt 1 ] && ! tr "\\0" " " < /proc/$p/cmdline | grep -q -- "-m director"; '
    'do p=$(ps -o ppid= -p "$p" | tr -d " "); done; [ "$p" -gt 1 ] && kill -9 "$p"; sleep 5; }}'
)


def test_rerun_after_crash_only_for_the_step_running_when_director_died_and_observed_missing_otherwise(
    tmp_path: Path, out: Path
) -> None:
    plan = write_plan(
        tmp_path,
        CounterPlan([Step(), Step(extra=_KILL_ONCE.format(m="k2")), Step(extra=_KILL_ONCE.format(m="k3"))]),
    )
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == -signal.SIGKILL  # in §2's act
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == -signal.SIGKILL  # in §3's act
    # §2 finished before that second crash; now its resource disappears: observation finds it missing.
    (out / "s2").unlink()
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    steps = _acts_steps(_audit(plan, tmp_path, out))
    assert [s for s in steps if s[0] == "2/0"] == [
        ("2/0", "interrupted", {}),  # running when Director died (first crash)
        ("2/0", "succeeded", {"rerun_after_crash": True}),
        ("2/0", "succeeded", {"rerun": "observed-missing"}),  # finished before the second crash
    ]
    assert [s for s in steps if s[0] == "3/0"] == [
        ("3/0", "interrupted", {}),
        ("3/0", "succeeded", {"rerun_after_crash": True}),
    ]
    assert all(not f for k, _, f in steps if k in ("0/0", "1/0"))
    assert "(re-run: it was running when Director died)" in r.stdout
    # the table says it too
    table = director("audit", str(plan), cwd=tmp_path, out=out).stdout
    assert "observed-missing" in table and "rerun_after_crash" in table


def test_a_section_changed_since_its_last_success_says_so_and_a_fresh_one_says_nothing(
    tmp_path: Path, out: Path
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(), Step()]))
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    plan.write_text(plan.read_text().replace('export V2="value-2-$MODE"', 'export V2="value-2b-$MODE"'))
    (out / "s2").unlink()
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    steps = _acts_steps(_audit(plan, tmp_path, out))
    assert [f for k, _, f in steps if k == "2/0"] == [{}, {"rerun": "changed"}]
    assert [f for k, _, f in steps if k == "1/0"] == [{}]


def test_a_step_stopped_by_ctrl_c_is_not_a_rerun_after_crash(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(extra="sleep 30")]))
    env = dict(os.environ, COUNTER_OUT=str(out), CI="1", NO_COLOR="1")
    p = subprocess.Popen([sys.executable, "-m", "director", "apply", str(plan)], cwd=tmp_path, env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + 60
    while "s1" not in acts(out) and time.monotonic() < deadline:
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    assert p.wait(timeout=60) == 130
    plan.write_text(plan.read_text().replace("sleep 30", "sleep 0"))
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    flags = [f for k, _, f in _acts_steps(_audit(plan, tmp_path, out)) if k == "1/0"]
    assert flags == [{}, {}]


def test_an_observation_killed_from_outside_is_no_evidence_and_reapplies_nothing(
    tmp_path: Path, out: Path
) -> None:
    # §1's verify kills its own bash (as the OOM killer or an operator would) when armed.
    plan = write_plan(tmp_path, CounterPlan([Step(), Step()]))
    text = plan.read_text()
    plan.write_text(
        text.replace(
            "# ✔ s1 exists\n", '# ✔ s1 exists\n[ -e "$OUT/armed" ] && { rm "$OUT/armed"; kill -9 $$; }\n'
        )
    )
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    (out / "armed").touch()
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 3 and "observation was killed (signal 9)" in r.stdout, r.stdout + r.stderr
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    assert acts(out).count("s1") == 1  # never re-applied on a killed observation


# ------------------------------------------------------------------------------ 8. director unlock


def _held_elsewhere(plan: Path, tmp: Path, out: Path) -> None:
    """A finished apply, then a holder recorded by a process on another host that never released."""
    assert director("apply", str(plan), cwd=tmp, out=out).returncode == 0
    with Journal.open(tmp / ".director" / plan.name / "journal.sqlite3") as j:
        j.set_lease_holder(4242, "elsewhere", "apply", datetime(2026, 1, 2, tzinfo=UTC))


def test_a_lease_left_on_another_host_is_broken_by_unlock_confirmed_and_audited(
    tmp_path: Path, out: Path
) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step()]))
    _held_elsewhere(plan, tmp_path, out)
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 5 and "pid 4242 on host elsewhere" in r.stderr
    assert f"director unlock {plan}" in r.stderr and "--force" not in r.stderr  # only what exists
    # no terminal to ask: it must be confirmed with --yes
    r = director("unlock", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 64 and "--yes" in r.stderr and "elsewhere" in r.stderr
    r = director("unlock", str(plan), "--yes", "--operator", "alice", cwd=tmp_path, out=out)
    assert r.returncode == 0 and "pid 4242 on host elsewhere" in r.stdout, r.stdout + r.stderr
    [ev] = [e for e in _audit(plan, tmp_path, out)["events"] if e["kind"] == "lease-takeover"]
    assert ev["data"]["previous"]["host"] == "elsewhere" and ev["data"]["operator"] == "alice"
    assert ev["data"]["how"] == "director unlock"
    assert director("apply", str(plan), cwd=tmp_path, out=out).returncode == 0
    r = director("unlock", str(plan), "--yes", cwd=tmp_path, out=out)
    assert r.returncode == 64 and "not locked" in r.stderr


def test_unlock_refuses_a_holder_running_on_this_host(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step(extra="sleep 30")]))
    env = dict(os.environ, COUNTER_OUT=str(out), CI="1", NO_COLOR="1")
    p = subprocess.Popen([sys.executable, "-m", "director", "apply", str(plan)], cwd=tmp_path, env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while "s1" not in acts(out) and time.monotonic() < deadline:
            time.sleep(0.05)
        r = director("unlock", str(plan), "--yes", cwd=tmp_path, out=out)
        assert (
            r.returncode == 5 and f"pid {p.pid}" in r.stderr and "never breaks a running holder" in r.stderr
        )
        assert p.poll() is None  # untouched
        # its lease message offers nothing that does not exist
        r = director("apply", str(plan), cwd=tmp_path, out=out)
        assert r.returncode == 5 and "--force" not in r.stderr and "director unlock" not in r.stderr
    finally:
        p.kill()
        p.wait()
    # dead now (the kernel dropped its lock): unlock forgets it without asking
    r = director("unlock", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    [ev] = [e for e in _audit(plan, tmp_path, out)["events"] if e["kind"] == "lease-takeover"]
    assert ev["data"]["reason"] == "holder-dead" and ev["data"]["previous"]["pid"] == p.pid


# ------------------------------------------------------------ a secret minted by a block that is killed


def test_a_secret_a_killed_block_minted_and_printed_never_reaches_the_journal_or_plan(
    tmp_path: Path, out: Path
) -> None:
    # The block mints a password, prints it, and its bash dies before reporting its session: Director never
    # learns the value, so it cannot mask it; the block's output is then not stored at all.
    mint = 'export DB_PASSWORD="pw-$(od -An -N12 -tx1 /dev/urandom | tr -d " \\n")"; echo "$DB_PASSWORD" > "$OUT/pw"; echo "minted $DB_PASSWORD"; kill -9 $$'
    plan = write_plan(tmp_path, CounterPlan([Step(extra=mint)]))
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 3, r.stdout + r.stderr
    secret = (out / "pw").read_text().strip().encode()
    state = tmp_path / ".director"
    assert [p for p in [plan, *state.rglob("*")] if p.is_file() and secret in p.read_bytes()] == []
    steps = _audit(plan, tmp_path, out)["steps"]
    assert any("output not stored: the block sets DB_PASSWORD" in (s["output"] or "") for s in steps)


def test_unlock_asks_at_a_terminal_and_a_no_keeps_the_lease(tmp_path: Path, out: Path) -> None:
    import pexpect

    plan = write_plan(tmp_path, CounterPlan([Step()]))
    _held_elsewhere(plan, tmp_path, out)
    env = {**os.environ, "COUNTER_OUT": str(out), "NO_COLOR": "1"}
    env.pop("CI", None)
    for answer, code in (("n", 64), ("y", 0)):
        child = pexpect.spawn(sys.executable, ["-m", "director", "unlock", str(plan)], cwd=str(tmp_path), env=env,
                              encoding="utf-8", timeout=60)  # fmt: skip
        child.expect("pid 4242 on host elsewhere")
        child.expect(r"Break the lease\? Only if that process is gone \[y/N\]: ")
        child.sendline(answer)
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == code, child.before
    takeovers = [e for e in _audit(plan, tmp_path, out)["events"] if e["kind"] == "lease-takeover"]
    assert len(takeovers) == 1  # only the "y"

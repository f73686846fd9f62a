"""Processes through /proc: liveness (zombies and recycled pids), membership, the waiting-reader probe."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from director.exec.processes import (
    group_members,
    kill_session,
    pid_alive,
    proc_start_time,
    session_members,
    waiting_reader,
)

linux_only = pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs /proc")


def test_pid_alive_for_this_process_and_a_reaped_one() -> None:
    assert pid_alive(os.getpid())
    p = subprocess.Popen(["true"])
    p.wait()
    assert not pid_alive(p.pid)
    assert not pid_alive(None) and not pid_alive(0) and not pid_alive(-1)


@linux_only
def test_a_zombie_is_dead_and_a_recycled_pid_is_not_the_recorded_process() -> None:
    p = subprocess.Popen(["true"])
    deadline = time.monotonic() + 5
    while pid_alive(p.pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not pid_alive(p.pid)  # exited but not reaped yet: a zombie
    p.wait()
    me = proc_start_time(os.getpid())
    assert me is not None and pid_alive(os.getpid(), me)
    assert not pid_alive(os.getpid(), str(int(me) + 1))


@linux_only
def test_members_of_a_new_session_and_killing_them_all() -> None:
    p = subprocess.Popen(
        [sys.executable, "-c", "import subprocess, time; subprocess.Popen(['sleep', '60']); time.sleep(60)"],
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 10
        while len(session_members(p.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        members = session_members(p.pid)
        assert p.pid in members and len(members) == 2
        assert sorted(group_members(p.pid)) == sorted(members)
        kill_session(
            p.pid, alive=lambda: p.poll() is None, grace_s=2.0, clock=time.monotonic, sleeper=time.sleep
        )
        assert session_members(p.pid) == [] and p.poll() is not None
    finally:
        if p.poll() is None:
            p.kill()
        p.wait()


@linux_only
def test_waiting_reader_sees_a_process_blocked_on_its_stdin_pipe() -> None:
    r, w = os.pipe()
    p = subprocess.Popen(["cat"], stdin=r, stdout=subprocess.DEVNULL, start_new_session=True)
    os.close(r)
    try:
        target = os.readlink(f"/proc/{p.pid}/fd/0")
        assert target.startswith("pipe:[")
        found = None
        deadline = time.monotonic() + 10
        while found is None and time.monotonic() < deadline:
            found = waiting_reader(p.pid, {target})
            time.sleep(0.02)
        if found is None:
            pytest.skip("read syscalls unknown on this architecture")
        assert found == (p.pid, "cat", target)
        assert waiting_reader(p.pid, {"pipe:[0]"}) is None
    finally:
        os.close(w)
        p.wait(timeout=10)


@linux_only
def test_marked_processes_their_unmarked_descendants_and_stopping_them_term_then_kill() -> None:
    from director.exec import marks

    plan = marks.plan_identity("p.md", f"test {os.getpid()} {time.monotonic()}")
    step = marks.step_marks(plan, 4, "2", 0, 9, keep=False)
    env = {**os.environ, marks.PLAN_VAR: plan, **step}
    # A marked bash that ignores SIGTERM (so does its child: an ignored signal is inherited) and starts a
    # child that cleared its environment; and a process of another plan, and an unmarked one.
    p = subprocess.Popen(
        ["bash", "-c", "trap '' TERM; env -i sleep 60 & wait"], env=env, start_new_session=True
    )
    other_env = {**os.environ, marks.PLAN_VAR: marks.plan_identity("p.md", "elsewhere")}
    others = [
        subprocess.Popen(["sleep", "60"], env=other_env, start_new_session=True),
        subprocess.Popen(["sleep", "60"], start_new_session=True),
    ]
    try:
        deadline = time.monotonic() + 30
        # until both are there and the child has exec'd sleep (under load `env -i` may still be running)
        while time.monotonic() < deadline and not (
            len(found := marks.marked(plan)) == 2 and any(m.command == "sleep" for m in found)
        ):
            time.sleep(0.02)
        assert len(found) == 2 and p.pid in {m.pid for m in found}
        parent = next(m for m in found if m.pid == p.pid)
        child = next(m for m in found if m.pid != p.pid)
        assert child.command == "sleep" and child.step == step[marks.STEP_VAR] and not child.kept
        assert parent.where == ("4", "2", "0", "9")
        assert marks.marked(plan, step_prefix=marks.step_prefix(plan, 4, "2", 0)) == found
        assert marks.marked(plan, step_prefix=marks.step_prefix(plan, 5, "2", 0)) == []
        assert marks.marked(plan, exclude={p.pid}) == []  # excluded, and so is what descends from it

        how = marks.stop(found, grace_s=0.3, clock=time.monotonic, sleeper=time.sleep)
        assert dict(how) == {parent: "SIGKILL", child: "SIGKILL"}  # both ignored SIGTERM
        assert not pid_alive(p.pid) and not pid_alive(child.pid)
        assert all(o.poll() is None for o in others)  # another plan's and an unmarked process: untouched
    finally:
        for q in (p, *others):
            if q.poll() is None:
                q.kill()
            q.wait()


@linux_only
def test_stop_returns_once_the_stopped_process_is_reaped_not_only_dead(tmp_path: object) -> None:
    """A process orphaned by a crashed Director is init's child, and an init that reaps on a timer keeps its
    zombie's pid: an act that runs next and asks `kill -0 "$(cat app.pid)"` took it for a live server. Here
    its parent reaps it one second after it died; `stop` returns only once it is gone from /proc."""
    from director.exec import marks

    parent = subprocess.Popen(
        [sys.executable, "-c",
         "import os, subprocess, sys, time\n"
         "c = subprocess.Popen(['sleep', '60'])\n"
         "print(c.pid, flush=True)\n"
         "while open(f'/proc/{c.pid}/stat').read().rsplit(')', 1)[1].split()[0] != 'Z':\n"
         "    time.sleep(0.01)\n"
         "time.sleep(1.0)\n"
         "c.wait()\n"
         "time.sleep(60)\n"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert parent.stdout is not None
        pid = int(parent.stdout.readline())
        start = proc_start_time(pid)
        assert start is not None
        proc = marks.Marked(pid=pid, start=start, command="sleep", step="", kept=False)
        how = marks.stop([proc], grace_s=2.0, clock=time.monotonic, sleeper=time.sleep)
        assert dict(how) == {proc: "SIGTERM"}
        assert not os.path.exists(f"/proc/{pid}"), "stop returned while the stopped process was a zombie"
    finally:
        parent.kill()
        parent.wait()


@pytest.mark.parametrize("step", ["plan/²/1/0/1", "plan/7/1/³/1", "plan/7/1/0/¹", "plan/٣/1/0/1"])
def test_a_process_whose_step_mark_is_not_ascii_digits_is_listed_not_a_traceback(step: str) -> None:
    """Any process can carry any DIRECTOR_STEP: `²` passes `str.isdigit` and fails `int()`. Numbers are
    ASCII digits or unknown (None)."""
    from director.exec import marks

    proc = marks.Marked(pid=1, start="0", command="sh", step=step, kept=False)
    data = proc.to_json()
    assert all(v is None or isinstance(v, int) for k, v in data.items() if k in ("run_id", "block", "attempt"))
    assert None in (data["run_id"], data["block"], data["attempt"])

"""The plan lease with real processes contending for it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from director.errors import LeaseHeld
from director.exec.processes import pid_alive
from director.state.journal import Journal
from director.state.lease import acquire

HOLDER = textwrap.dedent(
    """
    import sys, time
    from director.state.journal import Journal
    from director.state.lease import acquire
    j = Journal.open(sys.argv[1])
    lease = acquire(sys.argv[2], j, run_kind="teardown")
    print("held", flush=True)
    sys.stdin.readline()   # hold until told (or killed)
    lease.release()
    print("released", flush=True)
    """
)


@pytest.fixture
def paths(tmp_path: Path) -> tuple[Path, Path]:
    return tmp_path / ".director" / "plan.db", tmp_path / ".director" / "plan.lock"


@pytest.fixture
def holder(paths: tuple[Path, Path]) -> Iterator[subprocess.Popen[str]]:
    db, lock = paths
    p = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db), str(lock)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert p.stdout is not None
    assert p.stdout.readline().strip() == "held"
    yield p
    if p.poll() is None:
        p.kill()
    p.wait()


def test_acquire_release_and_reacquire(paths: tuple[Path, Path]) -> None:
    db, lock = paths
    with Journal.open(db) as j:
        with acquire(lock, j, run_kind="apply") as lease:
            assert lease.held
            row = j.lease_holder()
            assert row is not None and row.pid == os.getpid() and row.kind == "apply"
            lease.attach_run(7)
            row = j.lease_holder()
            assert row is not None and row.run_id == 7
            assert b'"run_id": 7' in lock.read_bytes()
        assert not lease.held
        assert j.lease_holder() is None and lock.read_bytes() == b""
        with acquire(lock, j, run_kind="apply"):
            pass
        assert j.events(kind="lease-takeover") == []


def test_second_process_is_refused_with_the_holder_named(
    paths: tuple[Path, Path], holder: subprocess.Popen[str]
) -> None:
    db, lock = paths
    with Journal.open(db) as j, pytest.raises(LeaseHeld) as e:
        acquire(lock, j, run_kind="apply")
    msg = str(e.value)
    assert f"pid {holder.pid}" in msg and "teardown" in msg and "since 20" in msg
    assert os.uname().nodename in msg
    # The holder releases cleanly: the lease is free again and nothing is taken over.
    assert holder.stdin is not None and holder.stdout is not None
    holder.stdin.write("\n")
    holder.stdin.flush()
    assert holder.stdout.readline().strip() == "released"
    holder.wait()
    with Journal.open(db) as j:
        with acquire(lock, j, run_kind="apply"):
            pass
        assert j.events(kind="lease-takeover") == []


def test_sigkilled_holder_is_taken_over_and_audited(
    paths: tuple[Path, Path], holder: subprocess.Popen[str]
) -> None:
    db, lock = paths
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    assert not pid_alive(holder.pid)
    with Journal.open(db) as j:
        with acquire(lock, j, run_kind="apply") as lease:
            assert lease.holder.pid == os.getpid()
        [ev] = j.events(kind="lease-takeover")
        assert ev.data["previous"]["pid"] == holder.pid
        assert ev.data["previous"]["kind"] == "teardown"
        assert ev.data["reason"] == "holder-dead"


def test_unreleased_holder_on_another_host_needs_force(paths: tuple[Path, Path]) -> None:
    db, lock = paths
    with Journal.open(db) as j:
        j.set_lease_holder(4242, "elsewhere", "apply", datetime(2025, 1, 1, tzinfo=UTC))
        with pytest.raises(LeaseHeld, match=r"pid 4242 on host elsewhere.*`director unlock PLAN`"):
            acquire(lock, j, run_kind="apply")
        with acquire(lock, j, run_kind="apply", force=True):
            pass
        [ev] = j.events(kind="lease-takeover")
        assert ev.data["reason"] == "other-host-forced"


def test_pid_alive() -> None:
    assert pid_alive(os.getpid())
    p = subprocess.Popen(["true"])
    p.wait()
    assert not pid_alive(p.pid)

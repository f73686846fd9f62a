"""Creating a plan's journal, and the lease, when processes race for them (through the real CLI).

- Two first applies of a fresh plan started together: one applies; the other applies after it (finding
  everything in sync) or is told the plan is being applied (exit 5); neither fails, each act runs once,
  the journal is sound. Before, each treated the journal as new and the loser deleted the file and its
  `-wal`/`-shm` while the winner created them (`database is locked`, `disk I/O error`, exit 70). Bounded
  here; `bench/race_first_runs.py` runs many more pairs.
- Hard links of one plan file, applied at once under their two names: the second is refused (exit 5),
  naming the file's device and inode (the lease is the file's, not only its path's).
- A journal that cannot be created: one line naming it and why (no permission, a full disk), exit 70,
  nothing left behind.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import forkserver
from tests.planmaker import CounterPlan, Step, acts, director, write_plan
from tests.race import first_runs

# slow: end to end through the real CLI, many runs; CI runs it with the rest
pytestmark = pytest.mark.slow

PAIRS = 20
NO_DAC = ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner"]


def test_two_first_runs_started_together_never_fail(tmp_path: Path) -> None:
    bad = []
    codes: dict[tuple[int, int], int] = {}
    for i in range(PAIRS):
        d = tmp_path / f"pair{i}"
        d.mkdir()
        pair = first_runs(d)
        codes[pair.codes] = codes.get(pair.codes, 0) + 1
        if not pair.ok:
            bad.append(
                f"pair {i}: exit {pair.codes}, acts {pair.acts}, journal {pair.integrity}: {pair.errors}"
            )
        shutil.rmtree(d)
    print(f"{PAIRS} pairs, exit codes: {codes}")
    assert bad == [], "\n".join(bad)


def test_two_first_runs_creating_the_journal_at_the_same_moment_never_fail(tmp_path: Path) -> None:
    """The same, each process held at the very start of the journal's creation until the other is there
    too (tests/barrier: the pairs above rarely overlap that closely on a loaded machine)."""
    bad = []
    for i in range(PAIRS // 2):
        d = tmp_path / f"pair{i}"
        d.mkdir()
        pair = first_runs(d, together=True)
        if not pair.ok:
            bad.append(f"pair {i}: exit {pair.codes}, acts {pair.acts}, journal {pair.integrity}: {pair.errors}")
        shutil.rmtree(d)
    assert bad == [], "\n".join(bad)


def _wait_for(path: Path, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_hard_links_of_one_plan_exclude_each_other(
    tmp_path: Path, out: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    env = {"DIRECTOR_STATE_URL": request.getfixturevalue("pg_url")} if backend == "postgresql" else {}
    # §1 holds the first run in its act until the test says so (no timing is assumed)
    hold = 'touch "$OUT/holding"; for _ in $(seq 1200); do [ -e "$OUT/go-on" ] && break; sleep 0.1; done'
    plan = write_plan(tmp_path, CounterPlan([Step(extra=hold), Step()]))
    link = tmp_path / "copy.md"
    os.link(plan, link)
    first = forkserver.Popen(
        [sys.executable, "-m", "director", "apply", str(plan)], cwd=tmp_path,
        env={**os.environ, "COUNTER_OUT": str(out), "CI": "1", **env}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        _wait_for(out / "holding")
        r = director("apply", str(link), cwd=tmp_path, out=out, env=env)
        assert r.returncode == 5, r.stdout + r.stderr
        st = os.stat(link)
        [line] = r.stderr.splitlines()
        assert (
            f"plan file {link} (device {st.st_dev}, inode {st.st_ino}) is being applied by another Director"
            in line
        ), line
        assert acts(out) == ["s1"]  # the second name ran nothing
    finally:
        (out / "go-on").touch()
        stdout, stderr = first.communicate(timeout=300)
    assert first.returncode == 0, stdout + stderr
    assert acts(out) == ["s1", "s2"]


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv")
def test_a_journal_that_cannot_be_created_is_one_line_naming_it_and_why(tmp_path: Path, out: Path) -> None:
    plan = write_plan(tmp_path, CounterPlan([Step()]))
    state = tmp_path / ".director" / plan.name
    (state / "workspace").mkdir(parents=True)
    (tmp_path / ".director" / ".gitignore").write_text("*\n")
    state.chmod(0o555)  # the state directory exists, but no file can be made in it
    try:
        e = {**os.environ, "COUNTER_OUT": str(out), "CI": "1", "NO_COLOR": "1"}
        r = forkserver.run(
            [*NO_DAC, sys.executable, "-m", "director", "apply", str(plan)], cwd=tmp_path, env=e,
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    finally:
        state.chmod(0o755)
    assert r.returncode == 70 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.splitlines() == [
        f"error: cannot create the journal {state / 'journal.sqlite3'}: Permission denied"
    ]
    assert sorted(p.name for p in state.iterdir()) == ["workspace"] and acts(out) == []

"""Bad input and faults through the real CLI (issue 14): never a traceback, always a one-line error naming the
path with the README's code, nothing run and nothing half-written.

Faults are real, not mocked: a full disk is a small tmpfs mounted for the test, and a directory without
write permission is one Director cannot write because the process runs without the capabilities that let
root ignore permissions (`setpriv --bounding-set=-dac_override,-dac_read_search,-fowner`: still root, the
files still root's, but their mode bits now bind it, exactly as for an ordinary user).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from director.errors import ExitCode
from tests import forkserver
from tests.planmaker import CounterPlan, Step, acts, write_plan

# slow: end to end through the real CLI, many runs; CI runs it with the rest
pytestmark = pytest.mark.slow

Result = subprocess.CompletedProcess[str]
DOCUMENTED = {int(c) for c in ExitCode}
NO_DAC = ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner"]
needs_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="mounting a tmpfs and dropping capabilities need root"
)


def run(
    *args: str, cwd: Path, out: Path, prefix: list[str] | None = None, env: dict[str, str] | None = None
) -> Result:
    e = dict(os.environ, COUNTER_OUT=str(out), CI="1", NO_COLOR="1", COLUMNS="400", **(env or {}))
    cmd = [*(prefix or []), sys.executable, "-m", "director", *args]
    return forkserver.run(cmd, cwd=cwd, env=e, capture_output=True, text=True, timeout=120)


def one_line_error(r: Result, code: int, *names: str) -> str:
    """The run ended with `code` and said why in one `error: …` line that names each of `names`."""
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == code, (r.returncode, r.stdout, r.stderr)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    for name in names:
        assert name in lines[0], (name, lines[0])
    return lines[0]


def tree(root: Path) -> dict[str, bytes | None]:
    """Every path under `root` with the content of files (to prove nothing was written)."""
    return {
        str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in sorted(root.rglob("*"))
    }


@pytest.fixture
def plan(tmp_path: Path) -> Path:
    return write_plan(tmp_path, CounterPlan([Step(), Step(marker="🔴")]))


# ------------------------------------------------------------------------------- the PLAN argument

COMMANDS = [
    ["show"], ["lint"], ["plan"], ["apply"], ["teardown"], ["check"], ["status"], ["audit"], ["diff"],
    ["approve", "{plan}", "1"], ["unlock"],
]  # fmt: skip


@pytest.mark.parametrize("cmd", COMMANDS, ids=lambda c: c[0])
def test_a_directory_as_plan_is_a_usage_error_naming_it(tmp_path: Path, out: Path, cmd: list[str]) -> None:
    d = tmp_path / "plans"
    d.mkdir()
    args = [a.replace("{plan}", str(d)) for a in cmd] if "{plan}" in cmd else [*cmd, str(d)]
    one_line_error(run(*args, cwd=tmp_path, out=out), 64, str(d), "directory")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "plans"]  # nothing created


def test_a_missing_plan_is_a_usage_error(tmp_path: Path, out: Path) -> None:
    one_line_error(run("apply", "nope.md", cwd=tmp_path, out=out), 64, "nope.md")


def test_a_plan_that_is_not_utf8_is_a_plan_error_and_stays_as_it_was(tmp_path: Path, out: Path) -> None:
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"# T\n\n## Live State\n\xff\xfe\n")
    for cmd in ("show", "apply"):
        one_line_error(run(cmd, str(bad), cwd=tmp_path, out=out), 65, "bad.md", "UTF-8")
    assert bad.read_bytes() == b"# T\n\n## Live State\n\xff\xfe\n"


def test_a_plan_without_live_state_is_refused_before_anything_runs(tmp_path: Path, out: Path) -> None:
    text = CounterPlan([Step()]).text()
    start, end = text.index("## Live State"), text.index("## Teardown")
    bare = tmp_path / "bare.md"
    bare.write_text(text[:start] + text[end:], encoding="utf-8")
    before = tree(tmp_path)
    for cmd in ("apply", "teardown", "check"):
        one_line_error(
            run(cmd, str(bare), cwd=tmp_path, out=out), 65, "bare.md", "no `## Live State` section"
        )
    assert tree(tmp_path) == before and acts(out) == []  # no block ran, no state directory


# ------------------------------------------------------------------------------------------ options


@pytest.mark.parametrize("cmd", ["apply", "teardown"])
def test_approving_a_section_the_plan_does_not_have_is_refused_like_director_approve(
    tmp_path: Path, out: Path, plan: Path, cmd: str
) -> None:
    before = tree(tmp_path)
    one_line_error(run(cmd, str(plan), "--approve", "99", cwd=tmp_path, out=out), 64, "--approve", "'99'")
    assert tree(tmp_path) == before
    # the same words as `director approve PLAN 99` (which needs a run first)
    assert run("apply", str(plan), "--approve", "2", cwd=tmp_path, out=out).returncode == 0
    one_line_error(run("approve", str(plan), "99", cwd=tmp_path, out=out), 64, "no section '99'")


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1", "0", "NaN"])
def test_a_step_timeout_that_is_not_a_positive_finite_number_is_refused(
    tmp_path: Path, out: Path, plan: Path, value: str
) -> None:
    before = tree(tmp_path)
    one_line_error(
        run("apply", str(plan), f"--step-timeout={value}", cwd=tmp_path, out=out), 64, "--step-timeout"
    )
    assert tree(tmp_path) == before


def test_state_dir_workdir_and_events_that_cannot_be_used_are_usage_errors(
    tmp_path: Path, out: Path, plan: Path
) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    before = tree(tmp_path)
    one_line_error(
        run("apply", str(plan), "--state-dir", str(afile), cwd=tmp_path, out=out), 64, "--state-dir"
    )
    one_line_error(run("apply", str(plan), "--workdir", str(afile), cwd=tmp_path, out=out), 64, "--workdir")
    one_line_error(run("apply", str(plan), "--events", str(tmp_path), cwd=tmp_path, out=out), 64, "--events")
    assert tree(tmp_path) == before


# -------------------------------------------------------------------------------- read-only plans


def test_a_read_only_plan_is_refused_before_anything_runs(tmp_path: Path, out: Path, plan: Path) -> None:
    plan.chmod(0o444)
    before = tree(tmp_path)
    for cmd in ("apply", "teardown"):
        one_line_error(run(cmd, str(plan), cwd=tmp_path, out=out), 64, str(plan), "read-only")
    assert tree(tmp_path) == before and acts(out) == []
    # reading it is fine
    assert run("plan", str(plan), cwd=tmp_path, out=out).returncode == 2


def test_a_plan_made_read_only_during_apply_is_never_replaced_and_the_run_resumes(
    tmp_path: Path, out: Path
) -> None:
    # §2's act makes the plan read-only and keeps a copy of what it then held.
    chmod = 'chmod 444 "$PLAN_FILE"; cp "$PLAN_FILE" "$OUT/at-chmod"; stat -c %i "$PLAN_FILE" > "$OUT/inode"'
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(extra=chmod), Step()]))
    env = {"PLAN_FILE": str(plan)}
    r = run("apply", str(plan), cwd=tmp_path, out=out, env=env)
    one_line_error(r, 7, str(plan), "read-only")
    assert plan.read_bytes() == (out / "at-chmod").read_bytes()  # not replaced, even by root
    assert str(plan.stat().st_ino) == (out / "inode").read_text().strip()
    assert not plan.stat().st_mode & stat.S_IWUSR
    assert not list(tmp_path.glob(".counter.md.*"))  # no temp file left beside it
    plan.chmod(0o644)
    r = run("apply", str(plan), cwd=tmp_path, out=out, env={"PLAN_FILE": str(tmp_path / "elsewhere")})
    assert r.returncode == 0, r.stdout + r.stderr
    assert acts(out).count("s2") == 1 and acts(out).count("s3") == 1  # resumed: §2 did not run again


# ------------------------------------------------------------------ permissions (capabilities dropped)


@pytest.fixture
def locked(tmp_path: Path) -> Iterator[Path]:
    """A directory with a plan in it that the test makes read-only; restored afterwards for cleanup."""
    d = tmp_path / "locked"
    d.mkdir()
    write_plan(d, CounterPlan([Step()]))
    yield d
    for p in [d, *d.rglob("*")]:
        if p.is_dir() and not p.is_symlink():
            p.chmod(0o755)


@needs_root
def test_the_plans_directory_not_writable(locked: Path, tmp_path: Path, out: Path) -> None:
    plan = locked / "counter.md"
    locked.chmod(0o555)
    before = tree(locked)
    # apply must write the plan back: refused up front, with the directory named
    one_line_error(
        run("apply", str(plan), cwd=tmp_path, out=out, prefix=NO_DAC), 64, str(locked), "cannot write"
    )
    # a preview writes no plan, but its state directory would be beside it
    line = one_line_error(run("plan", str(plan), cwd=tmp_path, out=out, prefix=NO_DAC), 70, str(locked))
    assert "Permission denied" in line and "--state-dir" in line
    assert tree(locked) == before and acts(out) == []
    # reading commands still work
    assert run("show", str(plan), cwd=tmp_path, out=out, prefix=NO_DAC).returncode == 0


@needs_root
def test_the_state_directory_not_writable(locked: Path, tmp_path: Path, out: Path) -> None:
    plan = locked / "counter.md"
    state = locked / ".director" / "counter.md"
    state.mkdir(parents=True)
    state.chmod(0o555)
    before = tree(locked)
    line = one_line_error(run("apply", str(plan), cwd=tmp_path, out=out, prefix=NO_DAC), 70, str(state))
    assert "Permission denied" in line
    other = tmp_path / "ro-state"
    other.mkdir(mode=0o555)
    line = one_line_error(
        run("apply", str(plan), "--state-dir", str(other / "s"), cwd=tmp_path, out=out, prefix=NO_DAC),
        70,
        str(other),
    )
    assert tree(locked) == before and acts(out) == [] and list(other.iterdir()) == []


@needs_root
def test_an_unreadable_plan_is_a_usage_error(locked: Path, tmp_path: Path, out: Path) -> None:
    plan = locked / "counter.md"
    plan.chmod(0)
    for cmd in ("show", "apply", "status"):
        r = run(cmd, str(plan), cwd=tmp_path, out=out, prefix=NO_DAC)
        assert r.returncode == 64 and "Traceback" not in r.stderr, r.stderr
        assert "not readable" in r.stderr and "counter.md" in r.stderr


# ------------------------------------------------------------------------------- a full disk (tmpfs)


@pytest.fixture
def small_disk() -> Iterator[Path]:
    """A 4 MiB tmpfs, mounted for the test and always unmounted."""
    d = Path(tempfile.mkdtemp(prefix="director-full-"))
    try:
        r = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=4m,mode=0755", "tmpfs", str(d)], capture_output=True
        )
        if r.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {r.stderr.decode().strip()}")
        try:
            yield d
        finally:
            subprocess.run(["umount", "--lazy", str(d)], check=True)
    finally:
        d.rmdir()


def _fill(disk: Path) -> Path:
    filler = disk / "filler"
    try:
        with open(filler, "wb", buffering=0) as f:
            while True:
                f.write(b"\0" * 4096)
    except OSError:
        pass  # full
    return filler


@needs_root
def test_a_full_disk_at_start_leaves_nothing_half_written(
    small_disk: Path, tmp_path: Path, out: Path
) -> None:
    plan = write_plan(small_disk, CounterPlan([Step()]))
    _fill(small_disk)
    before = tree(small_disk)
    line = one_line_error(run("apply", str(plan), cwd=tmp_path, out=out), 70, str(small_disk / ".director"))
    assert "No space left on device" in line
    assert tree(small_disk) == before and acts(out) == []  # no .director, no (empty) .gitignore


@needs_root
def test_a_disk_that_fills_during_a_run_stops_it_cleanly_and_the_run_resumes(
    small_disk: Path, tmp_path: Path, out: Path
) -> None:
    # §2's act fills the disk the plan and its journal are on (once); Director's next write fails.
    fill = f'[ -e "$OUT/filled" ] || {{ touch "$OUT/filled"; head -c 8000000 /dev/zero > "{small_disk}/filler"; }} || true'
    plan = write_plan(small_disk, CounterPlan([Step(), Step(extra=fill), Step()]))
    text = plan.read_text(encoding="utf-8")
    r = run("apply", str(plan), cwd=tmp_path, out=out)
    line = one_line_error(r, 70)
    assert str(small_disk) in line and ("full" in line or "No space left" in line), line
    # the plan is the old text or a complete new one, never a torn one; no temp file beside it
    from director.plan.parse import parse

    assert parse(plan.read_text(encoding="utf-8")).live_state is not None
    assert plan.read_text(encoding="utf-8").startswith(text[: text.index("## Live State")])
    assert not list(small_disk.glob(".counter.md.*"))
    (small_disk / "filler").unlink()
    r = run("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert acts(out).count("s1") == 1 and acts(out).count("s3") == 1


def test_setpriv_really_drops_the_permission_override(tmp_path: Path) -> None:
    """The premise of the permission tests: without the capabilities, root obeys mode bits."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv")
    d = tmp_path / "ro"
    d.mkdir(mode=0o555)
    r = subprocess.run([*NO_DAC, "touch", str(d / "x")], capture_output=True, text=True)
    d.chmod(0o755)
    assert r.returncode != 0 and "Permission denied" in r.stderr


def test_an_error_quoting_a_line_break_from_the_plan_stays_one_line(tmp_path: Path, out: Path) -> None:
    # Found by bench/fuzz.py: a YAML error quoting a value with U+0085 (NEL), which splits lines too.
    bad = tmp_path / "nel.md"
    data = "# T\n\n## 1. Step  🟢\n\n```bash\necho step\n```\n\n## Live State\n\n```yaml\nstatus: a\nstatus: a\n\x850\n```\n"
    bad.write_bytes(data.encode())
    one_line_error(run("show", str(bad), cwd=tmp_path, out=out), 65, "nel.md", "duplicate key")

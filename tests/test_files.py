"""The one atomic writer: only changes are written, modes are kept or set, no temp file is left behind."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from director.files import remove_stale_temps, sweep_stale_temps, write_atomic


def _temps(directory: Path) -> list[Path]:
    return sorted(directory.glob(".*.director-tmp"))


def test_write_atomic_writes_only_changes_and_keeps_the_mode(tmp_path: Path) -> None:
    path = tmp_path / "p.md"
    path.write_bytes(b"old\r\n")
    path.chmod(0o640)
    assert write_atomic(path, "new\r\n") is True
    assert path.read_bytes() == b"new\r\n"  # no newline translation
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    before = path.stat()
    assert write_atomic(path, "new\r\n") is False
    assert path.stat().st_ino == before.st_ino  # not even replaced
    assert _temps(tmp_path) == []


def test_a_new_file_gets_0644_or_the_mode_asked_for_and_bytes_go_as_they_are(tmp_path: Path) -> None:
    assert write_atomic(tmp_path / "a", "x")
    assert stat.S_IMODE((tmp_path / "a").stat().st_mode) == 0o644
    assert write_atomic(tmp_path / "b", b"\xff\x00", mode=0o600)
    assert (tmp_path / "b").read_bytes() == b"\xff\x00"
    assert stat.S_IMODE((tmp_path / "b").stat().st_mode) == 0o600
    # Same content, another mode: the mode is set, the content is not rewritten.
    ino = (tmp_path / "b").stat().st_ino
    assert write_atomic(tmp_path / "b", b"\xff\x00", mode=0o640) is False
    assert (tmp_path / "b").stat().st_ino == ino
    assert stat.S_IMODE((tmp_path / "b").stat().st_mode) == 0o640


def test_write_atomic_through_a_symlink_keeps_the_link(tmp_path: Path) -> None:
    real = tmp_path / "real.md"
    real.write_text("a\n")
    link = tmp_path / "link.md"
    link.symlink_to(real)
    assert write_atomic(link, "b\n")
    assert link.is_symlink() and real.read_text() == "b\n"


def test_a_failure_before_replace_leaves_the_old_file_and_no_temp(tmp_path: Path) -> None:
    path = tmp_path / "p.md"
    path.write_text("old\n")
    names: list[str] = []

    def boom() -> None:
        names.extend(p.name for p in _temps(tmp_path))
        raise OSError("disk gone")

    with pytest.raises(OSError, match="disk gone"):
        write_atomic(path, "new\n", before_replace=boom)
    assert path.read_text() == "old\n"
    assert _temps(tmp_path) == []
    [name] = names  # the temp file was beside the target, named after it and its owner
    assert name.startswith(f".p.md.{os.getpid()}.")


def test_stale_temps_are_those_of_dead_owners_whatever_their_age(tmp_path: Path) -> None:
    path = tmp_path / "p.md"
    path.write_text("x")
    dead = subprocess.Popen(["true"])
    dead.wait()
    fresh_dead = tmp_path / f".p.md.{dead.pid}.def.director-tmp"  # just written by a killed writer
    old_live = tmp_path / f".p.md.{os.getpid()}.abc.director-tmp"  # a slow writer: never taken from it
    old_nopid = tmp_path / ".p.md.abc123.director-tmp"  # an older Director's name: the age guard
    new_nopid = tmp_path / ".p.md.def456.director-tmp"
    other = tmp_path / f".q.md.{dead.pid}.abc.director-tmp"  # another plan's: its own lease decides
    for p in (fresh_dead, old_live, old_nopid, new_nopid, other):
        p.write_text("partial")
        if p in (old_live, old_nopid):
            os.utime(p, (1, 1))
    assert remove_stale_temps(path) == 2
    assert sorted(p.name for p in _temps(tmp_path)) == sorted(p.name for p in (old_live, new_nopid, other))


def test_a_pid_the_lease_proved_dead_is_stale_even_if_reused(tmp_path: Path) -> None:
    path = tmp_path / "p.md"
    path.write_text("x")
    reused = tmp_path / f".p.md.{os.getpid()}.abc.director-tmp"  # that pid runs again, as something else
    reused.write_text("partial")
    assert remove_stale_temps(path) == 0
    assert remove_stale_temps(path, dead_pids={os.getpid()}) == 1 and not reused.exists()


def test_sweep_removes_dead_owners_temps_under_a_state_directory_but_not_in_skipped_ones(
    tmp_path: Path,
) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    (tmp_path / "local" / "acct").mkdir(parents=True)
    (tmp_path / "workspace").mkdir()
    gone = [
        tmp_path / f".records.json.{dead.pid}.x1.director-tmp",
        tmp_path / "local" / "acct" / f".a.b.{dead.pid}.x2.director-tmp",
    ]
    kept = [
        tmp_path / f".records.json.{os.getpid()}.x3.director-tmp",
        tmp_path / "workspace" / f".app.yaml.{dead.pid}.x4.director-tmp",
        tmp_path / "records.json",
    ]
    for p in gone + kept:
        p.write_text("partial")
    assert sweep_stale_temps(tmp_path, skip={str(tmp_path / "workspace")}) == 2
    assert [p.exists() for p in gone + kept] == [False, False, True, True, True]


def test_a_file_whose_name_is_near_the_limit_is_written_atomically(tmp_path: Path) -> None:
    """A plan named with ~250 bytes (é is two): its temp file beside it must still fit in 255 bytes."""


    for name in ("p" * 240 + ".md", "é" * 124 + ".md"):
        target = tmp_path / name
        assert write_atomic(target, "one\n")
        assert write_atomic(target, "two\n")
        assert target.read_text() == "two\n"
        assert [p.name for p in tmp_path.iterdir()] == [name]
        assert remove_stale_temps(target) == 0
        target.unlink()

"""A plan's journal knows where the plan lives (`director.state.location`), through the real CLI.

- A plan folder copied with its `.director/` (or moved) finds a journal made for the original: refused
  with one line naming both places (exit 64), nothing run, until `director state adopt PLAN`; a run the
  original left unfinished is not resumed into the original's paths.
- On PostgreSQL, two repositories whose plans share a relative path share a plan key: the second is
  refused until it is adopted (or given a `plan_id`); two clones of one repository are one plan.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.planmaker import CounterPlan, Step, acts, director, write_plan

# slow: end to end through the real CLI, many runs; CI runs it with the rest
pytestmark = pytest.mark.slow

PWD = 'pwd >> "$OUT/where"'  # where §2's act ran: its session's working directory


def test_remotes_are_one_repository_in_any_form(tmp_path: Path) -> None:
    from director.state.location import normalise

    forms = [
        "git@github.com:team/infra.git", "https://github.com/team/infra", "https://bob@GitHub.com/team/infra.git/",
        "ssh://git@github.com:22/team/infra", "ssh://git@github.com/team/infra.git",
    ]  # fmt: skip
    assert {normalise(u, tmp_path) for u in forms} == {"github.com/team/infra"}
    assert normalise("../origin", tmp_path / "clone") == f"file:{tmp_path / 'origin'}"
    assert normalise(f"file://{tmp_path}/origin", tmp_path) == f"file:{tmp_path / 'origin'}"
    assert normalise("https://gitlab.com/team/infra", tmp_path) != "github.com/team/infra"


def test_a_copied_plan_folder_is_refused_until_adopted_and_never_resumes_into_the_originals_paths(
    tmp_path: Path, out: Path
) -> None:
    a = tmp_path / "a"
    a.mkdir()
    plan = write_plan(a, CounterPlan([Step(), Step(marker="🔴", extra=PWD)]))
    assert director("apply", str(plan), cwd=a, out=out).returncode == 4  # §1 done, run 1 waits at §2
    shutil.copytree(a, tmp_path / "b")  # the folder copied, its `.director/` with it
    copy = tmp_path / "b" / plan.name
    before = copy.read_bytes()
    r = director("apply", str(copy), "--approve", "2", cwd=copy.parent, out=out)
    assert r.returncode == 64, r.stdout + r.stderr
    [line] = r.stderr.splitlines()
    assert line.startswith(
        f"error: {copy}: its journal ({copy.parent}/.director/{plan.name}/journal.sqlite3) belongs to {plan}, not {copy}"
    ), line
    assert f"nothing was run. `director state adopt {copy}`" in line
    assert copy.read_bytes() == before and acts(out) == ["s1"]
    r = director("state", "adopt", str(copy), cwd=copy.parent, out=out)
    assert r.returncode == 0 and f"its history now belongs to {copy} (it belonged to {plan})" in r.stdout, (
        r.stdout + r.stderr
    )
    assert "run 1 cancelled: it was not finished" in r.stdout
    r = director("apply", str(copy), "--approve", "2", cwd=copy.parent, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (out / "where").read_text().split() == [str(copy.parent / ".director" / plan.name / "workspace")]
    data = director("audit", str(copy), "--json", cwd=copy.parent, out=out).stdout
    assert '"kind": "journal-adopted"' in data
    # the original is its own plan still: its journal is untouched by the copy's adoption
    r = director("apply", str(plan), "--approve", "2", cwd=a, out=out)
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_moved_plan_folder_is_refused_until_adopted(tmp_path: Path, out: Path) -> None:
    a = tmp_path / "a"
    a.mkdir()
    plan = write_plan(a, CounterPlan([Step()]))
    assert director("apply", str(plan), cwd=a, out=out).returncode == 0
    moved = tmp_path / "moved"
    a.rename(moved)
    r = director("apply", str(moved / plan.name), cwd=moved, out=out)
    assert r.returncode == 64 and f"belongs to {plan}, not {moved / plan.name}" in r.stderr, r.stderr
    assert director("state", "adopt", str(moved / plan.name), cwd=moved, out=out).returncode == 0
    r = director("apply", str(moved / plan.name), cwd=moved, out=out)
    assert r.returncode == 0 and acts(out) == ["s1"], r.stdout + r.stderr  # in sync: nothing ran again
    r = director("state", "adopt", str(moved / plan.name), cwd=moved, out=out)
    assert r.returncode == 0 and "nothing to adopt" in r.stdout


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=cwd, check=True,
                   capture_output=True)  # fmt: skip


def _repository(root: Path, remote: str | None) -> Path:
    (root / "plans").mkdir(parents=True)
    plan = write_plan(root / "plans", CounterPlan([Step()]))
    _git("init", "-q", cwd=root)
    if remote is not None:
        _git("remote", "add", "origin", remote, cwd=root)
    return plan


def test_two_repositories_on_one_postgresql_key_are_told_apart(
    tmp_path: Path, out: Path, pg_url: str
) -> None:
    env = {"DIRECTOR_STATE_URL": pg_url}
    infra = _repository(tmp_path / "infra", "git@github.com:team/infra.git")
    other = _repository(tmp_path / "other", "https://github.com/someone/other")
    clone = _repository(tmp_path / "clone", "https://github.com/team/infra")  # the same repository, https
    assert director("apply", str(infra), cwd=infra.parent, out=out, env=env).returncode == 0
    r = director("apply", str(clone), cwd=clone.parent, out=out, env=env)
    assert r.returncode == 0, r.stdout + r.stderr  # one repository, one plan: in sync
    r = director("apply", str(other), cwd=other.parent, out=out, env=env)
    assert r.returncode == 64, r.stdout + r.stderr
    [line] = r.stderr.splitlines()
    assert f"belongs to a clone of github.com/team/infra ({tmp_path / 'infra'}" in line, line
    assert (
        "not a clone of github.com/someone/other" in line
        and "shares the plan key git:plans/counter.md" in line
    )
    assert "a `plan_id:` in one plan's Live State keeps them apart" in line
    assert acts(out) == ["s1"]
    # a plan_id keeps them apart: its own key, its own history
    other.write_text(
        other.read_text().replace(
            "status:        not-created", "plan_id:       other-counter\nstatus:        not-created"
        )
    )
    r = director("apply", str(other), cwd=other.parent, out=out, env=env)
    assert r.returncode == 0 and acts(out) == ["s1", "s1"], r.stdout + r.stderr
    # or the operator says the key is shared on purpose
    third = _repository(tmp_path / "third", None)
    assert director("apply", str(third), cwd=third.parent, out=out, env=env).returncode == 64
    r = director("state", "adopt", str(third), cwd=third.parent, out=out, env=env)
    assert r.returncode == 0 and f"now belongs to the repository at {tmp_path / 'third'}" in r.stdout, (
        r.stdout + r.stderr
    )
    assert director("apply", str(third), cwd=third.parent, out=out, env=env).returncode == 0

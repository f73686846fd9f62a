"""The shipped `.pre-commit-hooks.yaml`, run by pre-commit itself: a temporary repository uses this checkout
(copied into a git repository of its own, at its HEAD) as a hook repository, and `pre-commit run
--all-files` lints its plans (`director-lint`), then checks one for drift (`director-check`, manual stage).
pre-commit installs Director into its own environment with pip: nothing beyond the package index."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests import forkserver
from tests.planmaker import CounterPlan, Step

ROOT = Path(__file__).resolve().parent.parent
PRE_COMMIT = Path(sys.executable).parent / "pre-commit"

pytestmark = pytest.mark.slow


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=cwd, check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip


def hook_repository(tmp: Path) -> tuple[Path, str]:
    """This checkout's package and hooks file as they are now, committed in a repository of their own."""
    repo = tmp / "director-hooks"
    repo.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE", ".pre-commit-hooks.yaml"):
        shutil.copy2(ROOT / name, repo / name)
    shutil.copytree(ROOT / "director", repo / "director", ignore=shutil.ignore_patterns("__pycache__"))
    git(repo, "init", "-q", ".")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "hooks")
    return repo, git(repo, "rev-parse", "HEAD")


def test_the_shipped_hooks_run_under_pre_commit(tmp_path: Path) -> None:
    assert PRE_COMMIT.exists(), "pre-commit comes with the test extra"
    hooks = YAML(typ="safe").load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert [h["id"] for h in hooks] == ["director-lint", "director-check"]

    hook_repo, rev = hook_repository(tmp_path)
    work = tmp_path / "team"
    (work / "plans").mkdir(parents=True)
    out = tmp_path / "out"
    (work / "plans" / "app.md").write_text(CounterPlan([Step()]).text(), encoding="utf-8")
    (work / "plans" / "broken.md").write_text("# B\n\n## 1. Build  🟢\n\n```bash\nmake\n```\n", encoding="utf-8")
    (work / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hook_repo}\n    rev: {rev}\n    hooks:\n"
        "      - id: director-lint\n        files: ^plans/.*\\.md$\n"
        "      - id: director-check\n        files: ^plans/app\\.md$\n",
        encoding="utf-8",
    )
    git(work, "init", "-q", ".")
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", "plans")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "COUNTER_OUT": str(out),
           "NO_COLOR": "1", "CI": "true"}  # fmt: skip

    def pre_commit(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(PRE_COMMIT), "run", *args], cwd=work, env=env, capture_output=True, text=True, timeout=900
        )

    # broken.md's 🟢 section has no verify block: an error, so the hook fails and says where
    failing = pre_commit("--all-files")
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "plans/broken.md:3: error: missing-verify:" in failing.stdout
    assert "director check" not in failing.stdout.split("director lint")[0]  # manual stage: not run by default

    (work / "plans" / "broken.md").unlink()
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "fix")
    passing = pre_commit("--all-files")
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "director lint" in passing.stdout and "Passed" in passing.stdout

    # director-check, on demand: the plan is applied, then in sync, then drifted
    apply = forkserver.run(
        [sys.executable, "-m", "director", "apply", "plans/app.md", "--non-interactive"],
        cwd=work, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert apply.returncode == 0, apply.stdout + apply.stderr
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "applied")
    in_sync = pre_commit("director-check", "--hook-stage", "manual", "--all-files")
    assert in_sync.returncode == 0, in_sync.stdout + in_sync.stderr
    (out / "s1").unlink()
    drift = pre_commit("director-check", "--hook-stage", "manual", "--all-files")
    assert drift.returncode == 1 and "drift" in drift.stdout, drift.stdout + drift.stderr

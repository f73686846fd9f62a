"""What a newcomer reads first is true: the README's first screen (what Director is, the prerequisites, the
two commands and what the main job's end means), `.ci/run` running exactly those two commands in that
order, no placeholder address or unpublished package presented as real.

The install instructions themselves are run by tests/test_install_docs.py; the README's `git diff` of the
main job is checked against a real teardown by tests/test_e2e_local.py."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests import forkserver

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


def readme_block(marker: str) -> str:
    """The ```bash block right after the line `<!-- .ci/run: {marker} -->`."""
    text = README.read_text(encoding="utf-8")
    m = re.search(rf"^<!-- \.ci/run: {re.escape(marker)} -->\n```bash\n(.*?)^```$", text, re.M | re.S)
    assert m, f"README.md has no ```bash block after <!-- .ci/run: {marker} -->"
    return m.group(1).rstrip("\n")


def test_the_first_screen_says_what_where_how_and_what_the_end_means() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    first = "\n".join(lines[:40])
    # what Director is, in two sentences before anything else
    intro = "\n".join(lines[2:6])
    assert intro.startswith("Director runs self-executing Markdown plans") and intro.count(". ") + 1 == 2
    # the prerequisites, all of them, before the first command
    prereq = first.split("```bash", 1)[0]
    for needed in ("Python ≥ 3.11", "Node.js ≥ 20", "npm", "--target local", "tmux", "sqlite3",
                   "PostgreSQL's server binaries", "`.ci/run` installs", "bash ≥ 4.1", "`/proc`", "macOS",
                   "`git`", "`curl`", "`ssh-keygen`"):  # fmt: skip
        assert needed in prereq, needed
    # both commands
    main_job, tests = readme_block("main job"), readme_block("tests")
    assert main_job in first and tests in first
    # and beside the main job, what its last line and exit status mean: 0, 10, where the rules are
    after = first.split(main_job, 1)[1].split(tests, 1)[0]
    for needed in ("last line", "exit status", "**0**", "**10**", "unconfirmed", "docs/verify-semantics.md"):
        assert needed in after, needed


def test_the_first_screen_says_what_the_main_job_does_leaves_and_how_to_reset() -> None:
    first = " ".join(" ".join(README.read_text(encoding="utf-8").splitlines()[:40]).split())
    # what the main job does, in plain words, before its command
    before = first.split("<!-- .ci/run: main job -->", 1)[0]
    for needed in ("Worker", "Workflow", "local `wrangler dev`", "acceptance contract", "deletes both"):
        assert needed in before, needed
    # the six markers, each with its meaning, and what --auto-approve passes
    for marker in ("🟢 create", "🟡 configure", "🔴 gate", "💥 destructive", "⏳ wait", "✔ verify"):
        assert marker in first, marker
    assert "`--auto-approve` passes 🔴 gates, never 💥" in first
    # what it leaves behind and how to reset completely: one command of the CLI's own
    for needed in ("What it leaves behind", "plans/.director/", "~/.cache/director", "Reset completely"):
        assert needed in first, needed
    reset = re.search(r"`git checkout (\S+) && \.venv/bin/director (state forget \S+ --yes)`", first)
    assert reset, "the reset command"
    r = forkserver.run([sys.executable, "-m", "director", *reset.group(2).split()[:2], "--help"],
                       capture_output=True, text=True, timeout=60)  # fmt: skip
    assert r.returncode == 0 and "--yes" in r.stdout


def test_the_readme_cites_no_issue_a_reader_cannot_see() -> None:
    text = README.read_text(encoding="utf-8")
    assert not re.search(r"\b[Ii]ssues? #?\d|#\d+\b(?!\))", text), re.findall(r".{30}#\d+.{10}", text)


def test_the_main_job_is_the_seed_applied_then_torn_down_on_the_local_target() -> None:
    main_job = readme_block("main job")
    steps = main_job.split(" && ")
    assert steps[0] == "python3 -m venv .venv" and steps[1].startswith(".venv/bin/pip install -e .")
    assert steps[2].startswith(".venv/bin/director apply plans/workflow.cloudflare.md --target local ")
    assert steps[3].startswith(".venv/bin/director teardown plans/workflow.cloudflare.md --target local ")
    assert "--approve teardown" in steps[3] and len(steps) == 4
    assert readme_block("tests").endswith(".venv/bin/python -m pytest -q -n 6")  # every test, six workers


def test_ci_runs_the_readme_commands_as_written_main_job_first() -> None:
    printed = subprocess.run([str(ROOT / ".ci" / "run"), "--print"], capture_output=True, text=True, timeout=60)
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == readme_block("main job") + "\n" + readme_block("tests") + "\n"
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    main_at, tests_at = script.index('bash -c "$main_job"'), script.index('bash -c "$tests"')
    assert main_at < tests_at  # the main job first, then the tests
    # the main job's documented ends (0 and 10) pass; any other status stops CI
    assert re.search(r'case "\$status" in\n\s+0\|10\)', script[main_at:tests_at])


def test_ci_refuses_a_readme_without_its_markers(tmp_path: Path) -> None:
    (tmp_path / ".ci").mkdir()
    (tmp_path / ".ci" / "run").write_bytes((ROOT / ".ci" / "run").read_bytes())
    (tmp_path / ".ci" / "run").chmod(0o755)
    (tmp_path / "README.md").write_text("# x\n\n```bash\necho no marker\n```\n", encoding="utf-8")
    r = subprocess.run([str(tmp_path / ".ci" / "run"), "--print"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "<!-- .ci/run: main job -->" in r.stderr and r.stdout == ""


def test_no_placeholder_address_or_unpublished_package_is_presented_as_real() -> None:
    docs = [README, ROOT / "pyproject.toml", *sorted((ROOT / "docs").glob("*.md"))]
    for path in docs:
        text = path.read_text(encoding="utf-8")
        assert "director-dev" not in text, path  # never a real repository
        assert not re.search(r"pip install\s+['\"]?director-plans", text), path  # not on PyPI
        assert not re.search(r"^\s*rev:\s*v\d", text, re.M), path  # no release tag exists

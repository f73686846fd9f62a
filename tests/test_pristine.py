"""The plans the tests read are the plans as committed, never what a user's run wrote into the working tree.

`tests/pristine/plans/` holds a byte-identical copy of every plan under `plans/` as committed (see
`tests/pristine.py`); this keeps the copies true, and finds a test that reads the working tree's `plans/`
again (by structure: a path built from the repository root, or a relative `plans/…` run from it).
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.pristine import PRISTINE, ROOT, every_plan


def _git(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, timeout=60, check=False)


def _committed_plans() -> list[str]:
    """`plans/…*.md` as in the commit checked out; skips where there is no git checkout (an sdist)."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed: the copies are checked against the commit in a git checkout")
    top = _git("rev-parse", "--show-toplevel")
    if top.returncode != 0 or Path(top.stdout.decode().strip()).resolve() != ROOT.resolve():
        pytest.skip("not a git checkout of the repository (an unpacked sdist): nothing to compare with")
    listed = _git("ls-tree", "-r", "--name-only", "HEAD", "--", "plans/")
    assert listed.returncode == 0, listed.stderr.decode()
    return sorted(p for p in listed.stdout.decode().splitlines() if p.endswith(".md"))


def test_the_copies_are_the_committed_plans_byte_for_byte() -> None:
    committed = _committed_plans()
    assert committed, "no plan is committed under plans/"
    copies = sorted(p.relative_to(PRISTINE).as_posix() for p in every_plan())
    refresh = "refresh them: for f in $(git ls-tree -r --name-only HEAD plans/); do git show HEAD:$f > tests/pristine/$f; done"
    assert copies == committed, f"tests/pristine/plans/ does not list the committed plans; {refresh}"
    for rel in committed:
        blob = _git("show", f"HEAD:{rel}")
        assert blob.returncode == 0, blob.stderr.decode()
        assert (PRISTINE / rel).read_bytes() == blob.stdout, f"tests/pristine/{rel} differs from HEAD:{rel}; {refresh}"


#: A path into the working tree's plans/ built from the repository's root.
_ROOT_PLANS = re.compile(r"""(\bROOT|\.parent)\s*/\s*["']plans["']|\bROOT\.glob\(\s*["']plans/|\bROOT\s*/\s*["']plans/""")


def _reads_root_plans(call: ast.Call) -> bool:
    """A call run from the repository's root (`cwd=ROOT`) that names a plan relative to it."""
    cwd = next((k.value for k in call.keywords if k.arg == "cwd"), None)
    if not (isinstance(cwd, ast.Name) and cwd.id == "ROOT"):
        return False
    return any(
        isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.startswith("plans/")
        for arg in call.args
        for n in ast.walk(arg)
    )


def test_no_test_reads_the_working_trees_plans() -> None:
    found: list[str] = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if path.name in ("pristine.py", "test_pristine.py"):
            continue
        text = path.read_text(encoding="utf-8")
        for m in _ROOT_PLANS.finditer(text):
            found.append(f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call) and _reads_root_plans(node):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: a relative plans/… run from ROOT")
    assert not found, "read the committed copies (tests/pristine.py) instead:\n" + "\n".join(found)


def test_the_guard_finds_what_it_looks_for() -> None:
    # The guard above would be worthless if its patterns matched nothing: each former way in is caught.
    for line in (
        'SEED = ROOT / "plans" / "workflow.cloudflare.md"',
        'SEED = TESTS.parent / "plans" / "workflow.cloudflare.md"',
        'names = [*ROOT.glob("plans/*.md")]',
    ):
        assert _ROOT_PLANS.search(line), line
    call = ast.parse('subprocess.run(["director", "lint", "plans/workflow.cloudflare.md"], cwd=ROOT)').body[0]
    assert isinstance(call, ast.Expr) and isinstance(call.value, ast.Call) and _reads_root_plans(call.value)
    fine = ast.parse('subprocess.run(["director", "lint", "plans/workflow.cloudflare.md"], cwd=PRISTINE)').body[0]
    assert isinstance(fine, ast.Expr) and isinstance(fine.value, ast.Call) and not _reads_root_plans(fine.value)

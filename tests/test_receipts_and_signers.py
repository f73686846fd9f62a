"""Receipts are spent when their act starts, a typed go belongs to its run (issue 32 item 2); allowed
signers fail closed (issue 33 item 4); the gate panel shows what the block assigns as `$NAME` (issue 38
item 9); `director approve` reads history through one module (issue 35). Through the real CLI.
"""

from __future__ import annotations

import ast
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.approvalplans import SIGNERS, cli, key, plan_text, signer_line
from tests.terminal import Term

pytestmark = pytest.mark.slow  # end to end through the real CLI

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("keys")
    return {"alice": key(d, "alice"), "mallory": key(d, "mallory")}


def _started(out: Path) -> int:
    p = out / "started"
    return len(p.read_text().split()) if p.exists() else 0


# ------------------------------------------------------------------------------ a typed go, then Ctrl-C


@pytest.mark.parametrize("again", [(), ("--restart",)], ids=["resume", "restart"])
def test_a_go_typed_before_ctrl_c_does_not_release_the_gate_on_the_next_run(
    tmp_path: Path, out: Path, again: tuple[str, ...]
) -> None:
    plan = tmp_path / "closure.md"
    plan.write_text(plan_text(act='echo started >> "$OUT/started"; echo "ACT-BEGAN-$((40+2))"; sleep 120'))
    t = Term(["apply", str(plan)], tmp_path, out)
    try:
        t.wait("Type go")
        t.send("go")
        t.wait("ACT-BEGAN-42")
        t.child.sendintr()
        assert t.finish() == 130, t.text()
    finally:
        t.kill()
    assert _started(out) == 1
    r = cli("apply", str(plan), *again, cwd=tmp_path, out=out)
    assert r.returncode == 4, r.stdout + r.stderr
    assert "needs a human go" in r.stdout and _started(out) == 1, r.stdout
    assert not (out / "acted").exists()


def test_a_receipt_is_spent_when_its_act_starts(tmp_path: Path, out: Path) -> None:
    """`director approve`'s receipt lets the act start once: the act fails, the next apply asks again."""
    plan = tmp_path / "closure.md"
    plan.write_text(plan_text(act='echo started >> "$OUT/started"; [ -f "$OUT/ok" ] || exit 3'))
    assert cli("apply", str(plan), cwd=tmp_path, out=out).returncode == 4
    assert cli("approve", str(plan), "2", "--yes", cwd=tmp_path, out=out).returncode == 0
    r = cli("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 3 and _started(out) == 1, r.stdout
    (out / "ok").touch()
    r = cli("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 4 and _started(out) == 1, r.stdout
    assert "was spent when the section acted on it" in r.stdout or "needs a human go" in r.stdout


# ------------------------------------------------------------------------------ allowed signers fail closed


def _broken(kind: str) -> Callable[[Path], None]:
    def make(p: Path) -> None:
        p.unlink()
        if kind == "dangling symlink":
            p.symlink_to(p.parent / "nowhere")
        elif kind == "symlink to /dev/null":
            p.symlink_to("/dev/null")
        elif kind == "directory":
            p.mkdir()
        elif kind == "unreadable":
            p.write_text("")
            p.chmod(0)

    return make


@pytest.mark.parametrize("kind", ["deleted", "dangling symlink", "symlink to /dev/null", "directory", "unreadable"])
def test_once_signatures_were_required_a_missing_or_broken_signers_file_stops_the_run(
    tmp_path: Path, out: Path, keys: dict[str, Path], kind: str
) -> None:
    if kind == "unreadable" and os.geteuid() == 0:
        pytest.skip("root reads any file")
    plan = tmp_path / "closure.md"
    plan.write_text(plan_text(act="echo deploying"))
    signers = tmp_path / SIGNERS
    signers.write_text(signer_line("alice@example.com", keys["alice"]) + "\n")
    r = cli("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 4 and "approvals must be signed" in r.stdout, r.stdout
    assert cli("approve", str(plan), "2", "--yes", cwd=tmp_path, out=out).returncode == 14  # unsigned: refused
    _broken(kind)(signers)
    r = cli("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 64, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in r.stderr, r.stderr
    assert str(signers) in lines[0] or "requires signed approvals" in lines[0], lines
    assert not (out / "acted").exists()


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=cwd, check=True,
                   capture_output=True)  # fmt: skip


def test_a_nested_signers_file_cannot_replace_the_repositorys(tmp_path: Path, out: Path, keys: dict[str, Path]) -> None:
    _git("init", "-q", cwd=tmp_path)
    (tmp_path / SIGNERS).write_text(signer_line("alice@example.com", keys["alice"]) + "\n")
    _git("add", SIGNERS, cwd=tmp_path)
    _git("commit", "-qm", "alice may approve", cwd=tmp_path)  # an uncommitted one is refused
    plans = tmp_path / "plans"
    plans.mkdir()
    plan = plans / "closure.md"
    plan.write_text(plan_text(act="echo deploying"))
    r = cli("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 4 and f"signed by a key in {tmp_path / SIGNERS}" in r.stdout, r.stdout
    nested = plans / SIGNERS
    nested.write_text(signer_line("mallory@example.com", keys["mallory"]) + "\n")
    a = cli("approve", str(plan), "2", "--yes", "--sign-with", str(keys["mallory"]), cwd=tmp_path, out=out)
    assert a.returncode == 64 and str(nested) in a.stderr, a.stdout + a.stderr
    r = cli("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 64 and r.stderr.count("\n") == 1 and str(nested) in r.stderr, r.stderr
    assert not (out / "acted").exists()


# ------------------------------------------------------------------------------ what the panel shows


def test_the_panel_shows_a_variable_the_block_assigns_as_its_name(tmp_path: Path, out: Path) -> None:
    plan = tmp_path / "closure.md"
    plan.write_text(plan_text(var0='PORT=""\nURL=http://stale', act='PORT=8123\nURL="http://127.0.0.1:$PORT"\necho "serve $PORT at $URL"'))
    r = cli("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 4, r.stdout + r.stderr
    for args in (("plan", str(plan), "--section", "2"), ("approve", str(plan), "2", "--yes")):
        r = cli(*args, cwd=tmp_path, out=out)
        assert r.returncode in (0, 2), r.stdout + r.stderr
        shown = r.stdout.split("commands about to run", 1)[1]
        assert 'echo "serve $PORT at $URL"' in shown and "serve  at" not in shown, r.stdout
        assert "http://stale" not in shown and "http.server" not in shown, r.stdout


# ------------------------------------------------------------------------------ one reading of history


def test_approve_reads_history_through_at_most_three_run_modules_and_no_any() -> None:
    source = (ROOT / "director" / "commands" / "approve.py").read_text()
    tree = ast.parse(source)
    run_modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith("director.run."):
                run_modules.add(node.module.split(".")[2])
            elif node.module == "director.run":
                run_modules.update(a.name for a in node.names)
    assert len(run_modules) <= 3, run_modules
    assert "Any" not in {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}, "no Any in approve.py"
    assert "history" in run_modules


# ------------------------------------------------------------------------------ a gated section's verify


def test_a_gated_sections_verify_that_changes_the_world_is_a_lint_error_and_nothing_runs(
    tmp_path: Path, out: Path
) -> None:
    """The verify of a 🔴 section runs before its gate (observe before act), unapproved: `rm -rf` there is
    an error; apply refuses the plan before anything runs; the documented comment silences that line."""
    plan = tmp_path / "closure.md"
    text = plan_text(act="echo deploying")
    guarded = '# ✔ acted\nrm -rf "$OUT/victim"\n'
    plan.write_text(text.replace("# ✔ acted\n", guarded))
    (out / "victim").mkdir()
    r = cli("lint", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 1 and "error: gated-verify-acts: `rm -rf` in the verify block of §2" in r.stdout, r.stdout
    r = cli("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 65 and "gated-verify-acts" in r.stderr, r.stdout + r.stderr
    assert (out / "victim").is_dir() and not (tmp_path / ".director").exists()
    plan.write_text(text.replace("# ✔ acted\n", '# ✔ acted\n# director-lint: disable=gated-verify-acts\nrm -rf "$OUT/victim"\n'))
    r = cli("lint", str(plan), cwd=tmp_path, out=out)
    assert "gated-verify-acts" not in r.stdout and "1 suppressed" in r.stdout, r.stdout

"""The plan file writer: atomic saves, operator edits during a run, conflicts, secrets, crash safety."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from director.errors import LedgerConflict, PlanError
from director.ledger import planfile
from director.ledger.planfile import PlanFile, SecretInLedger, check_no_secrets, read_text
from director.ledger.splice import LedgerUpdate, LedgerWriteError, apply_update
from director.plan.parse import parse
from tests.pristine import SEED

ROOT = Path(__file__).resolve().parent.parent

LIVE = LedgerUpdate(
    yaml={"status": "live", "last_action": "apply ok", "target": "local"},
    kv={"WORKER": "`orders-dev`"},
    checks={"workflow registered": ("`orders-wf-dev` listed", "✅ 2026-11-29")},
)


@pytest.fixture
def plan_path(tmp_path: Path) -> Path:
    path = tmp_path / "workflow.cloudflare.md"
    shutil.copyfile(SEED, path)
    return path


def _temps(directory: Path) -> list[Path]:
    return sorted(directory.glob(".*.director-tmp"))


# ----------------------------------------------------------------------------------------------- save


def test_successive_saves_in_one_run(plan_path: Path) -> None:
    pf = PlanFile.load(plan_path)
    pf.save(LedgerUpdate(yaml={"status": "applying"}))
    assert pf.last_save_wrote
    plan = pf.save(LIVE)
    assert read_text(plan_path) == pf.text == plan.source
    assert plan.live_state is not None and plan.live_state.data["status"] == "live"
    pf.save(LIVE)
    assert not pf.last_save_wrote  # already so: the file is not rewritten


def test_an_edit_outside_live_state_survives_a_save(plan_path: Path) -> None:
    pf = PlanFile.load(plan_path)
    pf.save(LedgerUpdate(yaml={"status": "applying"}))
    # The operator fixes a typo in the prose and adds a line, while Director runs.
    text = read_text(plan_path)
    edited = text.replace(
        "## Update (idempotent reconcile)", "## Update (idempotent reconcile)\n\nOperator note."
    )
    edited = "<!-- reviewed by bob -->\n" + edited
    plan_path.write_text(edited, encoding="utf-8")
    plan = pf.save(LIVE)
    on_disk = read_text(plan_path)
    assert on_disk == apply_update(parse(edited), LIVE)
    assert on_disk.startswith("<!-- reviewed by bob -->\n") and "Operator note." in on_disk
    assert plan.live_state is not None and plan.live_state.data["status"] == "live"
    # The operator's text is the new baseline: the next save does not see a conflict.
    pf.save(LedgerUpdate(yaml={"status": "gone"}))
    assert "Operator note." in read_text(plan_path)


def test_an_edit_inside_live_state_is_a_conflict_and_the_file_is_untouched(plan_path: Path) -> None:
    pf = PlanFile.load(plan_path)
    pf.save(LedgerUpdate(yaml={"status": "applying"}))
    edited = read_text(plan_path).replace("| CLASS         |", "| CLASS (hand)  |")
    plan_path.write_text(edited, encoding="utf-8")
    with pytest.raises(LedgerConflict) as info:
        pf.save(LIVE)
    message = str(info.value)
    assert str(plan_path) in message and "Live State" in message and "re-run" in message
    line = next(n for n, t in enumerate(edited.splitlines(), 1) if t.startswith("| CLASS (hand)"))
    assert f"first difference at line {line})" in message
    assert read_text(plan_path) == edited
    assert _temps(plan_path.parent) == []


def test_an_edit_that_breaks_the_plan_is_reported_and_nothing_written(plan_path: Path) -> None:
    pf = PlanFile.load(plan_path)
    bad_block = "## 1. Bad  🟢\n\n```bash {retries=many}\necho\n```\n\n## Update (idempotent reconcile)\n"
    broken = read_text(plan_path).replace("## Update (idempotent reconcile)\n", bad_block)
    plan_path.write_text(broken, encoding="utf-8")
    with pytest.raises(PlanError, match="edited during the run"):
        pf.save(LIVE)
    assert read_text(plan_path) == broken


def test_a_crlf_plan_stays_crlf_through_saves(plan_path: Path) -> None:
    crlf = read_text(SEED).replace("\n", "\r\n")
    plan_path.write_bytes(crlf.encode())
    pf = PlanFile.load(plan_path)
    pf.save(LIVE)
    data = plan_path.read_bytes()
    assert data.count(b"\n") == data.count(b"\r\n")
    assert data.decode() == apply_update(parse(read_text(SEED)), LIVE).replace("\n", "\r\n")


def test_save_keeps_the_file_mode(plan_path: Path) -> None:
    plan_path.chmod(0o600)
    PlanFile.load(plan_path).save(LIVE)
    assert stat.S_IMODE(plan_path.stat().st_mode) == 0o600


def test_a_secret_value_is_never_written(plan_path: Path) -> None:
    secret = "s3cr3t-token-value"
    pf = PlanFile.load(plan_path, secret_values=[secret])
    before = read_text(plan_path)
    with pytest.raises(SecretInLedger) as info:
        pf.save(LedgerUpdate(kv={"URL": f"`https://x/?t={secret}`"}))
    assert secret not in str(info.value)
    assert read_text(plan_path) == before
    with pytest.raises(SecretInLedger):
        check_no_secrets("a\nb abcd c\n", ["abcd"])
    check_no_secrets("a b c", ["", "abc"])  # too short to police: ignored


def test_a_plan_that_would_not_parse_is_not_written(plan_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pf = PlanFile.load(plan_path)
    before = read_text(plan_path)
    real = parse  # the parser planfile.py imports and calls on the new text before writing it

    def strict(text: str, path: str | None = None) -> object:
        if "status:        live" in text:
            raise PlanError("simulated parser rejection", path=path, line=1)
        return real(text, path=path)

    monkeypatch.setattr(planfile, "parse", strict)
    # (Live State alone re-read declines whatever it cannot show equal to the whole parse: then it runs)
    monkeypatch.setattr(planfile, "reparse_live_state", lambda plan, text: None)
    with pytest.raises(LedgerWriteError, match="left as it was"):
        pf.save(LIVE)
    assert read_text(plan_path) == before


def test_a_vanished_plan_is_a_conflict(plan_path: Path) -> None:
    pf = PlanFile.load(plan_path)
    plan_path.unlink()
    with pytest.raises(LedgerConflict, match="disappeared"):
        pf.save(LIVE)
    assert not plan_path.exists()


# ---------------------------------------------------------------------------------------------- crash

# Each update sets the same fields to values that fit their columns, so the text after any one of
# them is the same whatever was saved before: the set of valid file contents is small and known.
_CYCLE_DATA = [
    {
        "yaml": {"status": status, "last_action": f"crash-loop save {n}", "target": "local"},
        "kv": {"WORKER": worker, "URL": "`http://127.0.0.1:8787`"},
        "checks": {"workflow registered": [f"seen {n}", result]},
    }
    for n, (status, worker, result) in enumerate(
        [("applying", "`orders-dev`", "✅"), ("live", "`orders-dv`", "❌"), ("gone", "`o-dev`", "✅ ok")]
    )
]


def _update(data: dict[str, Any]) -> LedgerUpdate:
    checks = {k: (v[0], v[1]) for k, v in data["checks"].items()}
    return LedgerUpdate(yaml=data["yaml"], kv=data["kv"], checks=checks)


_CYCLE = [_update(d) for d in _CYCLE_DATA]

# The child saves the cycle in a loop until it is killed. `files._before_replace` is the writer's test hook.
_CHILD = textwrap.dedent(
    """
    import json, os, signal, sys
    from director import files
    from director.ledger import planfile
    from director.ledger.splice import LedgerUpdate

    cycle = [
        LedgerUpdate(yaml=d["yaml"], kv=d["kv"], checks={k: tuple(v) for k, v in d["checks"].items()})
        for d in json.loads(os.environ["CYCLE"])
    ]
    pf = planfile.PlanFile.load(sys.argv[1])
    if sys.argv[2] == "kill-before-replace":
        files._before_replace = lambda: os.kill(os.getpid(), signal.SIGKILL)
    print("ready", flush=True)
    n = 0
    while True:
        pf.save(cycle[n % len(cycle)])
        n += 1
    """
)


def _run_child(tmp_path: Path, plan: Path, mode: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(plan), mode],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "CYCLE": json.dumps(_CYCLE_DATA)},
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    return proc


def test_killed_between_temp_write_and_replace_leaves_the_old_file(plan_path: Path, tmp_path: Path) -> None:
    old = read_text(plan_path)
    proc = _run_child(tmp_path, plan_path, "kill-before-replace")
    assert proc.wait(timeout=30) == -signal.SIGKILL
    assert read_text(plan_path) == old
    parse(old)
    # The kill came after the new text was durable in the temp file, right before the rename.
    (temp,) = _temps(plan_path.parent)
    assert read_text(temp) == apply_update(parse(old), _CYCLE[0])


def test_sigkill_at_random_moments_leaves_old_or_new_text(plan_path: Path, tmp_path: Path) -> None:
    seed = read_text(plan_path)
    valid = {seed} | {apply_update(parse(seed), u) for u in _CYCLE}
    assert apply_update(parse(apply_update(parse(seed), _CYCLE[0])), _CYCLE[1]) in valid  # the premise
    rng = random.Random(1129)
    seen: set[str] = set()
    kills = int(os.environ.get("DIRECTOR_CRASH_KILLS", "25"))
    for _ in range(kills):
        proc = _run_child(tmp_path, plan_path, "loop")
        if rng.random() < 0.1:
            proc.kill()  # sometimes right away, before the first save
        try:
            proc.wait(timeout=rng.uniform(0.0, 0.12))
        except subprocess.TimeoutExpired:
            proc.kill()
        assert proc.wait(timeout=30) == -signal.SIGKILL
        text = read_text(plan_path)
        assert text in valid
        parse(text)
        seen.add(text)
    assert len(seen) >= 2, "the loop never got a save through; the kills tested nothing"


def test_load_leaves_temp_files_to_the_lease_holder(plan_path: Path) -> None:
    # Loading is not holding the lease (`plan`, `check` and `show` load too): a temp file may be a live
    # writer's. The run that holds the lease removes those of dead owners (tests/test_bad_input.py).
    stale = plan_path.parent / f".{plan_path.name}.abc123.director-tmp"
    stale.write_text("partial")
    os.utime(stale, (1, 1))
    PlanFile.load(plan_path)
    assert stale.exists()


def test_a_run_lets_go_of_the_plan_each_ledger_write_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 5 MB plan is a 20 MB text and a model as large: apply once held the plan as first read for the
    whole run (a local in run_command), beside the one each write made. At every write, the plans that
    earlier writes replaced must be gone."""
    import gc
    import weakref

    from director.cli import main

    plan = tmp_path / "p.md"
    plan.write_text(
        "# Two steps\n\n## 1. One 🟢\n\n```bash\necho one\n```\n\n## 2. Two 🟢\n\n```bash\necho two\n```\n\n"
        "## Live State\n\n```yaml\nstatus:        not-created\nlast_action:   —\n```\n",
        encoding="utf-8",
    )
    replaced: list[weakref.ref[Any]] = []
    alive_at_write: list[int] = []
    save = PlanFile.save

    def counting_save(self: PlanFile, *args: Any, **kwargs: Any) -> Any:
        gc.collect()
        alive_at_write.append(sum(r() is not None for r in replaced))
        before = self.plan
        saved = save(self, *args, **kwargs)
        if saved is not before:
            replaced.append(weakref.ref(before))
        return saved

    monkeypatch.setattr(PlanFile, "save", counting_save)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as done:
        main(["apply", "p.md", "--plain", "--non-interactive", "--ignore-lint-errors"])  # no verify blocks
    assert done.value.code == 0
    assert len(alive_at_write) >= 2 and len(replaced) >= 1
    assert alive_at_write == [0] * len(alive_at_write), alive_at_write

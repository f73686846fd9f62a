"""The verify-idiom corpus (`tests/verify_corpus/idioms.py`) as a truth table, and Director against it.

1. Truth under real bash (fast): each idiom's block, run by `bash` in each of its worlds, does what its
   kind says (hard: exit 0 / non-zero; soft: exit 0 both ways, P / F line; precondition: silent in `na`),
   and its `fix` turns every world into one where it holds. This proves the corpus, not Director.
2. Director's verdict = the truth (slow): one small plan per idiom through the real CLI, for `apply`,
   `check`, `teardown` and a ✔-only plan. Each test runs every step of its scenario and reports every
   mismatch, each with the one Director output line that shows why. The ✔-only plan runs for every idiom;
   the whole life (apply, check, drift, heal, teardown) for the first idiom of each class in the suite
   (`_classes`), for every one under `DIRECTOR_SWEEPS=long` (`bench/sweeps.py`).
3. `director lint` reports a verify finding on exactly the idioms that deserve one.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from director.plan.bash import verify_model
from tests import forkserver, sweeps
from tests.verify_corpus.idioms import IDIOMS, LINT_CODES, Idiom, World
from tests.verify_corpus.plans import (
    check_row,
    contract_plan,
    full_plan,
    http_server,
    lint_flags,
    lint_plan,
    make_world,
    world_env,
)

CLI_TIMEOUT_S = 120.0


def _ids(i: Idiom) -> str:
    return i.name


def _needs(idiom: Idiom) -> None:
    missing = [t for t in idiom.tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{idiom.name} needs {', '.join(missing)}")


def _mk(w: Path) -> Path:
    w.mkdir(parents=True, exist_ok=True)
    return w


@contextlib.contextmanager
def _maybe_server(idiom: Idiom, w: Path) -> Iterator[int | None]:
    if not idiom.server:
        yield None
        return
    with http_server(w) as port:
        yield port


# ---------------------------------------------------------------------------------------------------
# 1. Truth under real bash


def _bash(block: str, tmp: Path, w: Path, port: int | None) -> subprocess.CompletedProcess[str]:
    script = tmp / "block.sh"
    script.write_text(block + "\n", encoding="utf-8")
    return subprocess.run(
        ["bash", str(script)],
        cwd=tmp,
        env=world_env(w, port),
        capture_output=True,
        text=True,
        timeout=30,
    )


def _lines(text: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines()]


WORLDS = [(i, w) for i in IDIOMS for w in i.worlds()]
# The bash constructs the corpus promises to hold (each is in some idiom's block).
CONSTRUCTS = (
    "[[", "=~", "grep -qx", "grep -c", "curl -sf", "elif", "case ", "set -o pipefail", "python3 - ",
    "node -e", "node - ", "until ", "read -r", "wc -l", "find ", "diff -q", "cmp -s", "stat -c",
    "sqlite3", "awk ", "set -e", "((", "\\\n", "! grep", "2a:", "2b:",
)  # fmt: skip


@pytest.mark.parametrize(("idiom", "world"), WORLDS, ids=[f"{i.name}-{w}" for i, w in WORLDS])
def test_truth_under_bash(idiom: Idiom, world: World, tmp_path: Path) -> None:
    _needs(idiom)
    w = _mk(tmp_path / "w")
    with _maybe_server(idiom, w) as port:
        make_world(idiom, world, w, port)
        r = _bash(idiom.block, tmp_path, w, port)
    out = _lines(r.stdout)
    said = f"exit {r.returncode}, stdout {r.stdout!r}, stderr {r.stderr!r}"
    verdict = idiom.verdict(world)
    if verdict == "passed":
        assert r.returncode == 0, said
        assert idiom.p is None or idiom.p in out, said
        assert idiom.f is None or idiom.f == idiom.p or idiom.f not in out, said
    elif verdict == "failed":
        assert r.returncode != 0, said
        assert idiom.f is None or idiom.f in out, said
        assert idiom.p is None or idiom.p == idiom.f or idiom.p not in out, said
    elif verdict == "inconclusive":
        assert r.returncode == 0, said
        assert idiom.p not in out, said
        assert idiom.f is None or idiom.f in out, said
    else:  # skipped: the precondition is false, no check ran
        assert r.stdout.strip() == "", said


@pytest.mark.parametrize(("idiom", "world"), WORLDS, ids=[f"{i.name}-{w}" for i, w in WORLDS])
def test_fix_makes_every_world_hold(idiom: Idiom, world: World, tmp_path: Path) -> None:
    """Director runs `fix` as the act and teardown block: from any world (twice) it must make the check hold."""
    _needs(idiom)
    w = _mk(tmp_path / "w")
    with _maybe_server(idiom, w) as port:
        make_world(idiom, world, w, port)
        for _ in range(2):
            f = subprocess.run(
                ["bash", "-c", idiom.fix], env=world_env(w, port), capture_output=True, text=True, timeout=30
            )
            assert f.returncode == 0, f.stderr
        r = _bash(idiom.block, tmp_path, w, port)
    assert r.returncode == 0, r.stdout + r.stderr
    assert idiom.p is None or idiom.p in _lines(r.stdout), r.stdout


def test_corpus_covers_the_idioms_it_promises() -> None:
    kinds = {i.kind for i in IDIOMS}
    assert len(IDIOMS) >= 45 and kinds == {"hard", "soft", "precondition"}
    text = "\n".join(i.block for i in IDIOMS)
    for needle in CONSTRUCTS:
        assert needle in text, needle


# ---------------------------------------------------------------------------------------------------
# 2. Director's verdict = the truth (real CLI)


@dataclass
class Scenario:
    """One idiom's plan, world and counters; `expect` records mismatches instead of stopping at the first."""

    idiom: Idiom
    tmp: Path
    port: int | None
    problems: list[str] = field(default_factory=list)

    @property
    def w(self) -> Path:
        return self.tmp / "w"

    @property
    def ctr(self) -> Path:
        return self.tmp / "ctr"

    def count(self, name: str) -> int:
        p = self.ctr / name
        return len(p.read_text().split()) if p.exists() else 0

    def world(self, world: World) -> None:
        make_world(self.idiom, world, self.w, self.port)

    def director(self, cmd: str, plan: Path, state: str = "state") -> subprocess.CompletedProcess[str]:
        args = [cmd, str(plan), "--plain", "--state-dir", str(self.tmp / state)]
        args += ["--workdir", str(self.tmp / f"{state}-wd")]
        if cmd in ("apply", "teardown"):
            args += ["--non-interactive", *lint_flags(plan.read_text(encoding="utf-8"))]
        if cmd == "teardown":
            args += ["--approve", "teardown"]
        env = dict(os.environ)
        env.update({"CI": "1", "NO_COLOR": "1", "COLUMNS": "200"})
        (self.tmp / f"{state}-wd").mkdir(exist_ok=True)
        return forkserver.run(
            [sys.executable, "-m", "director", *args],
            cwd=self.tmp,
            env=env,
            capture_output=True,
            text=True,
            timeout=CLI_TIMEOUT_S,
        )

    def expect(
        self, step: str, ok: bool, want: str, r: subprocess.CompletedProcess[str], got: str = ""
    ) -> None:
        if not ok:
            self.problems.append(
                f"{step}: want {want}; got exit {r.returncode}{got} | {why(r.stdout + r.stderr)}"
            )

    def done(self) -> None:
        if self.problems:
            pytest.fail(f"{self.idiom.name} ({self.idiom.kind}):\n" + "\n".join(self.problems), pytrace=False)


_RUN_END = re.compile(r"^run \d+: ")
_DRIFT = re.compile(r"^drift: ")
# a section verdict line of `--plain` output: `   ✓ in sync — …`, `   → will apply — …`
_VERDICT = re.compile(r"^ {3}[^\w\s│▶■] \w")


def why(output: str) -> str:
    """The one line of Director's output that says what it concluded.

    The run's end (`run 3: failed — §1 verify failed …`) for apply/teardown; for `check`, the first
    `drift:` line, else the verdict of the first section that is neither §0 nor a ✔ section.
    """
    lines = [ln.rstrip() for ln in output.splitlines() if ln.strip()]
    for pat in (_RUN_END, _DRIFT):
        hits = [ln for ln in lines if pat.search(ln)]
        if hits:
            return hits[-1 if pat is _RUN_END else 0].strip()
    verdicts = [
        ln for ln in lines if _VERDICT.search(ln) and "— variables" not in ln and "will verify" not in ln
    ]
    return (verdicts[0] if verdicts else lines[-1] if lines else "(no output)").strip()


@contextlib.contextmanager
def _scenario(idiom: Idiom, tmp: Path) -> Iterator[Scenario]:
    _needs(idiom)
    w = _mk(tmp / "w")
    with _maybe_server(idiom, w) as port:
        yield Scenario(idiom, tmp, port)


CORPUS = pytest.mark.parametrize("idiom", IDIOMS, ids=_ids)


def _classes(idiom: Idiom) -> list[Hashable]:
    """What makes an idiom a case of its own for a whole life: its kind and worlds, how Director reads its
    structure (can its exit status fail, lines only contrast judges, branches, functions, preconditions),
    a server, the lint codes it earns, the programs it needs. The bash constructs it is written with
    (CONSTRUCTS) are not: how Director reads and runs each idiom's block is proved for every idiom, in every
    world, by test_director_contract_only_plan; a life adds what follows from its structure."""
    vm = verify_model(idiom.block)
    shape = (
        idiom.kind, idiom.na is not None, any(u.can_fail for u in vm.units), bool(vm.choices),
        bool(vm.alternatives), bool(vm.functions), bool(vm.guards), vm.trailing_guard is not None, idiom.server,
    )  # fmt: skip
    return [("shape", shape), *(("lint", code) for code in sorted(idiom.lint)), *(("tool", t) for t in idiom.tools)]


# A whole life is seven CLI runs: the suite lives through the first idiom of each class above (named by the
# parameters), the long sweep through all (tests/sweeps.py); every idiom's verdict through the CLI is still
# proved in the suite, in each of its worlds, by test_director_contract_only_plan.
LIVES = sweeps.in_suite(IDIOMS, _classes)


@pytest.mark.slow
@pytest.mark.parametrize(
    "idiom",
    [*LIVES, *sweeps.rest_marker(len(IDIOMS) - len(LIVES), "idioms' whole lives")],
    ids=lambda i: str(i.name),
)
def test_director_apply_check_teardown(idiom: Idiom, tmp_path: Path) -> None:
    """The full plan through its life: apply (holds, then in sync), check, drift, heal, teardown (present,
    then already gone).

    One plan and journal for the whole life (a separate teardown plan would cost one more apply per
    idiom); every step is still judged and reported on its own.
    """
    with _scenario(idiom, tmp_path) as s:
        plan = tmp_path / "plan.md"
        plan.write_text(full_plan(idiom, s.w, s.ctr, s.port), encoding="utf-8")

        s.world("holds")
        r = s.director("apply", plan)
        s.expect("first apply (holds)", r.returncode == 0, "exit 0", r)

        s.world("holds")
        n = s.count("acts")
        r = s.director("apply", plan)
        row = check_row(plan.read_text(encoding="utf-8"), "thing holds")
        s.expect(
            "apply (holds)",
            r.returncode == 0 and s.count("acts") == n and row.startswith("✅"),
            "exit 0, §1 in sync (act not run), row ✅",
            r,
            f", act ran {s.count('acts') - n}x, row {row!r}",
        )
        r = s.director("check", plan)
        s.expect("check (holds)", r.returncode == 0, "exit 0 (in sync)", r)

        s.world("broken")
        r = s.director("check", plan)
        s.expect("check (broken)", r.returncode == 2, "exit 2 (drift)", r)

        n = s.count("acts")
        r = s.director("apply", plan)
        s.expect(
            "apply (broken)",
            r.returncode == 0 and s.count("acts") == n + 1,
            "exit 0 with §1's act run once",
            r,
            f", act ran {s.count('acts') - n}x",
        )

        # A teardown first meets a world that is there; then one already gone. (A check that exits 0
        # whatever it finds is never "already gone" on structure alone, rule C8 of
        # docs/verify-semantics.md: it is gone on the path it took once the teardown made it gone.)
        worlds: list[World] = ["broken"]
        if idiom.na is not None:
            worlds.append("na")
        for world in worlds:
            s.world(world)
            n = s.count("td")
            r = s.director("teardown", plan)
            s.expect(
                f"teardown ({world})",
                r.returncode == 0 and s.count("td") == n + 1,
                "exit 0 with the teardown act run once",
                r,
                f", act ran {s.count('td') - n}x",
            )
        s.world("holds")
        n = s.count("td")
        r = s.director("teardown", plan)
        s.expect(
            "teardown (holds)",
            r.returncode == 0 and s.count("td") == n,
            "exit 0, already gone (teardown act not run)",
            r,
            f", act ran {s.count('td') - n}x",
        )
        s.done()


@pytest.mark.slow
@CORPUS
def test_director_contract_only_plan(idiom: Idiom, tmp_path: Path) -> None:
    """A plan of §0 and `## 1. Contract  ✔` only: the verdict decides the exit code and the check row."""
    want_rc = {"passed": 0, "failed": 3, "inconclusive": 10, "skipped": 0}
    with _scenario(idiom, tmp_path) as s:
        for world in idiom.worlds():
            plan = tmp_path / f"contract-{world}.md"  # a fresh plan and journal per world
            plan.write_text(contract_plan(idiom, s.w, s.ctr, s.port), encoding="utf-8")
            s.world(world)
            r = s.director("apply", plan, state=f"state-{world}")
            verdict = idiom.verdict(world)
            row = check_row(plan.read_text(encoding="utf-8"), "contract holds")
            ok = r.returncode == want_rc[verdict] and row.startswith("✅") == (verdict == "passed")
            want = f"exit {want_rc[verdict]} ({verdict}), row {'✅' if verdict == 'passed' else 'not ✅'}"
            if verdict == "skipped":
                ok = ok and re.search(r"\bskipped\b", r.stdout, re.IGNORECASE) is not None
                want += ", shown as skipped"
            s.expect(f"✔-only apply ({world})", ok, want, r, f", row {row!r}")
        s.done()


# ---------------------------------------------------------------------------------------------------
# 3. Lint: a finding on exactly the idioms that deserve one


def _lint_codes(idioms: list[Idiom], tmp: Path) -> dict[str, set[str]]:
    text, spans = lint_plan(idioms)
    plan = tmp / "lint.md"
    plan.write_text(text, encoding="utf-8")
    r = forkserver.run(
        [sys.executable, "-m", "director", "lint", str(plan)],
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert r.returncode in (0, 1), r.stdout + r.stderr
    found: dict[str, set[str]] = {i.name: set() for i in idioms}
    for m in re.finditer(r"^\S*lint\.md:(\d+): (?:error|warning|info): ([a-z-]+):", r.stdout + r.stderr, re.MULTILINE):
        line, code = int(m.group(1)), m.group(2)
        if code not in LINT_CODES:
            continue
        owner = next((n for n, (a, b) in spans.items() if a <= line <= b), None)
        assert owner is not None, f"a {code} finding at line {line} outside every idiom: {r.stdout}"
        found[owner].add(code)
    return found


def test_lint_no_false_positive_on_enforced_idioms(tmp_path: Path) -> None:
    idioms = [i for i in IDIOMS if i.kind != "soft"]
    found = _lint_codes(idioms, tmp_path)
    wrong = {n: sorted(c) for n, c in found.items() if c != set(next(i for i in idioms if i.name == n).lint)}
    assert not wrong, f"lint findings that differ from the corpus (idiom: reported): {wrong}"


def test_lint_reports_each_soft_idiom_as_soft(tmp_path: Path) -> None:
    idioms = [i for i in IDIOMS if i.kind == "soft"]
    found = _lint_codes(idioms, tmp_path)
    wrong = {n: sorted(c) for n, c in found.items() if c != set(next(i for i in idioms if i.name == n).lint)}
    assert not wrong, f"lint findings that differ from the corpus (idiom: reported): {wrong}"

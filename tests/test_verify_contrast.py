"""Verdicts by contrast: Director judges a check by the worlds it has seen it in, never by its words.

Every check here runs through a whole life with the real CLI, one plan and journal per check:

1. the world is broken (nothing made yet): `apply` acts and its verify passes (exit 0, row ✅);
2. `apply` again: in sync, the act does not run; 3. `check`: in sync (exit 0);
4. the world is broken again: `check` reports drift (exit 2); 5. `apply` heals it (the act runs once);
6. the world is broken: `teardown` runs its act once and ends exit 0;
7. the world holds (gone, for the teardown's check): `teardown` finds it already gone, no act runs.

The truth of every world is decided by plain bash (`tests/test_verify_mined.py`) and by the test, which
builds each world itself; Director never sees which one it is. The checks are the mined corpus
(`tests/verify_corpus/mined.py`, each from a public repository) and the shapes issue 24 names. Every
mined check's truth is proved here under bash; its whole life through the CLI runs for the first check of
each class (`_classes`) in the suite, for every one under `DIRECTOR_SWEEPS=long` (`bench/sweeps.py`).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import pkgutil
import re
import subprocess
import sys
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from director.plan.bash import verify_model
from tests import forkserver, sweeps, verify_corpus
from tests.test_verify_corpus import why
from tests.test_verify_mined import MINED, build, needs, served
from tests.verify_corpus.mined import Mined, MinedWorld, m
from tests.verify_corpus.plans import check_row, life_plan, lint_flags

CLI_TIMEOUT_S = 120.0
ISSUE = "(issue 24)"

# The shapes issue 24 saw misjudged, each written as a real runbook would (the mined corpus has many more).
SHAPES: tuple[Mined, ...] = (
    m(
        "if-success-else-failure",
        ISSUE,
        "message",
        "en",
        r"""
        if [ -f "$W/up" ]; then echo "Success"; else echo "Failure"; fi
        """,
        r'''touch "$W/up"''',
        r""":""",
        r'''touch "$W/up"''',
        p="Success",
        f="Failure",
    ),
    m(
        "marks-from-a-function",
        ISSUE,
        "message",
        "symbols",
        r"""
        mark() { if [ -e "$W/$1" ]; then echo "✔ $1"; else echo "✗ $1"; fi; }
        mark conf
        mark data
        """,
        r'''touch "$W/conf" "$W/data"''',
        r'''touch "$W/conf"''',
        r'''touch "$W/conf" "$W/data"''',
        p="✔ data",
        f="✗ data",
    ),
    m(
        "another-language",
        ISSUE,
        "message",
        "de",
        r"""
        if grep -q läuft "$W/status" 2>/dev/null; then
          echo "Dienst läuft"
        else
          echo "Dienst gestoppt"
        fi
        """,
        r'''echo läuft > "$W/status"''',
        r'''echo gestoppt > "$W/status"''',
        r'''echo läuft > "$W/status"''',
        p="Dienst läuft",
        f="Dienst gestoppt",
    ),
    m(
        "not-running-then-exit-0",
        ISSUE,
        "message",
        "en",
        r"""
        if [ ! -s "$W/app.pid" ]; then
          echo "app is not running"
          exit 0
        fi
        echo "app is running as $(cat "$W/app.pid")"
        """,
        r'''echo 4242 > "$W/app.pid"''',
        r""":""",
        r'''echo 4242 > "$W/app.pid"''',
        p="app is running as 4242",
        f="app is not running",
    ),
    m(
        "failure-line-then-bare-exit",
        ISSUE,
        "message",
        "en",
        r"""
        [ -r "$W/app.conf" ] || { echo "config missing"; exit; }
        echo "config readable"
        """,
        r'''echo a=1 > "$W/app.conf"''',
        r""":""",
        r'''echo a=1 > "$W/app.conf"''',
        p="config readable",
        f="config missing",
    ),
    m(
        "if-failure-branch-silent-success",
        ISSUE,
        "failure-branch",
        "en",
        r"""
        if [ ! -f "$W/schema.sql" ]; then
          echo "Error: schema not generated"
          exit 1
        fi
        """,
        r'''echo 'create table t(a);' > "$W/schema.sql"''',
        r""":""",
        r'''echo 'create table t(a);' > "$W/schema.sql"''',
        f="Error: schema not generated",
    ),
    m(
        "find-chain-exit-1",
        ISSUE,
        "failure-branch",
        "en",
        r"""
        [[ $(find "$W" -name '*.partial') ]] && echo "partial uploads left" && exit 1
        echo "no partial uploads"
        """,
        r'''touch "$W/done.bin"''',
        r'''touch "$W/a.partial"''',
        r'''rm -f "$W"/*.partial; touch "$W/done.bin"''',
        p="no partial uploads",
        f="partial uploads left",
    ),
    m(
        "mid-block-error-chain",
        ISSUE,
        "failure-branch",
        "en",
        r"""
        F="$W/release.tar"
        [ ! -f "$F" ] && echo "Error: $F missing" && exit 1
        echo "release archive present"
        """,
        r'''touch "$W/release.tar"''',
        r""":""",
        r'''touch "$W/release.tar"''',
        p="release archive present",
    ),
    m(
        "pass-line-with-substitution",
        ISSUE,
        "exit",
        "en",
        r"""
        [ -x "$W/bin/tool" ] && echo "ok: $("$W/bin/tool" --version)" || { echo "tool missing"; exit 1; }
        """,
        r'''mkdir -p "$W/bin"; printf '#!/bin/sh\necho 1.2.3\n' > "$W/bin/tool"; chmod +x "$W/bin/tool"''',
        r""":""",
        r'''mkdir -p "$W/bin"; printf '#!/bin/sh\necho 1.2.3\n' > "$W/bin/tool"; chmod +x "$W/bin/tool"''',
        p="ok: 1.2.3",
        f="tool missing",
    ),
    m(
        "inverted-positions",
        ISSUE,
        "message",
        "en",
        r"""
        [ -e "$W/lock" ] && echo "lock STILL HELD — retry" || echo "lock released"
        """,
        r""":""",
        r'''touch "$W/lock"''',
        r'''rm -f "$W/lock"''',
        p="lock released",
        f="lock STILL HELD — retry",
    ),
)


@dataclass
class Life:
    """One check's plan, world and act counters; `expect` records every mismatch instead of stopping."""

    idiom: Mined
    tmp: Path
    port: int | None
    problems: list[str] = field(default_factory=list)

    @property
    def w(self) -> Path:
        return self.tmp / "w"

    def count(self, name: str) -> int:
        p = self.tmp / "ctr" / name
        return len(p.read_text().split()) if p.exists() else 0

    def world(self, world: MinedWorld) -> None:
        build(self.w, self.idiom.worlds()[world], self.port, f"{self.idiom.name}: the {world} world")

    def director(self, cmd: str, plan: Path) -> subprocess.CompletedProcess[str]:
        args = [cmd, str(plan), "--plain", "--state-dir", str(self.tmp / "state"), "--workdir", str(self.tmp)]
        if cmd in ("apply", "teardown"):
            args += ["--non-interactive", *lint_flags(plan.read_text(encoding="utf-8"))]
        if cmd == "teardown":
            args += ["--approve", "teardown"]
        env = {**os.environ, "CI": "1", "NO_COLOR": "1", "COLUMNS": "200"}
        return forkserver.run(
            [sys.executable, "-m", "director", *args],
            cwd=self.tmp, env=env, capture_output=True, text=True, timeout=CLI_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip

    def expect(self, step: str, ok: bool, want: str, r: subprocess.CompletedProcess[str], got: str = "") -> None:
        if not ok:
            out = r.stdout + r.stderr
            # what Director said of each check (an inconclusive one names its plan line and why), for the log
            said = [ln.strip() for ln in out.splitlines() if re.search(r"inconclusive|drift|unconfirmed|✗", ln)]
            self.problems.append(
                f"{step}: want {want}; got exit {r.returncode}{got} | {why(out)}"
                + "".join(f"\n    {ln}" for ln in said[:8])
            )


@contextlib.contextmanager
def _life(idiom: Mined, tmp: Path) -> Iterator[Life]:
    needs(idiom)
    with served(idiom, tmp / "w") as port:
        yield Life(idiom, tmp, port)


def live_through(idiom: Mined, tmp: Path) -> list[str]:
    """The whole life of one check; returns every step where Director's verdict differed from the truth."""
    with _life(idiom, tmp) as s:
        plan = tmp / "plan.md"
        plan.write_text(life_plan(idiom.name, idiom.block, idiom.act, s.w, tmp / "ctr", s.port), encoding="utf-8")

        s.world("broken")
        r = s.director("apply", plan)
        row = check_row(plan.read_text(encoding="utf-8"), "thing holds")
        s.expect("first apply (broken)", r.returncode == 0 and s.count("acts") == 1 and row.startswith("✅"),
                 "exit 0, act once, row ✅", r, f", act ran {s.count('acts')}x, row {row!r}")  # fmt: skip

        n = s.count("acts")
        r = s.director("apply", plan)
        row = check_row(plan.read_text(encoding="utf-8"), "thing holds")
        s.expect("apply again (held)", r.returncode == 0 and s.count("acts") == n and row.startswith("✅"),
                 "exit 0, in sync (act not run), row ✅", r,
                 f", act ran {s.count('acts') - n}x, row {row!r}")  # fmt: skip
        r = s.director("check", plan)
        s.expect("check (held)", r.returncode == 0, "exit 0 (in sync)", r)

        s.world("broken")
        r = s.director("check", plan)
        s.expect("check (broken)", r.returncode == 2, "exit 2 (drift)", r)
        n = s.count("acts")
        r = s.director("apply", plan)
        s.expect("apply (broken)", r.returncode == 0 and s.count("acts") == n + 1, "exit 0 with the act run once",
                 r, f", act ran {s.count('acts') - n}x")  # fmt: skip

        s.world("broken")
        n = s.count("td")
        r = s.director("teardown", plan)
        s.expect("teardown (present)", r.returncode == 0 and s.count("td") == n + 1,
                 "exit 0 with the teardown act run once", r, f", act ran {s.count('td') - n}x")  # fmt: skip
        s.world("held")
        n = s.count("td")
        r = s.director("teardown", plan)
        s.expect("teardown (already gone)", r.returncode == 0 and s.count("td") == n,
                 "exit 0, already gone (teardown act not run)", r, f", act ran {s.count('td') - n}x")  # fmt: skip
        return s.problems


@pytest.mark.slow
@pytest.mark.parametrize("idiom", SHAPES, ids=[i.name for i in SHAPES])
def test_issue_shapes_through_their_life(idiom: Mined, tmp_path: Path) -> None:
    problems = live_through(idiom, tmp_path)
    assert not problems, f"{idiom.name} ({idiom.kind}):\n" + "\n".join(problems)


_UNTRACES = re.compile(r"\bset\s+\+(?:[a-wyz]*x|o\s+xtrace)\b")  # `set +x`, `set +ex`, `set +o xtrace`


def _classes(idiom: Mined) -> list[Hashable]:
    """What makes a mined check a case of its own for Director: how its truth shows (its kind), what its
    structure is read as (can its exit status fail, report lines only contrast can judge, branches,
    functions, a precondition, a trailing guard), whether it probes a server, whether it turns tracing off
    (its run then leaves no whole trace: read without its path); its messages' language; the corpus it was
    mined into (`mined_c` and `mined_d` are out-of-sample ones)."""
    vm = verify_model(idiom.block)
    shape = (
        idiom.kind, any(u.can_fail for u in vm.units), bool(vm.choices), bool(vm.alternatives),
        bool(vm.functions), bool(vm.guards), vm.trailing_guard is not None, idiom.server,
        bool(_UNTRACES.search(idiom.block)),
    )  # fmt: skip
    corpus = next((name for name, idioms in _CORPORA.items() if idiom in idioms), "")
    return [("shape", shape), ("lang", idiom.lang), ("corpus", corpus)]


# Each mined corpus (`tests/verify_corpus/mined_*.py`) by name: each adds a class of its own.
_CORPORA: dict[str, tuple[Mined, ...]] = {
    m.name: importlib.import_module(f"tests.verify_corpus.{m.name}").IDIOMS
    for m in pkgutil.iter_modules(verify_corpus.__path__)
    if m.name.startswith("mined_")
}


# A life is seven CLI runs: the suite lives through the first check of every class above (named by the
# parameters), the long sweep through all of them (tests/sweeps.py).
LIVES = sweeps.in_suite(MINED, _classes)


@pytest.mark.slow
@pytest.mark.parametrize(
    "idiom",
    [*LIVES, *sweeps.rest_marker(len(MINED) - len(LIVES), "mined checks' lives")],
    ids=lambda i: str(i.name),
)
def test_mined_checks_through_their_life(idiom: Mined, tmp_path: Path) -> None:
    problems = live_through(idiom, tmp_path)
    assert not problems, f"{idiom.name} ({idiom.kind}, {idiom.source}):\n" + "\n".join(problems)


@pytest.mark.parametrize(("idiom", "world"), [(i, w) for i in SHAPES for w in ("held", "broken")],
                         ids=[f"{i.name}-{w}" for i in SHAPES for w in ("held", "broken")])  # fmt: skip
def test_issue_shapes_truth_under_bash(idiom: Mined, world: MinedWorld, tmp_path: Path) -> None:
    from tests.test_verify_mined import assert_broken, assert_held, run_block

    w = tmp_path / "w"
    with served(idiom, w) as port:
        build(w, idiom.worlds()[world], port, world)
        r = run_block(idiom.block, tmp_path, w, port)
    said = f"exit {r.returncode}, stdout {r.stdout!r}, stderr {r.stderr!r}"
    (assert_held if world == "held" else assert_broken)(idiom, r, said)


ROTOR = """\
[ -s "$W/rotor.pid" ] || { echo "rotor has no pid file"; exit 1; }
if [ "$(cat "$W/rotor.state" 2>/dev/null)" = running ]; then echo "[ok] rotor running"; else echo "[warn] rotor stalled"; fi
"""
ROTOR_ACT = """echo 4242 > "$W/rotor.pid"; echo running > "$W/rotor.state\""""


@pytest.mark.slow
def test_a_message_check_first_reached_after_the_act(tmp_path: Path) -> None:
    """The message-only check stands after an exit-status check that fails on a fresh world: before the
    first act it is never reached. The act makes the block pass and reach it: what it prints then is what
    the held world looks like (learned held), so the next apply is in sync (the act does not run again); a
    break only the message shows is drift; the heal teaches the not-held world; a second break is judged
    by it."""
    idiom = m("rotor", ISSUE, "message", "en", ROTOR, ROTOR_ACT, ':', ROTOR_ACT, p="[ok] rotor running")
    with _life(idiom, tmp_path) as s:
        plan = tmp_path / "plan.md"
        plan.write_text(life_plan(idiom.name, idiom.block, idiom.act, s.w, tmp_path / "ctr", s.port), encoding="utf-8")
        s.world("broken")  # nothing there yet: the pid-file check fails, the message check is not reached
        r = s.director("apply", plan)
        row = check_row(plan.read_text(encoding="utf-8"), "thing holds")
        s.expect("first apply", r.returncode == 0 and row.startswith("✅"), "exit 0, row ✅", r, f", row {row!r}")
        n = s.count("acts")
        r = s.director("apply", plan)
        s.expect("apply again", r.returncode == 0 and s.count("acts") == n, "exit 0, the act not run", r)
        (s.w / "rotor.state").write_text("stalled\n")  # the pid file stays: only the message changes
        r = s.director("check", plan)
        s.expect("check (stalled)", r.returncode == 2, "exit 2 (drift)", r)
        n = s.count("acts")
        r = s.director("apply", plan)
        s.expect("heal", r.returncode == 0 and s.count("acts") == n + 1, "exit 0, the act run once", r)
        r = s.director("check", plan)
        s.expect("check (healed)", r.returncode == 0, "exit 0", r)
        (s.w / "rotor.state").write_text("stalled\n")
        r = s.director("check", plan)
        s.expect("check (stalled again)", r.returncode == 2 and "before its act" in r.stdout, "exit 2, the known not-held path", r)
        assert not s.problems, "\n".join(s.problems)

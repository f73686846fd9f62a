"""The mined verify corpus (`tests/verify_corpus/mined.py`): its truth under plain bash.

Each idiom's block is run by `bash` in its held and broken worlds, and after its act from each world: the
truth is what bash does (exit status, and the lines the test knows each world prints), never what Director
says. Director's verdicts on the same corpus are checked in `tests/test_verify_contrast.py`.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.verify_corpus.idioms import IDIOMS as WRITTEN
from tests.verify_corpus.mined import Mined, MinedWorld, corpus
from tests.verify_corpus.plans import http_server, world_env

MINED = corpus()


def build(w: Path, script: str, port: int | None, what: str) -> None:
    """Empty `w` (the directory stays: the HTTP server serves it by path) and run `script` in it."""
    w.mkdir(parents=True, exist_ok=True)
    for p in w.iterdir():
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink()
    run_in(w, script, port, what)


def run_in(w: Path, script: str, port: int | None, what: str) -> None:
    r = subprocess.run(
        ["bash", "-c", "set -e\n" + script], env=world_env(w, port), capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, f"{what} could not be built: {r.stderr}"


def needs(idiom: Mined) -> None:
    missing = [t for t in idiom.tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{idiom.name} needs {', '.join(missing)}")


@contextlib.contextmanager
def served(idiom: Mined, w: Path) -> Iterator[int | None]:
    w.mkdir(parents=True, exist_ok=True)
    if not idiom.server:
        yield None
        return
    with http_server(w) as port:
        yield port


def run_block(block: str, tmp: Path, w: Path, port: int | None) -> subprocess.CompletedProcess[str]:
    script = tmp / "block.sh"
    script.write_text(block + "\n", encoding="utf-8")
    return subprocess.run(
        ["bash", str(script)], cwd=tmp, env=world_env(w, port), capture_output=True, text=True, timeout=60,
        stdin=subprocess.DEVNULL,
    )


def lines(text: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines()]


def assert_held(idiom: Mined, r: subprocess.CompletedProcess[str], said: str) -> None:
    out = lines(r.stdout)
    assert r.returncode == 0, said
    assert idiom.p is None or idiom.p in out, said
    assert idiom.f is None or idiom.f not in out, said


def assert_broken(idiom: Mined, r: subprocess.CompletedProcess[str], said: str) -> None:
    out = lines(r.stdout)
    if idiom.kind == "message":
        assert r.returncode == 0, said
    else:
        assert r.returncode != 0, said
    assert idiom.f is None or idiom.f in out, said
    assert idiom.p is None or idiom.p not in out, said


WORLDS = [(i, w) for i in MINED for w in ("held", "broken")]


@pytest.mark.parametrize(("idiom", "world"), WORLDS, ids=[f"{i.name}-{w}" for i, w in WORLDS])
def test_truth_under_bash(idiom: Mined, world: MinedWorld, tmp_path: Path) -> None:
    needs(idiom)
    w = tmp_path / "w"
    with served(idiom, w) as port:
        build(w, idiom.worlds()[world], port, f"{idiom.name}: the {world} world")
        r = run_block(idiom.block, tmp_path, w, port)
    said = f"exit {r.returncode}, stdout {r.stdout!r}, stderr {r.stderr!r}"
    (assert_held if world == "held" else assert_broken)(idiom, r, said)


@pytest.mark.parametrize(("idiom", "world"), WORLDS, ids=[f"{i.name}-{w}" for i, w in WORLDS])
def test_act_makes_every_world_hold(idiom: Mined, world: MinedWorld, tmp_path: Path) -> None:
    """Director runs `act` as the section's act and the teardown's: from any world, twice, the check holds."""
    needs(idiom)
    w = tmp_path / "w"
    with served(idiom, w) as port:
        build(w, idiom.worlds()[world], port, f"{idiom.name}: the {world} world")
        for _ in range(2):
            run_in(w, idiom.act, port, f"{idiom.name}: its act")
        r = run_block(idiom.block, tmp_path, w, port)
    assert_held(idiom, r, f"exit {r.returncode}, stdout {r.stdout!r}, stderr {r.stderr!r}")


_IF_EXIT = re.compile(r"\bif\b[^\n]*\n?(?:.*\n)*?.*\bthen\b(?:.*\n)*?.*\bexit\s+[1-9]", re.MULTILINE)


def test_corpus_is_what_the_issue_asks() -> None:
    """At least 150 idioms, 30 that exit 0 in both worlds, 15 not in English, 20 `if …; then …; exit 1; fi`."""
    by_kind = {k: [i for i in MINED if i.kind == k] for k in ("exit", "message", "failure-branch")}
    not_english = [i for i in MINED if i.lang != "en"]
    if_exit = [i for i in by_kind["failure-branch"] if _IF_EXIT.search(i.block)]
    assert len(MINED) >= 150, len(MINED)
    assert len(by_kind["message"]) >= 30, len(by_kind["message"])
    assert len(not_english) >= 15, len(not_english)
    assert len(if_exit) >= 20, len(if_exit)
    assert len({i.source.split(":")[0] for i in MINED}) >= 60, "drawn from many repositories"


def test_corpus_is_separate_from_the_written_one() -> None:
    written = {re.sub(r"\s+", " ", i.block) for i in WRITTEN}
    same = [i.name for i in MINED if re.sub(r"\s+", " ", i.block) in written]
    assert not same, same

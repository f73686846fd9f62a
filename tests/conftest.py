"""Shared fixtures: JSON validation against the schemas, and a real PostgreSQL server for the
`--state-url` backend (never mocked, never skipped: without server binaries the PostgreSQL tests fail,
saying how to install them)."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import jsonschemas
from tests.pgcluster import Cluster, find_bindir
from tests.terminal import Term

# Every temp file of the session -- pytest's `tmp_path`s, the CLI's and bash's, wrangler's update-check
# cache -- goes under one private directory, deleted when the session ends: a test run leaves nothing in
# /tmp (DIRECTOR_KEEP_TEST_TMP=1 keeps it, to look at a failure). The `tmp_path`s are its direct children,
# so their paths are shorter than pytest's own (`/tmp/pytest-of-USER/pytest-N/…`): a panel a test reads
# at a terminal wraps no sooner, and venv shebangs and socket paths stay short.
_SESSION_TMP = tempfile.mkdtemp(prefix="dt-")
os.chmod(_SESSION_TMP, 0o711)  # the PostgreSQL server runs as its own user: it must reach its directory
os.environ["TMPDIR"] = _SESSION_TMP
tempfile.tempdir = None  # read TMPDIR again


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if not config.option.basetemp:  # before pytest's tmp_path factory reads it
        config.option.basetemp = os.path.join(_SESSION_TMP, "t")


def pytest_unconfigure(config: pytest.Config) -> None:
    if os.environ.get("DIRECTOR_KEEP_TEST_TMP") == "1":
        return
    # Once (out of many sessions) the directory outlived its removal, empty: something wrote into it while
    # it was being removed (which, not found). Removed again until it is gone (at most 5 s).
    for _ in range(50):
        shutil.rmtree(_SESSION_TMP, ignore_errors=True)
        if not os.path.exists(_SESSION_TMP):
            break
        time.sleep(0.1)


@pytest.fixture
def validate_json() -> Callable[..., Any]:
    """`validate_json(text_or_document, name=None)`: the parsed document, checked against its schema."""

    def validate(doc: Any, name: str | None = None) -> Any:
        if isinstance(doc, str):
            return jsonschemas.validated(doc, name)
        jsonschemas.check(doc, name)
        return doc

    return validate


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """The directory a test plan's blocks write their evidence to (`$COUNTER_OUT`, `$OUT`)."""
    d = tmp_path / "out"
    d.mkdir()
    return d


@pytest.fixture
def term(tmp_path: Path, out: Path) -> Iterator[Callable[..., Term]]:
    """`term(*args, env=None, size=None)`: the CLI at a pseudo-terminal (tests/terminal.py; `size` (rows,
    columns)); every one killed after."""
    made: list[Term] = []

    def spawn(*args: str, env: dict[str, str] | None = None, size: tuple[int, int] | None = None) -> Term:
        t = Term(list(args), tmp_path, out, env, size)
        made.append(t)
        return t

    yield spawn
    for t in made:
        t.kill()


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    """One throwaway cluster for the session, stopped and deleted by its finalizer."""
    bindir = find_bindir()
    if bindir is None:
        pytest.fail(
            "PostgreSQL server binaries (initdb, postgres) not found: `apt-get install -y postgresql` "
            "(.ci/run does), or set DIRECTOR_PG_BINDIR"
        )
    cluster = Cluster(bindir)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.destroy()


@pytest.fixture
def pg_url(pg_cluster: Cluster) -> str:
    """A fresh database for one test, for the non-superuser role Director connects as."""
    return pg_cluster.new_database()


@pytest.fixture
def world(tmp_path: Path) -> Iterator[Any]:
    """A test's directory, its process mark and the real CLI (`tests.engine_plans.World`); whatever the
    plan left running is killed by its mark at the end."""
    from tests.engine_plans import World
    from tests.faults import kill_marked

    w = World(tmp_path)
    try:
        yield w
    finally:
        kill_marked(w.mark)

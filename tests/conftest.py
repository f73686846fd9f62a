"""Shared fixtures: JSON validation against the schemas, and a real PostgreSQL server for the
`--state-url` backend (never mocked, never skipped: without server binaries the PostgreSQL tests fail,
saying how to install them)."""

from __future__ import annotations

import compileall
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import director
from tests import jsonschemas, xdist_groups
from tests.pgcluster import Cluster, find_bindir
from tests.terminal import Term

# Every temp file of the session -- pytest's `tmp_path`s, the CLI's and bash's, wrangler's update-check
# cache -- goes under one private directory, deleted when the session ends: a test run leaves nothing in
# /tmp (DIRECTOR_KEEP_TEST_TMP=1 keeps it, to look at a failure). The `tmp_path`s are its direct children,
# so their paths are shorter than pytest's own (`/tmp/pytest-of-USER/pytest-N/…`): a panel a test reads
# at a terminal wraps no sooner, and venv shebangs and socket paths stay short.
#
# Under pytest-xdist every worker is a process of its own that imports this file: each makes its own
# directory, beside the first process's (the controller's) rather than inside it, so that its `tmp_path`s
# are exactly as long as in a run without workers (xdist would put them one level deeper, under
# `popen-gwN/`: a gate panel read at 80x24 then wraps sooner). A worker names its directory in the
# controller's, which removes it at the end even if the worker was killed.
_TMP_ROOT = os.environ.setdefault("DIRECTOR_TEST_TMP_ROOT", tempfile.gettempdir())
_SESSION_TMP = tempfile.mkdtemp(prefix="dt-", dir=_TMP_ROOT)
os.chmod(_SESSION_TMP, 0o711)  # the PostgreSQL server runs as its own user: it must reach its directory
_FIRST_TMP = os.environ.setdefault("DIRECTOR_TEST_SESSION_TMP", _SESSION_TMP)
if _FIRST_TMP != _SESSION_TMP and os.path.isdir(_FIRST_TMP):
    os.makedirs(os.path.join(_FIRST_TMP, "workers"), exist_ok=True)
    open(os.path.join(_FIRST_TMP, "workers", os.path.basename(_SESSION_TMP)), "w").close()
os.environ["TMPDIR"] = _SESSION_TMP
tempfile.tempdir = None  # read TMPDIR again

# A worker starts with COLUMNS=80 and LINES=24 in its environment whatever the controller had (neither is
# set in a run without workers): the CLI a test starts would then wrap at 80 columns, and `ps -o args=` cuts
# a command line at 80 (the venv-worker example's verify greps its worker's path there). A worker takes
# the controller's values back: none, unless the operator set them.
_TERMINAL = ("COLUMNS", "LINES")
_FIRST_TERMINAL = json.loads(
    os.environ.setdefault("DIRECTOR_TEST_TERMINAL", json.dumps({k: os.environ.get(k) for k in _TERMINAL}))
)
for _name in _TERMINAL:
    if _FIRST_TERMINAL.get(_name) is None:
        os.environ.pop(_name, None)
    else:
        os.environ[_name] = _FIRST_TERMINAL[_name]


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    # before pytest's tmp_path factory reads it; a worker's, which xdist set, is replaced by its own
    if not config.option.basetemp or hasattr(config, "workerinput"):
        config.option.basetemp = os.path.join(_SESSION_TMP, "t")
    if not hasattr(config, "workerinput"):
        # Director's bytecode, once, as `pip install .` compiles an installed package: an editable install
        # has none until a first import writes it, and with PYTHONDONTWRITEBYTECODE set none ever does, so
        # each of the suite's thousands of `python -m director` runs compiled its modules from source
        # (+40-100 ms of CPU each). Written where Python writes it (`__pycache__`, ignored by git).
        compileall.compile_dir(str(Path(director.__file__).parent), quiet=1)


@pytest.hookimpl(trylast=True)  # after `-k`/`-m` deselected what they deselect
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if hasattr(config, "workerinput"):  # a worker: say which tests run together (tests/xdist_groups.py)
        xdist_groups.write(_FIRST_TMP, items)


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # before xdist's own, which would pick `--dist load`
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under `-n`: tests grouped by what they share, slow ones handed out first (tests/xdist_groups.py)."""
    if config.getoption("dist") in ("load", "loadgroup"):
        return xdist_groups.GroupScheduling(config, log, _SESSION_TMP)
    return None


def pytest_unconfigure(config: pytest.Config) -> None:
    if os.environ.get("DIRECTOR_KEEP_TEST_TMP") == "1":
        return
    workers = os.path.join(_SESSION_TMP, "workers")
    left = [os.path.join(_TMP_ROOT, n) for n in os.listdir(workers)] if os.path.isdir(workers) else []
    for path in (*left, _SESSION_TMP):
        _remove(path)


def _remove(path: str) -> None:
    # Once (out of many sessions) the directory outlived its removal, empty: something wrote into it while
    # it was being removed (which, not found). Removed again until it is gone (at most 5 s).
    for _ in range(50):
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.exists(path):
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

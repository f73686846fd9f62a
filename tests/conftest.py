"""Session-wide fixtures: a real PostgreSQL server for the `--state-url` backend (never mocked, never
skipped: without server binaries the PostgreSQL tests fail, saying how to install them)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.pgcluster import Cluster, find_bindir


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

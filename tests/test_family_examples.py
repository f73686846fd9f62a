"""A local family of example plans through the real CLI: git-deploy provides `checkout(SITE)`, which
static-site optionally discovers; database stands alone. Applied as a directory, static-site starts after
git-deploy and database runs beside them; the value reaches static-site's server process (its environment in
/proc, not Director's word); git-deploy's teardown alone is refused while static-site is live; the family's
teardown stops the server and closes its port."""

from __future__ import annotations

import contextlib
import os
import re
import signal
from pathlib import Path

import pytest

from tests.e2e_helpers import FIXED_PORT_GROUPS, pid_alive, port_open, read_pid, wait_for
from tests.familyplans import director, events, of
from tests.pristine import EXAMPLES

# static-site binds 8765: never beside another test that applies it (tests/e2e_helpers.FIXED_PORT_GROUPS)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group(FIXED_PORT_GROUPS["static-site.local.md"])]

PLANS = ("git-deploy.local.md", "static-site.local.md", "database.local.md")
SITE_PORT = 8765  # static-site.local.md's port for ENV=dev


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    return dict(item.split("=", 1) for item in raw.decode(errors="replace").split("\0") if "=" in item)


def test_a_local_family_of_examples(tmp_path: Path) -> None:
    for name in PLANS:
        (tmp_path / name).write_text((EXAMPLES / name).read_text(encoding="utf-8"), encoding="utf-8")
    pidfile = tmp_path / ".director" / "static-site.local.md" / "workspace" / ".pamphlet-dev.pid"
    try:
        ev = tmp_path / "apply.jsonl"
        r = director("apply", ".", "--auto-approve", "--events", str(ev), cwd=tmp_path, timeout=300)
        assert r.returncode == 0, r.stdout[-4000:] + r.stderr
        evs = events(ev)
        assert evs[0]["plans"].index("git-deploy.local.md") < evs[0]["plans"].index("static-site.local.md")
        assert of(evs, "git-deploy.local.md", "run.end")[0]["ts"] <= of(evs, "static-site.local.md", "run.start")[0]["ts"]
        # database does not depend on git-deploy: it ran beside it
        assert of(evs, "database.local.md", "run.start")[0]["ts"] < of(evs, "git-deploy.local.md", "run.end")[0]["ts"]
        # what static-site's server was started with: git-deploy's realized SITE
        server = read_pid(pidfile)
        env = _environ(server)
        site = tmp_path / ".director" / "git-deploy.local.md" / "workspace" / "pushdeploy" / "site-main"
        assert env.get("DIRECTOR_PROVIDED_CHECKOUT_SITE") == str(site) and site.is_dir(), env
        assert port_open(SITE_PORT)

        r = director("teardown", "git-deploy.local.md", "--approve", "teardown", cwd=tmp_path)
        assert r.returncode == 9 and "static-site.local.md (checkout) still requires" in r.stderr, r.stderr
        assert site.is_dir() and pid_alive(server)

        ev = tmp_path / "teardown.jsonl"
        r = director("teardown", ".", "--approve", "teardown", "--events", str(ev), cwd=tmp_path, timeout=300)
        assert r.returncode == 0, r.stdout[-4000:] + r.stderr
        evs = events(ev)
        assert of(evs, "static-site.local.md", "run.end")[0]["ts"] <= of(evs, "git-deploy.local.md", "run.start")[0]["ts"]
        assert wait_for(lambda: not pid_alive(server), 10) and wait_for(lambda: not port_open(SITE_PORT), 10)
        assert not site.exists()
    finally:
        with contextlib.suppress(OSError, ValueError):
            os.kill(read_pid(pidfile), signal.SIGTERM)


def test_the_report_reads_what_its_provider_passes_and_a_consumer_that_created_nothing_blocks_no_teardown(
    tmp_path: Path,
) -> None:
    """database provides `sqlite-db(DB_PATH)`, which sqlite-report requires by name: in a family run the
    report is built from the ledger its provider made (§0 reads `DIRECTOR_PROVIDED_SQLITE_DB`), read back
    with sqlite3. A report that never created anything (its discovery stopped it) does not hold the
    database's teardown."""
    import sqlite3

    for name in ("database.local.md", "sqlite-report.local.md"):
        (tmp_path / name).write_text((EXAMPLES / name).read_text(encoding="utf-8"), encoding="utf-8")
    # alone and first, the report finds no upstream: it stops at its discovery, having created nothing
    r = director("apply", "sqlite-report.local.md", "--auto-approve", cwd=tmp_path)
    assert r.returncode == 3 and "upstream sales db missing" in r.stdout, r.stdout[-2000:] + r.stderr
    assert re.search(r"^status:\s+not-created", (tmp_path / "sqlite-report.local.md").read_text(), re.M)
    assert director("apply", "database.local.md", "--auto-approve", cwd=tmp_path).returncode == 0
    r = director("teardown", "database.local.md", "--approve", "teardown", cwd=tmp_path)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr  # not refused: the report holds nothing of it

    r = director("apply", ".", "--auto-approve", cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr
    ledger = tmp_path / ".director" / "database.local.md" / "workspace" / ".ledger" / "ledger-dev.sqlite3"
    rows = [("ada", 1200, "EUR", "paid"), ("bob", 500, "EUR", "paid"), ("ada", 300, "EUR", "paid"),
            ("cy", 999, "USD", "paid"), ("bob", 700, "EUR", "refunded")]  # fmt: skip
    with sqlite3.connect(ledger) as c:  # the shop writes its orders into the ledger
        c.executemany("INSERT INTO orders (customer, amount_cents, currency, status) VALUES (?, ?, ?, ?)", rows)
    c.close()
    r = director("apply", ".", "--auto-approve", cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr
    report = tmp_path / ".director" / "sqlite-report.local.md" / "workspace" / "tally" / "report.sqlite3"
    with sqlite3.connect(f"file:{report}?mode=ro", uri=True) as c:
        got = dict(c.execute("SELECT customer, revenue_cents FROM revenue_by_customer").fetchall())
    c.close()
    assert got == {"ada": 1500, "bob": 500}, got
    assert not (tmp_path / ".director" / "sqlite-report.local.md" / "workspace" / "upstream").exists()

    r = director("teardown", ".", "--approve", "teardown", cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr
    assert not ledger.exists() and not report.exists()

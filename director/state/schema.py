"""Opening a journal file: durability settings, the DDL of each schema version, and the migrations.

`connect` opens the file with `journal_mode=WAL`, `synchronous=NORMAL` (the dialect syncs the log at each
durable commit, `dialect.SqliteDialect.commit`), foreign keys on and a 10 s busy
timeout, then `migrate`s it; a journal that does not exist yet is created whole under a temp name and
linked into place, so that two processes starting at once can race safely (`_create`).

A journal is an SQLite file marked `PRAGMA application_id = 0x44495230` ("DIR0") whose
`PRAGMA user_version` is the number of the last migration applied; the `schema_version` table (from
version 2) records each migration, when it was applied and what it did. Opening a journal applies the
missing migrations in order, in the same `BEGIN IMMEDIATE` transaction that checks the version, so two
processes opening an old (or new) file never both migrate it and a crash leaves it at the old version.
A journal newer than this Director is refused, never downgraded.

Migrations are append-only: a released one is never edited (journals already carry its effects);
a change of schema is a new migration.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from director.errors import JournalError, StorageError
from director.plan.source import whole_number
from director.proc import pid_alive
from director.state import chain

BUSY_TIMEOUT_MS = 10_000
APPLICATION_ID = 0x44495230  # "DIR0": tells a Director journal from any other SQLite file

# Version 1, as Director created journals before migrations existed (kept verbatim: old journals have it).
V1_DDL = """
CREATE TABLE runs (
    id              INTEGER PRIMARY KEY,
    kind            TEXT NOT NULL CHECK (kind IN ('apply', 'teardown')),
    state           TEXT NOT NULL,
    plan_path       TEXT NOT NULL,
    target          TEXT NOT NULL,
    operator        TEXT NOT NULL,
    host            TEXT NOT NULL,
    pid             INTEGER NOT NULL,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    inputs_json     TEXT NOT NULL DEFAULT '{}',
    recoveries      INTEGER NOT NULL DEFAULT 0,
    progress_marker TEXT,
    current_section TEXT,
    reason          TEXT
);
CREATE TABLE transitions (
    run_id     INTEGER NOT NULL REFERENCES runs(id),
    seq        INTEGER NOT NULL,
    from_state TEXT,
    to_state   TEXT NOT NULL,
    at         TEXT NOT NULL,
    reason     TEXT,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE steps (
    id           INTEGER PRIMARY KEY,
    run_id       INTEGER NOT NULL REFERENCES runs(id),
    step_key     TEXT NOT NULL,
    section_key  TEXT NOT NULL,
    block_index  INTEGER NOT NULL,
    role         TEXT NOT NULL,
    attempt      INTEGER NOT NULL DEFAULT 1,
    state        TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,
    started_at   TEXT NOT NULL,
    finished_at  TEXT,
    exit_code    INTEGER,
    duration_s   REAL,
    output       TEXT,
    session_json TEXT,
    flags_json   TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX steps_by_run ON steps (run_id, id);
CREATE INDEX steps_by_key ON steps (step_key, state, id);
CREATE TABLE approvals (
    id           INTEGER PRIMARY KEY,
    run_id       INTEGER REFERENCES runs(id),
    section_key  TEXT NOT NULL,
    sha256       TEXT NOT NULL,
    operator     TEXT NOT NULL,
    host         TEXT NOT NULL,
    at           TEXT NOT NULL,
    how          TEXT NOT NULL CHECK (how IN ('prompt', 'flag', 'approve-command', 'auto')),
    content_json TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX approvals_by_content ON approvals (section_key, sha256, id);
CREATE TABLE events (
    id        INTEGER PRIMARY KEY,
    run_id    INTEGER REFERENCES runs(id),
    at        TEXT NOT NULL,
    kind      TEXT NOT NULL,
    data_json TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX events_by_run ON events (run_id, id);
CREATE TABLE lease_holder (
    id           INTEGER PRIMARY KEY CHECK (id = 1),
    pid          INTEGER NOT NULL,
    host         TEXT NOT NULL,
    kind         TEXT NOT NULL,
    started_at   TEXT NOT NULL,
    heartbeat_at TEXT NOT NULL,
    run_id       INTEGER
);
"""


def _script(db: sqlite3.Connection, ddl: str) -> None:
    # Not executescript(): it would COMMIT the migration's transaction first.
    for stmt in ddl.split(";"):
        if stmt.strip():
            db.execute(stmt)


def _v1(db: sqlite3.Connection) -> None:
    _script(db, V1_DDL)


def _v2(db: sqlite3.Connection) -> None:
    _script(
        db,
        """
        CREATE TABLE schema_version (
            version     INTEGER PRIMARY KEY,
            applied_at  TEXT,            -- NULL: applied before this table existed
            description TEXT NOT NULL
        )
        """,
    )
    # `runs.progress_marker` was never written by a run (only by a test): crash-loop progress is the
    # recovery count, reset in the very commit that records progress. ALTER … DROP COLUMN needs SQLite
    # 3.35; an older library keeps the (always NULL) column, which nothing reads.
    if sqlite3.sqlite_version_info >= (3, 35, 0):
        db.execute("ALTER TABLE runs DROP COLUMN progress_marker")


def _v3(db: sqlite3.Connection) -> None:
    _script(
        db,
        """
        CREATE TABLE verify_paths (
            block_key TEXT NOT NULL,     -- sha256 of the check's code (director.plan.contrast.block_key)
            family    TEXT NOT NULL CHECK (family IN ('apply', 'teardown')),
            unit      INTEGER NOT NULL,  -- the check unit (a top-level statement that prints or exits)
            path_json TEXT NOT NULL,     -- the positions of the messages and exits that ran
            world     TEXT NOT NULL CHECK (world IN ('held', 'not-held', 'settled')),
            run_id    INTEGER REFERENCES runs(id),
            seen_at   TEXT NOT NULL,
            PRIMARY KEY (block_key, family, unit, path_json)
        )
        """,
    )


def _v4(db: sqlite3.Connection) -> None:
    # A receipt may be signed (`director.state.signing`): who signed it, the text signed, the signature.
    for column in ("principal", "signed_payload", "signature"):
        db.execute(f"ALTER TABLE approvals ADD COLUMN {column} TEXT")  # NULL: unsigned


def _v5(db: sqlite3.Connection) -> None:
    # The hash chain over the rows that bear on a gate (`director.state.chain`), and the journal's own
    # facts (`meta`: the chain's head, where the plan lives). Rows already there are chained now, in the
    # order they were written: what the chain proves starts at this migration.
    db.execute("CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
    for table in chain.CHAINED:
        for column, kind in (
            ("chain_seq", "INTEGER"),
            ("chain_prev", "TEXT"),
            ("chain_fields", "TEXT"),
            ("chain_hash", "TEXT"),
        ):
            db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
    rows = {t: [dict(r) for r in _rows(db, t)] for t in chain.CHAINED}
    head = chain.rechain(rows)
    for table, found in rows.items():
        key = "run_id = :run_id AND seq = :seq" if table == "transitions" else "id = :id"
        for row in found:
            db.execute(
                f"UPDATE {table} SET chain_seq = :chain_seq, chain_prev = :chain_prev,"
                f" chain_fields = :chain_fields, chain_hash = :chain_hash WHERE {key}",
                row,
            )
    if head is not None:
        db.execute("INSERT INTO meta (name, value) VALUES (?, ?)", (chain.HEAD, head))


def _rows(db: sqlite3.Connection, table: str) -> list[sqlite3.Row]:
    cur = db.execute(f"SELECT * FROM {table}")  # fixed table names
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]  # type: ignore[misc]


@dataclass(frozen=True)
class Migration:
    """One step of the schema: `apply` takes a journal at `version - 1` to `version`."""

    version: int
    description: str
    apply: Callable[[sqlite3.Connection], None]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "runs, transitions, steps, approvals, events, lease_holder", _v1),
    Migration(2, "schema_version table; runs.progress_marker dropped (never written)", _v2),
    Migration(3, "verify_paths: the path each check took in the worlds seen (verdicts by contrast)", _v3),
    Migration(4, "approvals.principal, signed_payload, signature (signed receipts)", _v4),
    Migration(
        5,
        "meta (the chain's head, where the plan lives); transitions, approvals and events chained "
        "(chain_seq, chain_prev, chain_fields, chain_hash), the rows already there in the order written",
        _v5,
    ),
)
SCHEMA_VERSION = MIGRATIONS[-1].version


def connect(path: Path, now: str) -> sqlite3.Connection:
    """The journal at `path` (created with its directory if needed, atomically), configured and migrated.

    A new journal is made whole under a temp name and linked into place (`_create`): two processes
    starting the same plan's first run at once never see a half-made file, and neither removes one.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise StorageError(f"cannot create the journal {path}: {_why(e, path.parent)}") from None
    if not path.exists():
        _create(path, now)
    try:
        db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    except sqlite3.Error as e:
        raise JournalError(f"cannot open journal {path}: {e}") from e
    db.row_factory = sqlite3.Row
    try:
        _configure(db, path)
        migrate(db, path, now)
    except BaseException:
        db.close()
        raise
    return db


# A journal being created is `.<name>.<pid>.<random>.director-tmp` beside it (`director.files`' naming, so
# the lease's sweep knows its owner), with SQLite's `-journal`/`-wal` files while it is open.
_TMP_SUFFIX = ".director-tmp"


def _create(path: Path, now: str) -> None:
    """Make a new journal at `path`: migrated and in WAL mode under a temp name, then hard-linked into
    place (`link` fails if `path` exists: a journal another process made first is kept, and this one
    dropped). Refuses with one line naming the path and why when it cannot be made (disk full, no
    permission, a read-only file system)."""
    _sweep(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}{_TMP_SUFFIX}")
    try:
        os.close(os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_CLOEXEC, 0o644))
        db = sqlite3.connect(tmp, isolation_level=None)
        try:
            _configure(db, tmp)
            migrate(db, tmp, now)
        finally:
            db.close()  # the last connection: the WAL is checkpointed into the file and removed
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another process made it first: theirs is the journal
        except OSError as e:
            if e.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV):
                raise
            _place_without_links(tmp, path)
    except OSError as e:
        raise StorageError(f"cannot create the journal {path}: {e.strerror or e}") from None
    except (JournalError, sqlite3.Error) as e:
        raise StorageError(f"cannot create the journal {path}: {_sqlite_why(e)}") from None
    finally:
        for end in ("", "-journal", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                os.unlink(f"{tmp}{end}")


def _place_without_links(tmp: Path, path: Path) -> None:
    """A file system without hard links: rename, unless a journal appeared meanwhile (then keep it)."""
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_CLOEXEC, 0o644)  # claims the name
    os.close(fd)
    os.replace(tmp, path)  # over the empty file this process just made, never over another's journal


def _why(e: OSError, where: Path) -> str:
    reason = e.strerror or str(e)
    return f"{reason} ({e.filename})" if e.filename and str(e.filename) != str(where) else reason


def _sqlite_why(e: BaseException) -> str:
    text = str(e)
    if "disk is full" in text:
        return "No space left on device"
    return text.split(": ", 1)[-1] if isinstance(e, JournalError) else text


def _sweep(path: Path) -> None:
    """Remove what creations of this journal by processes now dead left (a kill during `_create`)."""
    prefix = f".{path.name}."
    try:
        names = os.listdir(path.parent)
    except OSError:
        return
    for name in names:
        stem = name.split(_TMP_SUFFIX, 1)[0] if _TMP_SUFFIX in name else ""
        parts = stem[len(prefix) :].split(".") if stem.startswith(prefix) else []
        if len(parts) == 2 and (pid := whole_number(parts[0])) is not None and not pid_alive(pid):
            with contextlib.suppress(OSError):
                os.unlink(path.parent / name)


def _configure(db: sqlite3.Connection, path: Path) -> None:
    try:
        db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        mode = db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        db.execute("PRAGMA synchronous = NORMAL")  # durable commits sync the log themselves
        db.execute("PRAGMA foreign_keys = ON")
    except sqlite3.DatabaseError as e:
        raise JournalError(f"{path} is not a usable SQLite journal: {e}") from e
    if str(mode).lower() != "wal":
        raise JournalError(f"cannot put journal {path} in WAL mode (got {mode!r}); is it on a network FS?")


def migrate(db: sqlite3.Connection, path: Path, now: str) -> int:
    """Check that `db` is a Director journal and bring it to `SCHEMA_VERSION`; returns the version found.

    `db` must be in autocommit mode (`isolation_level=None`); everything happens in one transaction.
    """
    try:
        db.execute("BEGIN IMMEDIATE")  # two processes opening the same file: one migrates, one waits
        try:
            found = _check(db, path)
            pending = [m for m in MIGRATIONS if m.version > found]
            for m in pending:
                m.apply(db)
            if pending:
                for m in MIGRATIONS:
                    db.execute(
                        "INSERT OR IGNORE INTO schema_version (version, applied_at, description)"
                        " VALUES (?, ?, ?)",
                        (m.version, now if m in pending else None, m.description),
                    )
                db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
    except sqlite3.DatabaseError as e:
        raise JournalError(f"{path} is not a usable SQLite journal: {e}") from e
    return found


def _check(db: sqlite3.Connection, path: Path) -> int:
    """The schema version of `db` (0: an empty file, to be created), or JournalError."""
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    app_id = db.execute("PRAGMA application_id").fetchone()[0]
    if version == 0:
        if db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
            raise JournalError(f"{path} is an SQLite database but not a Director journal")
        return 0
    if app_id != APPLICATION_ID:
        raise JournalError(f"{path} is an SQLite database but not a Director journal")
    if version > SCHEMA_VERSION:
        raise JournalError(
            f"journal {path} has schema version {version}, newer than this Director knows "
            f"({SCHEMA_VERSION}); upgrade Director"
        )
    return version

"""The PostgreSQL state database: connecting, the DDL of each schema version, and the migrations.

Everything lives in one schema, `director`, shared by every plan of a team: each table carries the
plan's key (`director.state.identity`), and ids are numbered per plan from `plans.last_id` (one counter
for runs, steps, approvals and events): "run 3" names the same run on every machine, and `director
state push|pull` keeps a plan's ids as they are.

Migrations are versioned (`director.schema_version`, one row per migration applied, with its time and
description), applied on first use, in order, in one transaction under a transaction-level advisory
lock (two Directors opening a fresh database never both migrate it; a crash leaves the old version: DDL
is transactional in PostgreSQL). A database newer than this Director is refused, never downgraded.
Released migrations are never edited; a change of schema is a new one.

The role needs no superuser rights: CONNECT on the database and CREATE on it (to create the `director`
schema on first use), or an existing `director` schema it owns. Nothing else is asked for: no extension,
no `CREATE ROLE`, no `ALTER SYSTEM`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import psycopg
from psycopg import conninfo
from psycopg.rows import DictRow, dict_row

from director.errors import JournalError, StateUnavailable, UsageError
from director.state import chain

SCHEMA = "director"
MIGRATION_LOCK = 0x44495230_00000001  # pg_advisory_xact_lock key of the migrations ("DIR0" + 1)
CONNECT_TIMEOUT_S = 10
# A holder whose machine vanishes (no FIN) loses its connection, so its lease, after about
# idle + interval × count seconds: the server probes the idle client (settings are per session).
KEEPALIVE = {"idle": 10, "interval": 5, "count": 3}

Connection = psycopg.Connection[DictRow]

V1_DDL = """
CREATE TABLE director.plans (
    key        TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    plan_path  TEXT NOT NULL,          -- where the plan was first opened (for humans)
    last_id    BIGINT NOT NULL DEFAULT 0  -- ids of runs, steps, approvals, events are numbered per plan
);
CREATE TABLE director.runs (
    plan_key        TEXT NOT NULL REFERENCES director.plans(key),
    id              BIGINT NOT NULL,
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
    current_section TEXT,
    reason          TEXT,
    PRIMARY KEY (plan_key, id)
);
CREATE INDEX runs_by_kind ON director.runs (plan_key, kind, id);
CREATE TABLE director.transitions (
    plan_key   TEXT NOT NULL,
    run_id     BIGINT NOT NULL,
    seq        INTEGER NOT NULL,
    from_state TEXT,
    to_state   TEXT NOT NULL,
    at         TEXT NOT NULL,
    reason     TEXT,
    PRIMARY KEY (plan_key, run_id, seq),
    FOREIGN KEY (plan_key, run_id) REFERENCES director.runs (plan_key, id)
);
CREATE TABLE director.steps (
    plan_key     TEXT NOT NULL,
    id           BIGINT NOT NULL,
    run_id       BIGINT NOT NULL,
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
    duration_s   DOUBLE PRECISION,
    output       TEXT,
    session_json TEXT,
    flags_json   TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (plan_key, id),
    FOREIGN KEY (plan_key, run_id) REFERENCES director.runs (plan_key, id)
);
CREATE INDEX steps_by_run ON director.steps (plan_key, run_id, id);
CREATE INDEX steps_by_key ON director.steps (plan_key, step_key, state, id);
CREATE TABLE director.approvals (
    plan_key     TEXT NOT NULL REFERENCES director.plans(key),
    id           BIGINT NOT NULL,
    run_id       BIGINT,
    section_key  TEXT NOT NULL,
    sha256       TEXT NOT NULL,
    operator     TEXT NOT NULL,
    host         TEXT NOT NULL,
    at           TEXT NOT NULL,
    how          TEXT NOT NULL CHECK (how IN ('prompt', 'flag', 'approve-command', 'auto')),
    content_json TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (plan_key, id),
    FOREIGN KEY (plan_key, run_id) REFERENCES director.runs (plan_key, id)
);
CREATE INDEX approvals_by_content ON director.approvals (plan_key, section_key, sha256, id);
CREATE TABLE director.events (
    plan_key  TEXT NOT NULL REFERENCES director.plans(key),
    id        BIGINT NOT NULL,
    run_id    BIGINT,
    at        TEXT NOT NULL,
    kind      TEXT NOT NULL,
    data_json TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (plan_key, id),
    FOREIGN KEY (plan_key, run_id) REFERENCES director.runs (plan_key, id)
);
CREATE INDEX events_by_run ON director.events (plan_key, run_id, id);
CREATE INDEX events_by_kind ON director.events (plan_key, kind, id);
CREATE TABLE director.lease_holder (
    plan_key     TEXT PRIMARY KEY REFERENCES director.plans(key),
    pid          INTEGER NOT NULL,
    host         TEXT NOT NULL,
    kind         TEXT NOT NULL,
    started_at   TEXT NOT NULL,
    heartbeat_at TEXT NOT NULL,
    run_id       BIGINT,
    backend_pid  INTEGER NOT NULL   -- the holder's database session (pg_backend_pid), which holds the lock
)
"""


@dataclass(frozen=True)
class Migration:
    """One step of the schema: `ddl` takes the database from `version - 1` to `version`, then `then`
    (if any) brings the rows along, in the same transaction."""

    version: int
    description: str
    ddl: str
    then: Callable[[Connection], None] | None = None


V2_DDL = """
CREATE TABLE director.verify_paths (
    plan_key  TEXT NOT NULL REFERENCES director.plans(key),
    block_key TEXT NOT NULL,
    family    TEXT NOT NULL CHECK (family IN ('apply', 'teardown')),
    unit      INTEGER NOT NULL,
    path_json TEXT NOT NULL,
    world     TEXT NOT NULL CHECK (world IN ('held', 'not-held', 'settled')),
    run_id    BIGINT,
    seen_at   TEXT NOT NULL,
    PRIMARY KEY (plan_key, block_key, family, unit, path_json),
    FOREIGN KEY (plan_key, run_id) REFERENCES director.runs (plan_key, id)
)
"""

# A receipt may be signed (`director.state.signing`): who signed it, the text signed, the signature.
V3_DDL = """
ALTER TABLE director.approvals ADD COLUMN principal TEXT;
ALTER TABLE director.approvals ADD COLUMN signed_payload TEXT;
ALTER TABLE director.approvals ADD COLUMN signature TEXT
"""

# The hash chain over the rows that bear on a gate (`director.state.chain`) and each plan's own facts
# (`plan_meta`: the chain's head, where the plan lives); the rows already there are chained by `_chain`.
V4_DDL = """
CREATE TABLE director.plan_meta (
    plan_key TEXT NOT NULL REFERENCES director.plans(key),
    name     TEXT NOT NULL,
    value    TEXT NOT NULL,
    PRIMARY KEY (plan_key, name)
);
""" + ";".join(
    f"ALTER TABLE director.{t} ADD COLUMN chain_seq BIGINT, ADD COLUMN chain_prev TEXT,"
    " ADD COLUMN chain_fields TEXT, ADD COLUMN chain_hash TEXT"
    for t in chain.CHAINED
)


def _chain(conn: Connection) -> None:
    """Chain every plan's rows as they stand, in the order they were written (the SQLite journal's v5)."""
    keys = [r["key"] for r in conn.execute("SELECT key FROM director.plans ORDER BY key").fetchall()]
    for key in keys:
        rows = {
            t: [dict(r) for r in conn.execute(f"SELECT * FROM director.{t} WHERE plan_key = %s", (key,))]
            for t in chain.CHAINED
        }
        head = chain.rechain(rows)
        for table, found in rows.items():
            where = "run_id = %(run_id)s AND seq = %(seq)s" if table == "transitions" else "id = %(id)s"
            for row in found:
                conn.execute(
                    f"UPDATE director.{table} SET chain_seq = %(chain_seq)s, chain_prev = %(chain_prev)s,"
                    f" chain_fields = %(chain_fields)s, chain_hash = %(chain_hash)s"
                    f" WHERE plan_key = %(plan_key)s AND {where}",
                    row,
                )
        if head is not None:
            conn.execute(
                "INSERT INTO director.plan_meta (plan_key, name, value) VALUES (%s, %s, %s)",
                (key, chain.HEAD, head),
            )


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "plans, runs, transitions, steps, approvals, events, lease_holder (per-plan ids)", V1_DDL),
    Migration(2, "verify_paths: the path each check took in the worlds seen (verdicts by contrast)", V2_DDL),
    Migration(3, "approvals.principal, signed_payload, signature (signed receipts)", V3_DDL),
    Migration(
        4,
        "plan_meta (the chain's head, where the plan lives); transitions, approvals and events chained "
        "(chain_seq, chain_prev, chain_fields, chain_hash), the rows already there in the order written",
        V4_DDL,
        _chain,
    ),
)
SCHEMA_VERSION = MIGRATIONS[-1].version


def redact(url: str) -> str:
    """The URL without its password (never printed, journaled or shown by `status`)."""
    try:
        d = conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "postgresql://<unparsable URL>"
    user = f"{d['user']}@" if d.get("user") else ""
    host = str(d.get("host") or "localhost")
    port = f":{d['port']}" if d.get("port") else ""
    return f"postgresql://{user}{host}{port}/{d.get('dbname') or ''}"


def connect(url: str) -> Connection:
    """An autocommit connection (writes use explicit transactions), dict rows, keepalives on."""
    try:
        conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError as e:
        raise UsageError(f"--state-url: not a PostgreSQL connection URL: {e}") from None
    try:
        conn = psycopg.connect(
            url,
            autocommit=True,
            row_factory=dict_row,
            connect_timeout=CONNECT_TIMEOUT_S,
            application_name="director",
            keepalives=1,
            keepalives_idle=KEEPALIVE["idle"],
            keepalives_interval=KEEPALIVE["interval"],
            keepalives_count=KEEPALIVE["count"],
        )
    except psycopg.OperationalError as e:
        raise StateUnavailable(f"cannot reach the state database {redact(url)}: {_first_line(e)}") from None
    try:
        for name, value in KEEPALIVE.items():
            conn.execute(f"SET tcp_keepalives_{name} = {int(value)}")
    except psycopg.Error as e:
        conn.close()
        raise StateUnavailable(f"state database {redact(url)}: {_first_line(e)}") from None
    return conn


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def migrate(conn: Connection, where: str, now: str) -> int:
    """Bring the `director` schema to `SCHEMA_VERSION` (created on first use); returns the version found."""
    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            found = _version(conn)
            if found > SCHEMA_VERSION:
                raise JournalError(
                    f"state database {where} has schema version {found}, newer than this Director knows "
                    f"({SCHEMA_VERSION}); upgrade Director"
                )
            if found == 0:
                conn.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
                conn.execute(
                    f"CREATE TABLE {SCHEMA}.schema_version ("
                    " version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL, description TEXT NOT NULL)"
                )
            for m in MIGRATIONS:
                if m.version > found:
                    for stmt in m.ddl.split(";"):
                        if stmt.strip():
                            conn.execute(stmt.encode())  # bytes: DDL text is not a format string
                    if m.then is not None:
                        m.then(conn)
                    conn.execute(
                        f"INSERT INTO {SCHEMA}.schema_version (version, applied_at, description)"
                        " VALUES (%s, %s, %s)",
                        (m.version, now, m.description),
                    )
    except psycopg.errors.InsufficientPrivilege as e:
        raise JournalError(
            f"state database {where}: the role may not create the `{SCHEMA}` schema ({_first_line(e)}); "
            f"grant it CREATE on the database, or create the schema for it"
        ) from None
    except psycopg.OperationalError as e:
        raise StateUnavailable(f"state database {where}: {_first_line(e)}") from None
    return found


def _version(conn: Connection) -> int:
    row = conn.execute("SELECT to_regclass(%s) AS t", (f"{SCHEMA}.schema_version",)).fetchone()
    if row is None or row["t"] is None:
        return 0
    v = conn.execute(f"SELECT coalesce(max(version), 0) AS v FROM {SCHEMA}.schema_version").fetchone()
    return int(v["v"]) if v else 0

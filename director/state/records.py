"""What the journal stores, as values: one frozen record per table row, timestamps, JSON in and out.

Structured columns hold canonical JSON text (sorted keys: identical data gives identical bytes);
timestamps are UTC ISO-8601 strings with microseconds. `export_text` renders a journal's data as JSON
or JSON Lines (the format of `director audit --json/--jsonl`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, Protocol, TypeVar

from director.state.lifecycle import RunState, StepState
from director.state.signing import Signed

T = TypeVar("T")

ExportFormat = Literal["json", "jsonl"]


class Row(Protocol):
    """A result row by column name: an `sqlite3.Row`, or a dict from psycopg's `dict_row`."""

    def __getitem__(self, key: str) -> Any: ...


def utc_now() -> datetime:
    """The real clock: aware UTC now."""
    return datetime.now(UTC)


def iso(dt: datetime) -> str:
    """A timestamp as stored (UTC, microseconds); naive datetimes are refused."""
    if dt.tzinfo is None:
        raise ValueError("journal timestamps must be timezone-aware")
    return dt.astimezone(UTC).isoformat(timespec="microseconds")


def _dt(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


def scrub_session(session: Mapping[str, Any], is_secret: Callable[[str], bool]) -> dict[str, Any]:
    """A copy of a SessionState JSON with secret-named variables removed (defence in depth)."""
    out = dict(session)
    for key in ("variables", "arrays", "attributes"):
        if isinstance(out.get(key), Mapping):
            out[key] = {k: v for k, v in out[key].items() if not is_secret(k)}
    if isinstance(out.get("exported"), list):
        out["exported"] = [k for k in out["exported"] if not is_secret(k)]
    return out


def poll(read: Callable[[], T | None], timeout_s: float, interval_s: float) -> T | None:
    """`read()` every `interval_s` until it returns something or `timeout_s` passes (then None)."""
    deadline = time.monotonic() + timeout_s
    while True:
        found = read()
        left = deadline - time.monotonic()
        if found is not None or left <= 0:
            return found
        time.sleep(min(interval_s, left))


def dump(data: Any) -> str:
    """Canonical JSON text for a column: sorted keys, ASCII, no spaces."""
    return json.dumps(data, sort_keys=True, ensure_ascii=True, separators=(",", ":"))


@dataclass(frozen=True)
class RunRecord:
    """A row of `runs`."""

    id: int
    kind: str
    state: RunState
    plan_path: str
    target: str
    operator: str
    host: str
    pid: int
    created_at: datetime
    updated_at: datetime
    inputs: dict[str, Any]
    recoveries: int
    current_section: str | None
    reason: str | None

    @classmethod
    def from_row(cls, row: Row) -> RunRecord:
        """The record of a `SELECT *` row."""
        return cls(
            id=row["id"],
            kind=row["kind"],
            state=RunState(row["state"]),
            plan_path=row["plan_path"],
            target=row["target"],
            operator=row["operator"],
            host=row["host"],
            pid=row["pid"],
            created_at=datetime.fromisoformat(row["created_at"]),
            updated_at=datetime.fromisoformat(row["updated_at"]),
            inputs=json.loads(row["inputs_json"]),
            recoveries=row["recoveries"],
            current_section=row["current_section"],
            reason=row["reason"],
        )


@dataclass(frozen=True)
class TransitionRecord:
    """A row of `transitions`; `frm` is None for the creation of the run."""

    run_id: int
    seq: int
    frm: RunState | None
    to: RunState
    at: datetime
    reason: str | None

    @classmethod
    def from_row(cls, row: Row) -> TransitionRecord:
        """The record of a `SELECT *` row."""
        return cls(
            run_id=row["run_id"],
            seq=row["seq"],
            frm=None if row["from_state"] is None else RunState(row["from_state"]),
            to=RunState(row["to_state"]),
            at=datetime.fromisoformat(row["at"]),
            reason=row["reason"],
        )


@dataclass(frozen=True)
class StepRecord:
    """A row of `steps`."""

    id: int
    run_id: int
    step_key: str
    section_key: str
    block_index: int
    role: str
    attempt: int
    state: StepState
    fingerprint: str
    started_at: datetime
    finished_at: datetime | None
    exit_code: int | None
    duration_s: float | None
    output: str | None
    session: dict[str, Any] | None
    flags: dict[str, Any]

    @property
    def confirmed(self) -> bool:
        """A section's success that no check after its act left inconclusive (the flag `unconfirmed`)."""
        return not self.flags.get("unconfirmed")

    @classmethod
    def from_row(cls, row: Row) -> StepRecord:
        """The record of a `SELECT *` row."""
        return cls(
            id=row["id"],
            run_id=row["run_id"],
            step_key=row["step_key"],
            section_key=row["section_key"],
            block_index=row["block_index"],
            role=row["role"],
            attempt=row["attempt"],
            state=StepState(row["state"]),
            fingerprint=row["fingerprint"],
            started_at=datetime.fromisoformat(row["started_at"]),
            finished_at=_dt(row["finished_at"]),
            exit_code=row["exit_code"],
            duration_s=row["duration_s"],
            output=row["output"],
            session=None if row["session_json"] is None else json.loads(row["session_json"]),
            flags=json.loads(row["flags_json"]),
        )


@dataclass(frozen=True)
class ApprovalRecord:
    """A row of `approvals`."""

    id: int
    run_id: int | None
    section_key: str
    sha256: str
    operator: str
    host: str
    at: datetime
    how: str
    content: dict[str, Any]
    principal: str | None = None  # signed receipts (`director.state.signing`): the signer,
    signed_payload: str | None = None  # the exact text signed,
    signature: str | None = None  # and the armored SSH signature

    @property
    def row(self) -> dict[str, Any]:
        """The columns a signature's claim is compared with (`signing.row_mismatch`)."""
        return {"section_key": self.section_key, "sha256": self.sha256, "principal": self.principal,
                "operator": self.operator, "host": self.host, "how": self.how}  # fmt: skip

    @classmethod
    def from_row(cls, row: Row) -> ApprovalRecord:
        """The record of a `SELECT *` row."""
        return cls(
            id=row["id"],
            run_id=row["run_id"],
            section_key=row["section_key"],
            sha256=row["sha256"],
            operator=row["operator"],
            host=row["host"],
            at=datetime.fromisoformat(row["at"]),
            how=row["how"],
            content=json.loads(row["content_json"]),
            principal=row["principal"],
            signed_payload=row["signed_payload"],
            signature=row["signature"],
        )


def approval_signature(signed: Signed | None) -> tuple[str | None, str | None, str | None]:
    """The `principal`, `signed_payload` and `signature` columns of a receipt (all NULL: unsigned)."""
    if signed is None:
        return None, None, None
    return signed.claim.principal, signed.claim.payload(), signed.signature


def approval_signer(signed: Signed | None) -> dict[str, str]:
    """What a receipt's audit event says of its signature: the principal it claims (checked at the gate)."""
    return {} if signed is None else {"principal": signed.claim.principal}


@dataclass(frozen=True)
class EventRecord:
    """A row of `events` (the audit trail)."""

    id: int
    run_id: int | None
    at: datetime
    kind: str
    data: dict[str, Any]

    @classmethod
    def from_row(cls, row: Row) -> EventRecord:
        """The record of a `SELECT *` row."""
        return cls(
            id=row["id"],
            run_id=row["run_id"],
            at=datetime.fromisoformat(row["at"]),
            kind=row["kind"],
            data=json.loads(row["data_json"]),
        )


@dataclass(frozen=True)
class LeaseHolder:
    """The single `lease_holder` row: who holds (or last held without releasing) the plan's lease."""

    pid: int
    host: str
    kind: str
    started_at: datetime
    heartbeat_at: datetime
    run_id: int | None

    @classmethod
    def from_row(cls, row: Row) -> LeaseHolder:
        """The record of a `SELECT *` row."""
        return cls(
            pid=row["pid"],
            host=row["host"],
            kind=row["kind"],
            started_at=datetime.fromisoformat(row["started_at"]),
            heartbeat_at=datetime.fromisoformat(row["heartbeat_at"]),
            run_id=row["run_id"],
        )

    def to_json(self) -> dict[str, Any]:
        """Plain data for an audit event."""
        return {"pid": self.pid, "host": self.host, "kind": self.kind,
                "started_at": self.started_at.isoformat(), "run_id": self.run_id}  # fmt: skip


def decode_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row as plain data for export: each `x_json` column decoded under the name `x`."""
    out = dict(row)
    for col in list(out):
        if col.endswith("_json"):
            raw = out.pop(col)
            out[col.removesuffix("_json")] = None if raw is None else json.loads(raw)
    return out


def history_tables(tables: Iterable[str]) -> list[str]:
    """The tables of a journal that hold its history, parents first (the lease holder is not history)."""
    return [t for t in tables if t != "lease_holder"]


def insert_sql(table: str, values: Mapping[str, Any], mark: str) -> tuple[str, list[Any]]:
    """`INSERT INTO table (…) VALUES (…)` for these column values, with this placeholder."""
    names, marks = ", ".join(values), ", ".join(mark for _ in values)
    return f"INSERT INTO {table} ({names}) VALUES ({marks})", list(values.values())


def encode_row(row: Mapping[str, Any], columns: Iterable[str]) -> dict[str, Any]:
    """The inverse of `decode_row` for a table with these columns: `x` back into `x_json` text."""
    out: dict[str, Any] = {}
    for col in columns:
        if col in row:
            out[col] = row[col]
        elif col.endswith("_json") and col.removesuffix("_json") in row:
            raw = row[col.removesuffix("_json")]
            out[col] = None if raw is None else dump(raw)
    return out


def export_text(data: Mapping[str, Any], fmt: ExportFormat) -> str:
    """A journal's exported data (`Journal.export_data`) as indented JSON, or as JSON Lines.

    JSON Lines: a `{"record": "journal", "schema_version": N}` line, then one line per row, its table
    named in the singular (`{"record": "run", …}`, `"step"`, `"event"`…), tables in export order.
    """
    if fmt == "json":
        text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    elif fmt == "jsonl":
        lines = [json.dumps({"record": "journal", "schema_version": data.get("schema_version")})]
        for table, rows in data.items():
            if isinstance(rows, list):
                record = table.removesuffix("s")
                lines.extend(
                    json.dumps({"record": record, **row}, sort_keys=True, ensure_ascii=False) for row in rows
                )
        text = "\n".join(lines) + "\n"
    else:
        raise ValueError(f"export format must be json or jsonl, not {fmt!r}")
    # Shell values may hold bytes that are not UTF-8 (lone surrogates here): write them as the
    # JSON escape "\udcff" so the text can always be printed or saved.
    return text.encode("utf-8", "backslashreplace").decode("utf-8")

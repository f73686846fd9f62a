"""The journal as a whole: its history exported and imported (`director audit`, `director state
push|pull`), the check of its hash chain (`director.state.chain`), and where the plan it belongs to lives
(`director.state.location`), for both backends."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from director.errors import JournalError, JournalTampered
from director.state import chain
from director.state.records import (
    ExportFormat,
    decode_row,
    dump,
    encode_row,
    export_text,
    history_tables,
)
from director.state.writes import JournalBase

# The journal's data, parents first (what `export_data` holds), and the order of each table's rows.
TABLES = ("runs", "transitions", "steps", "approvals", "events", "verify_paths", "lease_holder")
ORDER = {
    "transitions": "run_id, seq",
    "verify_paths": "block_key, family, unit, path_json",
    "lease_holder": "1",
}
WITH_IDS = ("runs", "steps", "approvals", "events")
LOCATION = (
    "location"  # the meta row: where the plan this journal belongs to lives (`director.state.location`)
)


class History(JournalBase):
    """Whole-journal operations, written once over the dialect."""

    def has_history(self) -> bool:
        """Whether any run, approval or event was ever recorded here."""
        return any(
            self._one(f"SELECT 1 AS x FROM {{{t}}} WHERE {{scope}} LIMIT 1")
            for t in ("runs", "approvals", "events")
        )

    def export_data(self) -> dict[str, Any]:
        """Every table as plain JSON-able data (JSON columns decoded, no plan key), identical in both
        backends; `chain_head` is the chain's recorded head."""
        out: dict[str, Any] = {
            "schema_version": self._d.schema_version,
            "path": self.location,
            "chain_head": self._meta(chain.HEAD),
        }
        for table in TABLES:
            rows = self._rows(f"SELECT * FROM {{{table}}} WHERE {{scope}} ORDER BY {ORDER.get(table, 'id')}")
            out[table] = [decode_row({k: v for k, v in dict(r).items() if k != "plan_key"}) for r in rows]
        return out

    def export(self, fmt: ExportFormat = "json") -> str:
        """All runs, transitions, steps, approvals, events (and the holder) as JSON or JSON Lines text."""
        return export_text(self.export_data(), fmt)

    def import_data(self, data: Mapping[str, Any], *, replace: bool = False) -> int:
        """Copy an exported journal (`export_data` of either backend) into this one, ids and chain kept.

        One transaction: all of it or nothing. This journal must have no history, unless `replace`
        (its history is then deleted in that transaction). The lease holder is not history: not copied.
        """
        if self.has_history() and not replace:
            raise JournalError(f"{self.location} already has history; refusing to mix two histories")
        tables, n = history_tables(TABLES), 0
        rows = {t: [encode_row(r, self._d.columns(t)) for r in data.get(t, [])] for t in tables}
        head = data.get("chain_head")
        if head is None or any(r.get("chain_hash") is None for t in chain.CHAINED for r in rows[t]):
            head = chain.rechain(rows)  # an export from before the chain: chained now, in the order written
        with self._write():
            for table in reversed(tables):  # children first
                self._x(f"DELETE FROM {{{table}}} WHERE {{scope}}")
            for table in tables:
                for row in rows[table]:
                    cols, marks = ", ".join(row), ", ".join(f":{c}" for c in row)
                    self._x(
                        f"INSERT INTO {{{table}}} ({{scope_cols}}{cols}) VALUES ({{scope_vals}}{marks})",
                        **row,
                    )
                    n += 1
            for table in WITH_IDS:  # new ids go on after the copied ones
                top = max((int(r.get("id") or 0) for r in rows[table]), default=0)
                seq = self._d.ids_of(table)
                if seq is not None:  # (SQLite's rowid goes on after the copied rows by itself)
                    self._ids[seq] = max(self._ids.get(seq) or self._d.last_id(seq), top)
            if head is not None:
                self._set_meta(chain.HEAD, head)
        return n

    # -- the chain -----------------------------------------------------------------------------

    def chain_breaks(self) -> list[chain.Break]:
        """Every place where the rows that bear on a gate are not as they were written (empty: intact)."""
        rows = {t: self._rows(f"SELECT * FROM {{{t}}} WHERE {{scope}}") for t in chain.CHAINED}
        # inside a transaction that appended rows, the head is written at its commit: it is the one in hand
        moved = self._head if self._head_moved and self._head is not None else None
        return chain.breaks(rows, chain.head_text(moved) if moved is not None else self._meta(chain.HEAD))

    def require_intact(self) -> None:
        """Nothing, if the chain is intact; else `JournalTampered` naming the first break (a gate is
        released only on an intact journal)."""
        found = self.chain_breaks()
        if found:
            more = f"; {len(found)} breaks in all (`director audit` names them)" if len(found) > 1 else ""
            raise JournalTampered(
                f"the journal {self.location} was tampered with: {found[0]}{more}; no gate is released "
                "across a break"
            )

    # -- where the plan lives ------------------------------------------------------------------

    def recorded_location(self) -> dict[str, str] | None:
        """Where this journal's plan lived when it was created or last adopted (None: not recorded)."""
        raw = self._meta(LOCATION)
        if raw is None:
            return None
        try:
            value = json.loads(raw)
        except ValueError:
            return {"identity": raw, "where": raw}
        return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else None

    def record_location(
        self, identity: str, where: str, *, adopted_from: Mapping[str, str] | None = None
    ) -> None:
        """Record where the plan lives (the first time, or when the operator adopts the journal)."""
        with self._write():
            self._set_meta(LOCATION, dump({"identity": identity, "where": where}))
            if adopted_from is not None:
                data = {
                    "from": dict(adopted_from),
                    "to": {"identity": identity, "where": where},
                    "host": self.host,
                }
                self.insert_event(None, "journal-adopted", data, self._now())

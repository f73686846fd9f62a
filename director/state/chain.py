"""The journal's hash chain: every row that bears on a gate carries the hash of the row before it.

Chained rows: every run transition, every approval receipt and every audit event (a receipt's use,
`approval-used`, is an event; so are gate waits, verifications and refusals). They form one chain per
plan, in the order they were written, like git's commits or Certificate Transparency's log:

- `chain_seq`     the row's position (1, 2, …);
- `chain_fields`  a digest of each of its columns (canonical JSON: `{"at": "…", "kind": "…", …}`),
                  so a changed column can be named;
- `chain_prev`    the hash of the row before it and which row that was (`<hash> events 12 approval-used`),
                  so a deleted row can be named;
- `chain_hash`    sha256 of the position, the table, `chain_prev` and `chain_fields`.

The head (the last row's position, hash and name) is kept apart (`meta`, `chain-head`), so removing the
last rows is seen too. `breaks` checks a journal's rows: a row added outside Director, a column edited
since the row was written, a row deleted (before another, or at the end), rows put in another order.

What it proves: that the journal was not edited by hand or by a tool that does not rewrite the chain.
Someone who recomputes every hash with this module after an edit is not caught by the chain alone; a
signed receipt's row is also compared with what its signature states (`director.state.signing`).
Pure: no I/O.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from director.plan.source import whole_number

CHAINED = ("transitions", "approvals", "events")
# The columns of each chained table that its hash covers, in that order (not the plan key: a row's hash is
# the same in both backends, so `director state push|pull` keeps the chain).
COLUMNS: Mapping[str, tuple[str, ...]] = {
    "transitions": ("run_id", "seq", "from_state", "to_state", "at", "reason"),
    "approvals": (
        "id",
        "run_id",
        "section_key",
        "sha256",
        "operator",
        "host",
        "at",
        "how",
        "content_json",
        "principal",
        "signed_payload",
        "signature",
    ),
    "events": ("id", "run_id", "at", "kind", "data_json"),
}
CHAIN_COLUMNS = ("chain_seq", "chain_prev", "chain_fields", "chain_hash")
HEAD = "chain-head"  # the meta row holding the head: `<seq> <hash> <table> <ident> <label>`
GENESIS = "0" * 64

Kind = Literal["added", "edited", "deleted", "reordered"]


def ident(table: str, row: Mapping[str, Any]) -> str:
    """A row's identity in its table: its id, or `run.seq` for a transition."""
    if table == "transitions":
        return f"{row['run_id']}.{row['seq']}"
    return str(row["id"])


def label(table: str, row: Mapping[str, Any]) -> str:
    """One word that says what the row is: an event's kind, a receipt's section, a transition's state."""
    value = {
        "events": row.get("kind"),
        "approvals": row.get("section_key"),
        "transitions": row.get("to_state"),
    }
    return str(value.get(table) or "-").replace(" ", "_")


def describe(table: str, ident_: str, label_: str) -> str:
    """`event 12 (approval-used)`, `receipt 5 (§2)`, `run 3's transition 2 (to running)`."""
    if table == "events":
        return f"event {ident_} ({label_})"
    if table == "approvals":
        return f"receipt {ident_} (§{label_})"
    run, _, seq = ident_.partition(".")
    return f"run {run}'s transition {seq} (to {label_})"


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def fields(table: str, row: Mapping[str, Any]) -> str:
    """The `chain_fields` of a row: each covered column's digest (128 bits), as canonical JSON."""
    return json.dumps({c: _digest(row.get(c)) for c in COLUMNS[table]}, sort_keys=True, separators=(",", ":"))


def row_hash(seq: int, table: str, prev: str, fields_: str) -> str:
    """The `chain_hash` of a row at `seq` after `prev`, with these field digests."""
    return hashlib.sha256(f"{seq}\n{table}\n{prev}\n{fields_}".encode()).hexdigest()


@dataclass(frozen=True)
class Link:
    """A row's place in the chain: its position, hash, table, identity and label."""

    seq: int
    hash: str
    table: str
    ident: str
    label: str

    def text(self) -> str:
        """How the next row names this one (its `chain_prev`), and how the head does."""
        return f"{self.hash} {self.table} {self.ident} {self.label}"

    @property
    def name(self) -> str:
        return describe(self.table, self.ident, self.label)

    @classmethod
    def parse(cls, text: str | None, seq: int = 0) -> Link | None:
        """The link `text` names (`<hash> <table> <ident> <label>`, or `<seq> <hash> …` for the head)."""
        parts = (text or "").split(" ")
        if seq < 0 and parts and (head := whole_number(parts[0])) is not None:
            seq, parts = head, parts[1:]
        if len(parts) != 4:
            return None
        return cls(max(seq, 0), parts[0], parts[1], parts[2], parts[3])


GENESIS_LINK = Link(0, GENESIS, "-", "-", "-")


def link(seq: int, table: str, row: Mapping[str, Any], prev: Link) -> dict[str, Any]:
    """The chain columns of `row`, written at position `seq` after `prev`."""
    f = fields(table, row)
    return {
        "chain_seq": seq,
        "chain_prev": prev.text(),
        "chain_fields": f,
        "chain_hash": row_hash(seq, table, prev.text(), f),
    }


def head_text(last: Link) -> str:
    return f"{last.seq} {last.text()}"


@dataclass(frozen=True)
class Break:
    """A place where the journal is not as it was written: which row, and what happened to it."""

    row: str  # `event 12 (approval-used)`
    kind: Kind
    detail: str
    table: str = ""
    ident: str = ""

    def __str__(self) -> str:
        return f"{self.row} {self.detail}"

    def to_json(self) -> dict[str, str]:
        return {
            "row": self.row,
            "kind": self.kind,
            "detail": self.detail,
            "table": self.table,
            "id": self.ident,
        }


def chain(rows: Iterable[tuple[str, Mapping[str, Any]]], start: Link = GENESIS_LINK) -> list[dict[str, Any]]:
    """Chain columns for `rows` (table, row), in this order, after `start` (migrations, imports)."""
    out, prev = [], start
    for table, row in rows:
        cols = link(prev.seq + 1, table, row, prev)
        out.append(cols)
        prev = Link(prev.seq + 1, cols["chain_hash"], table, ident(table, row), label(table, row))
    return out


def on(found: Sequence[Break], table: str) -> dict[str, Break]:
    """The breaks that name a row of `table`, by the row's identity (the first for each)."""
    out: dict[str, Break] = {}
    for b in found:
        if b.table == table:
            out.setdefault(b.ident, b)
    return out


def rechain(rows: Mapping[str, list[dict[str, Any]]]) -> str | None:
    """Chain rows written before the chain existed (a migration, an old export), in place, in the order
    they were written (their time, then table, then identity); returns the head (None: no row)."""
    order = sorted(
        ((t, r) for t in CHAINED for r in rows.get(t, [])),
        key=lambda tr: (str(tr[1].get("at") or ""), CHAINED.index(tr[0]), ident(*tr)),
    )
    for (_, row), cols in zip(order, chain(order), strict=True):
        row.update(cols)
    if not order:
        return None
    t, last = order[-1]
    return head_text(Link(int(last["chain_seq"]), str(last["chain_hash"]), t, ident(t, last), label(t, last)))


def breaks(rows: Mapping[str, Sequence[Mapping[str, Any]]], head: str | None) -> list[Break]:
    """Every break of the chain in a journal's chained `rows` (by table), with its recorded `head`."""
    found: list[Break] = []
    placed: list[tuple[int, Link, Mapping[str, Any]]] = []
    for table in CHAINED:
        for row in rows.get(table, ()):
            me = Link(0, str(row.get("chain_hash") or ""), table, ident(table, row), label(table, row))
            if row.get("chain_seq") is None or not row.get("chain_hash"):
                found.append(_brk(me, "added", "was added outside Director (it is not in the chain)"))
                continue
            me = Link(int(row["chain_seq"]), me.hash, me.table, me.ident, me.label)
            placed.append((me.seq, me, row))
            edited = _edited(table, row)
            if edited:
                found.append(_brk(me, "edited", edited))
    placed.sort(key=lambda p: (p[0], p[1].table, p[1].ident))
    by_name = {(lk.table, lk.ident): lk for _, lk, _ in placed}
    prev = GENESIS_LINK
    for _, me, row in placed:
        said = Link.parse(row.get("chain_prev"))
        if said is None:
            found.append(_brk(me, "edited", "has an unreadable chain link (chain_prev was edited)"))
        elif said.text() != prev.text():
            found.append(_gap(me, said, prev, by_name))
        prev = me
    found.extend(_tail(head, prev, by_name))
    return found


def _brk(me: Link, kind: Kind, detail: str) -> Break:
    return Break(me.name, kind, detail, me.table, me.ident)


def _edited(table: str, row: Mapping[str, Any]) -> str:
    """Which columns of `row` changed since it was written ('' if none)."""
    try:
        stored = json.loads(str(row.get("chain_fields")))
        assert isinstance(stored, dict)
    except (ValueError, AssertionError):
        return "has unreadable field digests (chain_fields was edited)"
    now = json.loads(fields(table, row))
    changed = [c for c in COLUMNS[table] if stored.get(c) != now[c]]
    if changed:
        return f"was edited: its {', '.join(changed)} changed since it was written"
    prev = str(row.get("chain_prev") or "")
    if row_hash(int(row["chain_seq"]), table, prev, str(row.get("chain_fields"))) != row.get("chain_hash"):
        return "was edited: its chain record does not hash to its chain_hash"
    return ""


def _gap(me: Link, said: Link, prev: Link, by_name: Mapping[tuple[str, str], Link]) -> Break:
    """`me` says it follows `said`, but follows `prev`: `said` is gone, or the rows were reordered."""
    elsewhere = by_name.get((said.table, said.ident))
    if elsewhere is not None and elsewhere.hash == said.hash:
        return _brk(me, "reordered", f"was written after {elsewhere.name}, but now follows {prev.name}")
    if elsewhere is not None:  # its predecessor here is another row: it was not written in this chain
        return _brk(
            me, "added", f"was added outside Director (it follows another {said.name} than this journal's)"
        )
    if said.table == "-":
        return _brk(me, "reordered", f"was written first, but now follows {prev.name}")
    gone = describe(said.table, said.ident, said.label)
    return Break(gone, "deleted", f"was deleted (it came before {me.name})", said.table, said.ident)


def _tail(head: str | None, last: Link, by_name: Mapping[tuple[str, str], Link]) -> list[Break]:
    """The recorded head against the last row: rows deleted at the end."""
    if head is None:
        return []
    recorded = Link.parse(head, seq=-1)
    if recorded is None:
        return [Break("the chain's head", "edited", "is unreadable (the meta row was edited)")]
    if recorded.text() == last.text():
        return []
    if recorded.seq > last.seq or (recorded.table, recorded.ident) not in by_name:
        gone = describe(recorded.table, recorded.ident, recorded.label)
        n = recorded.seq - last.seq
        more = f" with {n - 1} row(s) before it" if n > 1 else ""
        return [
            Break(
                gone,
                "deleted",
                f"was deleted{more} (it was the last row written)",
                recorded.table,
                recorded.ident,
            )
        ]
    return [Break("the chain's head", "edited", f"names {recorded.table} {recorded.ident}, not the last row")]

"""The one interface to a plan's machine state, whichever backend keeps it.

`StateStore` is what the engine, the commands and the leases see of a journal: runs, transitions, steps,
approval receipts, audit events, the lease holder, the journal's hash chain and where its plan lives. One
class has it, `director.state.journal.Journal`, over a dialect: SQLite beside the plan (the default) or
PostgreSQL (`director.state.pgjournal.PgJournal`, `--state-url`). The engine is typed against this
protocol only, so it cannot tell which one it was handed.

`PlanLease` is a held plan lease (one writer per plan), `StateBackend` opens a plan's store and takes,
inspects and breaks its lease (`director.state.backends`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from types import TracebackType
from typing import Any, Literal, Protocol, Self

from director.state.chain import Break
from director.state.lifecycle import RunState, StepState
from director.state.records import (
    ApprovalRecord,
    EventRecord,
    ExportFormat,
    LeaseHolder,
    RunRecord,
    StepRecord,
    TransitionRecord,
)
from director.state.signing import Signed
from director.state.worlds import SeenPath

RunKind = Literal["apply", "teardown"]
ApprovalHow = Literal["prompt", "flag", "approve-command", "auto"]


class StateStore(Protocol):
    """A plan's journal: every write is atomic (its row(s) and audit event together) and committed at once,
    or inside `batch()` at the next commit point; on the disk then, unless it is lazy (a check's intent or
    outcome, a section's success), which the next durable commit carries there (docs/durability.md)."""

    host: str  # this process's host identity (`director.state.identity.host_name`)
    pid: int

    @property
    def location(self) -> str:
        """Where the state lives, for humans (a file path, or a URL without password + the plan key)."""
        ...

    def close(self) -> None: ...
    def batch(self) -> AbstractContextManager[Any]:
        """Group the writes made inside into one transaction, committed at each commit point (a step's
        intent, a transition, a wait for an approval, `commit()`) and when the batch ends; durably unless
        everything in it is lazy (a check's intent and outcome, a section's success: docs/durability.md)."""
        ...

    def commit(self, *, durable: bool = False) -> None:
        """A commit point: what a batch wrote so far is committed now (before a wait, a sleep); durably
        unless it is all lazy. `durable`: on the disk, with every lazy commit before it."""
        ...

    def __enter__(self) -> Self: ...
    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None: ...

    # runs
    def create_run(
        self, kind: RunKind, plan_path: str, target: str, operator: str, inputs: Mapping[str, Any]
    ) -> int: ...
    def transition(self, run_id: int, to: RunState | str, reason: str | None = None) -> None: ...
    def run(self, run_id: int) -> RunRecord: ...
    def latest_run(self, kind: RunKind | None = None) -> RunRecord | None: ...
    def run_before(self, run_id: int, kind: RunKind | None = None) -> RunRecord | None: ...
    def transitions(self, run_id: int) -> list[TransitionRecord]: ...
    def bump_recoveries(self, run_id: int) -> int: ...
    def reset_recoveries(self, run_id: int) -> None: ...

    # steps
    def step_started(
        self,
        run_id: int,
        step_key: str,
        section_key: str,
        block_index: int,
        role: str,
        fingerprint: str,
        attempt: int = 1,
        flags: Mapping[str, Any] | None = None,
        *,
        lazy: bool = False,
    ) -> int: ...
    def step_finished(
        self,
        step_id: int,
        state: StepState | str,
        exit_code: int | None,
        duration_s: float | None,
        output: str,
        session: Mapping[str, Any] | None,
        *,
        lazy: bool = False,
    ) -> None: ...
    def section_succeeded(
        self,
        run_id: int,
        step_key: str,
        section_key: str,
        fingerprint: str,
        session: Mapping[str, Any] | None,
        event: tuple[str, Mapping[str, Any]] | None = None,
        *,
        unconfirmed: bool = False,
    ) -> int: ...
    def step(self, step_id: int) -> StepRecord: ...
    def steps(self, run_id: int) -> list[StepRecord]: ...
    def last_success(self, step_key: str) -> StepRecord | None: ...
    def section_successes(self) -> dict[str, StepRecord]: ...
    def last_session(self, run_id: int) -> dict[str, Any] | None: ...
    def unfinished_steps(self, run_id: int) -> list[StepRecord]: ...

    # approvals
    def record_approval(
        self,
        run_id: int | None,
        section_key: str,
        sha256: str,
        operator: str,
        how: ApprovalHow,
        content: Mapping[str, Any] | None = None,
        signed: Signed | None = None,
    ) -> int: ...
    def find_approval(self, section_key: str, sha256: str) -> ApprovalRecord | None: ...
    def approvals(self, run_id: int | None = None) -> list[ApprovalRecord]: ...
    def wait_for_approval(
        self, section_key: str, sha256: str, after_id: int, timeout_s: float
    ) -> ApprovalRecord | None:
        """Block until a receipt for this exact content with an id above `after_id` is recorded (by any
        process, on any machine), or `timeout_s` passes (None)."""
        ...

    # the worlds each check was seen in (verdicts by contrast: `director.state.worlds`)
    def seen_paths(self, block_key: str, family: str) -> list[SeenPath]: ...
    def learn_paths(self, run_id: int, block_key: str, family: str, seen: Sequence[SeenPath]) -> None: ...

    # audit
    def record_event(self, run_id: int | None, kind: str, data: Mapping[str, Any] | None = None) -> int: ...
    def events(self, run_id: int | None = None, kind: str | None = None) -> list[EventRecord]: ...

    # lease holder (written by the backend's lease)
    def lease_holder(self) -> LeaseHolder | None: ...

    # integrity (`director.state.chain`) and where the plan lives (`director.state.location`)
    def chain_breaks(self) -> list[Break]:
        """Every place where a row that bears on a gate is not as it was written (empty: intact)."""
        ...

    def require_intact(self) -> None:
        """`JournalTampered` (exit 13) naming the first break, unless the chain is intact."""
        ...

    def recorded_location(self) -> dict[str, str] | None: ...
    def record_location(
        self, identity: str, where: str, *, adopted_from: Mapping[str, str] | None = None
    ) -> None: ...

    # whole journal
    def has_history(self) -> bool:
        """Whether any run, approval or event was ever recorded for this plan."""
        ...

    def export_data(self) -> dict[str, Any]: ...
    def export(self, fmt: ExportFormat = "json") -> str: ...
    def import_data(self, data: Mapping[str, Any], *, replace: bool = False) -> int:
        """Copy another store's `export_data()` into this one (which must have no history, unless
        `replace`), ids kept, in one transaction; returns the rows copied."""
        ...


class PlanLease(Protocol):
    """A held plan lease; `release()` (or leaving the `with` block) lets the next writer in."""

    @property
    def held(self) -> bool: ...
    @property
    def previous_pid(self) -> int | None:
        """The pid of an unreleased holder on this host this lease took over (proven gone), if any."""
        ...

    def attach_run(self, run_id: int) -> None: ...
    def heartbeat(self) -> None: ...
    def release(self) -> None: ...
    def __enter__(self) -> Self: ...
    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None: ...


class SectionSuccesses:
    """The latest success of every section (`KEY/section` rows), read in one query when first asked, then
    kept: asking the store for each section is a query each (a round trip each on PostgreSQL).

    A success the run records itself is forgotten here (`recorded`), so asking again reads that row.
    """

    def __init__(self, store: StateStore) -> None:
        self._store = store
        self._by_key: dict[str, StepRecord] | None = None
        self._recorded: set[str] = set()

    def last(self, step_key: str) -> StepRecord | None:
        """`store.last_success(step_key)` for a section's step key."""
        if step_key in self._recorded:
            return self._store.last_success(step_key)
        if self._by_key is None:
            self._by_key = self._store.section_successes()
        return self._by_key.get(step_key)

    def recorded(self, step_key: str) -> None:
        """The run journaled a success of this key: the next question goes to the store."""
        self._recorded.add(step_key)

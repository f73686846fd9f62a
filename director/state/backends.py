"""Where a plan's state lives: SQLite beside the plan (the default) or PostgreSQL (`--state-url`).

A `StateBackend` opens the plan's `StateStore` and takes, inspects and breaks its lease; the commands
have one chosen (`choose`) and hand its store to the engine, which never learns which it got. psycopg is
imported only when a `--state-url` is given (it is the optional extra `director-plans[postgres]`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from director.errors import UsageError
from director.proc import pid_alive
from director.secretnames import is_secret_name
from director.state import location
from director.state.identity import PlanKey, host_name, plan_key
from director.state.records import LeaseHolder
from director.state.store import PlanLease, StateStore

if TYPE_CHECKING:
    from director.state.journal import Journal
    from director.state.pgjournal import PgJournal

URL_SCHEMES = ("postgresql://", "postgres://")
ENV_URL = "DIRECTOR_STATE_URL"


class StateBackend(Protocol):
    """Opens a plan's store and handles its lease."""

    @property
    def name(self) -> Literal["sqlite", "postgresql"]:
        """Which backend."""
        ...

    def describe(self) -> dict[str, Any]:
        """What `status` shows: the backend, where (no password), the plan key and where it came from."""
        ...

    def open(
        self, *, create: bool = True, is_secret: Callable[[str], bool] = ..., adopt: bool = False
    ) -> StateStore | None:
        """The plan's store; with `create=False`, None when nothing was ever recorded for the plan. With
        `create` (a writer), a store recorded for a plan elsewhere is refused (`LocationMismatch`) unless
        `adopt` (`director.state.location`)."""
        ...

    def acquire(
        self, store: StateStore, *, run_kind: str, force: bool = False, plan: str = "PLAN"
    ) -> PlanLease:
        """Take the plan's lease (LeaseHeld naming the holder if another live process has it; `plan`
        names the plan in that message)."""
        ...

    def holder_alive(self, store: StateStore, holder: LeaseHolder) -> bool | None:
        """Whether the recorded holder is still running (None: cannot tell from here)."""
        ...

    def here(self) -> location.Location | None:
        """Where the plan lives, as its journal records it (None: not checked)."""
        ...


@dataclass(frozen=True)
class SqliteBackend:
    """The journal file and lock file beside the plan (`.director/<plan>/`)."""

    journal_path: Path
    lock_path: Path
    plan_path: Path | None = None  # the plan file (its location is checked against the journal's)
    name: Literal["sqlite", "postgresql"] = "sqlite"

    def describe(self) -> dict[str, Any]:
        """The backend and the journal file (the key of a plan's state here is its file)."""
        where = str(self.journal_path)
        return {"backend": self.name, "where": where, "key": where, "key_source": "file", "key_detail": ""}

    def open(
        self, *, create: bool = True, is_secret: Callable[[str], bool] = is_secret_name, adopt: bool = False
    ) -> StateStore | None:
        """The journal file (None with `create=False` if no command created it yet)."""
        from director.state.journal import Journal

        if not create and not self.journal_path.exists():
            return None
        store = Journal.open(self.journal_path, is_secret=is_secret)
        if create:
            _checked(store, self.here(), str(self.plan_path), adopt)
        return store

    def here(self) -> location.Location | None:
        """Where the plan lives, as its journal records it (`director.state.location`)."""
        return None if self.plan_path is None else location.of_file(self.plan_path)

    def acquire(
        self, store: StateStore, *, run_kind: str, force: bool = False, plan: str = "PLAN"
    ) -> PlanLease:
        """`flock` on the lock file plus the holder row (`director.state.lease`), and on the plan file."""
        from director.state.lease import acquire

        return acquire(
            self.lock_path, self._journal(store), run_kind=run_kind, force=force, plan=plan,
            plan_file=self.plan_path,
        )  # fmt: skip

    def holder_alive(self, store: StateStore, holder: LeaseHolder) -> bool | None:
        """Its pid, if it is on this host; another host's cannot be checked from here."""
        return pid_alive(holder.pid) if holder.host == host_name() else None

    @staticmethod
    def _journal(store: StateStore) -> Journal:
        from director.state.journal import Journal

        if not isinstance(store, Journal):
            raise TypeError(f"an SQLite lease needs the SQLite journal, not {type(store).__name__}")
        return store


@dataclass(frozen=True)
class PgBackend:
    """A shared PostgreSQL database; the plan's rows are those of its key."""

    url: str
    key: PlanKey
    plan_path: str
    name: Literal["sqlite", "postgresql"] = "postgresql"

    def describe(self) -> dict[str, Any]:
        """The database without password, the plan key and its source."""
        from director.state.pgschema import redact

        return {
            "backend": self.name,
            "where": redact(self.url),
            "key": self.key.key,
            "key_source": self.key.source,
            "key_detail": self.key.detail,
        }

    def open(
        self, *, create: bool = True, is_secret: Callable[[str], bool] = is_secret_name, adopt: bool = False
    ) -> StateStore | None:
        """The plan's journal in the database (migrated on first use)."""
        from director.state.pgjournal import PgJournal

        j = PgJournal.open(
            self.url, self.key.key, plan_path=self.plan_path, create=create, is_secret=is_secret
        )
        if not create and not j.has_history():
            j.close()
            return None
        if create:
            hint = (
                f"another repository with a plan at this path shares the plan key {self.key.key}; "
                "a `plan_id:` in one plan's Live State keeps them apart"
            )
            _checked(j, self.here(), self.plan_path, adopt, hint)
        return j

    def here(self) -> location.Location | None:
        """Where the plan lives, as its journal records it: its repository (`director.state.location`)."""
        return location.of_key(Path(self.plan_path), self.key) if self.plan_path else None

    def acquire(
        self, store: StateStore, *, run_kind: str, force: bool = False, plan: str = "PLAN"
    ) -> PlanLease:
        """The advisory lock on the store's own connection (`director.state.pglease`), and the plan file's
        on this machine; `force` is moot: the database tells a dead holder from a live one."""
        from director.state.pglease import acquire

        plan_file = Path(self.plan_path) if self.plan_path else None
        return acquire(self._journal(store), run_kind=run_kind, plan_file=plan_file)

    def holder_alive(self, store: StateStore, holder: LeaseHolder) -> bool | None:
        """Whether some session holds the plan's lock now."""
        from director.state.pglease import holder_alive

        return holder_alive(self._journal(store), holder)

    def unlock(self, store: StateStore, *, by: Mapping[str, Any]) -> tuple[LeaseHolder | None, bool]:
        """Terminate a live holder's session or clear a dead holder's row (audited)."""
        from director.state.pglease import unlock

        return unlock(self._journal(store), by=by)

    @staticmethod
    def _journal(store: StateStore) -> PgJournal:
        from director.state.pgjournal import PgJournal

        if not isinstance(store, PgJournal):
            raise TypeError(f"a PostgreSQL lease needs the PostgreSQL journal, not {type(store).__name__}")
        return store


def _checked(
    store: StateStore, here: location.Location | None, plan: str, adopt: bool, hint: str = ""
) -> None:
    """The location check of a store about to be written (closed again when it refuses)."""
    try:
        location.check(store, here, plan=plan, adopt=adopt, hint=hint)
    except BaseException:
        store.close()
        raise


def pg_backend(url: str, key: PlanKey, plan_path: str) -> PgBackend:
    """The PostgreSQL backend for `--state-url` (UsageError for another scheme or without psycopg)."""
    if not url.startswith(URL_SCHEMES):
        raise UsageError(f"--state-url must be a postgresql:// URL (got {url.split('://')[0]}://…)")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        raise UsageError("--state-url needs psycopg 3: pip install 'director-plans[postgres]'") from None
    return PgBackend(url, key, plan_path)


def choose(
    journal_path: Path, lock_path: Path, plan_path: Path, state_url: str | None, plan_id: object = None
) -> StateBackend:
    """SQLite (`journal_path`, `lock_path`: beside the plan unless `--state-dir`), or PostgreSQL with
    `--state-url` / `DIRECTOR_STATE_URL`, keyed by `identity.plan_key` (`plan_id`, the plan's Live State's,
    else the plan's path in its git repository)."""
    if not state_url:
        return SqliteBackend(journal_path, lock_path, plan_path.resolve())
    return pg_backend(state_url, plan_key(plan_path, plan_id), str(plan_path.resolve()))

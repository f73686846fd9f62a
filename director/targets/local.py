"""The local target: a real wrangler + workerd, with a local "account" kept in the state directory.

Layout of the account (`<state_dir>/local/`):

    account.json        records of Workers (and tombstones of deleted ones), rewritten atomically
    account.lock        flock guarding account.json read-modify-write cycles
    events.jsonl        append-only log of every change the shim made (Director journals it)
    events.cursor       byte offset up to which Director has drained events.jsonl
    bin/wrangler        the generated wrapper the blocks find first on PATH
    builds/<worker>/    the bundle each deploy snapshotted (what the dev session runs)
    state/<worker>/     `wrangler dev --persist-to` storage (Workflow instances live here)
    logs/               one log per dev session
    locks/<worker>.lock serialises deploy/delete of one Worker
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import json
import os
import shlex
import signal
import socket
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from director.exec.processes import carries, group_members, pid_alive, signal_if_carries
from director.files import write_atomic
from director.targets.base import Progress, SessionInfo, TargetEnv, describe_change, plan_calls
from director.targets.install import Wrangler, resolve_wrangler

if TYPE_CHECKING:
    from director.plan.model import Plan

SCHEMA = 1
ENV_ACCOUNT = "DIRECTOR_LOCAL_ACCOUNT"
ENV_REAL = "DIRECTOR_REAL_WRANGLER"
ENV_REAL_VERSION = "DIRECTOR_REAL_WRANGLER_VERSION"
#: How long a dev session gets to shut down on SIGTERM before SIGKILL (measured: ~2 s).
STOP_GRACE_S = 10.0
# In the environment of a dev session and of everything it starts: `<worker>@<nonce>`, recorded with the
# session (`WorkerRecord.session_mark`), so that stopping it later signals its own processes only.
SESSION_VAR = "DIRECTOR_LOCAL_SESSION"


def now_iso() -> str:
    """UTC now in the ISO form wrangler prints (`2026-07-05T10:00:00.000Z`)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# --- processes and ports -------------------------------------------------------------------------


def stop_group(pgid: int | None, grace: float = STOP_GRACE_S, *, mark: str | None = None) -> bool:
    """SIGTERM a process group, SIGKILL it after `grace` s, wait until it is gone; True if it was running.

    With `mark` (the `SESSION_VAR` value a dev session was started with), only the group's processes whose
    environment carries it are signalled, each through a pidfd: a group recorded in the account file may be
    another program's by now (a pid is recycled once its group has ended, and numbering starts again after a
    reboot), and such a group is never touched."""
    if not pgid or pgid <= 1 or pgid == os.getpgrp():
        return False  # never signal our own group (or init's)

    def members() -> list[int]:
        found = group_members(pgid)
        return found if mark is None else [p for p in found if carries(p, SESSION_VAR, mark)]

    def send(sig: int) -> None:
        if mark is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, sig)
            return
        for p in members():
            signal_if_carries(p, SESSION_VAR, mark, sig)

    if not members():
        return False
    send(signal.SIGTERM)
    deadline = time.monotonic() + grace
    while members() and time.monotonic() < deadline:
        time.sleep(0.1)
    if members():
        send(signal.SIGKILL)
        deadline = time.monotonic() + 5.0
        while members() and time.monotonic() < deadline:
            time.sleep(0.05)
    return True


def port_free(port: int) -> bool:
    """True if 127.0.0.1:port can be bound right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port(avoid: tuple[int, ...] = ()) -> int:
    """A loopback port the kernel considers free (and not one we are about to use for something else)."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if port not in avoid:
            return port


def tcp_healthy(port: int | None, timeout: float = 0.5) -> bool:
    """True if something accepts TCP connections on 127.0.0.1:port."""
    if not port:
        return False
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout):
            return True
    except OSError:
        return False


# --- records ---------------------------------------------------------------------------------------


@dataclass
class Deployment:
    """One `wrangler deploy` into the local account."""

    id: str
    version_id: str
    time: str
    message: str | None = None
    author: str = "local"
    source: str = "wrangler"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Deployment:
        """Inverse of `dataclasses.asdict`, ignoring unknown keys."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass
class WorkerRecord:
    """A Worker deployed into the local account, and the dev session that serves it."""

    name: str
    config: str | None = None
    main: str | None = None
    env: str | None = None
    workflows: list[str] = field(default_factory=list)
    deleted_workflows: list[str] = field(default_factory=list)
    # Workflows this Worker binds cross-script: its session runs their host Worker too (docs/families.md)
    bound_workflows: list[str] = field(default_factory=list)
    serves: list[str] = field(default_factory=list)  # those host Workers, run inside this session
    workers_dev: bool = False
    port: int | None = None
    inspector_port: int | None = None
    pid: int | None = None
    pgid: int | None = None
    proc_start: str | None = None
    session_mark: str | None = None  # its `SESSION_VAR` (None: a session recorded before the mark existed)
    url: str | None = None
    started_at: str | None = None
    log_path: str | None = None
    persist_to: str | None = None
    bundle: str | None = None
    created_at: str = field(default_factory=now_iso)
    deployments: list[Deployment] = field(default_factory=list)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WorkerRecord:
        """Inverse of `to_dict`, ignoring unknown keys (older/newer Directors share the file)."""
        names = {f.name for f in dataclasses.fields(cls)}
        kwargs = {k: v for k, v in data.items() if k in names and k != "deployments"}
        record = cls(**kwargs)
        record.deployments = [Deployment.from_dict(d) for d in data.get("deployments", [])]
        return record

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view."""
        return dataclasses.asdict(self)

    @property
    def live_workflows(self) -> list[str]:
        """Workflows this Worker registers that were not deleted since its last deploy."""
        return [w for w in self.workflows if w not in self.deleted_workflows]

    def alive(self) -> bool:
        """The recorded dev session's leader process still runs."""
        return pid_alive(self.pid, self.proc_start)

    def session_info(self) -> SessionInfo:
        """Status of this Worker's dev session."""
        alive = self.alive()
        return SessionInfo(
            name=self.name,
            pid=self.pid,
            port=self.port,
            url=self.url,
            alive=alive,
            healthy=alive and tcp_healthy(self.port),
            workflows=tuple(self.live_workflows),
            log_path=self.log_path,
        )


@dataclass
class AccountData:
    """The whole account file."""

    account_id: str
    workers: dict[str, WorkerRecord] = field(default_factory=dict)
    tombstones: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> str:
        """Serialised form written to account.json."""
        return (
            json.dumps(
                {
                    "schema": SCHEMA,
                    "account_id": self.account_id,
                    "workers": {name: rec.to_dict() for name, rec in sorted(self.workers.items())},
                    "tombstones": self.tombstones,
                },
                indent=2,
                ensure_ascii=False,
            )
            + "\n"
        )

    def host_of(self, workflow: str) -> WorkerRecord | None:
        """The Worker whose config registers this workflow (and has not deleted it); else one whose session
        serves it to a cross-script binding."""
        for record in self.workers.values():
            if workflow in record.live_workflows:
                return record
        for record in self.workers.values():
            if workflow in record.bound_workflows:
                return record
        return None


class LocalAccount:
    """The on-disk local account; every mutation goes through `update()` under the account lock."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.records_path = root / "account.json"
        self.lock_path = root / "account.lock"
        self.events_path = root / "events.jsonl"
        self.cursor_path = root / "events.cursor"
        self.bin_dir = root / "bin"
        self.logs_dir = root / "logs"
        self.builds_root = root / "builds"
        self.state_root = root / "state"
        self.locks_dir = root / "locks"

    @property
    def account_id(self) -> str:
        """A stable 32-hex id for error messages shaped like the API's (`/accounts/<id>/…`)."""
        return hashlib.sha256(str(self.root.resolve()).encode()).hexdigest()[:32]

    def state_dir(self, worker: str) -> Path:
        """`--persist-to` directory of one Worker."""
        return self.state_root / worker

    def builds_dir(self, worker: str) -> Path:
        """Where one Worker's deploy snapshots live."""
        return self.builds_root / worker

    def load(self) -> AccountData:
        """Read the account (a missing file is an empty account)."""
        try:
            raw = json.loads(self.records_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return AccountData(account_id=self.account_id)
        workers = {name: WorkerRecord.from_dict(rec) for name, rec in raw.get("workers", {}).items()}
        return AccountData(
            account_id=raw.get("account_id", self.account_id),
            workers=workers,
            tombstones=list(raw.get("tombstones", [])),
        )

    @contextlib.contextmanager
    def _flock(self, path: Path) -> Iterator[None]:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    @contextlib.contextmanager
    def update(self) -> Iterator[AccountData]:
        """Read-modify-write the account under its lock; the write is atomic."""
        with self._flock(self.lock_path):
            data = self.load()
            yield data
            Path(self.records_path).parent.mkdir(parents=True, exist_ok=True)
            write_atomic(self.records_path, data.to_json(), mode=0o600)

    @contextlib.contextmanager
    def worker_lock(self, worker: str) -> Iterator[None]:
        """Serialise long operations (deploy, delete) on one Worker across processes."""
        with self._flock(self.locks_dir / f"{worker}.lock"):
            yield

    def append_event(self, kind: str, **fields: Any) -> dict[str, Any]:
        """Append one change to events.jsonl (flock'd, fsync'd) and return it."""
        event = {"id": uuid.uuid4().hex, "time": now_iso(), "kind": kind, "pid": os.getpid(), **fields}
        line = json.dumps(event, ensure_ascii=False) + "\n"
        self.root.mkdir(parents=True, exist_ok=True)
        with self.events_path.open("a", encoding="utf-8") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
        return event

    def read_events(self, offset: int = 0) -> tuple[list[dict[str, Any]], int]:
        """Complete event lines from a byte offset; returns them and the offset after the last one."""
        try:
            with self.events_path.open("rb") as handle:
                handle.seek(offset)
                chunk = handle.read()
        except FileNotFoundError:
            return [], offset
        events = []
        consumed = 0
        for raw in chunk.splitlines(keepends=True):
            if not raw.endswith(b"\n"):
                break  # a writer is mid-line; take it next time
            consumed += len(raw)
            with contextlib.suppress(ValueError):
                events.append(json.loads(raw))
        return events, offset + consumed

    def stop_session(self, record: WorkerRecord, reason: str, argv: list[str] | None = None) -> bool:
        """Stop a Worker's dev session (whole process group) and clear it from the record object."""
        if record.session_mark is not None:
            stopped = stop_group(record.pgid, mark=record.session_mark)
        else:  # recorded without a mark: its group is known to be the session's only while its leader is
            stopped = record.alive() and stop_group(record.pgid)
        if record.pid is not None or stopped:
            self.append_event(
                "session-stop",
                worker=record.name,
                session_pid=record.pid,
                pgid=record.pgid,
                port=record.port,
                reason=reason,
                was_running=stopped,
                argv=argv,
            )
        record.pid = None
        record.pgid = None
        record.proc_start = record.session_mark = None
        return stopped


# --- the target ------------------------------------------------------------------------------------


def _wrapper_text(python: str, package_parent: str, account: Path, real: Path) -> str:
    q = shlex.quote
    return (
        "#!/bin/sh\n"
        "# Generated by Director for --target local. This `wrangler` is Director's shim: it maps\n"
        "# account operations (deploy, delete, workflows, deployments list) onto the local account\n"
        "# and passes everything else to the real wrangler unchanged.\n"
        f': "${{{ENV_ACCOUNT}:={q(str(account))}}}"\n'
        f': "${{{ENV_REAL}:={q(str(real))}}}"\n'
        f"export {ENV_ACCOUNT} {ENV_REAL}\n"
        f'PYTHONPATH={q(package_parent)}${{PYTHONPATH:+:"$PYTHONPATH"}}\n'
        "export PYTHONPATH\n"
        f'exec {q(python)} -m director.targets.wrangler_shim "$@"\n'
    )


class LocalTarget:
    """Runs the plan against wrangler dev sessions that stand in for a Cloudflare account."""

    name = "local"

    def __init__(self, state_dir: Path, *, progress: Progress | None = None) -> None:
        self.state_dir = state_dir
        self.account = LocalAccount(state_dir / "local")
        self._progress = progress
        self._wrangler: Wrangler | None = None

    @property
    def wrapper_path(self) -> Path:
        """The generated `wrangler` the blocks run."""
        return self.account.bin_dir / "wrangler"

    def needed_by(self, plan: Plan) -> bool:
        """Only a plan that calls wrangler needs the local stack (no install, no shim otherwise)."""
        return plan_calls(plan, "wrangler")

    def check_prerequisites(self) -> None:
        """Find (or install) a real wrangler and write the wrapper."""
        if self._wrangler is None:
            self._wrangler = resolve_wrangler(self._progress, exclude=(self.account.bin_dir,))
        self._write_wrapper(self._wrangler)

    def _write_wrapper(self, wrangler: Wrangler) -> None:
        package_parent = str(Path(__file__).resolve().parents[2])
        text = _wrapper_text(sys.executable, package_parent, self.account.root, wrangler.path)
        path = self.wrapper_path
        try:
            if path.read_text() == text and os.access(path, os.X_OK):
                return
        except OSError:
            pass
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, text, mode=0o600)
        path.chmod(0o755)

    def block_environment(self) -> TargetEnv:
        """The wrapper first on PATH, plus where the account and the real wrangler are."""
        self.check_prerequisites()
        assert self._wrangler is not None
        return TargetEnv(
            path_prepend=(str(self.account.bin_dir),),
            env={
                ENV_ACCOUNT: str(self.account.root),
                ENV_REAL: str(self._wrangler.path),
                ENV_REAL_VERSION: self._wrangler.version,
                "WRANGLER_SEND_METRICS": "false",
                # wrangler's debug logs (one file a command) in the plan's state directory, not the
                # user's ~/.config/.wrangler/logs: `director state forget` removes them with the rest.
                # An operator's own WRANGLER_LOG_PATH is kept.
                "WRANGLER_LOG_PATH": os.environ.get("WRANGLER_LOG_PATH")
                or str(self.account.root / "wrangler-logs"),
            },
            description=(
                f"local: real wrangler {self._wrangler.version} ({self._wrangler.path}) + workerd; "
                f"account in {self.account.root}"
            ),
        )

    def drain_events(self) -> list[dict[str, Any]]:
        """Events appended since the last drain; the cursor persists so a resumed run does not repeat them."""
        try:
            offset = int(self.account.cursor_path.read_text().strip() or 0)
        except (FileNotFoundError, ValueError):
            offset = 0
        events, new_offset = self.account.read_events(offset)
        if new_offset != offset:
            Path(self.account.cursor_path).parent.mkdir(parents=True, exist_ok=True)
            write_atomic(self.account.cursor_path, f"{new_offset}\n", mode=0o600)
        return events

    def describe_event(self, event: dict[str, Any]) -> str:
        """`deploy orders`, `session-stop orders`, `workflow orders`…: the change and its Worker."""
        return describe_change(event, "worker")

    def sessions(self) -> list[SessionInfo]:
        """Every Worker in the local account with the health of its dev session."""
        data = self.account.load()
        return [record.session_info() for _, record in sorted(data.workers.items())]

    def stop_all(self) -> list[SessionInfo]:
        """Stop every dev session (records stay: a later deploy starts them again)."""
        stopped: list[SessionInfo] = []
        for name in sorted(self.account.load().workers):
            # Stop outside the account lock (it can take seconds); the worker lock keeps deploys out.
            with self.account.worker_lock(name):
                record = self.account.load().workers.get(name)
                if record is None or record.pgid is None:
                    continue
                info = record.session_info()
                if self.account.stop_session(record, reason="stop_all"):
                    stopped.append(info)
                with self.account.update() as data:
                    current = data.workers.get(name)
                    if current is not None:
                        current.pid = current.pgid = None
                        current.proc_start = current.session_mark = None
        return stopped

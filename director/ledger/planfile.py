"""The I/O edge of the ledger: the only writer of plan files (conflict-aware saves through `write_atomic`)."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from director.errors import DirectorError, ExitCode, LedgerConflict, PlanError, StorageError
from director.exec.secrets import MIN_SECRET_LEN
from director.files import CHUNK, encoded_chunks, write_atomic
from director.ledger.splice import LedgerUpdate, LedgerWriteError, apply_update, live_state_text
from director.plan.model import Plan
from director.plan.parse import parse
from director.plan.reparse import reparse_live_state

__all__ = ["PlanFile", "SecretInLedger", "check_no_secrets", "read_text"]

# How often save() re-reads when the file changes under it between the read and the replace.
_SAVE_ATTEMPTS = 3


class SecretInLedger(DirectorError):
    """The text about to be written contains a secret value; nothing was written."""

    exit_code = ExitCode.INTERNAL


def read_text(path: str | os.PathLike[str]) -> str:
    """The file's text exactly as stored (UTF-8, line endings untouched); PlanError if not UTF-8."""
    with open(path, "rb") as fh:
        return _decode(fh.read(), path)


def _decode(data: bytes, path: str | os.PathLike[str]) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise PlanError(f"not UTF-8 (byte offset {exc.start})", path=str(path), line=line) from None


def check_no_secrets(
    text: str, secret_values: Iterable[str], *, before: str = "", first_line: int = 1
) -> None:
    """Raise `SecretInLedger` if a secret value occurs in `text` more often than in `before`.

    `text` is what Director writes (the new Live State); `before` what was there, so a literal the author
    wrote there themselves is not Director's doing. The message never shows the value.
    """
    for value in secret_values:
        if len(value.strip()) < MIN_SECRET_LEN:
            continue  # as the Redactor: a value this short would match ordinary prose by chance
        if text.count(value) > before.count(value):
            at = text.find(value)
            line = first_line + text.count("\n", 0, at)
            raise SecretInLedger(
                f"refusing to write the plan: line {line} would contain a secret value "
                f"({len(value)} characters, not shown); it must never reach the ledger"
            )


def _sha256(chunks: Iterable[bytes]) -> bytes:
    """The sha256 of the bytes `chunks` yield, taken as they come (a large plan is never held whole)."""
    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(chunk)
    return digest.digest()


def _text_digest(text: str) -> bytes:
    """The sha256 of `text` as UTF-8."""
    return _sha256(encoded_chunks(text))


def _parse(text: str, path: str) -> Plan:
    return parse(text, path=path)


def _outside_live_state(plan: Plan) -> str:
    """The plan's text without its Live State section (what only its author writes)."""
    ls = live_state_text(plan)
    return plan.source.replace(ls, "", 1) if ls else plan.source


def _first_difference(a: str, b: str) -> int:
    """1-based line within the section where two texts first differ."""
    for n, (x, y) in enumerate(zip(a.splitlines(), b.splitlines(), strict=False), start=1):
        if x != y:
            return n
    return min(len(a.splitlines()), len(b.splitlines())) + 1


class PlanFile:
    """A plan on disk and what Director last read or wrote there (the baseline for conflict checks)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        text: str,
        plan: Plan,
        *,
        secret_values: Iterable[str] = (),
        digest: bytes | None = None,
    ) -> None:
        self.path = Path(path)
        self.text = text  # what Director last read or wrote: the baseline for conflict checks
        # Its bytes' digest: a save reads the file as bytes and decodes it only when it changed (a plan
        # with one emoji is held 4 bytes a character: 20 MB for a 5 MB plan, each copy).
        self._digest = digest if digest is not None else _text_digest(text)
        self.plan = plan
        self.secret_values: list[str] = list(secret_values)  # never written, whatever the update says
        self.last_save_wrote = False  # whether the last save changed the file (False: already so)

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, secret_values: Iterable[str] = ()) -> PlanFile:
        """Read and parse the plan; the text read is the baseline for the next save."""
        with open(path, "rb") as fh:
            data = fh.read()
        text = _decode(data, path)
        digest = hashlib.sha256(data).digest()
        return cls(path, text, _parse(text, str(path)), secret_values=secret_values, digest=digest)

    def save(self, update: LedgerUpdate, *, secret_values: Iterable[str] = ()) -> Plan:
        """Write `update` into the plan's Live State on disk and return the plan as saved.

        An operator's edit outside Live State since the baseline is kept (the update is spliced into
        their text); an edit inside Live State raises `LedgerConflict` and leaves the file untouched.
        """
        secrets = (*self.secret_values, *secret_values)
        for _ in range(_SAVE_ATTEMPTS):
            try:
                digest, current = self._read()
            except FileNotFoundError as exc:
                raise LedgerConflict(
                    f"{self.path}: the plan file disappeared while Director was running; "
                    "restore it and re-run (the journal still holds the run's results)"
                ) from exc
            base = self.plan if current is self.text else self._rebase(current)
            new_text = apply_update(base, update)
            try:
                # Only Live State changed: re-read that section alone when the plan shows it can be.
                new_plan = reparse_live_state(base, new_text) or _parse(new_text, str(self.path))
            except PlanError as exc:
                raise LedgerWriteError(
                    f"{self.path}: the plan would not parse after Live State write-back ({exc}); "
                    "the file was left as it was"
                ) from exc
            if new_plan.live_state is None:
                raise LedgerWriteError(f"{self.path}: Live State vanished in write-back; file left as it was")
            # Only what Director writes is checked: the author's own text (a §0 default, a literal in a
            # block) is theirs, outside Live State or already in it.
            check_no_secrets(
                live_state_text(new_plan),
                secrets,
                before=live_state_text(base),
                first_line=new_plan.live_state.span.first_line,
            )
            # Narrow the window for a concurrent edit: the file must still be what the update was built on.
            if self._read(decode=False)[0] != digest:
                continue
            self._refuse_read_only()
            try:
                # Checked again right before the rename: a chmod 444 meanwhile still wins.
                self.last_save_wrote = write_atomic(
                    self.path, new_text, before_replace=self._refuse_read_only
                )
            except OSError as exc:
                raise StorageError(
                    f"cannot write the plan {self.path} "
                    f"({exc.filename or self.path}: {exc.strerror or exc}); "
                    "it was left as it was. The journal holds the run's results: fix that, then re-run "
                    "(it resumes)"
                ) from None
            self.text, self.plan, self._digest = new_text, new_plan, _text_digest(new_text)
            return new_plan
        raise LedgerConflict(
            f"{self.path}: the plan kept changing while Director was saving its Live State; "
            "stop editing it for a moment and re-run"
        )

    def catch_up(self) -> bool:
        """Once the plan's lease is held: Live State written since the plan was read, by the Director that
        held the lease until now (two runs started together), becomes the baseline; whether it changed.
        A change outside Live State meanwhile is refused (`LedgerConflict`): nothing has run yet."""
        digest, current = self._read()
        if digest == self._digest:
            return False
        plan = _parse(current, str(self.path))
        if _outside_live_state(plan) != _outside_live_state(self.plan):
            raise LedgerConflict(
                f"{self.path}: the plan was edited outside Live State while Director was starting; nothing "
                "was run. Re-run to apply it as it is now"
            )
        self.text, self.plan, self._digest = current, plan, digest
        return True

    def _read(self, *, decode: bool = True) -> tuple[bytes, str]:
        """The file's digest and text; the baseline text itself (no copy) when the bytes are the same.

        The digest is taken a chunk at a time: the file is read whole only when it changed.
        """
        with open(self.path, "rb") as fh:
            digest = _sha256(iter(lambda: fh.read(CHUNK), b""))
        if digest == self._digest or not decode:
            return digest, self.text
        with open(self.path, "rb") as fh:
            data = fh.read()  # the digest returned is of the text returned, whatever changed in between
        return hashlib.sha256(data).digest(), _decode(data, self.path)

    def _refuse_read_only(self) -> None:
        """A plan made read-only during the run is never replaced (root could; a careful user would not)."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return  # said by the caller (the plan disappeared)
        if not st.st_mode & stat.S_IWUSR or not os.access(self.path, os.W_OK):
            raise LedgerConflict(
                f"{self.path} was made read-only while Director was running; Director never replaces a "
                "read-only plan, so Live State was not written. Make it writable again (chmod u+w) and "
                "re-run: the run resumes from the journal"
            )

    def _rebase(self, current: str) -> Plan:
        """Parse an operator-edited file; refuse if they (or another writer) touched Live State."""
        try:
            plan = _parse(current, str(self.path))
        except PlanError as exc:
            raise PlanError(
                f"the plan was edited during the run and no longer parses ({exc.reason}); "
                "Live State was not written: fix the edit and re-run",
                path=exc.path,
                line=exc.line,
            ) from exc
        # Compare without line ends: an editor that re-saved the file as CRLF changed nothing of ours.
        ours = live_state_text(self.plan).replace("\r\n", "\n")
        theirs = live_state_text(plan).replace("\r\n", "\n")
        if theirs == ours:
            return plan
        if plan.live_state is None:
            what = "the `## Live State` section was removed"
        else:
            line = plan.live_state.span.first_line + _first_difference(ours, theirs) - 1
            what = f"the `## Live State` section was edited (first difference at line {line})"
        raise LedgerConflict(
            f"{self.path}: {what} while Director was running. Director owns that section and will not "
            "overwrite someone else's change, so nothing was written. To resolve: undo that edit (keep "
            "notes outside Live State), then re-run; the run's results are in the journal and will be "
            "written back."
        )

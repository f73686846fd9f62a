"""Which signing key and which allowed-signers file a command uses (docs/approvals.md), checked before
anything runs: a bad file is one `error:` line naming it (and its line), nothing is created."""

from __future__ import annotations

import os
from pathlib import Path

from director.errors import UsageError
from director.exec import sshsig
from director.state.signing import DEFAULT_FILE, load_allowed_signers
from director.state.store import StateStore


def default_allowed_signers(plan_path: Path) -> Path | None:
    """The repository's `.director-allowed-signers`: at the root of the plan's git repository (outside a
    repository: in the plan's directory). One file per repository: another one between the plan and the
    root could widen or replace who may approve, so its presence is an error (exit 64) naming it."""
    here = plan_path.resolve().parent
    top = next((d for d in (here, *here.parents) if (d / ".git").exists()), None)
    if top is None:
        return here / DEFAULT_FILE if os.path.lexists(here / DEFAULT_FILE) else None
    inside = [d for d in (here, *here.parents) if top in d.parents]
    nested = [d / DEFAULT_FILE for d in inside if os.path.lexists(d / DEFAULT_FILE)]
    if nested:
        raise UsageError(
            f"{nested[0]}: another allowed-signers file inside the repository; only the one at its root "
            f"({top / DEFAULT_FILE}) says who may approve (one file per repository, so that none can widen "
            "it): remove this one, or pass --allowed-signers"
        )
    return top / DEFAULT_FILE if os.path.lexists(top / DEFAULT_FILE) else None


def _readable_file(path: Path, option: str) -> None:
    """An allowed-signers file must be a readable regular file: a dangling symlink, one to /dev/null, a
    directory or an unreadable file is an error naming it, never "no file" (that would accept unsigned
    approvals)."""
    if not path.is_symlink() and not path.exists():
        raise UsageError(f"{option}: no such file: {path}")
    what = ""
    if path.is_symlink() and not path.exists():
        what = f"is a symlink to {os.readlink(path)}, which does not exist"
    elif path.is_dir():
        what = "is a directory"
    elif not path.is_file():
        target = f" (a symlink to {os.readlink(path)})" if path.is_symlink() else ""
        what = f"is not a regular file{target}"
    elif not os.access(path, os.R_OK):
        what = "is not readable (permission denied)"
    if what:
        raise UsageError(f"{option}: {path} {what}; approvals cannot be checked, so nothing was run")


def allowed_signers(plan_path: Path, given: Path | None) -> Path | None:
    """The allowed-signers file in force (`--allowed-signers`, `DIRECTOR_ALLOWED_SIGNERS`, else the
    repository's), read and checked; None: approvals are not checked (`require_signers` refuses that
    once the plan's journal has required signatures)."""
    found: Path | None = None
    if given is not None and str(given) not in ("", "."):
        found, option = given, "--allowed-signers"
    else:
        found, option = default_allowed_signers(plan_path), "the default allowed-signers file"
    if found is None:
        return None
    _readable_file(found, option)
    load_allowed_signers(found, option)
    sshsig.program()  # exit 6 now, not at the gate, when ssh-keygen is missing
    return found.resolve()


def require_signers(journal: StateStore, signers: Path | None, plan_path: Path) -> None:
    """Fail closed: once the plan's journal has required signed approvals, a run (or `approve`) without an
    allowed-signers file in force is refused, naming the file the journal last held it to."""
    from director.run import history

    if signers is not None:
        return
    was = history.signatures_required(journal)
    if was is not None:
        raise UsageError(
            f"{plan_path}: its journal requires signed approvals (checked against {was}), but no "
            f"allowed-signers file is in force now ({DEFAULT_FILE} at the repository's root, "
            "--allowed-signers or DIRECTOR_ALLOWED_SIGNERS); restore it -- nothing was run"
        )


def record_signers(journal: StateStore, signers: Path | None) -> None:
    """Remember in the journal that this plan's approvals are signed (once per file)."""
    from director.run import history

    if signers is not None and history.signatures_required(journal) != str(signers):
        journal.record_event(None, history.SIGNED, {"file": str(signers)})


def signing_key(given: Path | None) -> Path | None:
    """The `--sign-with` key (`DIRECTOR_SIGNING_KEY`): a readable file, and ssh-keygen to sign with it."""
    if given is None or str(given) in ("", "."):
        return None
    sshsig.readable_key(given)
    sshsig.program()
    return given.resolve()

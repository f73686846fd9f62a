"""Which signing key and which allowed-signers file a command uses (docs/approvals.md), checked before
anything runs: a bad file is one `error:` line naming it (and its line), nothing is created."""

from __future__ import annotations

from pathlib import Path

from director.errors import UsageError
from director.exec import sshsig
from director.state.signing import DEFAULT_FILE, load_allowed_signers


def default_allowed_signers(plan_path: Path) -> Path | None:
    """`.director-allowed-signers` in the plan's directory or the nearest directory above it, up to the
    root of the plan's git repository (outside a repository: the plan's directory only)."""
    here = plan_path.resolve().parent
    top = next((d for d in (here, *here.parents) if (d / ".git").exists()), None)
    dirs = [here] if top is None else [d for d in (here, *here.parents) if d == top or top in d.parents]
    return next((d / DEFAULT_FILE for d in dirs if (d / DEFAULT_FILE).is_file()), None)


def allowed_signers(plan_path: Path, given: Path | None) -> Path | None:
    """The allowed-signers file in force (`--allowed-signers`, `DIRECTOR_ALLOWED_SIGNERS`, else the
    default one if the repository has it), read and checked; None: approvals are not checked."""
    found: Path | None = None
    if given is not None and str(given) not in ("", "."):
        if not given.is_file():
            raise UsageError(f"--allowed-signers: no such file: {given}")
        found, option = given, "--allowed-signers"
    else:
        found, option = default_allowed_signers(plan_path), "the default allowed-signers file"
    if found is None:
        return None
    load_allowed_signers(found, option)
    sshsig.program()  # exit 6 now, not at the gate, when ssh-keygen is missing
    return found.resolve()


def signing_key(given: Path | None) -> Path | None:
    """The `--sign-with` key (`DIRECTOR_SIGNING_KEY`): a readable file, and ssh-keygen to sign with it."""
    if given is None or str(given) in ("", "."):
        return None
    sshsig.readable_key(given)
    sshsig.program()
    return given.resolve()

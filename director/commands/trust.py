"""Which signing key, allowed-signers file and approval policy a command uses (docs/approvals.md), gathered
once into one `Trust` before anything runs (a bad file is one `error:` line naming it, and its line; nothing
is created), then held against what the plan's journal requires in one call once it is open (`hold`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from director.errors import UsageError
from director.exec import sshsig
from director.state.signing import DEFAULT_FILE, load_allowed_signers
from director.state.store import StateStore

if TYPE_CHECKING:
    from director.plan.model import Plan
    from director.run.policy import Policy


@dataclass(frozen=True)
class Trust:
    """Who may approve a plan's gates and how, as found before anything runs: the key receipts are signed
    with (`--sign-with`), the allowed-signers file in force (None: approvals are not checked), the approval
    policy (every policy file in force, the stricter wins), and a warning for each of those files git says
    is not committed (only with `--allow-dirty-signers`: said, and journaled by `hold`)."""

    key: Path | None
    signers: Path | None
    policy: Policy
    dirty: tuple[str, ...]


def gather(
    plan: Plan, plan_path: Path, *, sign_with: Path | None, allowed: Path | None, allow_dirty: bool
) -> Trust:
    """The signing key (`--sign-with`), the allowed-signers file (`--allowed-signers`, else the
    repository's) and the approval policy in force for `plan`: first where each file is (readable regular
    files), then whether each is committed (`uncommitted`: refused unless `allow_dirty`, then a warning),
    then what they say (a bad file is one `error: FILE:LINE: …`, exit 64). A rule that tells people apart
    needs the allowed signers: only a verified signature says who approved."""
    from director.plan.model import section_label
    from director.run.policy import Policy, PolicyError, parse_policy

    key = signing_key(sign_with)
    named, option = _signers_file(plan_path, allowed)
    signers = Path(os.path.abspath(named)) if named is not None else None  # a symlink is checked as one
    found = policy_files(plan_path, signers)
    texts = [_policy_text(f) for f in found]
    files = [*([signers] if signers is not None else []), *(Path(os.path.abspath(f)) for f in found)]
    dirty = tuple(uncommitted(files, allow_dirty))
    policy = Policy()
    for f, text in zip(found, texts, strict=True):
        try:
            policy = policy.tighten(parse_policy(text, os.path.abspath(f)))
        except PolicyError as e:
            where = f"{f}:{e.line}" if e.line else str(f)
            raise UsageError(f"{where}: {e} (docs/approvals.md, Gate policy)") from None
    needing = policy.needing_identities(plan) if signers is None else None
    if needing is not None:
        s, r = needing
        raise UsageError(
            f"{section_label(s)} needs {r.describe()} ({'; '.join(r.source)}), but no allowed-signers file "
            f"is in force ({DEFAULT_FILE} at the repository's root, --allowed-signers or "
            "DIRECTOR_ALLOWED_SIGNERS): only a verified signature says who approved -- nothing was run"
        )
    if named is not None:
        load_allowed_signers(named, option)
        sshsig.program()  # exit 6 now, not at the gate, when ssh-keygen is missing
    return Trust(key, signers, policy, dirty)


def hold(journal: StateStore, trusted: Trust, plan_path: Path, *, record: bool) -> None:
    """Fail closed against what the plan's journal requires, read once (`history.held_to`): once its runs
    required signed approvals, or held its gates to an approval policy file, a run (or `approve`) without
    one in force is refused, naming the file the journal last held it to. With `record` (a run), the
    journal then remembers the allowed-signers and policy files in force (when they change) and each
    uncommitted file's warning (`director audit`: never honoured silently)."""
    from director.run import history

    held = history.held_to(journal)
    if trusted.signers is None and held.signers is not None:
        raise UsageError(
            f"{plan_path}: its journal requires signed approvals (checked against {held.signers}), but no "
            f"allowed-signers file is in force now ({DEFAULT_FILE} at the repository's root, "
            "--allowed-signers or DIRECTOR_ALLOWED_SIGNERS); restore it -- nothing was run"
        )
    policy = trusted.policy
    if held.policy_files and not policy.files:
        raise UsageError(
            f"{plan_path}: its journal holds its gates to the approval policy in {held.policy_files[0]}, but "
            "no approval policy file is in force now; restore it (to relax a policy, edit it) -- nothing was "
            "run"
        )
    if not record:
        return
    if trusted.signers is not None and held.signers != str(trusted.signers):
        journal.record_event(None, history.SIGNED, {"file": str(trusted.signers)})
    if policy.files and held.policy_files != list(policy.files):
        journal.record_event(None, history.POLICY, policy.to_json())
    for said in trusted.dirty:
        journal.record_event(None, "trust-uncommitted", {"warning": said})


def _top(plan_path: Path) -> tuple[Path, Path | None]:
    """The plan's directory, and the root of its git repository (None outside one)."""
    here = plan_path.resolve().parent
    return here, next((d for d in (here, *here.parents) if (d / ".git").exists()), None)


def default_allowed_signers(plan_path: Path) -> Path | None:
    """The repository's `.director-allowed-signers`: at the root of the plan's git repository (outside a
    repository: in the plan's directory). One file per repository: another one between the plan and the
    root could widen or replace who may approve, so its presence is an error (exit 64) naming it."""
    here, top = _top(plan_path)
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
    repository's), read and checked; None: approvals are not checked (`hold` refuses that once the plan's
    journal has required signatures)."""
    named, option = _signers_file(plan_path, given)
    if named is None:
        return None
    load_allowed_signers(named, option)
    sshsig.program()  # exit 6 now, not at the gate, when ssh-keygen is missing
    return Path(os.path.abspath(named))  # not resolved: a symlink in its place is checked as one


def _signers_file(plan_path: Path, given: Path | None) -> tuple[Path | None, str]:
    """The allowed-signers file in force, as named (a readable regular file, not read yet), and the option
    that named it."""
    found: Path | None = None
    if given is not None and str(given) not in ("", "."):
        found, option = given, "--allowed-signers"
    else:
        found, option = default_allowed_signers(plan_path), "the default allowed-signers file"
    if found is None:
        return None, option
    _readable_file(found, option)
    return found, option


def signing_key(given: Path | None) -> Path | None:
    """The `--sign-with` key (`DIRECTOR_SIGNING_KEY`): a readable file, and ssh-keygen to sign with it."""
    if given is None or str(given) in ("", "."):
        return None
    sshsig.readable_key(given)
    sshsig.program()
    return given.resolve()


# ------------------------------------------------------------------------------ the approval policy


def policy_files(plan_path: Path, signers: Path | None) -> list[Path]:
    """Every `.director-approval-policy.toml` in force: in each directory from the plan's up to the root
    of its repository (outside a repository: the plan's directory), and beside an allowed-signers file
    named elsewhere. All of them apply; the stricter wins on every point (`director.run.policy`)."""
    from director.run.policy import POLICY_FILE

    here, top = _top(plan_path)
    dirs = [here] if top is None else [d for d in (here, *here.parents) if d == top or top in d.parents]
    if signers is not None and signers.parent not in dirs:
        dirs.append(signers.parent)
    return [d / POLICY_FILE for d in dirs if os.path.lexists(d / POLICY_FILE)]


def _policy_text(f: Path) -> str:
    """A policy file's text (a readable regular file, UTF-8)."""
    _readable_file(f, "the approval policy file")
    try:
        return f.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"{f}: cannot read the approval policy: {e}") from None


# ------------------------------------------------------------------------------ committed, or not


def uncommitted(files: list[Path], allow: bool) -> list[str]:
    """The files that say who may approve and how must be what the repository holds: one of them
    untracked, ignored, modified or staged but not committed is refused (exit 64) unless `allow`
    (`--allow-dirty-signers`); allowed, each is a warning to show and journal. A file outside any git
    repository is not checked (its path was chosen by whoever runs Director)."""
    said: list[str] = []
    for f in dict.fromkeys(p for q in files for p in (q, q.resolve())):
        state = _git_state(f)
        if state is None:
            continue
        if not allow:
            raise UsageError(
                f"{f}: {state} in its git repository; commit it, or pass --allow-dirty-signers to use it "
                "as it is -- nothing was run"
            )
        said.append(f"warning: {f} is {state} in its git repository: used as it is (--allow-dirty-signers)")
    return said


def _git_state(path: Path) -> str | None:
    """How `path` differs from its repository's last commit (`git status`), None when it does not, or
    when it is in no repository."""
    import shutil
    import subprocess

    where = path.parent
    in_repo = any((d / ".git").exists() for d in (where, *where.parents))
    if not in_repo:
        return None
    git = shutil.which("git")
    if git is None:
        raise UsageError(
            f"{path}: git is not installed, so whether this file is committed cannot be told; install git, "
            "or pass --allow-dirty-signers"
        )
    run = [git, "-C", str(where), "status", "--porcelain=v1", "--ignored", "-z", "--", path.name]
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    done = subprocess.run(run, capture_output=True, timeout=60, check=False, env=env)
    if done.returncode != 0:  # never "clean" when git cannot tell (a repository of another owner…)
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"not known to be committed (git status failed: {said[-1] if said else done.returncode})"
    entries = [e for e in done.stdout.split(b"\\0") if e]
    if not entries:
        return None
    code = entries[0][:2].decode("ascii", "replace")
    return _STATES.get(code, _STATES.get(code.strip()[:1], f"not committed (git status {code.strip()})"))


_STATES = {
    "??": "untracked (not committed)", "!!": "ignored by git (never committed)",
    "A": "added but not committed", "M": "modified since the last commit",
    "D": "deleted in git but present", "R": "renamed but not committed",
    "T": "changed type since the last commit",
}  # fmt: skip

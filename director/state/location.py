"""Where a plan lives, as its journal remembers it: a copied or moved plan, or a second repository on the
same PostgreSQL key, is named and refused until the operator says which history is its.

The identity recorded when a journal is first written for a plan (and again when it is adopted):

- SQLite (the journal beside the plan): the plan file's absolute path, `file:/abs/plans/x.md`. A plan
  folder copied with its `.director/` (or moved) finds a journal made for another path, whose sessions and
  workspaces are the original's.
- PostgreSQL, plan key `git:…` (`director.state.identity`): the repository, by its `origin` remote (else
  its first remote) normalised (`github.com/team/infra`: the SSH and HTTPS forms of one URL are one
  repository; a local path is `file:/abs/path`), so every clone of one repository shares the key, and
  another repository whose plan has the same path is told apart. A repository without a remote: its
  absolute path on its host (`repo:host:/abs`).
- PostgreSQL, plan key `path:…`: the host and the path (`path:host:/abs/x.md`; such a key is only ever
  found again on one machine).
- PostgreSQL, plan key `id:…` (`plan_id` in Live State): none is checked; the operator named the plan.

A journal written before this check existed records where it is first opened. `check` refuses a
mismatch (`LocationMismatch`, exit 64) unless `adopt` (`director state adopt PLAN`), which records the
new place and audits it (`journal-adopted`, from and to).
"""

from __future__ import annotations

import configparser
import re
from dataclasses import dataclass
from pathlib import Path

from director.errors import UsageError
from director.state.identity import PlanKey, host_name
from director.state.store import StateStore


class LocationMismatch(UsageError):
    """The journal belongs to a plan elsewhere (copied, moved, or another repository on the same key)."""


@dataclass(frozen=True)
class Location:
    """What is compared (`identity`) and what a human is told (`where`)."""

    identity: str
    where: str


def of_file(plan_path: Path) -> Location:
    """The location of a plan whose journal is the SQLite file beside it."""
    p = plan_path.resolve()
    return Location(f"file:{p}", str(p))


def of_key(plan_path: Path, key: PlanKey) -> Location | None:
    """The location of a plan in a shared PostgreSQL database, by its key's source (None: `plan_id`)."""
    p = plan_path.resolve()
    host = host_name()
    if key.source == "plan_id":
        return None
    if key.source == "path":
        return Location(f"path:{host}:{p}", f"{p} on {host}")
    root = _repository(p)
    if root is None:
        return Location(f"path:{host}:{p}", f"{p} on {host}")
    remote = _remote(root)
    if remote is None:
        return Location(f"repo:{host}:{root}", f"the repository at {root} on {host} (no remote)")
    return Location(f"repo:{remote}", f"a clone of {remote} ({root} on {host})")


def check(
    store: StateStore, here: Location | None, *, plan: str, adopt: bool = False, hint: str = ""
) -> None:
    """Record where the plan lives the first time; refuse a journal recorded elsewhere unless `adopt`."""
    if here is None:
        return
    recorded = store.recorded_location()
    if recorded is None:
        store.record_location(here.identity, here.where)
        return
    if recorded.get("identity") == here.identity:
        return
    if adopt:
        store.record_location(here.identity, here.where, adopted_from=recorded)
        return
    was = recorded.get("where") or recorded.get("identity")
    why = hint or "the plan was moved, or copied with its `.director/`"
    raise LocationMismatch(
        f"{plan}: its journal ({store.location}) belongs to {was}, not {here.where} ({why}); nothing was "
        f"run. `director state adopt {plan}` makes that history this plan's"
    )


# -- the repository of a plan, read from its files (no `git` program needed) -----------------------------


def _repository(plan: Path) -> Path | None:
    for d in plan.parents:
        if (d / ".git").exists():
            return d
    return None


def _git_dir(root: Path) -> Path | None:
    """The directory holding the repository's config (a worktree's `.git` file points to it)."""
    dot = root / ".git"
    if dot.is_dir():
        return dot
    try:
        text = dot.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    m = re.match(r"gitdir:\s*(.+)", text.strip())
    if m is None:
        return None
    gitdir = (root / m.group(1).strip()).resolve()
    common = gitdir / "commondir"
    if common.is_file():
        return (gitdir / common.read_text(encoding="utf-8").strip()).resolve()
    return gitdir


def _remote(root: Path) -> str | None:
    """The repository's `origin` remote (else its first), normalised; None without one."""
    gitdir = _git_dir(root)
    if gitdir is None:
        return None
    config = configparser.ConfigParser(strict=False, interpolation=None)
    try:
        config.read(gitdir / "config", encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return None
    remotes = sorted(
        (s for s in config.sections() if s.startswith('remote "')), key=lambda s: s != 'remote "origin"'
    )
    for section in remotes:
        url = config.get(section, "url", fallback="").strip()
        if url:
            return normalise(url, root)
    return None


def normalise(url: str, root: Path) -> str:
    """One repository, one name: `git@github.com:team/infra.git`, `https://user@github.com/team/infra` and
    `ssh://git@github.com:22/team/infra/` are `github.com/team/infra`; a local path is `file:/abs/path`."""
    url = url.strip().rstrip("/")
    url = url[: -len(".git")] if url.endswith(".git") else url
    m = re.match(r"^[a-z][a-z0-9+.-]*://(?:[^@/]*@)?([^/:]+)(?::\d+)?(/.*)?$", url, re.I)
    if m is not None and not url.lower().startswith("file://"):
        return f"{m.group(1).lower()}{m.group(2) or ''}"
    m = re.match(r"^(?:[^@/]+@)?([^/:]+):(?!/)(.+)$", url)  # scp-like: git@host:path
    if m is not None and "/" not in m.group(1):
        return f"{m.group(1).lower()}/{m.group(2).lstrip('/')}"
    path = url[len("file://") :] if url.lower().startswith("file://") else url
    return f"file:{(root / path).resolve()}"

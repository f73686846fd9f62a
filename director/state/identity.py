"""Who is writing (the host name) and which plan's state this is (the plan key), for any backend.

- **Host**: `DIRECTOR_HOST` if set, else the machine's host name. Runs, receipts and lease holders carry
  it; tests (and containers whose host names are random) set it to say which "machine" a process is.
- **Plan key** (the identity of a plan's state in a shared database, `--state-url`): stable across clones
  and machines, so two clones of one repository find the same journal, lease and receipts:
  1. `id:<plan_id>` when the plan's Live State YAML has a `plan_id:` key (explicit; survives renames
     and moves, and tells apart two plans that share a path in different repositories);
  2. else `git:<path of the plan inside its git repository>` (e.g. `git:plans/workflow.cloudflare.md`),
     the repository being the nearest directory above the plan holding `.git` (a directory, or a file
     for worktrees and submodules); no `git` program is needed;
  3. else `path:<absolute path>`: a plan outside any repository is only found again on this machine.
  One database (or one schema per database, see `--state-url`) per repository or team: two unrelated
  repositories with a plan at the same path share a key, unless one sets `plan_id`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal


def host_name() -> str:
    """This process's host identity: `DIRECTOR_HOST`, else the host name."""
    return os.environ.get("DIRECTOR_HOST") or os.uname().nodename  # gethostname(2), without `socket`


@dataclass(frozen=True)
class PlanKey:
    """A plan's key in a shared state database, and where it came from (shown by `status`)."""

    key: str
    source: Literal["plan_id", "git", "path"]
    detail: str

    def to_json(self) -> dict[str, str]:
        """Plain data for `status --json`."""
        return {"key": self.key, "source": self.source, "detail": self.detail}


def plan_key(plan_path: Path, plan_id: object = None) -> PlanKey:
    """The key of the plan at `plan_path` (see the module docstring); `plan_id` from its Live State."""
    if plan_id is not None and str(plan_id).strip() not in ("", "—"):
        return PlanKey(f"id:{str(plan_id).strip()}", "plan_id", "plan_id in the plan's Live State")
    p = plan_path.resolve()
    for d in p.parents:
        if (d / ".git").exists():
            rel = p.relative_to(d).as_posix()
            return PlanKey(f"git:{rel}", "git", f"the plan's path in the git repository at {d}")
    return PlanKey(f"path:{p}", "path", "the plan's absolute path (not in a git repository: one machine)")

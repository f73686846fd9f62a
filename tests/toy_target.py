"""A whole target in one module: `toyctl up NAME` / `toyctl down NAME` against a directory of "things".

tests/test_targets.py adds it to Director with one line (`TARGETS["toy"] = ToyTarget`) and runs a plan
through the real CLI with `--target toy`: nothing else in Director names it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from director.targets.base import Progress, SessionInfo, TargetEnv, plan_calls

if TYPE_CHECKING:
    from director.plan.model import Plan

TOYCTL = """\
#!/bin/sh
# toyctl up NAME | down NAME: the toy target's whole "API"; every change is logged for Director.
set -e
mkdir -p "$TOY_ROOT/things"
case "$1" in
  up) : > "$TOY_ROOT/things/$2" ;;
  down) rm -f "$TOY_ROOT/things/$2" ;;
  *) echo "toyctl: unknown command $1" >&2; exit 2 ;;
esac
printf '{"kind": "%s", "name": "%s"}\\n' "$1" "$2" >> "$TOY_ROOT/events.jsonl"
echo "toy: $1 $2"
"""


class ToyTarget:
    """Things are files under `<state>/toy/things`; `toyctl` on the blocks' PATH makes and removes them."""

    name = "toy"

    def __init__(self, state_dir: Path, *, progress: Progress | None = None) -> None:
        self.root = state_dir / "toy"
        self._progress = progress

    def needed_by(self, plan: Plan) -> bool:
        """Only plans that call `toyctl`."""
        return plan_calls(plan, "toyctl")

    def check_prerequisites(self) -> None:
        """Write `toyctl` (nothing to install)."""
        if self._progress is not None:
            self._progress("toy: writing toyctl")
        bin_dir = self.root / "bin"
        bin_dir.mkdir(parents=True, exist_ok=True)
        (bin_dir / "toyctl").write_text(TOYCTL)
        (bin_dir / "toyctl").chmod(0o755)

    def block_environment(self) -> TargetEnv:
        """`toyctl` first on PATH, and where its things live."""
        return TargetEnv(
            path_prepend=(str(self.root / "bin"),), env={"TOY_ROOT": str(self.root)}, description="toy"
        )

    def drain_events(self) -> list[dict[str, Any]]:
        """Every logged change since the last drain."""
        log, cursor = self.root / "events.jsonl", self.root / "events.cursor"
        if not log.exists():
            return []
        lines = log.read_text().splitlines()
        seen = int(cursor.read_text()) if cursor.exists() else 0
        cursor.write_text(str(len(lines)))
        return [json.loads(line) for line in lines[seen:]]

    def describe_event(self, event: dict[str, Any]) -> str:
        """`up widget`."""
        return f"{event['kind']} {event['name']}"

    def sessions(self) -> list[SessionInfo]:
        """Each thing, as a session that is always healthy."""
        things = self.root / "things"
        names = sorted(p.name for p in things.iterdir()) if things.is_dir() else []
        return [SessionInfo(n, None, None, None, alive=True, healthy=True) for n in names]

    def stop_all(self) -> list[SessionInfo]:
        """Things do not run; nothing to stop."""
        return []

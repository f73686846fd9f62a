"""A structured diff of two versions of a plan's Live State (pure), plus reading a version from git.

JSON shape (`LiveStateDiff.to_json()`), schema `director.diff/1`:

    {"schema": "director.diff/1",
     "yaml":   [{"op": "changed", "path": "resolved_inputs.trigger", "old": "cli", "new": "http"}, …],
     "kv":     [{"op": "added", "key": "DB", "old": null, "new": "`orders-db`"}, …],
     "checks": [{"op": "changed", "name": "happy path completes", "field": "result",
                 "old": "✅", "new": "✅ 2026-11-29"}, …]}

`op` is `added`, `changed` or `removed`; `old` is null for `added`, `new` is null for `removed`. YAML
paths are dotted (nested mappings are walked; lists compare as a whole). Check rows are compared on
`observed` and `result`; a row added or removed reports `expected`, `observed` and `result`. A side
with no Live State section counts as empty.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from director.errors import UsageError
from director.plan.model import LiveState
from director.plan.parse import parse

__all__ = ["SCHEMA", "Change", "LiveStateDiff", "live_state_diff", "text_at_revision"]

SCHEMA = "director.diff/1"

_CHECK_FIELDS = ("observed", "result")
_ROW_FIELDS = ("expected", "observed", "result")


@dataclass(frozen=True)
class Change:
    """One changed value: `where` is the YAML path, kv key or check row name; `field` is for checks."""

    op: str  # "added" | "changed" | "removed"
    where: str
    old: Any = None
    new: Any = None
    field: str | None = None


@dataclass(frozen=True)
class LiveStateDiff:
    """What changed in Live State between two texts of a plan."""

    yaml: tuple[Change, ...] = ()
    kv: tuple[Change, ...] = ()
    checks: tuple[Change, ...] = ()

    @property
    def is_empty(self) -> bool:
        """True when Live State did not change."""
        return not (self.yaml or self.kv or self.checks)

    def to_json(self) -> dict[str, Any]:
        """The documented `director.diff/1` shape (see the module docstring)."""
        return {
            "schema": SCHEMA,
            "yaml": [{"op": c.op, "path": c.where, "old": c.old, "new": c.new} for c in self.yaml],
            "kv": [{"op": c.op, "key": c.where, "old": c.old, "new": c.new} for c in self.kv],
            "checks": [
                {"op": c.op, "name": c.where, "field": c.field, "old": c.old, "new": c.new}
                for c in self.checks
            ],
        }

    def render(self, console: Console) -> None:
        """Print the diff: removed values red, added green, keys aligned in one column."""
        if self.is_empty:
            console.print(Text("Live State: no changes", style="dim"))
            return
        groups = (("yaml", self.yaml), ("kv", self.kv), ("checks", self.checks))
        labels = {id(c): _label(c) for _, changes in groups for c in changes}
        width = max(len(label) for label in labels.values())
        for title, changes in groups:
            if not changes:
                continue
            console.print(Text(title, style="bold"))
            for c in changes:
                label = labels[id(c)].ljust(width)
                if c.op in ("changed", "removed"):
                    console.print(Text(f"  - {label}  {_show(c.old)}", style="red"))
                if c.op in ("changed", "added"):
                    console.print(Text(f"  + {label}  {_show(c.new)}", style="green"))


def _label(c: Change) -> str:
    return f"{c.where} · {c.field}" if c.field else c.where


def _show(value: Any) -> str:
    # Text objects, not markup: a value such as `[x]` must print as written.
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _jsonable(value: Any) -> Any:
    """Plain JSON data (dates as ISO strings) so `to_json()` always serialises."""
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, str):
        return str(value)
    return value


def _yaml_changes(old: Mapping[str, Any], new: Mapping[str, Any], prefix: str = "") -> Iterator[Change]:
    for key in [*old, *(k for k in new if k not in old)]:
        path = f"{prefix}{key}"
        if key not in new:
            yield Change("removed", path, old=_jsonable(old[key]))
        elif key not in old:
            yield Change("added", path, new=_jsonable(new[key]))
        elif isinstance(old[key], Mapping) and isinstance(new[key], Mapping):
            yield from _yaml_changes(old[key], new[key], f"{path}.")
        elif _jsonable(old[key]) != _jsonable(new[key]):
            yield Change("changed", path, old=_jsonable(old[key]), new=_jsonable(new[key]))


def _kv_changes(old: LiveState | None, new: LiveState | None) -> Iterator[Change]:
    before = {r.key: r.value for r in old.kv_rows} if old else {}
    after = {r.key: r.value for r in new.kv_rows} if new else {}
    for key in [*before, *(k for k in after if k not in before)]:
        if key not in after:
            yield Change("removed", key, old=before[key])
        elif key not in before:
            yield Change("added", key, new=after[key])
        elif before[key] != after[key]:
            yield Change("changed", key, old=before[key], new=after[key])


def _check_changes(old: LiveState | None, new: LiveState | None) -> Iterator[Change]:
    before = {r.name: r for r in old.check_rows} if old else {}
    after = {r.name: r for r in new.check_rows} if new else {}
    for name in [*before, *(k for k in after if k not in before)]:
        if name not in after:
            for f in _ROW_FIELDS:
                yield Change("removed", name, old=getattr(before[name], f), field=f)
        elif name not in before:
            for f in _ROW_FIELDS:
                yield Change("added", name, new=getattr(after[name], f), field=f)
        else:
            for f in _CHECK_FIELDS:
                a, b = getattr(before[name], f), getattr(after[name], f)
                if a != b:
                    yield Change("changed", name, old=a, new=b, field=f)


def live_state_diff(old_text: str, new_text: str) -> LiveStateDiff:
    """Diff the Live State of two plan texts (YAML by dotted path, kv by key, checks by row name)."""
    old = parse(old_text).live_state if old_text else None
    new = parse(new_text).live_state if new_text else None
    return LiveStateDiff(
        yaml=tuple(_yaml_changes(old.data if old else {}, new.data if new else {})),
        kv=tuple(_kv_changes(old, new)),
        checks=tuple(_check_changes(old, new)),
    )


def _git(args: list[str], cwd: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
    except FileNotFoundError as exc:
        raise UsageError("git is not installed; cannot read a plan at a revision") from exc


def text_at_revision(path: str | os.PathLike[str], rev: str) -> str:
    """The plan's text at git revision `rev` (`git show REV:relative/path` in the repo holding it)."""
    if not rev or rev.startswith("-"):
        raise UsageError(f"not a git revision: {rev!r}")  # `-…` would be read by git as an option
    target = Path(os.path.abspath(path))
    directory = target.parent
    if not directory.is_dir():
        raise UsageError(f"{path}: directory {directory} does not exist")
    top = _git(["rev-parse", "--show-toplevel"], str(directory))
    if top.returncode != 0:
        raise UsageError(f"{path}: not inside a git repository, so there is no revision {rev!r} to read")
    root = Path(top.stdout.decode().strip()).resolve()
    try:
        rel = target.parent.resolve().joinpath(target.name).relative_to(root)
    except ValueError as exc:
        raise UsageError(f"{path}: not inside the git repository at {root}") from exc
    shown = _git(["show", f"{rev}:{rel.as_posix()}"], str(root))
    if shown.returncode != 0:
        reason = shown.stderr.decode(errors="replace").strip().splitlines()
        detail = reason[-1] if reason else "git show failed"
        raise UsageError(f"{path}: not available at revision {rev!r} ({detail})")
    # Decode without newline translation: a CRLF plan must diff as CRLF.
    return shown.stdout.decode("utf-8")

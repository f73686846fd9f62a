"""A shell fence's attributes: Director's retry policy and Runme's cell attributes, in one `{…}`.

    ```bash {retries=3 backoff=exponential delay=2s timeout=5m}
    ```sh { name=deploy cwd=app interactive=false }
    ```sh {"name":"deploy","excludeFromRunAll":"true"}        (Runme writes this JSON form too)

Director uses `retries`, `backoff`, `delay`, `timeout` (its retry policy), `approvals` and `self-approval` (a
gated section's approval policy on its act fence, docs/approvals.md), `processes` (`stop`, the default:
what an earlier attempt of the block left running is stopped before the block runs again; `keep`: it is
left alone, see docs/processes.md) and from Runme: `name` (the
block's name, shown by `show` and the events' consumers), `cwd` (the directory the block starts in,
relative to the session's; the next block starts where the session was), `interactive` (true/false:
informational, Director runs every block under a pseudo-terminal), `excludeFromRunAll` (true: the block is
illustrative, never run) and `id` (Runme's cell identity, kept). Any other attribute is kept, ignored,
and reported by `director lint` (`unknown-fence-attribute`, info).
"""

from __future__ import annotations

import json
import os
import re
import shlex
from dataclasses import dataclass

from director.plan.source import has_surrogate, whole_number

RETRY_KEYS = ("retries", "backoff", "delay", "timeout")
PROCESS_KEYS = ("processes",)
RUNME_KEYS = ("name", "cwd", "interactive", "excludeFromRunAll", "id")
# a gated section's approval policy, on its act fence (docs/approvals.md "Gate policy"): tighter only
APPROVAL_KEYS = ("approvals", "self-approval")
MAX_APPROVALS = 9
_BOOLEAN = {"true": True, "false": False, "yes": True, "no": False, "1": True, "0": False}


class FenceAttributeError(ValueError):
    """A malformed attribute list (the parser turns it into a PlanError at the fence's line)."""


@dataclass(frozen=True)
class FenceAttributes:
    """Everything between the braces, in order, with what Director makes of it."""

    items: tuple[tuple[str, str], ...] = ()

    def get(self, key: str) -> str | None:
        return next((v for k, v in self.items if k == key), None)

    @property
    def name(self) -> str | None:
        return self.get("name")

    @property
    def cwd(self) -> str | None:
        return self.get("cwd")

    @property
    def interactive(self) -> bool | None:
        v = self.get("interactive")
        return None if v is None else _BOOLEAN[v.lower()]

    @property
    def excluded(self) -> bool:
        v = self.get("excludeFromRunAll")
        return v is not None and _BOOLEAN[v.lower()]

    @property
    def keeps_processes(self) -> bool:
        """`processes=keep`: what an earlier attempt of the block started is never stopped by Director."""
        return self.get("processes") == "keep"

    @property
    def approvals(self) -> int | None:
        """`approvals=N`: the gate needs N approvals from different people (None: the fence says nothing)."""
        v = self.get("approvals")
        return None if v is None else int(v)

    @property
    def self_approval(self) -> bool | None:
        """`self-approval=no`: the run's own operator may not approve the gate (None: nothing said)."""
        v = self.get("self-approval")
        return None if v is None else _BOOLEAN[v.lower()]

    @property
    def retry_items(self) -> tuple[tuple[str, str], ...]:
        return tuple((k, v) for k, v in self.items if k in RETRY_KEYS)

    @property
    def unknown(self) -> tuple[str, ...]:
        known = (*RETRY_KEYS, *PROCESS_KEYS, *RUNME_KEYS, *APPROVAL_KEYS)
        return tuple(k for k, _ in self.items if k not in known)


def parse_attributes(info_rest: str) -> FenceAttributes | None:
    """The `{…}` after the fence's language; None when there is none. Raises FenceAttributeError."""
    text = info_rest.strip()
    if "{" not in text and "}" not in text:
        return None
    if not (text.startswith("{") and text.endswith("}")) or text.count("{") != 1 or text.count("}") != 1:
        raise FenceAttributeError(
            f"bad fence attributes {info_rest.strip()!r}: write {{retries=3 backoff=exponential delay=2s "
            "timeout=5m}} or Runme's {{ name=deploy }}"
        )
    items: list[tuple[str, str]] = []
    if re.match(r"\{\s*\"", text):
        try:
            obj = json.loads(text)
        except (ValueError, RecursionError) as exc:  # RecursionError: arrays nested thousands deep
            raise FenceAttributeError(f"bad fence attributes {text!r}: {exc}") from None
        if not isinstance(obj, dict):
            raise FenceAttributeError(f"bad fence attributes {text!r}: expected a JSON object")
        items = [(str(k), _json_value(v)) for k, v in obj.items()]
        if any(has_surrogate(k + v) for k, v in items):
            raise FenceAttributeError(
                f"bad fence attributes {text!r}: a \\u escape decodes to a lone surrogate, no character"
            )
    else:
        try:
            words = shlex.split(text[1:-1].replace(",", " "))
        except ValueError as exc:
            raise FenceAttributeError(f"bad fence attributes {text!r}: {exc}") from None
        for word in words:
            key, eq, value = word.partition("=")
            if not eq or not key or not value:
                raise FenceAttributeError(f"bad fence attribute {word!r}: expected key=value")
            items.append((key, value))
    seen: set[str] = set()
    for key, value in items:
        if key in seen:
            raise FenceAttributeError(f"fence attribute {key!r} is set twice")
        seen.add(key)
        number = whole_number(value)
        if key == "approvals" and not (number is not None and 1 <= number <= MAX_APPROVALS):
            raise FenceAttributeError(f"bad approvals={value!r}: expected a number from 1 to {MAX_APPROVALS}")
        if key in ("interactive", "excludeFromRunAll", "self-approval") and value.lower() not in _BOOLEAN:
            raise FenceAttributeError(f"bad {key}={value!r}: expected true or false")
        if key == "processes" and value not in ("stop", "keep"):
            raise FenceAttributeError(f"bad processes={value!r}: expected stop or keep")
        if key in ("name", "cwd") and not value.strip():
            raise FenceAttributeError(f"empty {key}=")
    return FenceAttributes(tuple(items))


def _json_value(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def start_cwd(session_cwd: str, cwd: str | None) -> str:
    """Where a block with `cwd=` starts: `cwd` itself if absolute (`~` expanded), else under the session's."""
    if not cwd:
        return session_cwd
    path = os.path.expanduser(cwd)
    return os.path.normpath(os.path.join(session_cwd, path)) if session_cwd else path

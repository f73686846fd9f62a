"""`director init`: scaffold a plan that lints clean and applies anywhere."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

from director.errors import ExitCode, UsageError
from director.files import write_atomic

# The longest file name the scaffold writes, in bytes (Linux's NAME_MAX): a longer one is no file name.
NAME_MAX = 255


def _refusal(name: str) -> str | None:
    """Why NAME cannot name a plan file, or None."""
    if not name.strip() or "/" in name:
        return "is not a plan name"
    # A line break (or any control character) in a file name breaks every listing, shell loop and
    # message that shows it on one line; Unicode's line and paragraph separators too.
    bad = next((c for c in name if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Cs")), None)
    if bad is not None:
        return f"holds U+{ord(bad):04X}, a control or invisible character: a plan's name is one line of text"
    if len(os.fsencode(name if name.endswith(".md") else f"{name}.md")) > NAME_MAX:
        return f"is longer than a file name may be ({NAME_MAX} bytes with its .md)"
    return None


def init_command(name: str, directory: Path) -> ExitCode:
    """Write NAME.md into `directory` (never over an existing file) and say where."""
    from director.plan import scaffold

    why = _refusal(name)
    if why is not None:
        raise UsageError(f"NAME: {name!r} {why}")
    path = directory / (name if name.endswith(".md") else f"{name}.md")
    if path.exists():
        raise UsageError(f"NAME: {path} already exists; not overwriting it")
    directory.mkdir(parents=True, exist_ok=True)
    write_atomic(path, scaffold.render(name.removesuffix(".md")))
    print(f"wrote {path}")
    return ExitCode.OK

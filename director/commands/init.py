"""`director init`: scaffold a plan that lints clean and applies anywhere."""

from __future__ import annotations

from pathlib import Path

from director.errors import ExitCode, UsageError
from director.files import write_atomic


def init_command(name: str, directory: Path) -> ExitCode:
    """Write NAME.md into `directory` (never over an existing file) and say where."""
    from director.plan import scaffold

    if not name.strip() or "/" in name:
        raise UsageError(f"NAME: {name!r} is not a plan name")
    path = directory / (name if name.endswith(".md") else f"{name}.md")
    if path.exists():
        raise UsageError(f"NAME: {path} already exists; not overwriting it")
    directory.mkdir(parents=True, exist_ok=True)
    write_atomic(path, scaffold.render(name.removesuffix(".md")))
    print(f"wrote {path}")
    return ExitCode.OK

"""`director init`: scaffold a plan that lints clean and applies anywhere."""

from __future__ import annotations

from pathlib import Path

from director.errors import ExitCode


def init_command(name: str, directory: Path) -> ExitCode:
    """Write NAME.md into `directory` and say where."""
    from director.plan import scaffold

    path = scaffold.write(name, directory)
    print(f"wrote {path}")
    return ExitCode.OK

"""What typer builds for one call of `director`: only the command the call names.

typer turns every registered command's signature into click options on each call (`typer.main.get_command`):
about 10 ms of every `director` process for its fifteen commands and the `state` group (four more), whichever
one runs. When the first argument is exactly one command's name, only that command (or group) is registered
while the call runs: its options, help, errors and exit codes are the same, as the command is built the same
way. Any other call -- `director --help`, no argument, an unknown or misspelled name (click's "No such
command" lists and suggests from all of them), shell completion -- sees every command.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence

import typer
from typer.main import get_command_name
from typer.models import CommandInfo, TyperInfo

__all__ = ["command_name", "only_the_command"]


def command_name(info: CommandInfo) -> str:
    """A command's name as typer gives it: its own, else its function's (`typer.main.get_command_name`)."""
    if info.name:
        return info.name
    return get_command_name(info.callback.__name__) if info.callback else ""


def _group_name(info: TyperInfo) -> str:
    """A group's name: its own, else its Typer's (`add_typer` without a name leaves a placeholder)."""
    inner = info.typer_instance.info.name if info.typer_instance else None
    return next((n for n in (info.name, inner) if isinstance(n, str) and n), "")


@contextlib.contextmanager
def only_the_command(app: typer.Typer, args: Sequence[str]) -> Iterator[None]:
    """While the body runs, `app` registers only the command or group `args[0]` names, if it names exactly
    one and the call is not a shell completion; the registrations are given back afterwards."""
    name = args[0] if args else ""
    completing = any(k.startswith("_") and k.endswith("_COMPLETE") for k in os.environ)
    commands = [c for c in app.registered_commands if command_name(c) == name]
    groups = [g for g in app.registered_groups if _group_name(g) == name]
    if not name or name.startswith("-") or completing or len(commands) + len(groups) != 1:
        yield
        return
    saved = app.registered_commands, app.registered_groups
    app.registered_commands, app.registered_groups = commands, groups
    try:
        yield
    finally:
        app.registered_commands, app.registered_groups = saved

"""`director.cli_build`: a call that names one command builds only that command, and says exactly what the
whole command line says -- its help, its usage errors, its exit codes -- for every command."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
import typer

from director import cli
from director.cli_build import command_name, only_the_command

NAMES = sorted(command_name(c) for c in cli.app.registered_commands)


def _everything(app: typer.Typer, args: Sequence[str]) -> contextlib.AbstractContextManager[None]:
    return contextlib.nullcontext()


def _call(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[object, str, str]:
    with pytest.raises(SystemExit) as exited:
        cli.main(argv)
    out, err = capsys.readouterr()
    return exited.value.code, out, err


CALLS = [
    *([name, "--help"] for name in NAMES),
    ["state", "--help"],
    ["state", "forget", "--help"],
    ["--help"],
    [],
    ["aply", "p.md"],  # misspelled: click suggests from every command
    ["apply", "--bogus", "p.md"],
    ["apply"],
    ["show", "p.md", "extra"],
    ["status", "--json", "--json"],
]


@pytest.mark.parametrize("argv", CALLS, ids=[" ".join(a) or "nothing" for a in CALLS])
def test_a_call_says_what_the_whole_command_line_says(
    argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("NO_COLOR", "1")
    narrowed = _call(argv, capsys)
    monkeypatch.setattr(cli, "only_the_command", _everything)
    assert _call(argv, capsys) == narrowed


@contextlib.contextmanager
def _seen(args: list[str]) -> Iterator[tuple[int, int]]:
    with only_the_command(cli.app, args):
        yield len(cli.app.registered_commands), len(cli.app.registered_groups)


def test_only_the_named_command_is_registered_while_the_call_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    every = (len(cli.app.registered_commands), len(cli.app.registered_groups))
    assert every[0] >= 10 and every[1] == 1
    with _seen(["apply", "p.md"]) as seen:
        assert seen == (1, 0)
    with _seen(["state", "forget"]) as seen:
        assert seen == (0, 1)
    for args in (["--help"], [], ["aply"], ["-V"]):
        with _seen(args) as seen:
            assert seen == every, args
    monkeypatch.setenv("_DIRECTOR_COMPLETE", "complete_bash")  # shell completion lists every command
    with _seen(["apply"]) as seen:
        assert seen == every
    assert (len(cli.app.registered_commands), len(cli.app.registered_groups)) == every

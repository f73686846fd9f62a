"""A block that cannot change the session skips the session capture (`bash.keeps_session`).

The static reading is checked against real bash: every snippet runs in a session twice, once with the
capture the analyser allows and once with the full capture, and the sessions that result must be equal.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from director.exec.shell import SessionState, Shell
from director.plan.bash import function_names, keeps_session

BASE_ENV = {"PATH": os.environ.get("PATH", os.defpath), "HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8"}

# Blocks that leave their shell as it was: only programs, harmless builtins, tests, reads.
KEEPS = [
    "echo 1",
    "printf '%s\\n' \"$X\"",
    "printf -- '-v %s\\n' x",
    "ls -la | grep -c . >/dev/null",
    '[[ $X == plain ]] && echo same',
    '[ "$X" = plain ] || echo differs',
    "(( ${#X} > 1 )) && echo long",
    "case $X in plain) echo p;; *) echo other;; esac",
    "if test -d sub; then echo dir; else echo none; fi",
    'echo "here: $(cd / && pwd)"',
    "cat <<EOF\nvalue $X and $((2 + 3))\nEOF",
    "set -euo pipefail\necho strict",
    "shopt -s nullglob\nls *.nothing",
    "echo $((${#X} + 1))",
    "true && false || echo recovered",
    "exit 3",
    "sleep 0 & wait",
    "wait",
]

# Blocks that change their shell (or may): the full capture runs.
CHANGES = [
    "X=changed",
    "umask 077",
    "ulimit -S -n 512",
    "export NEW=1",
    "read -r R <<<'typed'",
    "for i in 1 2; do :; done",
    "cd sub",
    "pushd sub >/dev/null",
    "source ./lib.sh",
    ". ./lib.sh",
    "eval 'E=1'",
    "f() { :; }",
    "declare -A M=([k]=v)",
    "unset X",
    "mapfile -t L < lib.sh",
    "readarray L < lib.sh",
    "getopts ab OPT -a",
    "let N=3",
    "(( N = 4 ))",
    "echo $((N=5))",
    "echo ${D:=default}",
    "echo ${D=default}",
    "A=(1 2 3); i=0; : ${A[i++]}",
    "printf -v P %s pv",
    "sleep 0 & wait -p W",
    "exec {FD}>fd.out",
    "echo >&2 {FD2}>fd2.out",
    "coproc { read -r line; }",  # alive at the capture (its stdin is the shell's): COPROC is set both times
    'cmd=cd; $cmd sub',
    "command cd sub",
    "builtin cd sub",
    "time cd sub",
    "[[ N=6 -eq 6 ]]",
    "(( N <<= 1 ))",
    "echo $[N=7]",
    "cat <<EOF\n${H:=from-heredoc}\nEOF",
    "select S in a; do break; done <<<1",
    "setx",  # a function of the session
    "cat <<'EOF'\n${Y:=literal}\nEOF",  # read as if it expanded: a "maybe" is a no
    "if true; then cd sub; fi",
    "{ cd sub; }",
]


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[Shell]:
    (tmp_path / "sub").mkdir()
    (tmp_path / "lib.sh").write_text("LIB=loaded\n", encoding="utf-8")
    with Shell(BASE_ENV, tmp_path, interactive=False) as sh:
        yield sh


def start(shell: Shell) -> SessionState:
    """A session with a variable, an exported one, an array and a function that sets a variable."""
    r = shell.run(
        "X=plain; export EXP=e; declare -a ARR=(a b); setx() { SETX=called; }",
        shell.initial_state(),
    )
    assert r.ok and "setx ()" in r.state.functions, r
    return r.state


def same_session(a: SessionState, b: SessionState, workdir: Path) -> bool:
    def seen(s: SessionState) -> tuple[object, ...]:
        variables = {k: v for k, v in s.variables.items() if k != "COPROC_PID"}  # differs from run to run
        return variables, s.exported, s.functions, s.attributes, s.arrays, s.cwd or str(workdir), s.umask, s.limits

    return seen(a) == seen(b)


@pytest.mark.parametrize("text", KEEPS)
def test_blocks_that_cannot_change_the_session_are_read_as_such(text: str) -> None:
    assert keeps_session(text, {"setx"}), text


@pytest.mark.parametrize("text", CHANGES)
def test_blocks_that_may_change_the_session_are_read_as_such(text: str) -> None:
    assert not keeps_session(text, {"setx"}), text


def test_a_session_function_or_a_not_found_handler_counts() -> None:
    assert keeps_session("deploy --now")
    assert not keeps_session("deploy --now", {"deploy"})
    assert not keeps_session("deploy --now", {"command_not_found_handle"})


def timings_masked(output: str) -> str:
    """The output with what `time` measured (its `0m0.001s` figures) masked: two runs differ there."""
    return re.sub(r"\b\d+m\d+\.\d+s\b", "<time>", output)


@pytest.mark.parametrize("text", KEEPS + CHANGES)
def test_the_skipped_capture_loses_nothing_in_real_bash(shell: Shell, tmp_path: Path, text: str) -> None:
    """What the analyser allows gives the session the full capture gives, on every snippet."""
    before = start(shell)
    kept = keeps_session(text, function_names(before.functions))
    light = shell.run(text, before, keeps_session=kept)
    full = shell.run(text, before)
    assert light.exit_code == full.exit_code, (light, full)
    assert timings_masked(light.output) == timings_masked(full.output), (light, full)
    assert same_session(light.state, full.state, tmp_path), (text, light.state, full.state)
    if kept:
        assert light.state is before  # nothing was parsed: the session as it was


@pytest.mark.parametrize(
    "text", ["X=changed", "cd sub", "setx", "echo ${D:=default}", "read -r R <<<'typed'", "umask 077"]
)
def test_forcing_the_skip_on_a_changing_block_would_lose_the_change(shell: Shell, tmp_path: Path, text: str) -> None:
    """The equality above is not vacuous: on these blocks a skipped capture misses what they changed."""
    before = start(shell)
    forced = shell.run(text, before, keeps_session=True)
    full = shell.run(text, before)
    assert not same_session(forced.state, full.state, tmp_path), (forced.state, full.state)


def test_the_directory_is_still_reported_when_kept(shell: Shell, tmp_path: Path) -> None:
    before = start(shell)
    r = shell.run("cd sub", before, keeps_session=True)  # forced: the status and directory still come back
    assert r.ok and r.state.cwd == str(tmp_path / "sub") and r.state.variables == before.variables


def test_a_kept_block_killed_by_a_signal_says_so_and_one_exiting_137_does_not(shell: Shell) -> None:
    before = start(shell)
    killed = shell.run("kill -KILL $BASHPID", before, keeps_session=True)
    assert killed.exit_code == 137 and killed.signal == 9, killed
    exited = shell.run("exit 137", before, keeps_session=True)
    assert exited.exit_code == 137 and exited.signal is None, exited


def test_an_exported_function_of_the_operator_turns_the_skip_off(tmp_path: Path) -> None:
    env = {**BASE_ENV, "BASH_FUNC_setz%%": "() {  Z=from-env\n}"}
    with Shell(env, tmp_path, interactive=False) as sh:
        assert keeps_session("setz")  # the analyser cannot know it; the shell does
        r = sh.run("setz", sh.initial_state(), keeps_session=True)
    assert r.ok and r.state.variables.get("Z") == "from-env", r


LOGS_PLAN = """\
# Rotate the app's logs

> A runbook: make the log directory, define a stamping helper, use it, list, then write a report.

## 0. Variables

```bash
LOGDIR="$PWD/logs"
```

## 1. Log directory and helper  🟢

```bash
mkdir -p "$LOGDIR"
stamp() { STAMPED="at-$(date +%s)"; echo stamped; }
```

## 2. Stamp the rotation  🟢

```bash
stamp
```

## 3. List what is there  🟢

```bash
ls -la "$LOGDIR" | grep -c . >/dev/null
```

## 4. Report  🟢

```bash
echo "stamped=${STAMPED:+yes} dir=$(basename "$LOGDIR")" > "$LOGDIR/report.txt"
```

## Live State

```yaml
status:        not-created
last_action:   —
```
"""


def test_a_run_carries_the_session_through_kept_and_captured_blocks(tmp_path: Path) -> None:
    """Through the CLI: §2 calls a function of the session (captured: it sets STAMPED), §3 and §4 keep the
    session; the report §4 writes shows what reached it."""
    plan = tmp_path / "logs.md"
    plan.write_text(LOGS_PLAN, encoding="utf-8")
    assert not keeps_session("stamp", {"stamp"}) and keeps_session('ls -la "$LOGDIR" | grep -c . >/dev/null')
    r = subprocess.run(
        # its sections have no verify blocks (the session is what this is about): lint errors, run anyway
        [sys.executable, "-m", "director", "apply", str(plan), "--plain", "--non-interactive", "--ignore-lint-errors"],
        cwd=tmp_path, env={**os.environ, "CI": "1", "NO_COLOR": "1"}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    report = next(tmp_path.rglob("report.txt"))
    assert report.read_text(encoding="utf-8") == "stamped=yes dir=logs\n"

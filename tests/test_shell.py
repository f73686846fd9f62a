"""The block runner on real bash under real pseudo-terminals."""

from __future__ import annotations

import os
import re
import resource
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from director.exec.secrets import Redactor, is_secret_name
from director.exec.session import parse_declare_p
from director.exec.shell import BlockResult, SessionState, Shell
from director.state.journal import Journal
from director.state.lifecycle import StepState

BASE_ENV = {
    "PATH": os.environ.get("PATH", os.defpath),
    "HOME": os.environ.get("HOME", "/root"),
    "LANG": "C.UTF-8",
    "INHERITED": "from-operator",
}


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[Shell]:
    with Shell(BASE_ENV, tmp_path, interactive=False, input_probe_after_s=0.3, kill_grace_s=1.0) as sh:
        yield sh


def run_all(sh: Shell, *blocks: str, **kw: object) -> list[BlockResult]:
    state = sh.initial_state()
    out = []
    for b in blocks:
        r = sh.run(b, state, **kw)  # type: ignore[arg-type]
        out.append(r)
        state = r.state
    return out


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def test_session_flows_across_blocks(shell: Shell, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    r1, r2 = run_all(
        shell,
        'X=plain; export E="two words"; greet() { echo "hi $1"; }; cd sub; declare -i N=41; N+=1\n'
        'declare -a ARR=(a "b c"); declare -A MAP=([k]=v)',
        'echo "$X|$E|$N|${ARR[1]}|${MAP[k]}|$(pwd)"; greet you\n'
        "bash -c 'echo \"child sees ${E:-nothing}/${X:-nothing}\"'",
    )
    assert r1.ok and r2.ok, (r1, r2)
    assert r2.output == f"plain|two words|42|b c|v|{tmp_path}/sub\nhi you\nchild sees two words/nothing\n"
    s = r1.state
    assert s.variables["X"] == "plain" and s.variables["N"] == "42" and s.attributes["N"] == "i"
    assert "E" in s.exported and "X" not in s.exported
    assert "greet ()" in s.functions and s.cwd == str(tmp_path / "sub")
    assert set(s.arrays) == {"ARR", "MAP"}


def test_first_block_runs_in_workdir_and_state_is_only_what_blocks_set(shell: Shell, tmp_path: Path) -> None:
    [r] = run_all(shell, "pwd; Y=1")
    assert r.output == f"{tmp_path}\n"
    assert r.state.variables == {"Y": "1"}  # not INHERITED, PPID, RANDOM, SHLVL, IFS, BASH_*, _ …
    assert r.state.exported == frozenset() and r.state.functions == "" and r.state.arrays == {}


def test_changed_inherited_variable_flows(shell: Shell) -> None:
    r1, r2 = run_all(shell, "INHERITED=changed-by-block", 'echo "$INHERITED"')
    assert r1.state.variables["INHERITED"] == "changed-by-block"
    assert r2.output == "changed-by-block\n"


def test_exit_fails_one_block_and_session_survives(shell: Shell) -> None:
    _, r2, r3 = run_all(shell, "A=1", "B=2; exit 3; C=never", 'echo "A=$A B=$B C=${C-unset}"')
    assert r2.exit_code == 3 and not r2.ok and r2.signal is None
    assert r3.ok and r3.output == "A=1 B=2 C=unset\n"


def test_strict_mode_block_still_captures(shell: Shell) -> None:
    r1, r2 = run_all(shell, "set -euo pipefail; K=kept; false; echo no", 'echo "$K $-"')
    assert r1.exit_code == 1 and r1.output == ""
    assert r2.output.startswith("kept ") and "e" not in r2.output.split()[1]  # options do not flow


def test_blocks_own_exit_trap_is_chained(shell: Shell, tmp_path: Path) -> None:
    r1, r2 = run_all(shell, f"trap 'echo cleanup $?; touch {tmp_path}/cleaned' EXIT; T=1; exit 4", "echo $T")
    assert r1.exit_code == 4 and "cleanup 4" in r1.output
    assert (tmp_path / "cleaned").exists()
    assert r2.output == "1\n"
    [r] = run_all(shell, "trap 'echo sub' EXIT; trap - EXIT; (trap 'echo inner' EXIT; true); echo done")
    assert r.output == "inner\ndone\n"


def test_odd_shell_settings_do_not_break_later_blocks(shell: Shell) -> None:
    r = run_all(
        shell, "set -u; trap 'echo bye' EXIT; IFS=,; POSIXLY_CORRECT=1; A=1", "B=2; echo $A", "echo $A$B"
    )
    assert [x.exit_code for x in r] == [0, 0, 0]
    assert r[0].output == "bye\n" and r[2].output == "12\n"


def test_stdout_and_stderr_stream_live_and_are_captured(shell: Shell) -> None:
    seen: list[tuple[float, str]] = []
    t0 = time.monotonic()
    r = shell.run(
        "echo first; echo oops >&2; sleep 0.6; echo last",
        shell.initial_state(),
        on_output=lambda t: seen.append((time.monotonic() - t0, t)),
    )
    assert r.output == "first\noops\nlast\n"
    assert "".join(t for _, t in seen) == r.output
    first_at = next(at for at, t in seen if "first" in t)
    assert first_at < 0.5 <= r.duration_s  # streamed before the block ended


def test_output_is_bounded(shell: Shell) -> None:
    [r] = run_all(shell, "head -c 300000 /dev/zero | tr '\\0' x; echo; echo END")
    assert r.ok
    assert r.output.startswith("x" * 16384) and r.output.endswith("x\nEND\n")
    assert "bytes elided]…" in r.output
    assert len(r.output.encode()) < 16384 + 49152 + 100


def test_output_is_redacted(tmp_path: Path) -> None:
    with Shell(BASE_ENV, tmp_path, interactive=False, redactor=Redactor(["hunter2-secret"])) as sh:
        seen: list[str] = []
        r = sh.run(
            "printf 'pw=hunter2-'; sleep 0.05; printf 'secret done\\n'",
            sh.initial_state(),
            on_output=seen.append,
        )
    assert r.output == "pw=*** done\n" and "hunter2" not in "".join(seen)


def test_secrets_stay_out_of_persistable_state_and_journal(shell: Shell, tmp_path: Path) -> None:
    [r] = run_all(shell, "export API_TOKEN=tok-5f3a9-zz; DB_PASSWORD=pw-77x; WF=flow; MY_KEY=k-123456")
    assert r.state.variables["API_TOKEN"] == "tok-5f3a9-zz"  # in memory for the next block
    p = r.state.persistable(is_secret_name)
    assert set(p.variables) & {"API_TOKEN", "DB_PASSWORD", "MY_KEY"} == set()
    assert "API_TOKEN" not in p.exported and p.variables["WF"] == "flow"
    assert sorted(r.state.secret_values(is_secret_name)) == ["k-123456", "pw-77x", "tok-5f3a9-zz"]
    db = tmp_path / "j" / "plan.db"
    with Journal.open(db) as j:
        rid = j.create_run("apply", "plan.md", "local", "me", {})
        sid = j.step_started(rid, "0/0", "0", 0, "act", "f")
        j.step_finished(sid, StepState.SUCCEEDED, r.exit_code, r.duration_s, r.output, p.to_json())
        restored = SessionState.from_json(j.last_session(rid) or {})
    assert restored == p
    blob = b"".join(f.read_bytes() for f in db.parent.iterdir())
    for secret in (b"tok-5f3a9-zz", b"pw-77x", b"k-123456", b"API_TOKEN"):
        assert secret not in blob


def _clock_from(marker: Path) -> Callable[[], float]:
    """A clock that stands at 0 until the block creates `marker`: its timeout counts once the block is in
    place (on a loaded machine getting there can take longer than a short timeout)."""
    t0 = time.monotonic()
    return lambda: time.monotonic() - t0 if marker.exists() else 0.0


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    started = tmp_path / "started"
    t0 = time.monotonic()
    with Shell(BASE_ENV, tmp_path, interactive=False, clock=_clock_from(started), kill_grace_s=1.0) as sh:
        [r] = run_all(
            sh,
            f"sleep 30 & echo bg=$!; (sleep 31; echo never) & echo fg=$BASHPID; : > {started}; sleep 32",
            timeout_s=0.5,
        )
    assert r.timed_out and not r.ok and r.exit_code == 128 + signal.SIGTERM
    assert time.monotonic() - t0 < 25  # not the 30 s of its sleeps
    pids = [int(x.split("=")[1]) for x in r.output.split() if x.startswith(("bg=", "fg="))]
    assert len(pids) == 2 and not any(alive(p) for p in pids)
    assert "timed out after 0.5s" in r.output


def test_timeout_escalates_to_sigkill(tmp_path: Path) -> None:
    trapped = tmp_path / "trapped"  # a SIGTERM before the TERM trap is set would end it without escalation
    with Shell(BASE_ENV, tmp_path, interactive=False, clock=_clock_from(trapped), kill_grace_s=1.0) as sh:
        [r] = run_all(sh, f"trap '' TERM; echo $BASHPID; : > {trapped}; sleep 30", timeout_s=0.3)
    assert r.timed_out and r.exit_code == 128 + signal.SIGKILL
    assert not alive(int(r.output.split()[0]))


def test_timeout_with_a_driven_clock(tmp_path: Path) -> None:
    now = [0.0]

    def clock() -> float:
        now[0] += 30.0  # every reading jumps 30 s: the 60 s timeout fires without waiting
        return now[0]

    with Shell(BASE_ENV, tmp_path, interactive=False, clock=clock, sleeper=lambda s: None) as sh:
        t0 = time.monotonic()
        r = sh.run("sleep 30", sh.initial_state(), timeout_s=60)
    assert r.timed_out and time.monotonic() - t0 < 5


@pytest.mark.parametrize("start", ["sleep 30 &", "nohup sleep 30 >/dev/null 2>&1 &"])
def test_background_job_outlives_its_block(shell: Shell, start: str) -> None:
    """As under a terminal running the script: the block's end does not hang up its background jobs
    (a `nohup server &` as a block's last command used to die of SIGHUP before nohup could ignore it)."""
    [r] = run_all(shell, f"{start} echo $!")
    assert r.ok
    pid = int(r.output.strip())
    try:
        time.sleep(0.5)  # a hang-up would have been delivered by now
        assert alive(pid)
    finally:
        os.kill(pid, signal.SIGKILL)


def test_non_interactive_read_fails_fast(shell: Shell) -> None:
    t0 = time.monotonic()
    r1, r2 = run_all(shell, "Z=before; echo asking; read -r answer; echo got $answer", "echo $Z")
    assert r1.waited_for_input and not r1.ok and r1.exit_code not in (0, None)
    assert time.monotonic() - t0 < 5
    assert "waiting for keyboard input" in r1.output and "reads stdin" in r1.output
    assert r2.output == "before\n"


def test_non_interactive_read_in_a_child_process(shell: Shell) -> None:
    [r] = run_all(shell, f"{sys.executable} -c 'input()'")
    assert r.waited_for_input and "python" in r.output


def test_reading_the_terminal_fails_fast(shell: Shell) -> None:
    [r] = run_all(shell, "read -r x < /dev/tty")
    assert r.waited_for_input and "reads the terminal" in r.output


def test_stdin_is_not_a_tty_but_stdout_is(shell: Shell) -> None:
    [r] = run_all(shell, "[ -t 0 ] && echo in-tty || echo in-notty; [ -t 1 ] && echo out-tty")
    assert r.output == "in-notty\nout-tty\n"


def test_sigpipe_has_its_default_disposition(shell: Shell) -> None:
    [r] = run_all(shell, "yes | head -n 2; echo ${PIPESTATUS[0]}")
    assert r.output == "y\ny\n141\n"


def test_stop_from_another_thread(shell: Shell) -> None:
    threading.Timer(0.3, shell.stop).start()
    [r] = run_all(shell, "echo $BASHPID; sleep 30")
    assert r.interrupted and not r.timed_out and not alive(int(r.output.split()[0]))
    shell.stop()  # no block running: nothing happens


def test_run_from_a_worker_thread(shell: Shell) -> None:
    results: list[BlockResult] = []
    t = threading.Thread(target=lambda: results.append(shell.run("yes | head -n 1", shell.initial_state())))
    t.start()
    t.join(10)
    assert results and results[0].output == "y\n" and results[0].ok


def test_path_prepend_is_first_and_not_persisted(tmp_path: Path) -> None:
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "wrangler").write_text("#!/bin/sh\necho shimmed\n")
    (shim / "wrangler").chmod(0o755)
    with Shell(BASE_ENV, tmp_path, interactive=False, path_prepend=[str(shim)]) as sh:
        r1, r2 = run_all(sh, "wrangler; PATH=/opt/extra:$PATH", 'echo "$PATH"; wrangler')
    assert r1.output == "shimmed\n"
    assert r1.state.variables["PATH"] == f"/opt/extra:{BASE_ENV['PATH']}"
    assert r2.output == f"{shim}:/opt/extra:{BASE_ENV['PATH']}\nshimmed\n"


def test_missing_cwd_does_not_run(shell: Shell, tmp_path: Path) -> None:
    r = shell.run("echo hi", SessionState(cwd=str(tmp_path / "gone")))
    assert r.exit_code is None and "no longer exists" in r.output


def test_large_block_goes_through_a_file(shell: Shell) -> None:
    script = "V=0\n" + "V=$((V+1))\n" * 12000 + "echo $V"
    [r] = run_all(shell, script)
    assert r.output == "12000\n"


def test_syntax_error_keeps_state(shell: Shell) -> None:
    r1, r2, r3 = run_all(shell, "Q=1", "if then", "echo $Q")
    assert r2.exit_code == 2 and "syntax error" in r2.output and r2.state == r1.state
    assert r3.output == "1\n"


def test_arrays_with_tricky_elements_flow(shell: Shell) -> None:
    r1, r2 = run_all(
        shell,
        "A=($'x\\ny' ') (' '\"q\"' '' $'\\xff'); declare -A M=([$'k\\n']=') v' [\"a b\"]=2)",
        'printf "<%s>" "${A[@]}" "${M[$\'k\\n\']}" "${M[a b]}"; echo " ${#A[@]}"',
    )
    assert r1.ok and r2.ok, (r1, r2)
    assert r2.output == '<x\ny><) (><"q"><><\ufffd><) v><2> 5\n'
    assert SessionState.from_json(r1.state.to_json()) == r1.state


def test_state_json_round_trip(shell: Shell) -> None:
    [r] = run_all(
        shell, "W=$'tab\\there\\nnl \\'q\\' \"dq\" $ ` \\\\ é \\xff'; export W; f() { :; }; export -f f"
    )
    s = r.state
    assert s.variables["W"] == "tab\there\nnl 'q' \"dq\" $ ` \\ é \udcff"
    assert "export -f f" in s.functions
    assert SessionState.from_json(s.to_json()) == s
    [r2] = [
        shell.run("printf '%s' \"$W\" | od -An -tx1 | tr -d ' \\n'; echo; bash -c f && echo fn-exported", s)
    ]
    assert r2.output.split("\n")[0].endswith("c3a920ff") and "fn-exported" in r2.output


@settings(max_examples=25, deadline=None)
@given(st.lists(st.text(min_size=0, max_size=20).filter(lambda s: "\0" not in s), min_size=1, max_size=5))
def test_declare_p_parser_round_trips_bash_quoting(values: list[str]) -> None:
    env = {f"V{i}": v for i, v in enumerate(values)}
    env["PATH"] = BASE_ENV["PATH"]
    script = "declare -p " + " ".join(f"V{i}" for i in range(len(values)))
    out = subprocess.run(
        ["bash", "--noprofile", "--norc", "-c", script],
        env={k: v.encode("utf-8", "surrogatepass").decode("utf-8", "replace") for k, v in env.items()},
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8", "surrogateescape")
    parsed = {name: value for name, _flags, value, _ in parse_declare_p(out)}
    for i, v in enumerate(values):
        assert parsed[f"V{i}"] == v.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


INTERACTIVE_CHILD = textwrap.dedent(
    """
    import os, sys
    from director.exec.shell import Shell
    with Shell(dict(os.environ), ".", interactive=True) as sh:
        r = sh.run('read -r -p "Are you sure? " ans; echo "answer=$ans"', sh.initial_state(),
                   on_output=lambda t: (sys.stdout.write(t), sys.stdout.flush()))
    print("exit", r.exit_code, r.waited_for_input)
    """
)


def test_interactive_block_reads_the_operators_terminal(tmp_path: Path) -> None:
    import pexpect

    child = pexpect.spawn(sys.executable, ["-c", INTERACTIVE_CHILD], cwd=str(tmp_path), timeout=10)
    try:
        child.expect("Are you sure\\? ")
        child.sendline("yes")
        child.expect("answer=yes")
        child.expect("exit 0 False")
    finally:
        child.close(force=True)


def test_marks_reach_every_process_but_never_the_session(tmp_path: Path) -> None:
    from director.exec import marks

    outer = {**BASE_ENV, "DIRECTOR_STEP": "outer/1/1/0/1", "DIRECTOR_PROCESSES": "keep"}  # a nested Director
    with Shell(outer, tmp_path, interactive=False, marks={marks.PLAN_VAR: "p.md@0123"}) as sh:
        st = sh.initial_state()
        m1 = marks.step_marks("p.md@0123", 1, "2", 0, 5, keep=False)
        probe = 'X=1; bash -c \'echo "[$DIRECTOR_PLAN|$DIRECTOR_STEP|${DIRECTOR_PROCESSES-unset}]"\''
        r1 = sh.run(probe, st, marks=m1)
        assert r1.output.strip() == "[p.md@0123|p.md@0123/1/2/0/5|unset]"
        m2 = marks.step_marks("p.md@0123", 1, "3", 0, 6, keep=True)
        r2 = sh.run(probe, r1.state, marks=m2)
        assert r2.output.strip() == "[p.md@0123|p.md@0123/1/3/0/6|keep]"
        assert r1.state.variables == {"X": "1"} and not any(k.startswith("DIRECTOR_") for k in r2.state.exported)
        # Only the marks differ between two captures (bash sets LINES and COLUMNS once, in the first): the
        # later one reuses the earlier one's parse.
        r3 = sh.run(probe, r2.state, marks=marks.step_marks("p.md@0123", 1, "4", 1, 7, keep=False))
        assert r3.state is r2.state


@pytest.mark.parametrize("lowest_free", range(40, 64))
def test_a_traced_block_runs_whatever_numbers_the_sessions_descriptors_get(tmp_path: Path, lowest_free: int) -> None:
    """A traced block's setup opens its xtrace and marks at fixed descriptors; the session's bash keeps its
    request, event and state pipes at whatever numbers Director's own descriptors left free (in a family,
    the other members' open files decide them). Whichever numbers those are, the block starts, reports its
    end, and its trace says what ran: a clash once sent the start report into the trace and lost both."""
    fillers: list[int] = []
    try:
        while (fd := os.open(os.devnull, os.O_RDONLY)) < lowest_free:
            fillers.append(fd)
        os.close(fd)  # the lowest free number is `lowest_free`: the session's pipes are numbered from there
        with Shell(BASE_ENV, tmp_path, interactive=False) as sh:
            r = sh.run('[ -f /nonexistent ] && echo present || echo missing\n', sh.initial_state(), trace=True)
    finally:
        for fd in fillers:
            os.close(fd)
    assert (r.exit_code, r.output) == (0, "missing\n"), r.output
    assert r.trace, "the trace says which commands ran"


@pytest.mark.parametrize("underscore", [None, "/opt/tools/bin/director", "two\nlines"])
def test_a_blocks_first_dollar_underscore_is_what_bash_c_starts_with(tmp_path: Path, underscore: str | None) -> None:
    """`$_` before a block's first command is what `bash -c` in the same environment starts with (its
    environment's `_`, else the path bash was started by), never the text of Director's setup; a newline
    in the environment's `_` is a space. Plain bash decides, traced or not, in every block of a session."""
    env = {**BASE_ENV, **({"_": underscore} if underscore is not None else {})}
    block = 'printf "[%s]\\n" "$_"'
    with Shell(env, tmp_path, interactive=False) as sh:
        plain = subprocess.run([sh.bash, "-c", block], env=env, capture_output=True, text=True, check=True)
        want = plain.stdout.replace("\n", " ")[:-1] + "\n"
        state = sh.initial_state()
        for traced in (False, True, False, True):
            r = sh.run(block, state, trace=traced)
            assert r.output == want, (traced, r.output, plain.stdout)
            state = r.state
        assert "__director_0" not in state.variables


TRAP_IDIOMS = [
    'old=$(trap -p EXIT); trap "echo bye" EXIT; eval "$old"; echo done',  # save, set, restore
    'trap "echo bye" EXIT; old=$(trap -p EXIT); trap - EXIT; echo "[$old]"; eval "$old"; echo done',
    'trap "echo one" EXIT; trap -p EXIT; trap -- EXIT; trap -p; echo done',
    'trap "echo e" 0; trap -p 0; exit 3',
    "trap \"echo 'quoted here'\" EXIT; trap; echo done",
    'trap "echo a && echo \\\\b" EXIT; trap -p EXIT; echo done',  # & and \\ in the handler, as bash quotes them
    "trap '' EXIT; trap -p EXIT; echo done",
    'trap "echo hup" HUP; trap "echo bye" EXIT; trap -p; trap - HUP; echo done',
    "set -u; trap -p EXIT; trap; echo ok",
    'trap "echo bye" EXIT; ( trap -p EXIT; echo sub )',
    'trap -p NOSUCHSIGNAL; echo "status $?"',
    'trap "echo bye" SIGEXIT; echo "status $?"; trap "echo hup" NOSUCH HUP; echo "status $?"; trap -p HUP',
    'f() { trap "echo in-f" RETURN; echo body; }; f; echo after',
    'f() { trap "echo a" RETURN; trap "echo b" RETURN; }; f; echo after',
    "printf 'echo in-file\\n' > sourced.sh; trap 'echo r' RETURN; . ./sourced.sh; echo after",
]


@pytest.mark.parametrize("traced", [False, True], ids=["untraced", "traced"])
@pytest.mark.parametrize("block", TRAP_IDIOMS)
def test_a_blocks_traps_read_and_fire_as_in_bash_c(shell: Shell, tmp_path: Path, block: str, traced: bool) -> None:
    """Director keeps its EXIT capture armed behind a `trap` function (and a traced block's command marks in
    a DEBUG trap); a block that shows, saves and restores its traps, or sets a RETURN trap, sees and gets
    what `bash -c` gives it, traced or not. Plain bash decides."""
    plain = subprocess.run(
        ["bash", "-c", block], env=BASE_ENV, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    r = shell.run(block, shell.initial_state(), trace=traced)
    where = re.compile(r"^[^:\n]*: line [0-9]+: ", re.M)  # where bash says an error was: not compared
    assert (r.exit_code, where.sub("", r.output)) == (plain.returncode, where.sub("", plain.stdout)), block


KILL_SELF_IDIOMS = [
    "echo a; kill $$; echo b",  # what follows never runs
    'die() { echo "fatal: $*" >&2; kill -s TERM $$; exit 1; }; echo start; die oops; echo after',
    'x=$(echo inner; kill $$); echo "after [$x]"',  # from a command substitution: the whole block
    'trap "echo bye" EXIT; echo a; kill $$; echo b',
    'trap "echo got-usr1" USR1; kill -USR1 $$; echo b',
    "kill -0 $$ && echo alive",
]


@pytest.mark.parametrize("block", KILL_SELF_IDIOMS)
def test_a_block_that_signals_dollar_dollar_signals_itself_as_a_script_does(shell: Shell, block: str) -> None:
    """`$$` is the session's bash in every block; `kill $$` in a block ends (or signals) the block, as it
    ends a `bash -c` script, and the session goes on. Plain bash decides; a signal's death is 128 + N."""
    plain = subprocess.run(
        ["bash", "-c", block], env=BASE_ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    status = 128 - plain.returncode if plain.returncode < 0 else plain.returncode
    r = shell.run(block, shell.initial_state())
    assert (r.exit_code, r.output) == (status, plain.stdout), block
    assert run_all(shell, "echo next")[0].output == "next\n"


def test_a_blocks_own_kill_or_trap_function_flows_and_directors_never_does(shell: Shell) -> None:
    """Director's `trap` and `kill` wrappers are never session state; a block's own function of either name
    replaces the wrapper and flows to later blocks like any function."""
    first, second, third = run_all(
        shell,
        "echo plain",
        'kill() { echo "would kill $*"; }; trap() { echo "would trap $*"; }',
        "kill 1234; trap 'echo x' EXIT; echo done",
    )
    assert "kill" not in first.state.functions and "trap" not in first.state.functions
    assert third.output == "would kill 1234\nwould trap echo x EXIT\ndone\n"
    assert "would kill" in second.state.functions and "__director_" not in second.state.functions


def test_a_blocks_exit_handler_that_signals_its_group_ends_the_block_not_the_session(shell: Shell) -> None:
    """`trap 'kill -- -$$' EXIT` (end everything the script started) ends the block's own process group."""
    r = shell.run("sleep 300 & echo \"started $!\"; trap 'kill -- -$$' EXIT", shell.initial_state())
    assert r.output.startswith("started ")
    sleeper = int(r.output.split()[1])
    deadline = time.monotonic() + 30
    while alive(sleeper) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(sleeper)  # as from `bash -c`: the script's group, its background job with it
    assert shell.server_pid is not None and run_all(shell, "echo next")[0].output == "next\n"


def test_a_blocks_own_xtrace_shows_its_kill_and_trap_calls_not_the_wrappers_inside(shell: Shell) -> None:
    """Under the block's own `set -x`, a `kill` or `trap` call is one trace line, as from `bash -c`."""
    block = "set -x; kill -0 $$; trap -p; trap 'echo bye' EXIT; echo done"
    plain = subprocess.run(
        ["bash", "-c", block], env=BASE_ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    r = shell.run(block, shell.initial_state())

    def upto_done(out: str) -> str:  # the pids differ, and so does the depth bash marks (`++`: an eval)
        return re.sub(r"^\++ ", "+ ", re.sub(r"[0-9]+", "N", out.partition("\ndone\n")[0] + "\n"), flags=re.M)

    assert upto_done(r.output) == upto_done(plain.stdout)
    # what `trap -p` prints depends on the signals this test was started with ignored (from a script's `&`,
    # SIGINT and SIGQUIT): only the trace lines are the same everywhere
    traced = "".join(ln for ln in upto_done(r.output).splitlines(keepends=True) if ln.startswith("+ "))
    assert traced == "+ kill -N N\n+ trap -p\n+ trap 'echo bye' EXIT\n+ echo done\n"


def test_a_blocks_umask_holds_for_the_files_later_blocks_make_as_in_one_script(shell: Shell, tmp_path: Path) -> None:
    """`umask 077` in one block holds for the next ones, as in one bash script (plain bash decides)."""
    blocks = ["umask 077", "echo 1 > made-later; stat -c %a made-later", "umask 002; echo again", "umask"]
    (tmp_path / "plain").mkdir()
    plain = subprocess.run(
        ["bash", "-c", "\n".join(blocks)], cwd=tmp_path / "plain", env=BASE_ENV, capture_output=True, text=True
    )
    results = run_all(shell, *blocks)
    assert "".join(r.output for r in results) == plain.stdout == "600\nagain\n0002\n"
    assert [r.state.umask for r in results] == ["0077", "0077", "0002", "0002"]


def test_a_blocks_directory_stack_holds_for_later_blocks_as_in_one_script(shell: Shell, tmp_path: Path) -> None:
    """`pushd` in one block, `popd` in a later one, as in one bash script (plain bash decides): the stack
    below the working directory flows, paths with spaces and all, and emptying it flows too."""
    for d in ("a dir", "b", "c"):
        (tmp_path / d).mkdir()
    blocks = [
        'pushd "a dir" >/dev/null; pushd ../b >/dev/null',
        "dirs -l -p | sed 's|.*/||'",
        "cd ../c; popd >/dev/null; pwd | sed 's|.*/||'",
        "popd >/dev/null; pwd | sed 's|.*/||'; popd; echo \"status $?\"",
        "dirs -l -p | sed 's|.*/||'",
    ]
    plain = subprocess.run(
        ["bash", "-c", "\n".join(blocks)], cwd=tmp_path, env=BASE_ENV, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    results = run_all(shell, *blocks)
    where = re.compile(r"^[^:\n]*: line [0-9]+: ", re.M)  # where bash says an error was: not compared
    assert where.sub("", "".join(r.output for r in results)) == where.sub("", plain.stdout)
    assert plain.stdout.endswith("popd: directory stack empty\nstatus 1\n" + tmp_path.name + "\n")
    assert [r.state.dirstack for r in results] == [
        (str(tmp_path / "a dir"), str(tmp_path)), (str(tmp_path / "a dir"), str(tmp_path)),
        (str(tmp_path),), None, None,
    ]  # fmt: skip


def test_a_blocks_ulimit_holds_for_later_blocks_as_in_one_script(shell: Shell, tmp_path: Path) -> None:
    """`ulimit -S -n` in one block holds for the next ones and for what they start, as in one bash script
    (plain bash decides); a later block lowers it and the CPU time, and one that sets the first back hands on
    that limit no more."""
    own_soft, own_hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    cpu_soft, cpu_hard = resource.getrlimit(resource.RLIMIT_CPU)
    cpu = 3600 if cpu_soft == resource.RLIM_INFINITY or cpu_soft > 3600 else cpu_soft - 1
    blocks = [
        "ulimit -S -n 256",
        "ulimit -S -n; bash -c 'ulimit -S -n'; ulimit -H -n",
        f"ulimit -S -n 128; ulimit -S -t {cpu}",
        "ulimit -S -n; ulimit -S -t",
        f"ulimit -S -n {own_soft}; ulimit -S -n",
    ]
    plain = subprocess.run(
        ["bash", "-c", "\n".join(blocks)], cwd=tmp_path, env=BASE_ENV, capture_output=True, text=True
    )
    results = run_all(shell, *blocks)

    def shown(v: int) -> str:
        return "unlimited" if v == resource.RLIM_INFINITY else str(v)

    said = "".join(r.output for r in results)
    assert said == plain.stdout == f"256\n256\n{shown(own_hard)}\n128\n{cpu}\n{own_soft}\n"

    n, t = f"256:{shown(own_hard)}", f"{cpu}:{shown(cpu_hard)}"
    assert [r.state.limits for r in results] == [
        {"n": n}, {"n": n}, {"n": f"128:{shown(own_hard)}", "t": t}, {"n": f"128:{shown(own_hard)}", "t": t},
        {"t": t},
    ]  # fmt: skip


def test_a_session_whose_blocks_never_set_a_umask_hands_none_on(shell: Shell) -> None:
    """The umask Director runs with is not the session's (as an inherited variable is not): a section that
    did not change it hands none on, and a later run under another umask keeps its own."""
    own = next(ln.split()[1] for ln in Path("/proc/self/status").read_text().splitlines() if ln.startswith("Umask:"))
    [r] = run_all(shell, "X=1; umask")
    assert r.output == f"{own}\n" and r.state.umask == ""

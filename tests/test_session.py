"""The session's pure parts: `declare -p` parsing, the state file, the prelude, SessionState data."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from director.exec import ulimits
from director.exec.secrets import is_secret_name
from director.exec.session import (
    INHERITED,
    STATE_END,
    SessionState,
    parse_declare_p,
    parse_state_file,
    prelude,
    quote,
)


def _state_file(
    cwd: str, declared: str, functions: str = "", fnames: str = "", end: bytes = STATE_END, umask: str = "0022"
) -> bytes:
    """A state file as the EXIT trap writes it: rc, cwd, declare -p, declare -f, declare -F, umask, the soft and
    the hard limits (none here), END."""
    parts = [b"0", cwd.encode(), declared.encode(), functions.encode(), fnames.encode(), f"{umask}\n".encode()]
    parts += [b"", b"", end]
    parts.append(b"")
    return b"\0".join(parts)


# ------------------------------------------------------------------------------------------ declare -p


def test_declare_p_scalars_in_every_quoting_bash_uses() -> None:
    text = (
        'declare -- PLAIN="a b"\n'
        'declare -x EXP="q\\"d\\$x"\n'
        "declare -- ANSI=$'tab\\there\\nnl\\x41\\u00e9\\101'\n"
        'declare -i N="3"\n'
        "declare -- UNSET\n"
        "declare -a ARR=([0]=\"x\" [1]=$'y\\n')\n"
        "not a declare line\n"
        'declare -A MAP=([k]="v" )\n'
    )
    got = [(name, flags, value) for name, flags, value, _ in parse_declare_p(text)]
    assert got == [
        ("PLAIN", "", "a b"),
        ("EXP", "x", 'q"d$x'),
        ("ANSI", "", "tab\there\nnlAéA"),
        ("N", "i", "3"),
        ("UNSET", "", None),
        ("ARR", "a", None),
        ("MAP", "A", None),
    ]
    statements = {name: stmt for name, _, _, stmt in parse_declare_p(text)}
    assert statements["ARR"] == "declare -a ARR=([0]=\"x\" [1]=$'y\\n')"  # arrays flow as their statement


def test_declare_p_keeps_bytes_that_are_not_utf8() -> None:
    [(name, _, value, _)] = list(parse_declare_p("declare -- B=$'\\377ok'\n"))
    assert name == "B" and value is not None
    assert value.encode("utf-8", "surrogateescape") == b"\xffok"


# ------------------------------------------------------------------------------------------ state file


def test_state_file_keeps_what_blocks_set_and_drops_bash_and_inherited_names() -> None:
    declared = (
        'declare -x HOME="/home/op"\n'  # inherited, unchanged: not session state
        'declare -x EDITOR="nano"\n'  # inherited, changed: flows
        'declare -- BASHPID="12"\n'  # bash's own
        'declare -- __director_rc="0"\n'  # Director's own
        "declare -- IFS=$' \\t\\n'\n"  # bash's default
        'declare -x PATH="/opt/director/bin:/usr/bin:/extra"\n'  # Director's entry is not the session's
        'declare -ir RO="7"\n'
        'declare -a LIST=([0]="a")\n'
        'declare -- A="1"\n'
    )
    raw = _state_file("/w", declared, "f () \n{ \n    :\n}\n", "declare -f f\ndeclare -fx g\n")
    state = parse_state_file(
        raw,
        base_env={"HOME": "/home/op", "EDITOR": "vi", "PATH": "/usr/bin"},
        path_prepend=("/opt/director/bin",),
    )
    assert state is not None
    assert state.cwd == "/w"
    assert state.variables == {"EDITOR": "nano", "PATH": "/usr/bin:/extra", "RO": "7", "A": "1"}
    assert state.exported == {"EDITOR", "PATH"}
    assert state.attributes == {"RO": "ir"}
    assert state.arrays == {"LIST": 'declare -a LIST=([0]="a")'}
    assert state.functions.endswith("export -f g\n")
    assert state.umask == "0022"
    for captured, carried in (("0022", ""), ("0077", "0077")):  # Director's own umask is not the session's
        raw = _state_file("/w", "", umask=captured)
        again = parse_state_file(raw, base_env={}, path_prepend=(), inherited_umask="0022")
        assert again is not None and again.umask == carried


def test_a_variable_the_plan_assigns_is_session_state_even_at_the_inherited_value() -> None:
    """`ENV=dev director apply` on a §0 that says `export ENV="dev"`: ENV is the plan's (its ledger cells and
    its sections' fingerprints read it), not the operator's environment's."""
    raw = _state_file("/w", 'declare -x ENV="dev"\ndeclare -x HOME="/home/op"\n')
    base = {"ENV": "dev", "HOME": "/home/op"}
    kept = parse_state_file(raw, base_env=base, path_prepend=(), assigned={"ENV"})
    assert kept is not None and kept.variables == {"ENV": "dev"} and kept.exported == {"ENV"}
    plain = parse_state_file(raw, base_env=base, path_prepend=())
    assert plain is not None and plain.variables == {}


@pytest.mark.parametrize("raw", [b"", b'0\0/w\0declare -- A="1"\n', _state_file("/w", "", end=b"EN")])
def test_a_truncated_state_file_is_no_state(raw: bytes) -> None:
    assert parse_state_file(raw, base_env={}, path_prepend=()) is None


# --------------------------------------------------------------------------------------------- prelude


def test_quote() -> None:
    assert quote("plain/path-1.2") == "plain/path-1.2"
    assert quote("it's $HOME") == "'it'\"'\"'s $HOME'"  # shlex.quote's spelling
    assert quote("") == "''"


def test_prelude_restores_attributes_exports_arrays_functions_and_puts_path_first() -> None:
    state = SessionState(
        variables={"A": "x y", "N": "3", "PATH": "/usr/bin", "bad-name": "z"},
        exported=frozenset({"A", "PATH"}),
        functions="f () \n{ \n    :\n}\n",
        attributes={"N": "i"},
        arrays={"L": 'declare -a L=([0]="a")'},
    )
    text = prelude(state, state_file="/t/state", original_bash_env=None, path_prepend=("/d/bin",)).decode()
    lines = text.splitlines()
    assert "unset BASH_ENV" in lines and "__director_state_file=/t/state" in lines
    assert "declare -x A='x y'" in lines
    assert "declare -i N=3" in lines
    assert "declare -x PATH=/d/bin:/usr/bin" in lines
    assert 'declare -a L=([0]="a")' in lines
    assert "bad-name" not in text  # never a name bash would not take
    # The capture is armed before anything is restored (a broken restored function must not cost it).
    assert text.index("builtin trap __director_exit EXIT") < text.index("declare -x A=")
    assert "set -x" not in text
    traced = prelude(
        state, state_file="/t/s", original_bash_env="/etc/env", path_prepend=(), trace_fd=9
    ).decode()
    assert "export BASH_ENV=/etc/env" in traced and traced.rstrip().endswith("set -x")


def test_prelude_and_state_file_round_trip_through_bash(tmp_path: Path) -> None:
    """What the prelude restores is what the capture reads back (one real, non-pty bash)."""
    state = SessionState(
        variables={"A": "x 'y'\n\"z\"", "N": "3", "E": "é\x01"},
        exported=frozenset({"A"}),
        functions="greet () \n{ \n    echo hi\n}\n",
        cwd=str(tmp_path),
        attributes={"N": "i"},
        arrays={"L": 'declare -a L=([0]="a b" [1]="c")'},
    )
    state_file = tmp_path / "state"
    pre = tmp_path / "prelude.bash"
    pre.write_bytes(prelude(state, state_file=str(state_file), original_bash_env=None, path_prepend=()))
    env = {"PATH": "/usr/bin:/bin", "BASH_ENV": str(pre)}
    subprocess.run(["bash", "--noprofile", "--norc", "-c", "B=new; cd /"], env=env, check=True, cwd=tmp_path)
    back = parse_state_file(state_file.read_bytes(), base_env={"PATH": "/usr/bin:/bin"}, path_prepend=())
    assert back is not None
    assert back.variables == {**state.variables, "B": "new", "OLDPWD": str(tmp_path)}
    assert back.exported == {"A", "OLDPWD"} and back.attributes == state.attributes  # bash exports OLDPWD
    assert back.arrays == state.arrays
    assert "greet ()" in back.functions
    assert back.cwd == "/"


# --------------------------------------------------------------------------------------- SessionState


def test_session_state_json_round_trip_persistable_and_secret_values() -> None:
    state = SessionState(
        variables={"API_TOKEN": "s3cret-value", "A": "1", "EMPTY_SECRET": ""},
        exported=frozenset({"API_TOKEN", "A"}),
        attributes={"API_TOKEN": "r"},
        arrays={"DB_PASSWORD": "declare -a DB_PASSWORD=()"},
    )
    assert SessionState.from_json(state.to_json()) == state
    kept = state.persistable(is_secret_name)
    assert kept.variables == {"A": "1"} and kept.exported == {"A"}
    assert kept.attributes == {} and kept.arrays == {}
    assert state.secret_values(is_secret_name) == ["s3cret-value"]


def test_a_sessions_directory_stack_round_trips_and_a_journals_junk_stack_is_no_change() -> None:
    state = SessionState(variables={"A": "1"}, dirstack=("/srv/app", "/srv"))
    assert SessionState.from_json(state.to_json()) == state
    assert state.persistable(is_secret_name).dirstack == ("/srv/app", "/srv")
    assert "dirstack" not in SessionState().to_json()  # a journal written before stacks were carried reads the same
    assert SessionState.from_json({"dirstack": []}).dirstack == ()  # a section's change: it emptied the stack
    for junk in ("/srv", ["/ok", 3], {"a": "/b"}, ["/a\0b"]):
        assert SessionState.from_json({"dirstack": junk}).dirstack is None
    # `pushd -n dir` keeps `dir` as written: a relative entry, even an empty one, is bash's and flows too
    odd = SessionState(dirstack=("build", "", "/srv/a b; rm -rf ~"))
    assert SessionState.from_json(odd.to_json()) == odd
    restored = prelude(odd, state_file="/s", original_bash_env=None, path_prepend=(), define_capture=False)
    script = restored.decode() + '\ndeclare -p DIRSTACK | tr -d "\\n"'
    out = subprocess.run(["bash", "-c", script], cwd="/", capture_output=True, text=True).stdout
    assert out == 'declare -a DIRSTACK=([0]="/" [1]="build" [2]="" [3]="/srv/a b; rm -rf ~")', out


def test_the_capture_reads_the_directory_stack_below_its_top() -> None:
    # bash's whole list shows the dynamic DIRSTACK empty; the capture then names it, and that line says it
    declared = 'declare -a DIRSTACK=()\ndeclare -a DIRSTACK=([0]="/w" [1]="/srv/a b" [2]="/w")\n'
    state = parse_state_file(_state_file("/w", declared), base_env={}, path_prepend=())
    assert state is not None and state.dirstack == ("/srv/a b", "/w") and "DIRSTACK" not in state.arrays
    alone = parse_state_file(_state_file("/w", 'declare -a DIRSTACK=([0]="/w")\n'), base_env={}, path_prepend=())
    assert alone is not None and alone.dirstack is None


def test_a_sessions_umask_round_trips_and_a_journals_junk_umask_is_never_bash() -> None:
    state = SessionState(variables={"A": "1"}, umask="0077")
    assert SessionState.from_json(state.to_json()) == state
    assert state.persistable(is_secret_name).umask == "0077"
    assert "umask" not in SessionState().to_json()  # a journal written before umasks were carried reads the same
    for junk in ("0077; rm -rf ~", "999", "$(id)", "", 77):
        assert SessionState.from_json({"umask": junk}).umask == ("" if junk != 77 else "77")


def test_a_sessions_limits_round_trip_and_a_journals_junk_limit_is_never_bash() -> None:
    state = SessionState(variables={"A": "1"}, limits={"n": "256:4096", "c": "0:unlimited"})
    assert SessionState.from_json(state.to_json()) == state
    assert state.persistable(is_secret_name).limits == state.limits
    assert "limits" not in SessionState().to_json()  # a journal written before limits were carried reads the same
    junk = {"n": "256; rm -rf ~", "c": "$(id):1", "p": "8:8", "z": "1:1", "s": 8192, "v": "unlimited"}
    assert SessionState.from_json({"limits": junk}).limits == {}
    assert SessionState.from_json({"limits": "n=1"}).limits == {}
    kw = {"state_file": "/s", "original_bash_env": None, "path_prepend": ()}
    assert prelude(SessionState.from_json({"limits": junk}), **kw) == prelude(SessionState(), **kw)  # type: ignore[arg-type]
    assert b"builtin ulimit -S -n 256 2>/dev/null; builtin ulimit -H -n 4096" in prelude(state, **kw)  # type: ignore[arg-type]


def test_the_limits_bash_lists_unchanged_are_not_the_sessions_and_a_change_is() -> None:
    """What `ulimit -a` prints for Director's own limits is no change (as an inherited variable is none): bash
    decides, through `inherited`'s units; a block's `ulimit -S -n` and `ulimit -c` are."""
    script = "ulimit -a -S; printf '\\0'; ulimit -a -H; printf '\\0'; ulimit -S -n 64; ulimit -c 0; ulimit -a -S; " \
             "printf '\\0'; ulimit -a -H"
    soft, hard, soft2, hard2 = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True
                                              ).stdout.split("\0")  # fmt: skip
    base = ulimits.inherited()
    assert ulimits.parse(soft, hard, base) == {}
    assert ulimits.parse(soft2, hard2, base) == {"c": "0:0", "n": f"64:{base['n'].split(':')[1]}"}
    listed = ulimits.parse(soft2, hard2, {})  # against nothing: every limit bash lists that `inherited` knows
    assert set(listed) == set(base) and listed["c"] == "0:0"


def test_a_sections_change_says_when_it_set_the_umask_or_a_limit_back_to_directors_own() -> None:
    """A section that set the umask or a limit back to the one Director runs with changed the session: when
    it is in sync later, replaying its change gives Director's own again, not the earlier section's."""
    from director.run.session import apply_delta, delta

    set_by_1 = SessionState(umask="0077", limits={"n": "256:256", "c": "0:0"})
    back_in_2 = SessionState(limits={"c": "0:0"})  # umask and -n as Director runs with
    change = delta(set_by_1, back_in_2)
    assert change.umask == INHERITED and change.limits == {"n": INHERITED}
    assert SessionState.from_json(change.to_json()) == change  # journaled as it is
    assert apply_delta(set_by_1, change) == back_in_2
    assert delta(back_in_2, back_in_2) == SessionState()  # unchanged: nothing
    kw = {"state_file": "/s", "original_bash_env": None, "path_prepend": ()}
    assert prelude(apply_delta(set_by_1, change), **kw) == prelude(back_in_2, **kw)  # type: ignore[arg-type]

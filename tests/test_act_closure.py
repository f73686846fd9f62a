"""A signed approval covers the act's closure, not only its text (issue 33 items 1 and 2).

Each case: §2 (🔴) is approved with a real `ssh-keygen` signature by a key in a real allowed-signers file;
then something the act can read is changed -- never §2's text -- and the next apply must not run the act
on that approval: it asks again (exit 4) and names what changed. Then the journal is edited as an
attacker with write access to it would (the real `sqlite3` CLI): a function appended to a restored
session never runs under a signature.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.approvalplans import SIGNERS, cli, key, plan_text, signer_line

pytestmark = pytest.mark.slow  # end to end through the real CLI


@pytest.fixture(scope="module")
def alice(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return key(tmp_path_factory.mktemp("keys"), "alice")


def _tool(d: Path, name: str, says: str) -> None:
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_text(f"#!/bin/sh\necho {says}\n")
    (d / name).chmod(0o755)


def _tools(out: Path) -> None:
    _tool(out / "good", "tool", "good")
    _tool(out / "evil", "tool", "evil")


def _rewrite(name: str, text: str) -> Callable[[Path], None]:
    def tamper(out: Path) -> None:
        (out / name).write_text(text)

    return tamper


@dataclass
class Case:
    """A plan, then what is changed after the approval (plan text, files, the operator's environment)."""

    var0: str = ""
    setup: str = ":"
    act: str = ":"
    fence: str = ""
    changed: str = ""  # what the re-ask names
    edit: tuple[str, str] | None = None  # (old, new) in the plan, outside §2's block
    env: dict[str, str] = field(default_factory=dict)  # the operator's environment before
    env_after: dict[str, str] = field(default_factory=dict)  # ... and after
    prepare: Callable[[Path], None] | None = None  # files before the first apply (given $OUT)
    tamper: Callable[[Path], None] | None = None  # files changed after the approval (given $OUT)


CASES: dict[str, Case] = {
    "function in §0": Case(
        var0='deploy() { echo "deploying safe"; }', act="deploy", changed="function deploy",
        edit=('echo "deploying safe"', 'echo "deploying evil"'),
    ),
    "function in an earlier block": Case(
        setup='deploy() { echo "deploying safe"; }', act="deploy", changed="function deploy",
        edit=('echo "deploying safe"', 'echo "deploying evil"'),
    ),
    "function shadowing echo": Case(
        var0='echo() { builtin echo "$@"; }', act="echo hello", changed="function echo",
        edit=('builtin echo "$@"', "builtin echo EVIL"),
    ),
    "function shadowing printf": Case(
        var0='printf() { builtin printf "$@"; }', act="printf '%s\\n' hello", changed="function printf",
        edit=('builtin printf "$@"', "builtin printf EVIL"),
    ),
    "exported function": Case(
        var0="deploy() { echo safe; }; export -f deploy", act="bash -c deploy", changed="function deploy",
        edit=("echo safe;", "echo evil;"),
    ),
    "indexed array": Case(
        var0="TARGETS=(alpha beta)", act='for t in "${TARGETS[@]}"; do echo "$t"; done',
        changed="array TARGETS", edit=("TARGETS=(alpha beta)", "TARGETS=(alpha gamma)"),
    ),
    "associative array": Case(
        var0="declare -A M=([k]=alpha)", act='echo "${M[k]}"', changed="array M",
        edit=("[k]=alpha", "[k]=gamma"),
    ),
    "secret-named variable": Case(
        var0="DIR_PASSWORD=victim", act='mkdir -p "$OUT/$DIR_PASSWORD"', changed="variable DIR_PASSWORD",
        edit=("DIR_PASSWORD=victim", "DIR_PASSWORD=keepme"),
    ),
    "secret as the command": Case(
        var0="RUN_SECRET=/bin/true", act='"$RUN_SECRET" && echo yes', changed="variable RUN_SECRET",
        edit=("RUN_SECRET=/bin/true", "RUN_SECRET=/bin/echo"),
    ),
    "read by sh -c": Case(
        var0="export MODE2=alpha", act="sh -c 'echo \"mode $MODE2\"'", changed="variable MODE2",
        edit=("MODE2=alpha", "MODE2=gamma"),
    ),
    "read by printenv": Case(
        var0="export FLAVOR=alpha", act="printenv FLAVOR", changed="variable FLAVOR",
        edit=("FLAVOR=alpha", "FLAVOR=gamma"),
    ),
    "indirect ${!REF}": Case(
        var0="TARGET_A=alpha; REF=TARGET_A", act='echo "${!REF}"', changed="variable TARGET_A",
        edit=("TARGET_A=alpha", "TARGET_A=gamma"),
    ),
    "declare -n": Case(
        var0="TARGET_A=alpha; declare -n R=TARGET_A", act='echo "$R"', changed="variable TARGET_A",
        edit=("TARGET_A=alpha", "TARGET_A=gamma"),
    ),
    "PATH set in §0": Case(
        var0='export PATH="$OUT/good:$PATH"', act="tool", changed="variable PATH",
        edit=('"$OUT/good:$PATH"', '"$OUT/evil:$PATH"'),
        prepare=_tools,
    ),
    "the operator's PATH": Case(
        act="tool", changed="environment PATH",
        prepare=_tools,
        env={"PATH": "{out}/good:{PATH}"}, env_after={"PATH": "{out}/evil:{PATH}"},
    ),
    "a script an earlier block wrote": Case(
        setup="printf 'echo v1\\n' > \"$OUT/deploy.sh\"", act='bash "$OUT/deploy.sh"', changed="reads ",
        tamper=_rewrite("deploy.sh", "echo evil\n"),
    ),
    "a script run by path": Case(
        setup="printf '#!/bin/sh\\necho v1\\n' > \"$OUT/run.sh\"; chmod +x \"$OUT/run.sh\"", act='"$OUT/run.sh"',
        changed="reads ", tamper=_rewrite("run.sh", "#!/bin/sh\necho evil\n"),
    ),
    "a sourced file": Case(
        setup="printf 'f() { echo v1; }\\n' > \"$OUT/lib.sh\"", act='source "$OUT/lib.sh"; f', changed="reads ",
        tamper=_rewrite("lib.sh", "f() { echo evil; }\n"),
    ),
    "cd in an earlier block": Case(
        setup='mkdir -p "$OUT/a" "$OUT/b"; cd "$OUT/a"', act="touch ./here", changed="cwd",
        edit=('cd "$OUT/a"', 'cd "$OUT/b"'),
    ),
    "cwd= on the fence": Case(
        setup="mkdir -p dir-a dir-b", act="touch ./here", fence=" {cwd=dir-a}", changed="cwd",
        edit=("```bash {cwd=dir-a}", "```bash {cwd=dir-b}"),
    ),
    "an inherited variable read by sh -c": Case(
        act="sh -c 'echo \"mode $MODE\"'", changed="environment MODE", env={"MODE": "alpha"},
        env_after={"MODE": "gamma"},
    ),
}


def _env(given: dict[str, str], out: Path) -> dict[str, str]:
    import os

    return {k: v.format(out=out, PATH=os.environ["PATH"]) for k, v in given.items()}


def _setup(tmp_path: Path, out: Path, alice: Path, case: Case) -> Path:
    plan = tmp_path / "closure.md"
    plan.write_text(plan_text(case.var0, case.setup, case.act, case.fence))
    (tmp_path / SIGNERS).write_text(signer_line("alice@example.com", alice) + "\n")
    if case.prepare is not None:
        case.prepare(out)
    return plan


@pytest.mark.parametrize("name", list(CASES))
def test_a_change_the_act_can_read_asks_again_and_names_it(
    tmp_path: Path, out: Path, alice: Path, name: str
) -> None:
    case = CASES[name]
    plan = _setup(tmp_path, out, alice, case)
    env = _env(case.env, out)
    r = cli("apply", str(plan), cwd=tmp_path, out=out, env=env)
    assert r.returncode == 4, r.stdout + r.stderr
    a = cli("approve", str(plan), "2", "--yes", "--sign-with", str(alice), cwd=tmp_path, out=out)
    assert a.returncode == 0 and "signed by alice@example.com" in a.stdout, a.stdout + a.stderr
    if case.edit is not None:
        old, new = case.edit
        text = plan.read_text()
        assert text.count(old) == 1
        plan.write_text(text.replace(old, new))
    if case.tamper is not None:
        case.tamper(out)
    r = cli("apply", str(plan), cwd=tmp_path, out=out, env=_env(case.env_after, out) or env)
    assert r.returncode == 4, r.stdout + r.stderr
    assert not (out / "acted").exists(), "the act ran on an approval of other content"
    assert "was for other content" in r.stdout and case.changed in r.stdout, r.stdout
    assert "signed by alice" not in r.stdout


def test_an_approval_of_everything_the_act_reads_releases_it_unchanged(
    tmp_path: Path, out: Path, alice: Path
) -> None:
    """All the above at once, unchanged: the approval `director approve` made is the apply's content."""
    _tool(out / "good", "tool", "good")
    case = Case(
        var0="\n".join(c.var0 for c in CASES.values() if c.var0 and "PATH" not in c.var0)
        + '\nexport PATH="$OUT/good:$PATH"',
        setup="; ".join(c.setup for c in CASES.values() if c.setup != ":" and "dir-a" not in c.setup),
        act="\n".join(c.act for c in CASES.values() if c.act not in (":", "touch ./here")),
    )
    plan = _setup(tmp_path, out, alice, case)
    env = {"MODE": "alpha", "API_TOKEN": "tok-" + "qrstuvwxyz" * 4}
    r = cli("apply", str(plan), cwd=tmp_path, out=out, env=env)
    assert r.returncode == 4, r.stdout + r.stderr
    a = cli("approve", str(plan), "2", "--yes", "--sign-with", str(alice), cwd=tmp_path, out=out)
    assert a.returncode == 0, a.stdout + a.stderr
    r = cli("apply", str(plan), cwd=tmp_path, out=out, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "signed by alice@example.com" in r.stdout and (out / "acted").exists()


def test_a_session_row_edited_in_the_journal_never_runs_under_a_signature(
    tmp_path: Path, out: Path, alice: Path
) -> None:
    """Appending `echo () { builtin echo EVIL; }` to §1's journaled session (the real sqlite3 CLI): the
    signed §2 never runs with it -- the restored session differs from the approved closure."""
    plan = _setup(tmp_path, out, alice, Case(act='echo "deploying"'))
    assert cli("apply", str(plan), cwd=tmp_path, out=out).returncode == 4
    a = cli("approve", str(plan), "2", "--yes", "--sign-with", str(alice), cwd=tmp_path, out=out)
    assert a.returncode == 0, a.stdout + a.stderr
    db = tmp_path / ".director" / plan.name / "journal.sqlite3"
    sqlite = shutil.which("sqlite3")
    assert sqlite is not None, "the sqlite3 CLI"
    evil = "echo () \n{ \n    builtin echo EVIL\n}\n"
    rows = sqlite3.connect(db).execute("SELECT id FROM steps WHERE section_key = '1'").fetchall()
    assert rows
    for (rid,) in rows:
        sql = (
            "UPDATE steps SET session_json = json_set(session_json, '$.functions', "
            f"json_extract(session_json, '$.functions') || '{evil}') WHERE id = {rid} AND session_json IS NOT NULL;"
        )
        subprocess.run([sqlite, str(db), sql], check=True)
    r = cli("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode != 0, r.stdout
    assert not (out / "acted").exists(), r.stdout
    assert "signed by alice" not in r.stdout, r.stdout
    assert "function echo" in r.stdout or "steps" in (r.stdout + r.stderr), r.stdout + r.stderr


def test_the_closure_names_the_session_limits_and_stack_an_act_runs_under() -> None:
    """The gate's full view says which limits (`ulimit`) and directory stack the act inherits, as lines."""
    from director.run.closure import describe

    lines = describe({"session": {"limits": {"n": "512:4096", "t": "3600:unlimited"}, "dirstack": ["/srv/a", "/srv"],
                                  "umask": "0077"}})  # fmt: skip
    assert "session limits: -n 512:4096 -t 3600:unlimited" in lines
    assert "session dirstack: /srv/a /srv" in lines and "session umask: 0077" in lines

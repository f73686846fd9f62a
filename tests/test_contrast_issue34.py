"""Issue 34: the readings that broke on unseen plans, each through the real CLI on a plan of its own.

Every test here failed on the code before issue 34 (`base-stop32`); each names the class of the issue it
covers. The worlds are built by the test and proved under plain bash where a check's truth matters
(`tests/test_verify_mined.py` conventions); Director never sees which world it is in.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests import forkserver
from tests.test_verify_contrast import live_through
from tests.test_verify_mined import assert_broken, assert_held, build, run_block
from tests.verify_corpus.mined import Mined, m
from tests.verify_corpus.plans import HEADER, LIVE_STATE, check_row

pytestmark = pytest.mark.slow
ISSUE = "(issue 34)"


def director(tmp: Path, cmd: str, plan: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """The real CLI, non-interactive, plain, its state and workdir under `tmp`."""
    args = [cmd, str(plan), "--plain", "--state-dir", str(tmp / "state"), "--workdir", str(tmp), *extra]
    if cmd in ("apply", "teardown"):
        args.append("--non-interactive")
    env = {**os.environ, "CI": "1", "NO_COLOR": "1", "COLUMNS": "200"}
    return forkserver.run(
        [sys.executable, "-m", "director", *args],
        cwd=tmp, env=env, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def said(r: subprocess.CompletedProcess[str]) -> str:
    return f"exit {r.returncode}\n{r.stdout}\n{r.stderr}"


def plan_text(name: str, w: Path, body: str, rows: str = "thing holds", contract: str = "") -> str:
    """§0 (W, CTR), the sections `body`, Live State with check rows `rows` (one per line)."""
    head = HEADER.format(name=name, w=w, ctr=w.parent / "ctr", port="")
    if contract:
        head = head.replace("## 🤖 Director prompt", f"## Acceptance contract\n\n{contract}\n\n## 🤖 Director prompt")
    table = LIVE_STATE.replace("| {row} | holds    | —        | —      |\n", "")
    table += "".join(f"| {r} | holds | — | — |\n" for r in rows.split("\n"))
    return head + "\n" + textwrap.dedent(body) + "\n" + table


def truth(idiom: Mined, tmp: Path) -> None:
    """The check's truth under plain bash: held in `held`, not in `broken`."""
    w = tmp / "truth"
    for world, judge in (("held", assert_held), ("broken", assert_broken)):
        build(w, idiom.worlds()[world], None, f"{idiom.name}: {world}")  # type: ignore[index]
        r = run_block(idiom.block, tmp, w, None)
        judge(idiom, r, f"{world}: exit {r.returncode}, {r.stdout!r} {r.stderr!r}")


# --- 1. ✔ sections learn ----------------------------------------------------------------------------

PAGE_CHECK = """\
if grep -q "Willkommen" "$W/site/index.html" 2>/dev/null; then
  echo "Startseite wird ausgeliefert"
else
  echo "Startseite fehlt"
fi"""


def test_acceptance_section_learns_in_the_world_before_the_first_act(tmp_path: Path) -> None:
    """A ✔ section whose check speaks only through messages (code that appears nowhere else): the first apply
    observes it before its first act (nothing exists yet), so after the acts its check took another path
    and is learned -- exit 0, not "never seen in a known world" (exit 10). `check` leaves ✔ sections alone;
    `check --acceptance` runs them and reports a break only the acceptance check sees."""
    w = tmp_path / "w"
    w.mkdir()
    body = f"""\
    ## 1. Site  🟢

    ```bash
    mkdir -p "$W/site" && echo '<h1>Willkommen</h1>' > "$W/site/index.html"
    ```
    ```bash
    # ✔ site files written
    [ -s "$W/site/index.html" ] || {{ echo "no page"; exit 1; }}
    ```

    ## 2. Acceptance  ✔

    ```bash
    # ✔ start page served
    {textwrap.indent(PAGE_CHECK, "    ").lstrip()}
    ```
    """
    plan = tmp_path / "plan.md"
    plan.write_text(plan_text("acceptance", w, body, rows="start page served"), encoding="utf-8")
    r = director(tmp_path, "apply", plan)
    assert r.returncode == 0, said(r)
    assert check_row(plan.read_text(), "start page served").startswith("✅"), plan.read_text()
    r = director(tmp_path, "apply", plan)
    assert r.returncode == 0, said(r)
    r = director(tmp_path, "check", plan, "--acceptance")
    assert r.returncode == 0, said(r)
    (w / "site" / "index.html").write_text("<h1>Wartung</h1>\n")  # only the acceptance check sees it
    r = director(tmp_path, "check", plan)
    assert r.returncode == 0, said(r)  # ✔ sections are not run by a plain check (documented)
    r = director(tmp_path, "check", plan, "--acceptance")
    assert r.returncode == 2, said(r)
    assert "drift: §2 Acceptance: acceptance checks" in r.stdout, said(r)
    assert "--acceptance" in director(tmp_path, "check", Path("--help")).stdout


def test_acceptance_observation_skips_a_check_that_writes(tmp_path: Path) -> None:
    """Before the first act only checks that write nothing run: one that creates a file (here the marker
    its `>` writes) is not observed there, so the world the act meets is the one the plan left."""
    w = tmp_path / "w"
    w.mkdir()
    body = """\
    ## 1. Data  🟢

    ```bash
    [ -e "$W/touched" ] && echo "pre-existing" > "$W/act-saw" || echo "clean" > "$W/act-saw"
    echo 1 > "$W/data"
    ```
    ```bash
    # ✔ data written
    [ -s "$W/data" ] || { echo "no data"; exit 1; }
    ```

    ## 2. Acceptance  ✔

    ```bash
    # ✔ data readable
    if [ -s "$W/data" ]; then echo "readable" > "$W/touched"; echo "data ok"; else echo "no data"; fi
    ```
    """
    plan = tmp_path / "plan.md"
    plan.write_text(plan_text("writes", w, body, rows="data readable"), encoding="utf-8")
    r = director(tmp_path, "apply", plan)
    assert r.returncode in (0, 10), said(r)
    assert (w / "act-saw").read_text().strip() == "clean"


# --- 2, 3. function status; a continued ternary with a substitution --------------------------------

FUNCTION_STATUS = (
    m(
        "t-pass-fail-return-1-or-exit",
        ISSUE,
        "exit",
        "symbols",
        r"""
        t() {
          if "${@:2}"; then echo "[PASS] $1"; return 0; fi
          echo "[FAIL] $1"; return 1
        }
        t "config present" test -f "$W/app.conf" || exit 1
        t "data dir" test -d "$W/data" || exit 1
        echo "all checks passed"
        """,
        r"""echo a=1 > "$W/app.conf"; mkdir -p "$W/data" """,
        r"""echo a=1 > "$W/app.conf" """,
        r"""echo a=1 > "$W/app.conf"; mkdir -p "$W/data" """,
        p="[PASS] data dir",
        f="[FAIL] data dir",
    ),
    m(
        "check-helper-if-else-return-1",
        ISSUE,
        "exit",
        "symbols",
        r"""
        check() {
          if [ -s "$W/$1" ]; then
            echo "✓ $1"
          else
            echo "✗ $1"
            return 1
          fi
        }
        check app.conf || exit 1
        check data.db || exit 1
        """,
        r"""echo a=1 > "$W/app.conf"; echo x > "$W/data.db" """,
        r"""echo a=1 > "$W/app.conf" """,
        r"""echo a=1 > "$W/app.conf"; echo x > "$W/data.db" """,
        p="✓ data.db",
        f="✗ data.db",
    ),
    m(
        "a-script-inside-not-sourced-guard",
        ISSUE,
        "exit",
        "symbols",
        r"""
        if ! (return 0 2>/dev/null); then
          verifica() { if [ -s "$W/$1" ]; then echo "  ✓ $1"; return 0; fi; echo "  ✗ $1"; return 1; }
          verifica app.pid
          verifica worker.pid
        fi
        """,
        r"""echo 1 > "$W/app.pid"; echo 2 > "$W/worker.pid" """,
        r"""echo 1 > "$W/app.pid" """,
        r"""echo 1 > "$W/app.pid"; echo 2 > "$W/worker.pid" """,
        p="✓ worker.pid",
        f="✗ worker.pid",
    ),
    m(
        "continued-ternary-with-substitution-in-the-pass-line",
        ISSUE,
        "exit",
        "en",
        r"""
        PY=python3
        "$PY" -c "import json" \
          && echo "has json $("$PY" -c 'import json; print(json.__name__)')" \
          || { echo "json missing"; exit 1; }
        "$PY" -c "import sys; sys.exit(0 if open(sys.argv[1]).read().strip() else 1)" "$W/data.json" \
          && echo "data $("$PY" -c 'import sys; print(open(sys.argv[1]).read().strip())' "$W/data.json")" \
          || { echo "data missing"; exit 1; }
        """,
        r"""echo "{}" > "$W/data.json" """,
        r""": > "$W/data.json" """,
        r"""echo "{}" > "$W/data.json" """,
        p="data {}",
        f="data missing",
    ),
)


@pytest.mark.parametrize("idiom", FUNCTION_STATUS, ids=[i.name for i in FUNCTION_STATUS])
def test_a_check_its_status_decides_holds_where_nothing_was_seen(idiom: Mined, tmp_path: Path) -> None:
    """A ✔-only plan (a check never seen around an act) in the world where it holds: its exit status says
    so, and the apply completes (exit 0, row ✅) -- it is not "exits 0 whatever it finds" (exit 10). In the
    broken world it fails (exit 3). Then the whole life of the same check. (Also a whole script under a
    not-sourced guard: its checks are found inside it.)"""
    truth(idiom, tmp_path)
    w = tmp_path / "w"
    body = f"## 1. Contract  ✔\n\n```bash\n# ✔ contract holds\n{idiom.block}\n```\n"
    plan = tmp_path / "plan.md"
    plan.write_text(plan_text(idiom.name, w, body, rows="contract holds"), encoding="utf-8")
    build(w, idiom.held, None, "held")
    r = director(tmp_path, "apply", plan)
    assert r.returncode == 0 and check_row(plan.read_text(), "contract holds").startswith("✅"), said(r)
    build(w, idiom.broken, None, "broken")
    r = director(tmp_path, "apply", plan)
    assert r.returncode == 3, said(r)
    problems = live_through(idiom, tmp_path / "life")
    assert not problems, "\n".join(problems)


# --- 4. labels passed to a function ------------------------------------------------------------------

CONTRACT = """\
1. **Zone löst auf** — der Name der Zone wird aufgelöst.
2. **Dienst antwortet** — der Dienst antwortet auf Anfragen."""


def test_labels_passed_to_a_function_feed_their_rows(tmp_path: Path) -> None:
    """`pruefe "1: Zone löst auf" …` where `pruefe` prints "  ✓ $was" (`local was=$1`): each call's label
    feeds its contract row -- lint finds no unfed row, apply writes ✅ for the label whose call printed its
    pass line and ❌ for the one whose call printed its failure line."""
    w = tmp_path / "w"
    w.mkdir()
    body = """\
    ## 1. Prüfung  ✔

    ```bash
    # ✔ Zone und Dienst
    pruefe() {
      local was=$1; shift
      if "$@" >/dev/null 2>&1; then
        echo "  ✓ $was"
      else
        echo "  ✗ $was"
        return 1
      fi
    }
    pruefe "1: Zone löst auf" test -f "$W/zone"
    pruefe "2: Dienst antwortet" test -f "$W/dienst"
    ```
    """
    plan = tmp_path / "plan.md"
    text = plan_text("labels", w, body, rows="Zone löst auf\nDienst antwortet", contract=CONTRACT)
    plan.write_text(text, encoding="utf-8")
    env = {**os.environ, "NO_COLOR": "1"}
    lint = forkserver.run([sys.executable, "-m", "director", "lint", str(plan)], capture_output=True,
                          text=True, env=env, timeout=120)  # fmt: skip
    assert "unfed-check-row" not in lint.stdout + lint.stderr, lint.stdout + lint.stderr
    (w / "zone").touch()
    (w / "dienst").touch()
    r = director(tmp_path, "apply", plan)
    assert r.returncode == 0, said(r)
    assert check_row(plan.read_text(), "Zone löst auf").startswith("✅"), plan.read_text()
    assert check_row(plan.read_text(), "Dienst antwortet").startswith("✅"), plan.read_text()
    (w / "dienst").unlink()
    r = director(tmp_path, "apply", plan)
    assert r.returncode == 3, said(r)
    assert check_row(plan.read_text(), "Zone löst auf").startswith("✅"), plan.read_text()
    assert check_row(plan.read_text(), "Dienst antwortet").startswith("❌"), plan.read_text()


# --- 5. templates ------------------------------------------------------------------------------------


def _template_plan(w: Path, heading_file: str, lang: str, template: str, exports: str) -> str:
    head = HEADER.format(name="template", w=w, ctr=w.parent / "ctr", port="")
    head = head.replace('mkdir -p "$CTR"', f'mkdir -p "$CTR"\n{exports}')
    verify = '```bash\n# ✔ settings written\n[ -s "$CONF" ] || { echo "no settings"; exit 1; }\n```\n'
    body = f"## 1. Settings — `{heading_file}`  🟡\n\n```{lang}\n{template}\n```\n{verify}"
    return head + "\n" + body + "\n" + LIVE_STATE.replace("| {row} | holds    | —        | —      |\n", "")


def test_a_template_heading_may_name_its_file_by_a_variable(tmp_path: Path) -> None:
    """``## 1. Settings — `${CONF}` `` where §0 says `export CONF="$W/etc/app.ini"`: the file is written
    there (before: refused at parse, exit 65)."""
    w = tmp_path / "w"
    (w / "etc").mkdir(parents=True)
    exports = 'export CONF="$W/etc/app.ini"\nexport PORT_NO=8088'
    plan = tmp_path / "plan.md"
    plan.write_text(_template_plan(w, "${CONF}", "ini", "port = 8000  ; = ${PORT_NO}", exports), encoding="utf-8")
    r = director(tmp_path, "apply", plan)
    assert r.returncode == 0, said(r)
    assert (w / "etc" / "app.ini").read_text() == "port = 8088  ; = ${PORT_NO}\n"


def test_unknown_language_value_is_the_whole_rest_of_the_line(tmp_path: Path) -> None:
    """In a language Director does not know (`pgbouncer`), a comma list is one value: the rule rewrites
    all of it (before: the value stopped at the first `,`, leaving the tail of the example)."""
    w = tmp_path / "w"
    w.mkdir()
    exports = 'export CONF="$W/pgbouncer.ini"\nexport TLS_CIPHERS="HIGH:!aNULL:!MD5"'
    template = "tls_ciphers = ECDHE-RSA-AES128-GCM-SHA256,ECDHE-RSA-AES256-GCM-SHA384  # = ${TLS_CIPHERS}"
    plan = tmp_path / "plan.md"
    plan.write_text(_template_plan(w, "${CONF}", "pgbouncer", template, exports), encoding="utf-8")
    r = director(tmp_path, "apply", plan)
    assert r.returncode == 0, said(r)
    code, _, comment = (w / "pgbouncer.ini").read_text().partition("#")
    assert code.rstrip() == "tls_ciphers = HIGH:!aNULL:!MD5", code  # the whole list replaced, no tail left
    assert comment == " = ${TLS_CIPHERS}\n"


def test_unknown_language_line_it_cannot_read_is_refused(tmp_path: Path) -> None:
    """Two keys on one line of an unknown language: where the first value ends cannot be told, so lint
    reports it and apply refuses before anything runs -- never a partial value."""
    w = tmp_path / "w"
    w.mkdir()
    exports = 'export CONF="$W/app.cfg"\nexport LEVEL=debug'
    template = "level = info; format = json  # level = ${LEVEL}"
    plan = tmp_path / "plan.md"
    plan.write_text(_template_plan(w, "${CONF}", "appcfg", template, exports), encoding="utf-8")
    env = {**os.environ, "NO_COLOR": "1"}
    lint = forkserver.run([sys.executable, "-m", "director", "lint", str(plan)], capture_output=True,
                          text=True, env=env, timeout=120)  # fmt: skip
    assert "template-no-value" in lint.stdout and "cannot tell" in lint.stdout, lint.stdout + lint.stderr
    r = director(tmp_path, "apply", plan)
    assert r.returncode == 65, said(r)
    assert not (w / "app.cfg").exists()


# --- 6. paths the same in both worlds ---------------------------------------------------------------

RICHER = (
    m(
        "awk-prints-the-verdict-only-when-bad",
        ISSUE,
        "message",
        "de",
        r"""
        echo "Protokoll wird geprüft"
        awk -F= '$1 == "errors" && $2 > 0 { print "Fehler im Protokoll: " $2 }' "$W/summary"
        echo "Prüfung beendet"
        """,
        r"""echo errors=0 > "$W/summary" """,
        r"""echo errors=3 > "$W/summary" """,
        r"""echo errors=0 > "$W/summary" """,
        p=None,
        f="Fehler im Protokoll: 3",
    ),
    m(
        "tar-fails-and-the-block-goes-on",
        ISSUE,
        "message",
        "en",
        r"""
        echo "checking the backup"
        tar -tzf "$W/backup.tgz" >/dev/null
        echo "backup checked"
        """,
        r"""mkdir -p "$W/d"; echo x > "$W/d/f"; tar -czf "$W/backup.tgz" -C "$W" d""",
        r"""echo garbage > "$W/backup.tgz" """,
        r"""mkdir -p "$W/d"; echo x > "$W/d/f"; tar -czf "$W/backup.tgz" -C "$W" d""",
        p="backup checked",
        f="backup checked",
    ),
    m(
        "a-missing-log-read-as-no-failures",
        ISSUE,
        "message",
        "en",
        r"""
        if grep -q "^FAIL" "$W/run.log"; then echo "failures in the last run"; else echo "no failures"; fi
        """,
        r"""echo "PASS a" > "$W/run.log" """,
        r""":""",
        r"""echo "PASS a" > "$W/run.log" """,
        p="no failures",
        f="no failures",
    ),
)


@pytest.mark.parametrize("idiom", RICHER, ids=[i.name for i in RICHER])
def test_worlds_told_apart_by_what_commands_did(idiom: Mined, tmp_path: Path) -> None:
    """A verdict printed by a tool (`awk`), a world that differs only in a failed command (`tar`'s status, a
    `grep` that reads a missing log): the whole life holds -- in particular `check` reports drift in the
    broken world, and a teardown of the present world acts."""
    problems = live_through(idiom, tmp_path)
    assert not problems, "\n".join(problems)

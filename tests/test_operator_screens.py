"""What an operator reads at 80×24 and 120×40 (issue 36, items 6 and 8), through the real CLI in a pseudo-
terminal read by a terminal emulator (pexpect + pyte): a 💥 panel whose commands start with a screenful of
comments still shows every destructive command, whole details, the diff of an approval asked again (paged
with `d`); a family's screen names its members without cutting them and without a 31-column gutter.

The worlds are real: a SQLite database the teardown would drop (read back with sqlite3 after the gate was
declined), the plan files, the journal.
"""

from __future__ import annotations

import re
import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.planmaker import CounterPlan, Step, director, write_plan
from tests.terminal import Term

pytestmark = pytest.mark.slow

SIZES = [(24, 80), (40, 120)]

# A teardown shaped like the seed's: a screenful of comments, then a look, then what destroys. The analyser
# calls three of its commands destructive (`DELETE FROM`, `DROP TABLE`, `rm -rf`); nothing in a comment says
# so to Director (the comments even name `delete` and `rm` in passing).
JOBS_PLAN = """\
# Jobs — a spool and its database

> Self-executing Markdown for Director's tests.

## 0. Variables

```bash
export ROOT="${COUNTER_OUT:-$PWD/out}/jobs"
export DB="$ROOT/jobs.sqlite3"
```

## 1. Spool and database  🟢

```bash
mkdir -p "$ROOT/spool"
sqlite3 "$DB" "CREATE TABLE IF NOT EXISTS jobs (id INTEGER PRIMARY KEY, state TEXT); INSERT INTO jobs (state) VALUES ('running');"
# → Live State: DB
```
```bash
# ✔ database made
[ -f "$DB" ] && echo "database made" || { echo "no database"; exit 1; }
```

## Live State

```yaml
status:        not-created
last_action:   —
last_verified: —
```

| key | value (filled on apply) |
|-----|-------------------------|
| DB  | `—` (the jobs database) |

| ✔ check       | expected     | observed | result |
|---------------|--------------|----------|--------|
| database made | the database | —        | —      |

## Teardown (observe-first, resumable)  💥

```bash
# 1 — best-effort cleanup of the running jobs: the listing is the human-visible OBSERVE; the delete
#     below reaps only rows still marked running, which is fine because the table goes right after.
#     That asymmetry was observed live: a job that finishes meanwhile is dropped with its table.
#     ⚠ the spool listing is documented but was not exercised by the dogfood — if it errors, run the
#     bare `ls` of the spool directory instead, and read what it says before you type anything.
#     Nothing here touches another plan's files: the rm below names this plan's directory only.
#     (A second paragraph of commentary, as long plans have, to fill the screen before any command.)
#     (And a third, for good measure: an operator at 80×24 must still see what destroys.)
ls "$ROOT/spool" 2>/dev/null | head -n 5 || true
sqlite3 "$DB" "DELETE FROM jobs WHERE state = 'running'" 2>/dev/null || true
# 2 — drop the table, then the directory (which also removes the spool)
sqlite3 "$DB" "DROP TABLE jobs" 2>/dev/null || true
rm -rf "$ROOT"
```
```bash
# ✔ verify teardown — nothing left
[ ! -e "$ROOT" ] && echo "all gone" || { echo "still present"; exit 1; }
```
"""

LONG_DIR = "ops/runbooks/a-directory-with-a-rather-long-name-for-its-runbooks"


def _asked(screen: str) -> bool:
    """The gate's question is on screen, last (the terminal may have wrapped it anywhere)."""
    return bool(re.search(r"awaiting\s*approval\):\s*$", screen.replace("\n", "")))


def _rows(screen: str) -> list[str]:
    return screen.splitlines()


def _joined_after(screen: str, label: str, cols: int) -> str:
    """The logical line that follows the line starting with `label`: the rows a terminal wrapped it into
    (every full row continues on the next), joined back."""
    rows = _rows(screen)
    i = next(k for k, r in enumerate(rows) if r.startswith(label))
    text = rows[i][len(label):].strip()
    if not text:  # the label alone: the command is the next line
        i += 1
        text = rows[i]
    while len(rows[i]) == cols and i + 1 < len(rows):
        i += 1
        text += rows[i]
    return text


@pytest.mark.parametrize("view", ["rich", "plain"])
@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
def test_a_destructive_panel_shows_what_it_destroys_first_and_its_details_whole(
    tmp_path: Path, out: Path, term: Callable[..., Term], size: tuple[int, int], view: str
) -> None:
    (tmp_path / LONG_DIR).mkdir(parents=True)
    plan = tmp_path / LONG_DIR / "jobs-spool-teardown.md"
    plan.write_text(JOBS_PLAN, encoding="utf-8")
    rel = str(plan.relative_to(tmp_path))
    r = director("apply", rel, cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    db = out / "jobs" / "jobs.sqlite3"
    flags = ["--plain"] if view == "plain" else []
    rows, cols = size
    t = term("teardown", rel, *flags, size=size)
    screen = t.wait(_asked)
    lines = _rows(screen)
    assert len(lines) <= rows
    assert any("💥 DESTRUCTIVE · teardown" in ln for ln in lines), "the panel from its first line"
    # every destructive command, whatever the height, in the gutter that says so; the values put in
    root = f"{out}/jobs"
    for destroys in (f'sqlite3 "{root}/jobs.sqlite3" "DELETE FROM jobs', f'sqlite3 "{root}/jobs.sqlite3" "DROP TABLE',
                     f'rm -rf "{root}"'):  # fmt: skip
        flat = re.sub(r"\s*│?\s*\n\s*│?\s*↪ ", "", screen)  # a wrapped line joined back
        assert "» " + destroys in flat, f"{destroys!r} not on screen:\n{screen}"
    if rows == 24:
        # the comments gave way: no comment line is on screen while a command is hidden
        assert "(And a third" not in screen and "more line" in screen, screen
    # the details command, whole: not cut, no border in it
    want = f"director plan {rel} --teardown --section teardown"
    assert len("details: " + want) > 80, "the plan's path makes the line longer than 80 columns"
    got = _joined_after(screen, "details:", cols)
    assert want in got and "│" not in got and "…" not in got, (got, screen)
    t.send("no")
    assert t.finish() == 4, t.text()
    tables = sqlite3.connect(db).execute("select name from sqlite_master").fetchall()
    assert tables == [("jobs",)], "declined: nothing was dropped"


def _reasked_plan(tmp_path: Path, out: Path) -> Path:
    """A plan whose §2 gate was approved (a receipt from `director approve`), then edited: 30 lines more."""
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker="🔴")]))
    r = director("apply", str(plan), cwd=tmp_path, out=out)
    assert r.returncode == 4, r.stdout + r.stderr
    r = director("approve", str(plan), "2", "--yes", "--operator", "alice", cwd=tmp_path, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    added = "".join(f'echo "step two now also says line {i}"\n' for i in range(30))
    text = plan.read_text()
    plan.write_text(text.replace('touch "$OUT/s2"\n', 'touch "$OUT/s2"\n' + added, 1))
    return plan


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
def test_a_gate_asked_again_shows_its_diff_and_pages_it(
    tmp_path: Path, out: Path, term: Callable[..., Term], size: tuple[int, int]
) -> None:
    plan = _reasked_plan(tmp_path, out)
    rows = size[0]
    t = term("apply", plan.name, size=size)
    screen = t.wait(_asked)
    assert len(_rows(screen)) <= rows
    assert "asked again: the approval by alice@" in screen, screen
    assert '+echo "step two now also says line 0"' in screen, "the diff's first lines are in the panel"
    assert re.search(r"the diff: \d+ lines — type d at the question to page it", screen), screen
    assert "d to page the diff" in screen
    t.send("d")
    t.wait(lambda _s: "what changed since the approval" in t.seen())
    pages, shown_to = 0, 0
    while True:  # each screen of the diff ends with its own line (`-- diff lines 1–22 of 70 …`), the last
        # with the gate asked again
        def moved(s: str, after: int = shown_to) -> bool:
            last = s.splitlines()[-1] if s else ""
            m = re.search(r"-- diff lines (\d+)–(\d+) of \d+", last)
            return bool(m and int(m.group(2)) > after) or _asked(s)

        screen = t.wait(moved)
        m = re.search(r"-- diff lines (\d+)–(\d+) of \d+", screen.splitlines()[-1])
        if m is None:
            break
        pages, shown_to = pages + 1, int(m.group(2))
        assert len(_rows(screen)) <= rows and pages < 20
        t.send("")
    seen = t.seen()
    assert "what changed since the approval" in seen
    for i in range(30):
        assert f'+echo "step two now also says line {i}"' in seen, f"line {i} of the diff was never shown"
    assert pages >= (1 if rows == 24 else 0), "at 80×24 the diff takes more than one screen"
    # after the pager, the gate again, then the question
    assert screen.count("asked again: the approval by alice@") == 1, screen
    t.send("no")
    assert t.finish() == 4, t.text()
    assert "s2" not in (out / "acts").read_text().split()


def test_the_seed_plans_teardown_panel_at_80x24_leads_with_what_it_deletes() -> None:
    """The user's seed plan (as committed): its 💥 panel, drawn for an 80×24 terminal, shows the three
    commands the analyser calls destructive, not its comments (the engine's view of the gate, not the CLI:
    the CLI case above needs no wrangler)."""
    from io import StringIO

    from rich.console import Console
    from rich.text import Text

    from director.plan.parse import parse_file
    from director.run.gates import GateContent, Review
    from director.ui.prompts import GO, elsewhere_hint, gate_panel, question
    from tests.pristine import SEED

    plan = parse_file(str(SEED))
    assert plan.teardown is not None
    act = tuple(b.text for b in plan.teardown.act_blocks)
    review = Review(  # what the seed's teardown gate said at 80×24 (issue 36)
        reasons=("observed: its verify inconclusive (the check at plan line 397 (`workflow gone`) has never "
                 "been seen in a torn-down world: not known gone)",),
        ledger=("- CLASS: `OrderWorkflow` (back to its template)", "~ 4 check rows: → — torn down",
                "~ status: live → gone"),
        resources=("WF_NAME orders-wf-dev",), confirm="orders-wf-dev",
    )  # fmt: skip
    content = GateContent("teardown", plan.teardown.title, "💥", "", (), act, {}, {"TRIGGER": "cli", "ENV": "dev"},
                          review=review)  # fmt: skip
    buf = StringIO()
    c = Console(file=buf, width=80, height=24, force_terminal=True, color_system=None, legacy_windows=False)
    hint = elsewhere_hint("director approve plans/workflow.cloudflare.md teardown")
    gate_panel(c, content, details="director plan plans/workflow.cloudflare.md --teardown --section teardown",
               asking=GO, hint=hint)  # fmt: skip
    text = buf.getvalue()
    for destroys in ("» command wrangler workflows instances terminate", "» command wrangler workflows delete",
                     "» command wrangler delete --config"):  # fmt: skip
        assert destroys in text, f"{destroys!r} not in:\n{text}"
    assert "\ndirector plan plans/workflow.cloudflare.md --teardown --section teardown\n" in text, "whole, on a line"
    assert "# 1 — best-effort" not in text, "the comments give way to the commands"
    below = len(Text(hint).wrap(c, 80)) + len(question(content, *GO).wrap(c, 80))
    assert len(text.splitlines()) + below <= 24, "the panel, its details, the hint and the question fit"


def test_a_signed_receipt_from_elsewhere_names_its_signer(tmp_path: Path, out: Path) -> None:
    """Released from elsewhere by alice's signed receipt, the terminal names alice (the verified signer),
    not the login that recorded it."""
    key = tmp_path / "alice"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "alice", "-f", str(key)], check=True)
    kind, blob = key.with_name("alice.pub").read_text().split()[:2]
    (tmp_path / ".director-allowed-signers").write_text(f"alice@example.com {kind} {blob}\n")
    plan = write_plan(tmp_path, CounterPlan([Step(), Step(marker="🔴")]))
    t = Term(["apply", str(plan), "--set", "mode=a"], tmp_path, out)
    try:
        t.wait("press Enter to stop waiting")  # no key at this prompt: it cannot approve, it waits
        r = director("approve", str(plan), "2", "--yes", "--sign-with", str(key), "--operator", "root",
                     cwd=tmp_path, out=out)  # fmt: skip
        assert r.returncode == 0, r.stdout + r.stderr
        screen = t.wait("approved from elsewhere")
        assert re.search(r"approved from elsewhere: receipt \d+ by alice@example\.com \(signature verified, key "
                         r"SHA256:\S+; recorded by root@\S+, approve-command\)", " ".join(screen.split())), screen  # fmt: skip
        assert t.finish() == 0, t.text()
    finally:
        t.kill()


# ------------------------------------------------------------------------ a family at 80 columns

FAILS_LOUDLY = (
    'echo "the report cannot be built from $PWD/a/rather/long/path/to/the/upstream/orders.sqlite3: apply its '
    'provider first"; exit 7  # this member fails'
)


def _fleet(root: Path) -> dict[str, str]:
    """Four independent members with long names: one completes, one ends 10 (a check after its act is
    inconclusive), one fails with a long message, one stops at a 🔴 gate. Name -> file name."""
    from tests.familyplans import member

    fleet = root / "fleet"
    fleet.mkdir()
    files = {
        "metrics-exporter": "metrics-exporter.local.md",
        "soft": "soft-check-with-a-rather-long-name.local.md",
        "failing": "failing-report-builder.local.md",
        "gated": "gated-release.local.md",
    }
    (fleet / files["metrics-exporter"]).write_text(member("metrics-exporter"), encoding="utf-8")
    strict = '[ -f "$OUT/s1" ] && echo "s1 present" || { echo "s1 missing"; exit 1; }'
    soft = '[ -f "$OUT/nothing" ] && echo "s1 present" || echo "s1 missing"'  # its F branch exits 0: exit 10
    (fleet / files["soft"]).write_text(CounterPlan([Step()]).text().replace(strict, soft), encoding="utf-8")
    failing = member("failing-report-builder", fail=True).replace("exit 7  # this member fails", FAILS_LOUDLY)
    (fleet / files["failing"]).write_text(failing, encoding="utf-8")
    (fleet / files["gated"]).write_text(member("gated-release", gate=True), encoding="utf-8")
    return files


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
def test_a_family_at_80_columns_names_its_members_whole_and_says_how_each_ended(
    tmp_path: Path, term: Callable[..., Term], size: tuple[int, int]
) -> None:
    import time

    files = _fleet(tmp_path)
    cols = size[1]
    started = time.monotonic()
    t = term("apply", "fleet/", "--set", "mode=a", size=size)
    t.wait(lambda _s: "Type go to run these commands" in t.seen())
    asked = time.monotonic()
    time.sleep(3.0)  # the operator reads the gate
    answered = time.monotonic()
    t.send("go")
    assert t.finish(timeout=120) == 3, t.text()  # the most severe: a member failed (3), another unconfirmed (10)
    elapsed = time.monotonic() - started
    seen = t.seen().replace("\r", "")
    # every streamed line's gutter is short, and names one member only
    limit = max(12, cols // 4)
    gutters = {m.group(1).rstrip() for m in re.finditer(r"^(.{1,60}?) │ ", seen, re.M)}
    assert gutters, seen
    for g in gutters:
        assert len(g) <= limit, f"a {len(g)}-column gutter at {cols} columns: {g!r}"
        if g.strip():
            owners = [f for f in files.values() if f.startswith(g.rstrip("…"))]
            assert len(owners) == 1, f"{g!r} names {owners}"
    # the summary: each member by its whole file name, how it ended
    summary = seen[seen.rindex("family apply"):]
    for f in files.values():
        assert re.search(rf"^  {re.escape(f)}  ", summary, re.M), f"{f} not named whole:\n{summary}"
    assert re.search(rf"^  {re.escape(files['soft'])}\s+unconfirmed\s+exit 10\b", summary, re.M), summary
    assert re.search(rf"^  {re.escape(files['metrics-exporter'])}\s+completed\s+exit 0\b", summary, re.M)
    assert re.search(rf"^  {re.escape(files['failing'])}\s+failed\s+exit 3\b", summary, re.M), summary
    # the detail is read in words, on rows of its own: never a column folded a character at a time
    assert "apply its provider first" in summary.replace("\n      ", " "), summary
    assert not re.search(r"^\s*│.*│\s*$", summary, re.M), "no table folding the detail into a column"
    # the gate's wait is shown apart: the member's own time leaves it out
    m = re.search(rf"^  {re.escape(files['gated'])}\s+completed\s+exit 0\s+(\d+\.\d)s\s+(?:\n\s+)?waited (\d+\.\d)s",
                  summary, re.M)  # fmt: skip
    assert m is not None, summary
    own, waited = float(m.group(1)), float(m.group(2))
    assert waited >= answered - asked - 0.1, (waited, answered - asked)
    assert own <= elapsed - (answered - asked) + 0.1, (own, elapsed, answered - asked)
    assert all(len(line) <= cols for line in t.text().splitlines())


def test_one_ctrl_c_ends_a_family_interview(tmp_path: Path, term: Callable[..., Term]) -> None:
    """Two members ask their inputs at once: one Ctrl-C at the first question ends the family (the other
    member's question is never asked), each member shown interrupted, exit 130."""
    for d in ("east", "west"):
        (tmp_path / d).mkdir()
        write_plan(tmp_path / d, CounterPlan([Step()]), name="counter.md")
    t = term("apply", "east/counter.md", "west/counter.md", size=(24, 80))
    t.wait("choose [a/b]")
    t.child.sendintr()
    assert t.finish() == 130, t.text()
    seen = t.seen()
    assert seen.count(" asks:") == 1 and seen.count("choose [a/b]") == 1, seen
    summary = seen[seen.rindex("family apply"):]
    for name in ("east/counter.md", "west/counter.md"):
        assert re.search(rf"^  {re.escape(name)}\s+interrupted\s+exit 130", summary, re.M), summary
    assert " error" not in summary, summary


def test_status_of_a_family_is_one_line_a_plan(tmp_path: Path, term: Callable[..., Term]) -> None:
    from tests.familyplans import director as fdirector
    from tests.familyplans import write

    write(tmp_path, "base-with-a-long-name", provides="`base(MARK)`")
    write(tmp_path, "consumer", requires="`base(MARK)` (`base-with-a-long-name.md`)")
    assert fdirector("apply", "base-with-a-long-name.md", cwd=tmp_path).returncode == 0
    r = fdirector("status", ".", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 3, r.stdout  # a heading, one line a plan
    assert re.match(r"^  base-with-a-long-name\.md\s+live\s+apply #1 completed", lines[1]), r.stdout
    assert re.match(r"^  consumer\.md\s+not-created\s+never run here\s+requires base from "
                    r"base-with-a-long-name\.md$", lines[2]), r.stdout  # fmt: skip
    assert not re.search(r"[┏┃│└]", r.stdout), "no table"
    d = fdirector("status", ".", "--details", cwd=tmp_path)
    assert d.returncode == 0 and "last success" in d.stdout, d.stdout
    consumer = d.stdout[d.stdout.index("consumer.md ─"):]
    assert "none run here yet" in consumer and "last success" not in consumer, "no empty table"
    t = term("status", ".", size=(24, 80))
    assert t.finish() == 0
    screen = [ln for ln in t.text().splitlines() if ln.strip()]
    assert len(screen) <= 4 and all(len(ln) <= 80 for ln in screen), t.text()
    assert any(ln.strip() == "requires base from base-with-a-long-name.md" for ln in screen), t.text()

"""Lint: each finding code on a minimal plan that triggers it, the seed's findings, clean examples."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from director.plan.lint import Finding, lint
from director.plan.parse import parse, parse_file
from tests import forkserver
from tests.pristine import EXAMPLES, PRISTINE, SEED

ROOT = Path(__file__).resolve().parent.parent

TEARDOWN = """
## Teardown  💥

```bash
rm -rf build
```
```bash
# ✔ gone
[ ! -e build ] && echo "gone" || { echo "build still there"; exit 1; }
```

## Live State

```yaml
status: not-created
```
"""


INPUTS_HEAD = (
    "# T\n\n## Provisioning Inputs\n\n"
    "| # | Question | Options | Default | Sets | Gates |\n|---|---|---|---|---|---|\n"
)


def codes(text: str) -> list[tuple[int, str]]:
    """(line, code) of every finding."""
    return [(f.line, f.code) for f in lint(parse(text))]


def only(text: str) -> set[str]:
    return {c for _, c in codes(text)}


def test_seed_findings_are_the_known_four() -> None:
    assert codes(SEED.read_text(encoding="utf-8")) == [
        (256, "verify-exit-status"),
        (289, "unenforced-check"),
        (397, "soft-alternative"),
        (399, "soft-alternative"),
    ]


@pytest.mark.parametrize("name", ["database.local.md", "static-site.local.md"])
def test_examples_are_clean(name: str) -> None:
    assert lint(parse_file(EXAMPLES / name)) == []


def test_finding_format_and_order() -> None:
    f = Finding(3, "missing-verify", "§1 has no verify")
    assert f.format("p.md") == "p.md:3: error: missing-verify: §1 has no verify"
    found = lint(parse("# T\n\n## 1. A  🟢\n\n```bash\nmake\n```\n"))
    assert [x.line for x in found] == sorted(x.line for x in found)


def test_missing_verify_for_create_and_conditional_config() -> None:
    text = (
        "# T\n\n## 1. A  🟢\n\n```bash\nmake\n```\n\n## 2. B  🔴 *(`K=a`)* / 🟡 *(`b`)*\n\n```bash\nx\n```\n"
    )
    assert codes(text + TEARDOWN)[:2] == [(3, "missing-verify"), (9, "missing-verify")]


def test_unverified_act_and_missing_marker() -> None:
    assert {"unverified-act", "missing-marker"} <= only("# T\n\n## 1. A\n\n```bash\nmake\n```\n" + TEARDOWN)
    assert "unverified-act" in only("# T\n\n## 1. A  ⏳\n\n```bash\nsleep 1\n```\n" + TEARDOWN)


def test_teardown_findings() -> None:
    assert "missing-teardown" in only("# T\n")
    assert {"teardown-without-verify", "empty-teardown"} <= only("# T\n\n## Teardown  💥\n\ntext\n")


def test_destructive_commands() -> None:
    def destructive(body: str, marker: str = "🟢") -> list[int]:
        text = f"# T\n\n## 1. A  {marker}\n\n```bash\n{body}\n```\n```bash\n# ✔ ok\necho ok\n```\n" + TEARDOWN
        return [line for line, code in codes(text) if code == "destructive-outside-teardown"]

    assert destructive("command wrangler delete --config x") == [6]
    assert destructive("true\nrm -rf build") == [7]
    assert destructive("rm -fr build") == [6]
    assert destructive("aws s3api delete-bucket --bucket b") == [6]
    assert destructive("kubectl delete pod p") == [6]
    assert destructive("rm -f one.txt") == []  # not recursive
    assert destructive("# wrangler delete in a comment") == []
    assert destructive('echo "we never delete anything"') == []
    assert destructive("sqlite3 db 'DROP TABLE t'") == [6]  # SQL given to a database client
    assert destructive("sqlite3 db 'select 1'") == []
    assert destructive("drop() { echo dropped; }\ndrop") == []  # a function named drop is not a command
    assert destructive("cat > f <<'SQL'\nDROP TABLE t;\ndelete from t;\nSQL") == []  # heredoc body is data
    assert destructive("grep -q delete log") == []
    assert destructive("wrangler delete", marker="💥") == []


def test_input_findings() -> None:
    head = INPUTS_HEAD
    assert "input-not-a-choice" in only(head + "| 1 | Q | `a` | `a` | `K` | |\n")
    assert "input-duplicate-option" in only(head + "| 1 | Q | `a` / `a` / `b` | `a` | `K` | |\n")
    zero = '\n## 0. Variables\n\n```bash\nexport K="b"\n```\n'
    row = "| 1 | Q | `a` / `b` | `a` | `K` | |\n"
    assert (7, "knob-default-mismatch") in codes(head + row + zero)
    assert (7, "knob-not-set") in codes(head + row + "\n## 0. Variables\n\n```bash\nexport X=1\n```\n")
    assert not {"knob-not-set", "knob-default-mismatch"} & only(head + row + zero.replace('"b"', '"a"'))


def test_conditions_on_unknown_knobs() -> None:
    head = INPUTS_HEAD
    head += "| 1 | Q | `a` / `b` | `a` | `K` | |\n"
    assert "unknown-knob" in only(head + "\n## 1. X  🔴 *(`Z=a`)*\n")
    assert "unknown-knob-value" in only(head + "\n## 1. X  🔴 *(`K=c`)*\n")


def test_verify_block_weaknesses() -> None:
    def verify(body: str) -> set[str]:
        return only(f"# T\n\n## 1. A  ✔\n\n```bash\n{body}\n```\n" + TEARDOWN)

    assert "verify-exit-status" in verify("wrangler deploy --dry-run 2>&1 | tail -5")
    assert "verify-exit-status" in verify("probe | head -1")
    assert "verify-exit-status" not in verify("set -o pipefail\nprobe | tail -5")
    assert "verify-exit-status" not in verify("probe | grep -q ok && echo ok")
    assert "verify-exit-status" not in verify('probe || { echo "bad"; probe | tail -20; exit 1; }')
    assert "soft-alternative" in verify('probe && echo "gone" || echo "still there"')
    assert "unenforced-check" in verify('probe && echo "1: ok"\necho done')
    assert "unenforced-check" not in verify('probe && echo "1: ok"')
    assert "unenforced-check" not in verify('probe && echo "1: ok" || { echo "1: bad"; exit 1; }\necho done')
    assert "fail-without-exit" in verify('probe || echo "probe failed"')
    assert "fail-without-exit" not in verify('probe || { echo "probe failed"; exit 1; }')
    assert not verify('ls out/* >/dev/null 2>&1 && { echo "still there"; exit 1; } || echo "all gone"')


def test_a_default_value_whose_output_is_captured_is_no_failure_line() -> None:
    def verify(body: str) -> set[str]:
        return only(f"# T\n\n## 1. A  ✔\n\n```bash\n{body}\n```\n" + TEARDOWN)

    check = '[ "$N" -gt 0 ] && echo "1: ok" || { echo "1: none"; exit 1; }'
    # `|| echo 0` supplies a value: inside `$(…)`, or in a function whose every call is captured
    assert "fail-without-exit" not in verify(f'N="$(cat count 2>/dev/null || echo 0)"\n{check}')
    assert "fail-without-exit" not in verify(f'n() {{ cut -f2 count 2>/dev/null || echo 0; }}\nN="$(n)"\n{check}')
    # also through a captured caller, and when the call sits in a test: `[ "$(n)" -gt 0 ]`
    nested = 'n() { cut -f2 count || echo 0; }\nm() { n; }\n[ "$(m)" -gt 0 ] && echo "1: ok" || { echo "1: none"; exit 1; }'
    assert "fail-without-exit" not in verify(nested)
    # a function whose output reaches the block's output still reports: called bare, or once bare
    assert "fail-without-exit" in verify('c() { probe || echo "probe failed"; }\nc')
    assert "fail-without-exit" in verify('c() { probe || echo "probe failed"; }\nX="$(c)"\nc')
    # an echo sent to standard error is printed even from a captured function
    assert "fail-without-exit" in verify('c() { probe || echo "probe failed" >&2; }\nX="$(c)"')
    # and a pass line inside a captured function is no unenforced check
    assert "unenforced-check" not in verify('v() { [ -f f ] && echo yes; }\nX="$(v)"\necho "$X"')


def test_the_example_plans_have_no_default_value_called_a_failure() -> None:
    # snapshot-job and venv-worker read a counter with `f() { cut … || echo 0; }` then `"$(f)"`
    for name in ("snapshot-job.local.md", "venv-worker.local.md"):
        assert "fail-without-exit" not in {f.code for f in lint(parse_file(EXAMPLES / name))}, name


def test_check_table_and_contract() -> None:
    text = """# T

## Intent

1. **Happy path** — works.
2. **Orphan** — nobody checks me.

## 1. Go  ✔

```bash
probe && echo "1: fine" || { echo "1: broken"; exit 1; }
probe && echo "7: stray label" || { echo "7: bad"; exit 1; }
```

## Live State

| ✔ check | expected | observed | result |
|---|---|---|---|
| happy path completes | yes | | |
| something unrelated | yes | | |
"""
    got = codes(text + TEARDOWN.split("## Live State")[0])
    assert (6, "contract-without-row") in got
    assert (12, "unknown-contract-label") in got
    assert (20, "unfed-check-row") in got
    assert not any(code == "unfed-check-row" and line == 19 for line, code in got)
    assert [c for _, c in got].count("unknown-contract-label") == 1
    assert "missing-live-state" in only("# T\n")


def test_realized_without_hint() -> None:
    base = "# T\n\n## 1. Deploy  🟢\n\n{hint}```bash\ndeploy\n```\n```bash\n# ✔ up\nup && echo up\n```\n\n"
    use = '## 2. Use  ✔\n\n```bash\nURL="x"   # realized in §1\ncurl "$URL" && echo "1: ok"\n```\n'
    assert "realized-without-hint" in only(base.format(hint="") + use + TEARDOWN)
    assert "realized-without-hint" not in only(base.format(hint="> → Live State: URL\n\n") + use + TEARDOWN)


def test_template_findings() -> None:
    text = """# T

## Provisioning Inputs

| # | Question | Options | Default | Sets | Gates |
|---|---|---|---|---|---|
| 1 | Q | `a` / `b` / `c` | `a` | `K` | |

## 1. Conf — `x.jsonc`  🟡

```jsonc
{ "v": 1 }   // K=a → 1; b → 2
```
```jsonc
{ "w": 1 }   // Z=a → 1
```
"""
    got = only(text + TEARDOWN)
    assert {"template-knob-incomplete", "multiple-templates", "unknown-knob"} <= got


def test_template_target_and_value_findings() -> None:
    text = """# T

## 0. Variables

```bash
export SVC="orders"
export CONFIG="$PWD/${SVC}.jsonc"
BACKUP="/backups/$SVC.jsonc"
```

## 1. Conf — `${SVC}.jsonc`  🟡

```jsonc
{
  "name": "x",   // = ${SVC}
  "v": 1         // w = ${SVC}
}
```
```bash
# ✔ written
[ -f "$CONFIG" ] && echo "written" || { echo "missing"; exit 1; }
```
"""
    found = {(f.line, f.code): f.message for f in lint(parse(text + TEARDOWN))}
    assert found[(13, "template-target-ambiguous")] == (
        "`${SVC}.jsonc` could be $CONFIG or $BACKUP; the run stops if they name different files"
    )
    assert found[(16, "template-no-value")] == "no jsonc value for `w` on this line: the run would stop here"
    assert len(found) == 2


def test_cli_lint_exit_codes() -> None:
    ok = forkserver.run(
        [sys.executable, "-m", "director", "lint", str(EXAMPLES / "database.local.md")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr
    seed = forkserver.run(
        [sys.executable, "-m", "director", "lint", "plans/workflow.cloudflare.md"],
        capture_output=True,
        text=True,
        cwd=PRISTINE,
        check=False,
    )
    assert seed.returncode == 0, "the seed's four findings are warnings: they do not fail CI by default"
    assert "plans/workflow.cloudflare.md:256: warning: verify-exit-status:" in seed.stdout
    bad = forkserver.run(
        [sys.executable, "-m", "director", "lint", "tests/plans/bad/unknown-marker.md"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert bad.returncode == 65 and "tests/plans/bad/unknown-marker.md:3:" in bad.stderr

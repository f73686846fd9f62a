"""`apply` and `teardown` refuse a plan with lint errors (issue 27), through the real CLI.

The issue's case: a missing closing fence made an act block swallow its verify; `lint` said
`missing-verify` (error) but `apply` ran the merged block. Now it exits 65 before anything is created or
run, each error on its own line; `--ignore-lint-errors` runs it; a suppressed error does not count.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.planmaker import director

# §1's act misses its closing fence: its verify is swallowed into it (a bash block that starts a server and
# then meets the verify's text), and §1 has no verify block left.
SWALLOWED = """\
# Swallowed verify

## 1. Server  🟢

```bash
echo started >> "$OUT/acts"
```bash
# ✔ server answers
[ -f "$OUT/acts" ] && echo "server answers" || { echo "no server"; exit 1; }
```

## 2. Config  🟡

```bash
echo configured >> "$OUT/acts"
```
```bash
# ✔ configured
grep -q configured "$OUT/acts" && echo "configured" || { echo "not configured"; exit 1; }
```

## Live State

```yaml
status: not-created
last_action: —
last_verified: —
```

## Teardown  💥

```bash
rm -f "$OUT/acts"
```
```bash
# ✔ gone
[ ! -e "$OUT/acts" ] && echo "gone" || { echo "still there"; exit 1; }
```
"""


@pytest.mark.parametrize("command", [["apply"], ["teardown", "--approve", "teardown"]])
def test_a_plan_with_lint_errors_is_refused_before_anything_runs(
    tmp_path: Path, out: Path, command: list[str]
) -> None:
    plan = tmp_path / "swallowed.md"
    plan.write_text(SWALLOWED, encoding="utf-8")
    before = plan.read_bytes()
    r = director(command[0], str(plan), *command[1:], cwd=tmp_path, env={"OUT": str(out)}, out=out)
    assert r.returncode == 65, r.stdout + r.stderr
    lines = r.stderr.splitlines()
    assert lines[0] == (
        f"error: {plan}:3: missing-verify: §1 is 🟢 but has no verify block "
        "(a bash block whose first line is `# ✔ …`)"
    )
    # …and its cause (issue 39): the act's fence is not closed before the verify's opens
    assert lines[1].startswith(f"error: {plan}:5: unclosed-fence: this fence is not closed before line 7")
    assert lines[-1].startswith(f"error: {plan}: 2 lint errors (above): nothing was run") and len(lines) == 3
    assert "--ignore-lint-errors" in lines[-1] and "Traceback" not in r.stderr
    assert not (out / "acts").exists() and not (tmp_path / ".director").exists()
    assert plan.read_bytes() == before


def test_ignore_lint_errors_runs_it_and_says_so(tmp_path: Path, out: Path) -> None:
    plan = tmp_path / "swallowed.md"
    plan.write_text(SWALLOWED, encoding="utf-8")
    r = director("apply", str(plan), "--ignore-lint-errors", cwd=tmp_path, env={"OUT": str(out)}, out=out)
    assert r.stderr.splitlines()[0] == (
        f"warning: {plan}: running despite 2 lint errors (missing-verify, unclosed-fence): --ignore-lint-errors"
    )
    # What lint warned of: the merged block ran its act's line, then met the fence and the verify's text.
    assert r.returncode == 3 and "unexpected EOF" in r.stdout, r.stdout + r.stderr
    assert (out / "acts").read_text().split() == ["started"]


def test_a_suppressed_lint_error_does_not_stop_a_run(tmp_path: Path, out: Path) -> None:
    plan = tmp_path / "unverified.md"
    # §1 closed and without its verify block: a lint error, but a plan that runs fine
    text = SWALLOWED.replace(
        '```bash\n# ✔ server answers\n[ -f "$OUT/acts" ] && echo "server answers" || { echo "no server"; exit 1; }\n',
        "",
    )
    assert text.count("```") == SWALLOWED.count("```") - 1
    plan.write_text(text.replace("## 1.", "<!-- director-lint: disable=missing-verify -->\n## 1."), "utf-8")
    r = director("apply", str(plan), cwd=tmp_path, env={"OUT": str(out)}, out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "lint" not in r.stderr and (out / "acts").read_text().split() == ["started", "configured"]
    plan.write_text(text, "utf-8")  # the same plan without the suppression comment is refused
    assert director("apply", str(plan), cwd=tmp_path, env={"OUT": str(out)}, out=out).returncode == 65

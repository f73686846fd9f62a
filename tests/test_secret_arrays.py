"""A secret in a bash array never comes back as `***` (issue 27), through the real CLI.

`ARR=(x "$TOKEN")` and `declare -A M=([k]="$TOKEN")` in a block, then a new process resumes the run (after
a failure, or a SIGKILL): the journal never held the arrays (it names them as withheld), and a later block
that reads one is refused, naming it; an array §0 fills is recomputed and used with its real value. The
world is read directly: the file a block writes, the journal's bytes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import forkserver
from tests.planmaker import director

TOKEN = "tok-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
MINTED = "pw-" + TOKEN[::-1]  # what §1 puts in the secret-named array TOKENS

PLAN = """\
# Arrays

## 0. Variables

```bash
export OUT="${{COUNTER_OUT:?}}"
HEADERS=(-H "Authorization: Bearer $API_TOKEN")
```

## 1. Fill  🟢

```bash
ARR=(x "$API_TOKEN")
declare -A M=([k]="$API_TOKEN" [plain]=ok)
TOKENS=("pw-$(printf '%s' "$API_TOKEN" | rev)" "$API_TOKEN")
echo "minted ${{TOKENS[0]}}"
touch "$OUT/filled"
```
```bash
# ✔ filled
[ -e "$OUT/filled" ] && echo "filled" || {{ echo "not filled"; exit 1; }}
```

## 2. Use  🟢

```bash
{wait}
printf '%s|' "${{HEADERS[@]}}" > "$OUT/headers"
printf '%s' "{reads}" > "$OUT/seen"
```
```bash
# ✔ used
[ -e "$OUT/seen" ] && echo "used" || {{ echo "not used"; exit 1; }}
```

## Live State

```yaml
status: not-created
last_action: —
last_verified: —
```
"""

# §2 fails once (a file says it already did), or waits to be killed.
FAIL_ONCE = '[ -e "$OUT/failed" ] || { touch "$OUT/failed"; exit 1; }'
WAIT_FOR_KILL = '[ -e "$OUT/killed" ] || { touch "$OUT/started"; sleep 60; }'


def _plan(tmp: Path, wait: str, reads: str) -> Path:
    p = tmp / "arrays.md"
    p.write_text(PLAN.format(wait=wait, reads=reads), encoding="utf-8")
    return p


def _env() -> dict[str, str]:
    return {"API_TOKEN": TOKEN}


def _journal_bytes(tmp: Path) -> bytes:
    state = tmp / ".director" / "arrays.md"
    return b"".join(p.read_bytes() for p in state.glob("journal.sqlite3*"))


@pytest.mark.parametrize("reads", ["${ARR[1]}", "${M[k]}"], ids=["indexed", "associative"])
def test_a_resumed_block_reading_a_withheld_array_is_refused_never_run_with_a_mask(
    tmp_path: Path, out: Path, reads: str
) -> None:
    plan = _plan(tmp_path, FAIL_ONCE, reads)
    first = director("apply", str(plan), cwd=tmp_path, out=out, env=_env())
    assert first.returncode == 3 and (out / "failed").exists(), first.stdout + first.stderr
    journal = _journal_bytes(tmp_path)
    assert TOKEN.encode() not in journal and b'"***"' not in journal  # neither the value nor a mask
    assert MINTED.encode() not in journal

    again = director("apply", str(plan), cwd=tmp_path, out=out, env=_env())
    name = "ARR" if "ARR" in reads else "M"
    assert again.returncode == 3, again.stdout + again.stderr
    assert f"reads the array {name}, which an earlier block filled with a secret" in again.stdout
    assert "(the block was not run with an empty or masked value)" in again.stdout
    assert not (out / "seen").exists()  # refused: the block never ran


def test_an_array_section_0_fills_is_recomputed_and_a_secret_named_arrays_values_are_masked(
    tmp_path: Path, out: Path
) -> None:
    plan = _plan(tmp_path, FAIL_ONCE, "plain")
    first = director("apply", str(plan), cwd=tmp_path, out=out, env=_env())
    assert first.returncode == 3
    # TOKENS is a secret-named array: its elements are learned as secrets once §1 ends (as a scalar's
    # are) and masked in what is stored of its output
    logs = director("logs", str(plan), "1", cwd=tmp_path, out=out)
    assert "minted ***" in logs.stdout and MINTED not in logs.stdout
    again = director("apply", str(plan), cwd=tmp_path, out=out, env=_env())
    assert again.returncode == 0, again.stdout + again.stderr
    # HEADERS was withheld (it holds the token) and §0 gave it back: the block saw the real value
    assert (out / "headers").read_text() == f"-H|Authorization: Bearer {TOKEN}|"
    assert (out / "seen").read_text() == "plain"
    journal = _journal_bytes(tmp_path)
    assert MINTED.encode() not in journal and TOKEN.encode() not in journal


@pytest.mark.slow
def test_after_a_sigkill_a_block_reading_a_withheld_array_is_refused(tmp_path: Path, out: Path) -> None:
    plan = _plan(tmp_path, WAIT_FOR_KILL, "${ARR[1]}")
    env = {**os.environ, "COUNTER_OUT": str(out), "CI": "1", "NO_COLOR": "1", "API_TOKEN": TOKEN}
    proc = forkserver.Popen(
        [sys.executable, "-m", "director", "apply", str(plan)],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not (out / "started").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert (out / "started").exists()
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    (out / "killed").touch()
    assert TOKEN.encode() not in _journal_bytes(tmp_path)
    again = director("apply", str(plan), cwd=tmp_path, out=out, env=_env())
    assert again.returncode == 3, again.stdout + again.stderr
    assert "reads the array ARR" in again.stdout and not (out / "seen").exists()


def test_a_function_defined_with_a_secret_in_its_text_is_withheld_and_its_caller_refused(
    tmp_path: Path, out: Path
) -> None:
    text = PLAN.format(wait=FAIL_ONCE, reads="plain").replace(
        'touch "$OUT/filled"', 'eval "auth() { printf %s \'$API_TOKEN\'; }"; plain() { echo fine; }\ntouch "$OUT/filled"'
    ).replace('printf \'%s\' "plain"', 'plain; auth > "$OUT/auth"; printf \'%s\' "plain"')
    plan = tmp_path / "arrays.md"
    plan.write_text(text, encoding="utf-8")
    assert director("apply", str(plan), cwd=tmp_path, out=out, env=_env()).returncode == 3
    journal = _journal_bytes(tmp_path)
    assert TOKEN.encode() not in journal and b"printf %s '***'" not in journal
    again = director("apply", str(plan), cwd=tmp_path, out=out, env=_env())
    assert again.returncode == 3 and "calls auth, a function an earlier block defined" in again.stdout
    assert not (out / "auth").exists()

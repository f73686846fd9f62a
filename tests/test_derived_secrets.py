"""A value derived from a secret -- a run of its characters -- is masked like the secret (issue 27).

The issue: a 17-character prefix of a secret, in a normally named variable, was stored in clear. Through
the real CLI: the prefix (and a middle piece) never reach the journal, the plan file or the stored output;
the variable is withheld from the journal like a secret, so after a resume a block reading it is refused.
"""

from __future__ import annotations

from pathlib import Path

from director.plan.parse import parse_file
from tests.planmaker import director

TOKEN = "tok-0a1b2c3d4e5f60718293a4b5c6d7e8f9"
PREFIX, MIDDLE = TOKEN[:17], TOKEN[9:29]

PLAN = """\
# Derived

## 1. Derive  🟢

```bash
export KEY_PREFIX="${API_TOKEN:0:17}"
PIECE="$(printf '%s' "$API_TOKEN" | cut -c10-29)"
echo "prefix $KEY_PREFIX piece $PIECE"
touch "$COUNTER_OUT/derived"
```
```bash
# ✔ derived
[ -e "$COUNTER_OUT/derived" ] && echo "derived" || { echo "not derived"; exit 1; }
```
> → Live State: KEY_PREFIX

## 2. Use  🟢

```bash
[ -e "$COUNTER_OUT/failed" ] || { touch "$COUNTER_OUT/failed"; exit 1; }
printf '%s' "$KEY_PREFIX" > "$COUNTER_OUT/used"
```
```bash
# ✔ used
[ -e "$COUNTER_OUT/used" ] && echo "used" || { echo "not used"; exit 1; }
```

## Live State

```yaml
status: not-created
last_action: —
last_verified: —
```

| key        | value (filled on apply) |
|------------|-------------------------|
| KEY_PREFIX | —                       |
"""


def _disk(tmp: Path) -> bytes:
    """Every byte Director keeps: the journal (with its WAL) and the plan."""
    files = [p for p in (tmp / ".director").rglob("*") if p.is_file()] + [tmp / "derived.md"]
    return b"".join(p.read_bytes() for p in files)


def test_a_prefix_and_a_piece_of_a_secret_are_masked_and_withheld(tmp_path: Path, out: Path) -> None:
    plan = tmp_path / "derived.md"
    plan.write_text(PLAN, encoding="utf-8")
    env = {"API_TOKEN": TOKEN}
    first = director("apply", str(plan), cwd=tmp_path, out=out, env=env)
    assert first.returncode == 3, first.stdout + first.stderr  # §2 fails once, on purpose
    assert "prefix *** piece ***" in first.stdout
    assert PREFIX not in first.stdout and MIDDLE not in first.stdout
    disk = _disk(tmp_path)
    assert PREFIX.encode() not in disk and MIDDLE.encode() not in disk and TOKEN[:12].encode() not in disk
    # a value holding a piece of a secret is not realized (as a secret-named one): the row keeps its template
    ls = parse_file(str(plan)).live_state
    assert ls is not None and [r.value for r in ls.kv_rows if r.key == "KEY_PREFIX"] == ["—"]

    again = director("apply", str(plan), cwd=tmp_path, out=out, env=env)
    assert again.returncode == 3, again.stdout + again.stderr
    assert "reads KEY_PREFIX: a secret an earlier block set in a previous process" in again.stdout
    assert not (out / "used").exists()

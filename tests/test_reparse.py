"""A ledger write re-reads only the Live State section (`reparse_live_state`): the plan it gives must be
exactly the plan a whole parse gives, and it must decline whenever it cannot show that."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from director.errors import PlanError
from director.ledger.splice import LedgerUpdate, apply_update
from director.plan.model import Plan
from director.plan.parse import parse
from director.plan.reparse import reparse_live_state
from tests.pristine import SEED, every_plan

ROOT = Path(__file__).resolve().parent.parent
PLANS = sorted(
    p
    for p in [
        *every_plan(),
        *(ROOT / "tests" / "plans" / "ok").glob("*.md"),
    ]
    if "## Live State" in p.read_text(encoding="utf-8")
)

# one-line values, as the ledger writes them (a newline in a value becomes a new line count: declined)
VALUES = st.text(alphabet=st.characters(blacklist_categories=["Cs", "Cc", "Zl", "Zp"]), max_size=30)


def _update(plan: Plan, data: st.DataObject) -> LedgerUpdate:
    ls = plan.live_state
    assert ls is not None
    yaml: dict[str, str] = {k: data.draw(VALUES, label=k) for k in ("status", "last_action") if k in ls.data}
    kv = {r.key: data.draw(VALUES, label=r.key) for r in ls.kv_rows}
    checks = {r.name: (data.draw(VALUES), data.draw(VALUES)) for r in ls.check_rows}
    # new key/value rows add lines: the sections after Live State move down
    n_add = data.draw(st.integers(0, 2), label="new rows") if ls.kv_rows else 0
    kv_add = [(f"NEW_{i}", data.draw(VALUES, label=f"NEW_{i}")) for i in range(n_add)]
    return LedgerUpdate(yaml=yaml, kv=kv, checks=checks, kv_add=kv_add)


@pytest.mark.parametrize("path", PLANS, ids=lambda p: p.name)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_reparse_equals_the_whole_parse(path: Path, data: st.DataObject) -> None:
    plan = parse(path.read_text(encoding="utf-8"), str(path))
    new_text = apply_update(plan, _update(plan, data))
    again = reparse_live_state(plan, new_text)
    whole = parse(new_text, str(path))
    # a ledger write of one-line values and new rows: the section alone is always re-read, as the whole
    assert again is not None, f"declined a ledger write of {path.name}"
    assert again == whole


def test_every_plan_with_live_state_is_covered() -> None:
    names = {p.name for p in PLANS}
    assert {"workflow.cloudflare.md", "database.local.md", "live-state.md"} <= names




def _seed() -> Plan:
    return parse(SEED.read_text(encoding="utf-8"), str(SEED))


def test_a_change_outside_live_state_is_declined() -> None:
    plan = _seed()
    text = plan.source.replace("## Teardown", "## Teardown now", 1)
    assert text != plan.source
    assert reparse_live_state(plan, text) is None


def test_new_rows_move_the_sections_after_live_state_with_every_line_they_hold() -> None:
    plan = _seed()
    new = apply_update(plan, LedgerUpdate(kv_add=[("EXTRA", "`x`"), ("MORE", "`y`")]))
    assert new.count("\n") == plan.source.count("\n") + 2
    again = reparse_live_state(plan, new)
    assert again is not None
    after = [s for s in again.sections if s.span.start > again.live_state.span.start]  # type: ignore[union-attr]
    assert after and any(b.checks for s in after for b in s.blocks)  # the teardown's verify moved too
    assert again == parse(new, str(SEED))


def test_an_unclosed_fence_in_live_state_is_declined() -> None:
    plan = _seed()
    sec = next(s for s in plan.sections if s.key == "live-state")
    lines = plan.source.split("\n")
    # the yaml block's closing fence becomes prose: the fence now swallows the rest of the plan
    close = sec.blocks[0].span.end - 1
    assert lines[close].startswith("```")
    lines[close] = "not a fence"
    text = "\n".join(lines)
    assert reparse_live_state(plan, text) is None
    with pytest.raises(PlanError):  # the fence runs on into the next one: the whole parse says where
        parse(text, str(SEED))


def test_a_heading_swallowed_by_an_html_block_is_declined() -> None:
    plan = _seed()
    sec = next(s for s in plan.sections if s.key == "live-state")
    lines = plan.source.split("\n")
    # the section's last (blank) line becomes an HTML block that continues into the next heading
    assert lines[sec.span.end - 1] == ""
    lines[sec.span.end - 1] = "<div>"
    text = "\n".join(lines)
    assert reparse_live_state(plan, text) is None
    whole = parse(text, str(SEED))
    assert [s.key for s in whole.sections] != [s.key for s in plan.sections]


LEDGER_FIRST = """\
# Ledger first: Live State before the inputs, the contract and the steps

## Live State

```yaml
status:        not-created
last_action:   —
```

| key | value |
|-----|-------|
| `DIR` | `—` |

| ✔️ Check | Expected | Observed | Result |
|---------|----------|----------|--------|
| happy path completes | done | | |

## Provisioning Inputs

| # | QUESTION | options | default | sets | gates |
|---|----------|---------|---------|------|-------|
| 1 | Size? | `s` / `m` | `s` | `SIZE` | §1 |

## Intent

1. **Happy path** — it works.

## 0. Variables

```bash
export SIZE="s" DIR="/tmp/ledger-first"  # realized in §1
```

## 1. Make it  🟢

```bash {retries=2 delay=1s}
mkdir -p "$DIR"
```
```bash
# ✔ made
test -d "$DIR" && echo "1: happy" || { echo "1: sad"; exit 1; }
```
"""


def test_inputs_contract_and_realizations_after_live_state_move_too() -> None:
    plan = parse(LEDGER_FIRST, "first.md")
    assert plan.inputs and plan.contract and plan.inputs[0].line > plan.live_state.span.end  # type: ignore[union-attr]
    new = apply_update(plan, LedgerUpdate(yaml={"status": "live"}, kv_add=[("NEW", "`1`")]))
    again = reparse_live_state(plan, new)
    assert again is not None and again == parse(new, "first.md")
    assert again.inputs[0].line == plan.inputs[0].line + 1

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
from director.plan.parse import parse, reparse_live_state

ROOT = Path(__file__).resolve().parent.parent
PLANS = sorted(
    p
    for p in [
        ROOT / "plans" / "workflow.cloudflare.md",
        *(ROOT / "plans" / "examples").glob("*.md"),
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
    return LedgerUpdate(yaml=yaml, kv=kv, checks=checks)


@pytest.mark.parametrize("path", PLANS, ids=lambda p: p.name)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_reparse_equals_the_whole_parse(path: Path, data: st.DataObject) -> None:
    plan = parse(path.read_text(encoding="utf-8"), str(path))
    new_text = apply_update(plan, _update(plan, data))
    again = reparse_live_state(plan, new_text)
    whole = parse(new_text, str(path))
    if again is not None:
        assert again == whole
    elif new_text.count("\n") == plan.source.count("\n"):
        # an update of one-line values keeps the line count: the section alone is always re-read then
        pytest.fail(f"declined a same-length ledger write of {path.name}")


def test_every_plan_with_live_state_is_covered() -> None:
    names = {p.name for p in PLANS}
    assert {"workflow.cloudflare.md", "database.local.md", "live-state.md"} <= names


SEED = ROOT / "plans" / "workflow.cloudflare.md"


def _seed() -> Plan:
    return parse(SEED.read_text(encoding="utf-8"), str(SEED))


def test_a_change_outside_live_state_is_declined() -> None:
    plan = _seed()
    text = plan.source.replace("## Teardown", "## Teardown now", 1)
    assert text != plan.source
    assert reparse_live_state(plan, text) is None


def test_a_changed_line_count_is_declined() -> None:
    plan = _seed()
    ls = plan.live_state
    assert ls is not None
    new = apply_update(plan, LedgerUpdate(kv_add=[("EXTRA", "`x`")]))
    assert new.count("\n") == plan.source.count("\n") + 1
    assert reparse_live_state(plan, new) is None


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

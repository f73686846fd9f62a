"""Live State write-back: golden file, byte-exactness outside Live State, YAML alignment and comments."""

from __future__ import annotations

import dataclasses
import difflib
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from director.errors import PlanError
from director.ledger.splice import LedgerUpdate, UnknownLedgerKey, apply_update, live_state_text, split_cells
from director.plan.model import Plan
from director.plan.parse import parse
from director.plan.source import span_offsets
from tests.pristine import SEED

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden" / "ledger"

# A full apply of the seed plan on the local target, as the engine would write it at the end.
FULL_APPLY = LedgerUpdate(
    yaml={
        "status": "live",
        "last_action": "apply 2026-11-29T08:03:12Z — 6 sections applied, contract 1/2/3 held (target local)",
        "last_verified": "2026-11-29 — workflow registered · happy path · retry/memoization · wait-for-event",
        "resolved_inputs": {
            "trigger": "http",
            "env": "dev",
            "resolved_by": "alice",
            "resolved_at": "2026-11-29T08:00:00Z",
        },
        "target": "local",
    },
    kv={
        "WORKER": "`orders-dev`",
        "WF_NAME": "`orders-wf-dev`",
        "CLASS": "`OrderWorkflow`",
        "URL": "`http://127.0.0.1:8787`",
    },
    checks={
        "workflow registered": ("`orders-wf-dev` listed", "✅ 2026-11-29"),
        "happy path completes": ('`{"status":"complete"}`', "✅ 2026-11-29"),
        "durable retry / memoization": (
            "reserve-inventory 1❌→2✅; validate-order 1 attempt",
            "✅ 2026-11-29",
        ),
        "wait-for-event resumes": ("parked, resumed on send-event → complete", "✅ 2026-11-29"),
    },
)


def _read(path: Path) -> str:
    with open(path, encoding="utf-8", newline="") as fh:
        return fh.read()


def _seed() -> Plan:
    return parse(_read(SEED), path=str(SEED))


def _yaml_lines(text: str) -> list[str]:
    plan = parse(text)
    assert plan.live_state is not None and plan.live_state.yaml_span is not None
    span = plan.live_state.yaml_span
    return text.splitlines()[span.start + 1 : span.end - 1]


def _changed_lines(before: str, after: str) -> list[int]:
    """0-based lines of `before` that a diff replaces or deletes (or inserts after)."""
    out: list[int] = []
    matcher = difflib.SequenceMatcher(a=before.splitlines(True), b=after.splitlines(True), autojunk=False)
    for tag, i1, i2, _, _ in matcher.get_opcodes():
        if tag != "equal":
            out.extend(range(i1, max(i2, i1 + 1)))
    return out


def _mini(yaml_body: str, tables: str = "", newline: str = "\n") -> Plan:
    text = (
        "# Mini\n\n## 1. Do  🟢\n\n```bash\necho hi\n```\n\n## Live State\n\n```yaml\n"
        + yaml_body
        + "```\n\n"
        + tables
        + "\n## Teardown (resumable)  💥\n\n```bash\necho bye\n```\n"
    )
    return parse(text.replace("\n", newline))


def test_full_apply_matches_golden_file() -> None:
    new = apply_update(_seed(), FULL_APPLY)
    golden = GOLDEN / "workflow.cloudflare.applied.md"
    if os.environ.get("DIRECTOR_UPDATE_GOLDEN"):
        golden.write_bytes(new.encode())
    assert new == _read(golden)


def test_full_apply_changes_only_live_state() -> None:
    plan = _seed()
    assert plan.live_state is not None
    new = apply_update(plan, FULL_APPLY)
    span = plan.live_state.span
    changed = _changed_lines(plan.source, new)
    assert changed, "the update changed nothing"
    assert all(span.start < n < span.end for n in changed), changed
    # And the re-parsed plan carries the values that were written.
    after = parse(new)
    assert after.live_state is not None
    assert after.live_state.data["status"] == "live"
    assert after.live_state.data["target"] == "local"
    assert after.live_state.data["resolved_inputs"]["resolved_at"] == "2026-11-29T08:00:00Z"
    kv = {r.key: r.value for r in after.live_state.kv_rows}
    assert kv["WORKER"] == "`orders-dev`" and kv["URL"] == "`http://127.0.0.1:8787`"
    assert kv["bound"] == "`—` (discovered: D1/R2/KV, if any)"  # not in the update: untouched
    assert {r.result for r in after.live_state.check_rows} == {"✅ 2026-11-29"}


def test_only_the_live_state_section_is_split_with_markdown_its_line_ends() -> None:
    plan = _seed()
    assert plan.live_state is not None
    span = plan.live_state.span
    # the section's text by offsets is the section's lines exactly (the write splices only there)
    head, tail = span_offsets(plan.source, span.start, span.end)
    assert plan.source[head:tail] == "".join(plan.source.splitlines(keepends=True)[span.start : span.end])
    assert span_offsets("a\nb\n", 2, 2) == (4, 4) and span_offsets("a\nb", 1, 2) == (2, 3)
    assert span_offsets("a\r\nb\rc\n", 1, 2) == (3, 5)
    # a lone CR ends a line for markdown-it (the parser's line numbers), and so for the splice
    text = plan.source.replace("## Intent", "## In\rtent", 1)
    lone = parse(text)
    assert lone.live_state is not None and lone.live_state.span.start == span.start + 1
    new = apply_update(lone, FULL_APPLY)
    after = parse(new)
    assert after.live_state is not None and after.live_state.data["status"] == "live"
    assert {r.result for r in after.live_state.check_rows} == {"✅ 2026-11-29"}
    assert new.replace(live_state_text(after), "") == text.replace(live_state_text(lone), "")


def test_yaml_alignment_and_comments_survive() -> None:
    new = apply_update(_seed(), FULL_APPLY)
    lines = _yaml_lines(new)
    assert lines[0] == "status:        live             # published template - run it to realize state"
    assert lines[3] == (
        "resolved_inputs: { trigger: http, env: dev, resolved_by: alice, "
        "resolved_at: '2026-11-29T08:00:00Z' } # dogfood RECORD, not a live resolution — "
        "re-interview on the next apply (plan default is http)"
    )
    assert lines[4] == "target:        local"  # a new key, appended in the same aligned style


def test_longer_value_pushes_comment_by_the_minimum() -> None:
    plan = _mini("status:  new   # c\nother:   x\n")
    new = apply_update(plan, LedgerUpdate(yaml={"status": "much-longer"}))
    assert _yaml_lines(new)[0] == "status:  much-longer # c"
    back = apply_update(parse(new), LedgerUpdate(yaml={"status": "gone"}))
    # Shorter again: the comment stays where it now is (its column is the author's, not ours to move).
    assert _yaml_lines(back)[0] == "status:  gone        # c"


@pytest.mark.parametrize(
    "value",
    ["a: b", "x # y", "#hash", "2026-11-29", "yes", "123", "", " pad ", "{curly}", "- dash", "it's", 'q"q'],
)
def test_values_that_need_quoting_reparse_to_the_same_string(value: str) -> None:
    new = apply_update(_seed(), LedgerUpdate(yaml={"last_action": value}))
    plan = parse(new)
    assert plan.live_state is not None
    assert plan.live_state.data["last_action"] == value
    body = "\n".join(_yaml_lines(new))
    assert YAML(typ="rt").load(body)["last_action"] == value


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=40))
def test_any_string_value_round_trips(value: str) -> None:
    plan = _mini("status:        x   # keep me\nlast_action:   y\n")
    new = apply_update(plan, LedgerUpdate(yaml={"last_action": value}))
    body = "\n".join(_yaml_lines(new))
    assert YAML(typ="rt").load(body)["last_action"] == value
    assert _yaml_lines(new)[0] == "status:        x   # keep me"


def test_nested_block_mapping_is_edited_in_place() -> None:
    body = (
        "status: live\n"
        "resolved_inputs:\n"
        "  trigger: cli     # asked\n"
        "  env:     dev\n"
        "  # old: gone soon\n"
        "  old:     1\n"
        "# trailing comment\n"
    )
    new = apply_update(
        _mini(body), LedgerUpdate(yaml={"resolved_inputs": {"trigger": "http", "env": "dev", "by": "al"}})
    )
    assert _yaml_lines(new) == [
        "status: live",
        "resolved_inputs:",
        "  trigger: http    # asked",
        "  env:     dev",
        "  by:      al",  # after the last key that stays
        "  # old: gone soon",
        "# trailing comment",
    ]


def test_empty_value_gets_the_aligned_column() -> None:
    plan = _mini("status:        live\nlast_action:\n")
    new = apply_update(plan, LedgerUpdate(yaml={"last_action": "ran"}))
    assert _yaml_lines(new) == ["status:        live", "last_action:   ran"]


def test_none_and_non_strings() -> None:
    new = apply_update(_mini("a:  1\nb:  x\n"), LedgerUpdate(yaml={"a": None, "b": 7, "c": [1, "x y"]}))
    assert _yaml_lines(new) == ["a:  null", "b:  7", "c:  [1, x y]"]


def test_table_cells_pad_to_column_width_and_keep_other_cells() -> None:
    new = apply_update(_seed(), FULL_APPLY)
    lines = new.splitlines()
    worker = next(line for line in lines if line.startswith("| WORKER"))
    assert worker == "| WORKER        | `orders-dev`            |"
    row = next(line for line in lines if line.startswith("| durable retry"))
    old = next(line for line in _read(SEED).splitlines() if line.startswith("| durable retry"))
    # name and expected cells byte-identical; observed and result replaced
    assert row.split("|")[1:3] == old.split("|")[1:3]
    assert row.endswith("| reserve-inventory 1❌→2✅; validate-order 1 attempt | ✅ 2026-11-29 |")


def test_pipes_in_cell_values_are_escaped() -> None:
    new = apply_update(_seed(), LedgerUpdate(checks={"happy path completes": ("a|b", "✅")}))
    row = next(line for line in new.splitlines() if line.startswith("| happy path completes"))
    assert "| a\\|b     |" in row
    assert len(split_cells(row)) == 4


def test_kv_add_appends_once() -> None:
    update = LedgerUpdate(kv_add=[("DB", "`orders-db` (D1, discovered)")])
    once = apply_update(_seed(), update)
    twice = apply_update(parse(once), update)
    assert once == twice
    lines = once.splitlines()
    bound = next(i for i, line in enumerate(lines) if line.startswith("| bound"))
    assert lines[bound + 1] == "| DB            | `orders-db` (D1, discovered) |"
    plan = parse(once)
    assert plan.live_state is not None
    assert [r.key for r in plan.live_state.kv_rows][-1] == "DB"


def test_unknown_kv_key_or_check_row_is_a_clear_error() -> None:
    with pytest.raises(UnknownLedgerKey, match="no key/value row 'NOPE'"):
        apply_update(_seed(), LedgerUpdate(kv={"NOPE": "x"}))
    with pytest.raises(KeyError, match="no check row 'nope'"):
        apply_update(_seed(), LedgerUpdate(checks={"nope": ("x", "y")}))


def test_crlf_plan_stays_crlf_on_every_line() -> None:
    crlf = _read(SEED).replace("\n", "\r\n")
    plan = parse(crlf)
    assert plan.newline == "\r\n"
    # `target` and the DB row add lines: new lines get the file's line end too.
    update = dataclasses.replace(FULL_APPLY, kv_add=[("DB", "`d`")])
    new = apply_update(plan, update)
    assert new.count("\n") == new.count("\r\n")
    lines = new.splitlines(keepends=True)
    assert all(line.endswith("\r\n") for line in lines[:-1])
    assert lines[-1].endswith("\r\n") == crlf.endswith("\r\n")  # the seed has no final line end
    assert new == apply_update(_seed(), update).replace("\n", "\r\n")


def test_live_state_text_is_the_exact_section() -> None:
    plan = _seed()
    text = live_state_text(plan)
    assert text.startswith("## Live State\n")
    assert text in plan.source
    assert "## Update" not in text


def test_empty_update_returns_the_source_unchanged() -> None:
    plan = _seed()
    assert apply_update(plan, LedgerUpdate()) is plan.source


def test_plan_without_live_state_is_a_plan_error() -> None:
    plan = parse("# No ledger\n\n## 1. Do  🟢\n\n```bash\necho hi\n```\n")
    with pytest.raises(PlanError, match="Live State"):
        apply_update(plan, LedgerUpdate(yaml={"status": "live"}))


def test_nested_mapping_with_every_key_replaced() -> None:
    body = "status: x\nri:\n  a: 1\n  b: 2\n"
    new = apply_update(_mini(body), LedgerUpdate(yaml={"ri": {"c": 3, "d": {"e": 1}}}))
    assert _yaml_lines(new) == ["status: x", "ri:", "  c: 3", "  d: { e: 1 }"]


def test_block_and_multiline_values_become_one_line() -> None:
    body = "last: |\n  block\n  text\nstatus: >-\n  a\n  b\nx: [1,\n  2]   # c\n"
    new = apply_update(_mini(body), LedgerUpdate(yaml={"status": "live", "last": "l", "x": {"a": 1}}))
    assert _yaml_lines(new) == ["last: l", "status: live", "x: { a: 1 }   # c"]


def test_a_value_rendered_after_an_interrupt_mid_dump_renders_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C landing while a ledger value is dumped leaves that thread's YAML emitter mid-document; the next
    write (the run's last Live State, 'interrupted') must not fail with ruamel's EmitterError (a traceback
    seen by the model-based soak)."""
    from ruamel.yaml.emitter import Emitter

    from director.ledger import yamlsplice

    monkeypatch.setattr(yamlsplice, "_RENDERED", {})  # each value below is rendered, not remembered
    assert yamlsplice.render_scalar("warm") == "warm"  # this thread's instance exists
    real = Emitter.expect_scalar
    fired: list[bool] = []

    def interrupted(self: Emitter) -> None:
        if not fired:
            fired.append(True)
            raise KeyboardInterrupt
        real(self)

    monkeypatch.setattr(Emitter, "expect_scalar", interrupted)
    with pytest.raises(KeyboardInterrupt):
        yamlsplice.render_scalar("first")
    assert fired
    assert yamlsplice.render_scalar("after: the interrupt").strip("'\"") == "after: the interrupt"
    assert yamlsplice.render_scalar("plain") == "plain"


def test_a_remembered_rendering_is_the_one_each_value_gets_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """render_scalar and render_key remember plain values' text (a ledger write renders mostly what the last
    one did): values equal in Python but not in YAML (-0.0 and 0.0, True and 1, 1 and 1.0 and "1") and ruamel's
    own scalars (a float's written digits) each keep their own text, remembered or not."""
    from director.ledger import yamlsplice

    doc = YAML(typ="rt").load("a: 1.50\nb: 0x1F\n")
    values = [-0.0, 0.0, True, 1, 1.0, "1", "true", "null", "x: y", doc["a"], doc["b"], 1.5, 31]
    monkeypatch.setattr(yamlsplice, "_RENDERED", {})
    fresh = [(yamlsplice.render_scalar(v), yamlsplice.render_scalar(v, flow=True)) for v in values]
    again = [(yamlsplice.render_scalar(v), yamlsplice.render_scalar(v, flow=True)) for v in values]
    keys = [yamlsplice.render_key(k, flow=f) for k in ("a", "true", "1", 1, "a b: c") for f in (False, True)]
    monkeypatch.setattr(yamlsplice, "_RENDERED", {})
    assert again == fresh
    assert [yamlsplice.render_key(k, flow=f) for k in ("a", "true", "1", 1, "a b: c") for f in (False, True)] == keys
    assert [t for t, _ in fresh] == ["-0.0", "0.0", "true", "1", "1.0", "'1'", "'true'", "'null'", "'x: y'",
                                     "1.50", "0x1F", "1.5", "31"]  # fmt: skip

"""Property: any mutation of a real plan parses to a Plan or raises PlanError — never anything else.

The mutations are the ways hand-edited Markdown goes wrong: lines deleted or duplicated, stray or
unbalanced fences, headings with odd markers, broken table pipes, random unicode. Whatever parses must
also survive lint, JSON export and show (they read the model the parser produced).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from rich.console import Console

from director.errors import PlanError
from director.plan.lint import lint
from director.plan.parse import parse
from director.plan.tojson import to_json
from director.ui.show import render
from tests.pristine import EXAMPLES, SEED

ROOT = Path(__file__).resolve().parent.parent
BASES = [
    p.read_text(encoding="utf-8")
    for p in [
        SEED,
        EXAMPLES / "database.local.md",
        EXAMPLES / "static-site.local.md",
        *sorted((ROOT / "tests" / "plans" / "ok").glob("*.md")),
    ]
]

SNIPPETS = [
    "```",
    "```bash",
    "~~~",
    "```bash {retries=3 backoff=exponential delay=2s timeout=5m}",
    "```bash {retries=x}",
    "```bash {",
    "```yaml",
    "```jsonc",
    "# ✔ check",
    "# ✔️",
    '[ -f x ] && echo "1: ok" || { echo "bad"; exit 1; }',
    'probe && echo "A" || echo "B"',
    "  || { echo 'never'; exit 1; }",
    "cat <<'EOF'",
    "EOF",
    "$(",
    '"unterminated',
    "## 1. Step  🟢",
    "## 1. Step  🟣",
    "## 2. Deploy  🔴 *(`TRIGGER=http` — out)*  /  🟡 *(`cli`/`binding`)*",
    "## 9. Deploy  🔴 *(`a`/`b`)*",
    "## 3. X — `${A}.json`  🟡",
    "## Live State",
    "## Teardown  💥",
    "## Provisioning Inputs",
    "## Requires-discovery  ✔",
    "# Another title",
    "| # | Question | Options (closed enum) | Default | Sets | Gates |",
    "|---|---|---|---|---|---|",
    "| 1 | Q | `a` / `b` | `c` | `K` | |",
    "| ✔ check | expected | observed | result |",
    "| key | value |",
    "| x | y |",
    "|",
    "||",
    "> → Live State: X",
    'URL="x"   # realized in §3',
    'URL="x"   # realized in §99',
    "1. **Happy path** — works",
    "status: [",
    "resolved_inputs:",
    "  - a",
    "\t",
    "",
]

_text = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=30)
_op = st.tuples(
    st.sampled_from(["delete", "duplicate", "insert", "insert", "replace", "splice-unicode"]),
    st.integers(min_value=0, max_value=10_000),
    st.one_of(st.sampled_from(SNIPPETS), _text),
)


def _mutate(text: str, ops: list[tuple[str, int, str]]) -> str:
    lines = text.split("\n")
    for kind, pos, payload in ops:
        i = pos % (len(lines) + 1)
        if kind == "delete" and i < len(lines):
            del lines[i]
        elif kind == "duplicate" and i < len(lines):
            lines.insert(i, lines[i])
        elif kind == "insert":
            lines.insert(i, payload)
        elif kind == "replace" and i < len(lines):
            lines[i] = payload
        elif kind == "splice-unicode" and i < len(lines):
            line = lines[i]
            at = pos % (len(line) + 1)
            lines[i] = line[:at] + payload + line[at:]
    return "\n".join(lines)


def _exercise(text: str) -> None:
    try:
        plan = parse(text, "mutant.md")
    except PlanError as exc:
        assert exc.line is None or exc.line >= 1
        return
    json.dumps(to_json(plan))
    for finding in lint(plan):
        assert finding.line >= 1
    render(plan, Console(file=io.StringIO(), width=100))


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=st.sampled_from(range(len(BASES))), ops=st.lists(_op, min_size=1, max_size=8))
@example(base=13, ops=[("delete", 1, "```"), ("insert", 3393, "²")])  # `²` is a digit to str.isdigit, not to int()
def test_mutated_plans_parse_or_raise_plan_error(base: int, ops: list[tuple[str, int, str]]) -> None:
    _exercise(_mutate(BASES[base], ops))


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=400))
def test_arbitrary_text_parses_or_raises_plan_error(text: str) -> None:
    _exercise(text)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(SNIPPETS), max_size=25))
def test_snippet_soup(parts: list[str]) -> None:
    _exercise("# T\n\n" + "\n".join(parts))


def test_a_superscript_digit_is_not_an_inputs_number() -> None:
    """`str.isdigit` says yes to `²`, `int()` does not: an input whose `#` cell is `²` is numbered by its row."""
    table = "| # | Question | Options | Default | Sets |\n|---|---|---|---|---|\n| ² | Env? | `dev` / `prod` | `dev` | `ENV` |\n"
    _exercise(f"# P\n\n## Provisioning Inputs\n\n{table}\n## 1. Step  🟢\n\n```bash\ntrue\n```\n")


@pytest.mark.parametrize("attribute", ["retries=²", "approvals=²"])
def test_a_superscript_digit_in_a_fence_attribute_is_a_plan_error(attribute: str) -> None:
    with pytest.raises(PlanError, match=f"bad {attribute.split('=')[0]}='²'"):
        parse(f"# P\n\n## 1. Step  🟢\n\n```bash {{{attribute}}}\ntrue\n```\n", "p.md")

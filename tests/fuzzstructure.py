"""Fuzzed plan *structure* (issue 39): Markdown nesting, fences, control characters, lone surrogates and
Live State YAML (aliases, merges, bombs, deep nesting, escapes), inserted into the counter plan.

`structured_plans` builds them; `check_read` is the property for the commands that only read (`show`,
`show --json`, `lint`, `status`, `output`), `check_run` for those that run blocks (`plan`, `check`,
`apply`, `teardown`): each answers with a documented code and, when it refuses, one `error: …` line that
names the file; never a traceback; a plan refused as malformed is left byte for byte as it was; and each
answers within `ANSWER_S` seconds (docs/limits.md: every bound there keeps a command's work in proportion
to the plan's size; a small plan is answered in well under a second, the bound only catches a run away).

The counter plan's blocks only write under `$COUNTER_OUT`; what is inserted is inert text (no command), so
`apply` of a fuzzed plan never does more than the counter plan does. tests/test_fuzz.py runs a few dozen
examples in CI; bench/fuzz.py runs thousands and prints the figures.
"""

from __future__ import annotations

import time
from pathlib import Path

from hypothesis import strategies as st

from director.errors import ExitCode
from tests.fuzzplans import _cli, counter_env
from tests.planmaker import CounterPlan, Step

ANSWER_S = 60.0  # far above what any example takes (under a second); only a run away exceeds it

BASE = CounterPlan([Step(), Step(marker="🔴")]).text()
_LINES = BASE.split("\n")
_YAML_AT = next(i for i, ln in enumerate(_LINES) if ln.startswith("status:")) + 1  # inside Live State's YAML

CONTROLS = [chr(c) for c in range(32) if c != 10] + ["\x7f", "\x85", "\x9b", "\u2028", "\u2029", "\ufeff",
                                                     "\u200b", "\u202e", "\ufffd", "\U0001f680"]  # fmt: skip


def _nested(kinds: list[str], leaf: str) -> str:
    """Containers opened inside each other (`-`, `1.`, `>`), one a line, then `leaf` in the innermost."""
    out, indent, quote = [], "", ""
    for kind in kinds:
        if kind == ">":
            quote += "> "
            out.append(f"{indent}{quote}quoted")
        else:
            out.append(f"{indent}{quote}{kind} item")
            indent += " " * (len(kind) + 1)
    out.append(f"{indent}{quote}{leaf}")
    return "\n".join(out)


nesting = st.builds(
    _nested,
    st.lists(st.sampled_from(["-", "*", "1.", ">"]), min_size=1, max_size=130),
    st.sampled_from(["leaf", "```bash", "## 9. Hidden  🟢", "| a | b |", "```"]),
)

fences = st.builds(
    lambda ch, n, info, body, close: f"{ch * n}{info}\n{body}\n" + (f"{ch * close}\n" if close else ""),
    st.sampled_from(["`", "~"]),
    st.integers(min_value=3, max_value=6),
    st.sampled_from(["", "bash", "bash {retries=2}", "yaml", "text", " bash", "bash `x`", "{}"]),
    st.sampled_from(["echo x", "# ✔ check", "```bash", "~~~", "````", "", "```"]),
    st.integers(min_value=0, max_value=7),
)

controls = st.builds(
    lambda cs, word: word.join(cs), st.lists(st.sampled_from(CONTROLS), min_size=1, max_size=6),
    st.sampled_from(["", "x", "## ", "| ", "- "]),
)  # fmt: skip


def _bomb(width: int, depth: int) -> str:
    rows = [f"l0: &l0 [{', '.join(['x'] * width)}]"]
    rows += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]" for i in range(1, depth)]
    return "\n".join(rows)


def _deep_flow(n: int) -> str:
    return "deep: " + "[" * n + "x" + "]" * n


def _deep_block(n: int) -> str:
    return "deep:\n" + "".join("  " * i + "- \n" for i in range(n)) + "  " * n + "- x"


YAML_SAMPLES = [
    "base: &b { a: 1 }\nmerged:\n  <<: *b", "a: &x 1\nb: *x", "a: *missing", "a: &x\nb: *x",
    'last_action: "\\ud800"', 'k: "\\U0000DFFF"', "k: '\\ud800'", 'k: "\\x00\\x1b[31m"', "k: !!binary aGk=",
    "k: !custom x", "---\nother: doc", "? [a, b]\n: c", "k: |\n  multi\n  line", "k: >-\n  folded",
    '"\\ud800": key', "resolved_inputs: &r { mode: a }\nagain: *r", "k: [a, [b, {c: *", "\t k: tab",
]  # fmt: skip

yaml_fragments = st.one_of(
    st.builds(_bomb, st.integers(min_value=1, max_value=12), st.integers(min_value=1, max_value=12)),
    st.builds(_deep_flow, st.integers(min_value=1, max_value=400)),
    st.builds(_deep_block, st.integers(min_value=1, max_value=200)),
    st.sampled_from(YAML_SAMPLES),
)

fragment = st.one_of(nesting, fences, controls)


def _build(insertions: list[tuple[int, str]], yaml: list[str]) -> bytes:
    lines = list(_LINES)
    for k, text in reversed(sorted(((p % (len(_LINES) + 1), t) for p, t in insertions), key=lambda x: x[0])):
        lines[k:k] = text.split("\n")
    for text in yaml:  # inside the YAML block: the offsets above moved it, find it again
        at = next(i for i, ln in enumerate(lines) if ln.startswith("status:")) + 1
        lines[at:at] = text.split("\n")
    return "\n".join(lines).encode("utf-8")


def structured_plans() -> st.SearchStrategy[bytes]:
    """The counter plan with up to 4 structural fragments inserted anywhere and up to 2 YAML fragments
    inserted into its Live State YAML."""
    return st.builds(
        _build,
        st.lists(st.tuples(st.integers(min_value=0, max_value=1 << 16), fragment), max_size=4),
        st.lists(yaml_fragments, max_size=2),
    )


DOCUMENTED = {int(c) for c in ExitCode}
# The codes each command may answer a fuzzed plan with (others would say the property broke).
READ = {"show": {0, 65}, "lint": {0, 1, 65}, "status": {0, 65}, "output": {0, 64, 65}}  # 64: no Live State
RUN = {"plan": {0, 2, 3, 4, 10, 65}, "check": {0, 2, 3, 10, 12, 65}, "apply": {0, 3, 4, 10, 65},
       "teardown": {0, 3, 4, 9, 10, 65}}  # fmt: skip


def _answer(args: list[str], path: Path, data: bytes, allowed: set[int]) -> int:
    started = time.monotonic()
    code, _, err = _cli(*args)
    spent = time.monotonic() - started
    assert spent < ANSWER_S, f"{args}: {spent:.0f} s"
    assert "Traceback" not in err, f"{args}: {err}"
    assert code in DOCUMENTED and code in allowed, (args, code, err[-2000:])
    if code in (ExitCode.USAGE, ExitCode.PLAN_ERROR, ExitCode.INTERNAL, ExitCode.LEDGER_CONFLICT):
        # one `error:` line naming the file; apply/teardown's lint gate prints one per lint error first
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert lines and all(ln.startswith("error: ") and path.name in ln for ln in lines), err
        assert len(lines) == 1 or "lint error" in lines[-1], err
    if code == ExitCode.PLAN_ERROR:
        assert path.read_bytes() == data, f"{args} changed a plan it refused"
    return code


def check_read(data: bytes, path: Path) -> str:
    """The read-only commands on one fuzzed plan; returns the outcome (`show`'s code)."""
    path.write_bytes(data)
    codes = {args[0]: _answer(args, path, data, READ[args[0]]) for args in (
        ["show", str(path)], ["show", str(path), "--json"], ["lint", str(path)], ["status", str(path)],
        ["output", str(path)],
    )}  # fmt: skip
    assert (codes["show"] == 65) == (codes["lint"] == 65), codes
    return f"exit {codes['show']}"


def check_run(data: bytes, path: Path) -> str:
    """`plan`, `check`, `apply`, `teardown` on one fuzzed plan (its blocks are the counter plan's);
    returns the outcome (`apply`'s code)."""
    path.write_bytes(data)
    codes = {}
    with counter_env(path.parent / "out"):
        for args in (
            ["plan"], ["check"], ["apply", "--auto-approve", "--step-timeout", "20"],
            ["teardown", "--approve", "teardown", "--step-timeout", "20"],
        ):  # fmt: skip
            codes[args[0]] = _answer([*args, str(path)], path, path.read_bytes(), RUN[args[0]])
    return f"exit {codes['apply']}"

"""Fuzzed plans for the bad-input suite: hypothesis strategies and the one property they must satisfy.

`mutated_plans` starts from real plans (the seed, the examples, the test and soak plans, the known-bad
ones) and damages them line by line: deletes, duplicates, swaps, structural fragments inserted (headings,
fences, table rows, YAML, markers), characters replaced, truncation, CRLF, bytes that are not UTF-8.
`check_plan` is the property (issue 14): reading the plan gives a Plan or a PlanError, never anything
else; `show`, `show --json` and `lint` through the CLI entry point end with a documented code, an error is
one `error: …` line naming the file, never a traceback; and the file is left byte for byte as it was.

`ledger_mutated_plans` damages only the `## Live State` section of a plan whose blocks are known to be
harmless (tests/planmaker.py's counter plan), so that `apply` can run it: `check_apply` then asks the same
of a whole run (the engine, the ledger composition and the write-back on a damaged ledger), and that the
text outside Live State is kept byte for byte.

tests/test_fuzz.py runs a few hundred examples in CI; bench/fuzz.py runs ≥ 10,000.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator
from pathlib import Path

from hypothesis import strategies as st

from director.cli import main
from director.errors import ExitCode, PlanError
from director.ledger.planfile import read_text
from director.plan.parse import parse
from tests import faults
from tests.planmaker import CounterPlan, Step
from tests.pristine import every_plan

ROOT = Path(__file__).resolve().parent.parent


def _bases() -> list[bytes]:
    paths = every_plan()
    paths += sorted((ROOT / "tests" / "plans").rglob("*.md"))
    texts = [p.read_bytes() for p in paths]
    texts += [CounterPlan([Step(), Step(marker="🔴")]).text().encode(), faults.CHAIN.encode()]
    texts += [faults.GATED.encode(), b"", b"# Just a title\n"]
    return texts


BASES = _bases()

# Fragments that change a plan's structure where they land.
FRAGMENTS = [
    "## Live State", "## Teardown  💥", "## 0. Variables", "## 3. Gate  🔴", "## 9. Wait  ⏳", "## 2. X  🟢/🟡",
    "## Requires-discovery  ✔", "## 7. Config — `${DIR}/app.yaml`  🟡", "# Another title", "## ", "##",
    "```", "```bash", "```yaml", "```json", "````", "~~~", "```bash {retries=3 delay=1s}", "```bash retry=x",
    "| key | value |", "|---|---|", "| a |", "| # | Question | Options (closed enum) | Default | Sets | Gates |",
    "| 1 | Q? | `a` / `b` | `c` | `K` | §9 |", "| ✔ check | expected | observed | result |",
    "status: [unclosed", "status: live", "resolved_inputs: { a: 1", "- item", "key: value: other", "? complex",
    "&anchor x", "*alias", "!!python/object:os.system ls", "'", '"', "\\", "$(rm -rf /)", "${", "${X:-", "`",
    "> → Live State: X", "> → Live State:", "# ✔ check", "[ -f x ] && echo ok || { echo no; exit 1; }",
    "export X=1", "🔴", "💥", "✔", "🟢", "\t", "\u200b", "\ufeff", "\u2028", "ü", "𝔘", "<!-- comment -->",
    "**Acceptance contract:**", "1. **X** — y.", "KNOB=a → 1; b → 2", "# = ${MODE}",
]  # fmt: skip

_op = st.tuples(
    st.sampled_from(["del", "dup", "swap", "ins", "edit", "trunc", "crlf", "bytes"]),
    st.integers(min_value=0, max_value=1 << 20),
    st.integers(min_value=0, max_value=1 << 20),
    st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=24)),
    st.binary(min_size=1, max_size=4),
)


def mutate(base: bytes, ops: list[tuple[str, int, int, str, bytes]]) -> bytes:
    """Apply the ops in order to the lines of `base` (decoded leniently; `bytes` puts raw bytes back)."""
    lines = base.decode("utf-8", "surrogateescape").split("\n")
    raw: list[tuple[int, bytes]] = []
    for kind, a, b, fragment, blob in ops:
        n = max(len(lines), 1)
        i, j = a % n, b % n
        if kind == "del" and lines:
            del lines[i]
        elif kind == "dup" and lines:
            lines.insert(i, lines[i])
        elif kind == "swap" and lines:
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "ins":
            lines.insert(i, fragment)
        elif kind == "edit" and lines:
            ln = lines[i]
            k = b % (len(ln) + 1)
            lines[i] = ln[:k] + fragment + ln[k + 1 :]
        elif kind == "trunc":
            text = "\n".join(lines)
            lines = text[: a % (len(text) + 1)].split("\n")
        elif kind == "crlf":
            lines = [ln + "\r" for ln in lines]
        elif kind == "bytes":
            raw.append((i, blob))
    data = "\n".join(lines).encode("utf-8", "surrogateescape")
    for i, blob in raw:
        k = i % (len(data) + 1)
        data = data[:k] + blob + data[k:]
    return data


def mutated_plans() -> st.SearchStrategy[bytes]:
    """Real plans, damaged by up to 8 line operations."""
    return st.builds(mutate, st.sampled_from(BASES), st.lists(_op, max_size=8))


def _cli(*args: str) -> tuple[int, str, str]:
    """`director ARGS` in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(args))
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
        else:
            code = 0
    return code, out.getvalue(), err.getvalue()


ALLOWED = {"show": {0, 65}, "lint": {0, 1, 65}}


def check_plan(data: bytes, path: Path) -> str:
    """The property for one fuzzed plan written at `path`; returns the outcome ("plan" or "error NN")."""
    path.write_bytes(data)
    try:
        parse(read_text(path), path=str(path))
        outcome = "plan"
    except PlanError:
        outcome = "plan-error"
    for args in (["show", str(path)], ["show", str(path), "--json"], ["lint", str(path)]):
        code, _, err = _cli(*args)
        assert "Traceback" not in err, f"{args}: {err}"
        assert code in {int(c) for c in ExitCode} and code in ALLOWED[args[0]], (args, code, err)
        if code == ExitCode.PLAN_ERROR:
            lines = [ln for ln in err.splitlines() if ln.strip()]
            assert len(lines) == 1 and lines[0].startswith("error: ") and path.name in lines[0], err
            assert outcome == "plan-error", f"{args}: 65 for a plan that parses: {err}"
        elif outcome == "plan-error":
            raise AssertionError(f"{args}: exit {code} for a plan that does not parse")
        assert path.read_bytes() == data, f"{args} changed the plan file"
    return outcome


COUNTER = CounterPlan([Step(), Step(marker="🔴")]).text()
_LS_START = COUNTER.index("## Live State")
_LS_END = COUNTER.index("## Teardown")


def _mutate_ledger(ops: list[tuple[str, int, int, str, bytes]]) -> bytes:
    ledger = mutate(COUNTER[_LS_START:_LS_END].encode(), [o for o in ops if o[0] not in ("trunc", "crlf")])
    return COUNTER[:_LS_START].encode() + ledger.rstrip(b"\n") + b"\n\n" + COUNTER[_LS_END:].encode()


def ledger_mutated_plans() -> st.SearchStrategy[bytes]:
    """The counter plan with its Live State section damaged by up to 6 line operations."""
    return st.builds(_mutate_ledger, st.lists(_op, max_size=6))


@contextlib.contextmanager
def counter_env(out: Path) -> Iterator[None]:
    """The environment an in-process run of the counter plan needs (`$COUNTER_OUT`, CI, no colour), put
    back as it was afterwards."""
    out.mkdir(exist_ok=True)
    saved = {k: os.environ.get(k) for k in ("COUNTER_OUT", "CI", "NO_COLOR")}
    os.environ.update({"COUNTER_OUT": str(out), "CI": "1", "NO_COLOR": "1"})
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def check_apply(data: bytes, path: Path) -> str:
    """`apply` of a plan with a damaged ledger: a documented code, at most one error line, no traceback;
    the text outside Live State never changes. Returns the outcome ("exit NN")."""
    path.write_bytes(data)
    with counter_env(path.parent / "out"):
        code, _, err = _cli("apply", str(path), "--auto-approve", "--step-timeout", "20")
    assert "Traceback" not in err, err
    assert code in {int(c) for c in ExitCode}, (code, err)
    if code in (ExitCode.USAGE, ExitCode.PLAN_ERROR, ExitCode.INTERNAL, ExitCode.LEDGER_CONFLICT):
        lines = [ln for ln in err.splitlines() if ln.strip()]
        # one error line; the lint gate (docs/lint.md) first prints one per lint error, each naming its line
        assert lines and all(ln.startswith("error: ") for ln in lines), err
        assert len(lines) == 1 or "lint error" in lines[-1], err
    after = path.read_bytes()
    if code == ExitCode.PLAN_ERROR:
        assert after == data, "a plan refused as malformed was changed"
    else:
        # What precedes and follows the damaged region is the counter plan's own text, by construction
        # (a fragment such as `## Teardown` may have been inserted *inside* the ledger, e.g. in its YAML).
        new = after.decode()
        before, after_ls = COUNTER[:_LS_START], COUNTER[_LS_END:]
        assert new.startswith(before) and new.endswith(after_ls), "text outside Live State changed"
    return f"exit {code}"

"""Lint: where a verify block's exit status cannot reflect its checks (`verify_issues`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from director.plan.bash.checks import verify_model
from director.plan.bash.grammar import analysed, descendants, parse
from director.plan.bash.shape import simple_name, statements
from director.plan.bash.values import captured_functions

# How a check whose exit status cannot fail is judged (docs/verify-semantics.md, "Verdicts by contrast").
_SEEN = (
    "Director compares which of its lines and exits run with what it did before and after an act it saw "
    "succeed; until it has seen both it reads the check as inconclusive, and `check` reports a path never "
    "seen as drift"
)
_CONTRAST = (
    f"this check exits 0 whatever it finds, and its structure cannot say which line is the good news: "
    f"{_SEEN}. To make its exit status say it, end its failure branch with `exit 1`"
)
_PASSTHROUGH = frozenset({"tail", "head", "cat", "tee", "sort", "uniq", "less", "more", "column", "nl"})


@dataclass(frozen=True)
class ShellIssue:
    """A weakness of a verify block: `line` is 0-based within the block body."""

    line: int
    code: str
    message: str


def verify_issues(text: str, context: str = "") -> list[ShellIssue]:
    """Checks whose failure the block's exit status does not show, and how Director reads them."""
    model = verify_model(text, 0, context)
    out: list[ShellIssue] = []
    pipefail = bool(re.search(r"\bpipefail\b", text))
    root, _ = analysed(text)
    values = captured_functions(parse(text))
    if not pipefail:
        for st in statements(root):
            for pl in [st, *descendants(st, frozenset({"pipeline"}))]:
                if pl.type != "pipeline" or _inside(pl, frozenset({"command_substitution", "list"})):
                    continue
                if _in_function(pl, values):
                    continue  # a function whose output is used as a value: its status checks nothing
                parts = [c for c in pl.children if c.is_named]
                name, _ = simple_name(parts[-1]) if parts else ("", [])
                if name.rsplit("/", 1)[-1] in _PASSTHROUGH:
                    out.append(
                        ShellIssue(
                            pl.start_point.row,
                            "verify-exit-status",
                            f"this pipeline's status is `{name}`'s, which succeeds whatever the command "
                            "before it printed; the check cannot fail (assert on the output, e.g. "
                            "`| grep -q …`, or `set -o pipefail`)",
                        )
                    )
    for ln in model.lines:
        if ln.polarity != "fail" or ln.hard:
            continue
        if ln.alternative:
            out.append(
                ShellIssue(
                    ln.row,
                    "soft-alternative",
                    f"`{ln.message}` is an exit-0 alternative: the block succeeds either way, so only "
                    f"contrast can judge it ({_SEEN}); add `exit 1` to its branch to make it a failure",
                )
            )
        else:
            out.append(
                ShellIssue(
                    ln.row,
                    "fail-without-exit",
                    f"`{ln.message}` reports a failure but the block goes on (no `exit 1`): only "
                    f"contrast can judge it ({_SEEN})",
                )
            )
    for g in model.guards:
        if g.kind != "assertion" or g.poll or g.enforced:
            continue
        msgs = [ln for ln in model.lines if ln.probe in g.lines]
        if msgs:
            out.append(
                ShellIssue(
                    g.row,
                    "unenforced-check",
                    f"if this condition fails, `{msgs[0].message}` is just not printed and the block goes "
                    f"on: only contrast can judge it ({_SEEN}); add `|| {{ echo \"…\"; exit 1; }}`",
                )
            )
    warned = {i.line for i in out}
    for u in model.units:
        if not u.can_fail and u.lines and not any(u.row <= line <= u.end_row for line in warned):
            out.append(ShellIssue(u.row, "judged-by-contrast", _CONTRAST))
    return sorted(out, key=lambda i: (i.line, i.code))


def _in_function(node: Node, names: frozenset[str]) -> bool:
    """Whether `node` stands in the body of one of these functions."""
    p = node.parent
    while p is not None:
        if p.type == "function_definition":
            name = p.child_by_field_name("name")
            return name is not None and (name.text or b"").decode("utf-8", "surrogateescape") in names
        p = p.parent
    return False


def _inside(node: Node, types: frozenset[str]) -> bool:
    """Whether an ancestor of `node` is of one of `types`."""
    p = node.parent
    while p is not None:
        if p.type in types:
            return True
        p = p.parent
    return False

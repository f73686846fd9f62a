"""Lint: where a verify block's exit status cannot reflect its checks (`verify_issues`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from director.plan.bash.checks import simple_name, statements, verify_model
from director.plan.bash.grammar import analysed, descendants, parse
from director.plan.bash.words import Command

_PASSTHROUGH = frozenset({"tail", "head", "cat", "tee", "sort", "uniq", "less", "more", "column", "nl"})


@dataclass(frozen=True)
class ShellIssue:
    """A weakness of a verify block: `line` is 0-based within the block body."""

    line: int
    code: str
    message: str


def verify_issues(text: str) -> list[ShellIssue]:
    """Checks whose failure the block's exit status does not show, and how Director reads them."""
    model = verify_model(text)
    out: list[ShellIssue] = []
    pipefail = bool(re.search(r"\bpipefail\b", text))
    root, _ = analysed(text)
    if not pipefail:
        for st in statements(root):
            for pl in [st, *descendants(st, frozenset({"pipeline"}))]:
                if pl.type != "pipeline" or _inside(pl, frozenset({"command_substitution", "list"})):
                    continue
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
    values = _value_lines(text)
    for ln in model.lines:
        if ln.polarity != "fail" or ln.hard or ln.probe in values:
            continue
        if ln.alternative:
            out.append(
                ShellIssue(
                    ln.row,
                    "soft-alternative",
                    f"`{ln.message}` is an exit-0 alternative: the block succeeds either way, so "
                    "Director reads it, when printed, as an inconclusive check (never a pass) and the "
                    "run ends with exit 10; add `exit 1` to its branch to make it a failure",
                )
            )
        else:
            out.append(
                ShellIssue(
                    ln.row,
                    "fail-without-exit",
                    f"`{ln.message}` reports a failure but the block goes on (no `exit 1`); Director "
                    "reads it, when printed, as an inconclusive check",
                )
            )
    for g in model.guards:
        if g.kind != "assertion" or g.poll or g.enforced:
            continue
        msgs = [ln for ln in model.lines if ln.probe in g.lines and ln.probe not in values]
        if msgs:
            out.append(
                ShellIssue(
                    g.row,
                    "unenforced-check",
                    f"if this condition fails, `{msgs[0].message}` is just not printed and the block goes "
                    "on; Director reads that as an inconclusive check; add `|| { echo \"…\"; exit 1; }`",
                )
            )
    return sorted(out, key=lambda i: (i.line, i.code))


def _value_lines(text: str) -> frozenset[int]:
    """The echo/printf commands whose output is a value, not a line of the block's output.

    An `echo` inside `$(…)` is never a report line; an `echo` in a function is one only when the function
    prints: a function every call of which is captured (`$(f)`, or from another such function) returns
    its output as a value, so `f() { cut … || echo 0; }; N=$(f)` supplies a default, it reports no failure.
    An echo sent to standard error (`>&2`) still reaches the block's output.
    """
    script = parse(text)
    calls: dict[str, list[Command]] = {name: [] for name in script.functions}
    for c in script.commands:
        if c.kind == "command" and c.name in calls:
            calls[c.name].append(c)
    captured: set[str] = set()
    grew = True
    while grew:
        grew = False
        for name, sites in calls.items():
            if name not in captured and sites and all(c.in_subst or c.function in captured for c in sites):
                captured.add(name)
                grew = True
    if not captured:
        return frozenset()
    to_stderr = _to_stderr(text)
    return frozenset(
        c.id
        for c in script.commands
        if c.kind == "command" and c.function in captured and c.id not in to_stderr
    )


_STDOUT_TO_STDERR = re.compile(r"1?(>&\s*2|>>?\s*/dev/stderr)")


def _to_stderr(text: str) -> set[int]:
    """Commands whose standard output a redirection sends to standard error (`>&2`, `>/dev/stderr`)."""
    root, b = analysed(text)
    out: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        n, redirected = stack.pop()
        if n.type == "redirected_statement":
            redirected = redirected or any(
                _STDOUT_TO_STDERR.fullmatch((r.text or b"").decode("utf-8", "replace"))
                for r in n.children
                if r.type == "file_redirect"
            )
        if redirected and n.id in b.by_node:
            out.add(b.by_node[n.id])
        stack.extend((c, redirected) for c in n.children)
    return out


def _inside(node: Node, types: frozenset[str]) -> bool:
    """Whether an ancestor of `node` is of one of `types`."""
    p = node.parent
    while p is not None:
        if p.type in types:
            return True
        p = p.parent
    return False

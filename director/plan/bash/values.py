"""What a verify block prints as a *value*, not as a line of its output (pure).

A function every call of which is captured (`N=$(count)`) returns what it echoes; that echo reports
nothing (`f() { cut … || echo 0; }` supplies a default). Read by the check model (`checks.verify_model`)
and by lint, so the two agree.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from director.plan.bash.grammar import analysed, parse
from director.plan.bash.words import Command, Script

_STDOUT_TO_STDERR = re.compile(r"1?(>&\s*2|>>?\s*/dev/stderr)")


def value_lines(text: str) -> frozenset[int]:
    """The echo/printf commands whose output is a value, not a line of the block's output.

    An `echo` inside `$(…)` is never a report line; an `echo` in a function is one only when the function
    prints: a function every call of which is captured (`$(f)`, or from another such function) returns
    its output as a value, so `f() { cut … || echo 0; }; N=$(f)` supplies a default, it reports no failure.
    An echo sent to standard error (`>&2`) still reaches the block's output.
    """
    script = parse(text)
    captured = captured_functions(script)
    if not captured:
        return frozenset()
    to_stderr = _to_stderr(text)
    return frozenset(
        c.id
        for c in script.commands
        if c.kind == "command" and c.function in captured and c.id not in to_stderr
    )


def captured_functions(script: Script) -> frozenset[str]:
    """The block's functions every call of which is captured (`$(f)`, or from another such function)."""
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
    return frozenset(captured)


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

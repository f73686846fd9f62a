"""The shape of bash statements, as the verify analysis reads it: statement lists, and-or chains, exits.

Shared by the verify model (`checks`), its check units (`units`) and lint: where a list's statements are,
how `a && b || c` flattens, and which statements end the block on failure (`exit N≠0`, `return N≠0`,
`false`) or end it early with success (`exit 0`, a bare `exit` after a message).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from tree_sitter import Node

from director.plan.bash.words import node_text, word_of

T = TypeVar("T")


def statements(node: Node) -> list[Node]:
    """The statements of a statement list (program, group, branch, loop body, case arm)."""
    out = []
    skip_first = node.type == "case_item"
    for c in node.children:
        if not c.is_named or c.type == "comment":
            continue
        if skip_first and c.type in (
            "word",
            "extglob_pattern",
            "string",
            "raw_string",
            "concatenation",
            "simple_expansion",
            "expansion",
            "number",
        ):
            continue  # case patterns
        skip_first = False
        if c.type in ("do_group",):
            out.extend(statements(c))
            continue
        out.append(c)
    return out


def flatten(node: Node) -> tuple[list[Node], list[str]]:
    """`a && b || c` (left-nested lists) as elements [a, b, c] and ops ["", "&&", "||"]."""
    if node.type != "list":
        return [node], [""]
    kids = [c for c in node.children if c.type != "comment"]
    left, op, right = kids[0], kids[1], kids[2] if len(kids) > 2 else None
    els, ops = flatten(left)
    if right is not None:
        r_els, r_ops = flatten(right)
        els.extend(r_els)
        ops.extend([node_text(op), *r_ops[1:]])
    return els, ops


def unredirect(node: Node) -> Node:
    """The statement a redirection wraps (`{ …; } >&2` is the group)."""
    if node.type == "redirected_statement":
        return node.child_by_field_name("body") or node
    return node


def simple_name(node: Node) -> tuple[str, list[str]]:
    """(command name, argument texts) of a simple `command` node."""
    if node.type == "redirected_statement":
        node = node.child_by_field_name("body") or node
    if node.type != "command":
        return "", []
    name = ""
    args: list[str] = []
    for c in node.children:
        if c.type == "command_name":
            name = node_text(c)
        elif c.is_named and c.type != "variable_assignment":
            args.append(word_of(c).pattern)
    return name, args


def any_after(items: Sequence[T], pred: Callable[[T], bool]) -> list[bool]:
    """For each position, whether `pred` holds for any item after it -- in one pass from the end, where
    asking `any(pred(x) for x in items[i + 1:])` at every position is quadratic in a long block."""
    out = [False] * len(items)
    seen = False
    for i in range(len(items) - 1, -1, -1):
        out[i] = seen
        seen = seen or pred(items[i])
    return out


def is_fail_exit(node: Node) -> bool:
    """`exit N`/`return N` with N ≠ 0 (a computed status counts), or `false`."""
    name, args = simple_name(node)
    if name in ("exit", "return"):
        if not args:
            return False
        try:
            return int(args[0]) != 0
        except ValueError:
            return True
    return name == "false" and not args


def group_exits(node: Node) -> bool:
    """A `{ …; exit N; }` / branch that ends the script on failure (an `exit` in `( … )` ends the subshell
    only: `probe || (echo "bad"; exit 1)` lets the block go on)."""
    if node.type in ("compound_statement", "if_statement", "else_clause", "elif_clause"):
        return any(is_fail_exit(s) or group_exits(s) for s in statements(node))
    if node.type == "redirected_statement":
        body = node.child_by_field_name("body")
        return body is not None and group_exits(body)
    return is_fail_exit(node)

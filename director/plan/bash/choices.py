"""Report lines whose structure cannot say whether they mean success or failure (`choice_lines`).

The branches of an `if … else` or a `case` none of which ends the block failed, a lone branch that prints
and ends well beside one whose status can fail, and a line an early successful exit follows: which of them is
the good news is said only in words, so a verdict on them needs contrast (`director.plan.contrast`). A
function whose status decides its check (`return 1` on one path) is the exception: its returns say it.
"""

from __future__ import annotations

from collections.abc import Mapping

from tree_sitter import Node

from director.plan.bash.shape import any_after, is_fail_exit, simple_name, statements, unredirect
from director.plan.bash.units import (
    _EXITS,
    _branch_lists,
    _functions,
    _if_parts,
    _probes_under,
    _Statuses,
    _walk,
)
from director.plan.bash.words import Script


def _is_ok_exit(node: Node) -> bool:
    """`exit 0`, a bare `exit` or `return 0`: the block (or function) ends here as a success."""
    name, args = simple_name(node)
    return name in _EXITS and (not args or args[0] == "0")


def _statement_lists(root: Node) -> list[list[Node]]:
    """Every statement list under `root`: the block, groups, loop bodies, `if` branches, `case` arms."""
    out: list[list[Node]] = []
    for n in _walk(root):
        if n.type in ("program", "compound_statement", "subshell", "do_group", "else_clause", "case_item"):
            out.append(statements(n))
        elif n.type in ("if_statement", "elif_clause"):
            branch: list[Node] = []
            mode = "cond"
            for c in n.children:
                if c.type == "then":
                    mode = "then"
                elif c.type in ("elif_clause", "else_clause"):
                    break
                elif mode == "then" and c.is_named and c.type != "comment":
                    branch.append(c)
            out.append(branch)
    return out


def choice_lines(
    root: Node, script: Script, node_cmd: Mapping[int, int], report_lines: frozenset[int]
) -> frozenset[int]:
    """Report lines whose structure cannot say whether they mean success or failure.

    The branches of an `if … else` or a `case` of which none ends the block failed (each prints its own
    line: which one is the good news is said only in words), and a line an early successful exit follows
    (`echo "… not running"; exit 0`).
    """
    st = _Statuses(script, node_cmd, _functions(root))
    out: set[int] = set()
    for n in _walk(root):
        alternatives = (n.type == "if_statement" and any(c.type == "else_clause" for c in _walk(n))) or (
            n.type == "case_statement"
        )
        # a branch that returns non-zero from its function (`else echo "✗ $1"; return 1`): the function's
        # status says which branch is the good news, as an `exit 1` does for the block
        decided = any(b and _fail_return(b[-1]) for b in _branch_lists(n))
        if alternatives and not st.reaches_fail_exit(n) and not decided:
            # the lines branches print as statements of their own, when two or more do (`then echo A; else
            # echo B`); a line inside an assertion of a branch (`probe && echo ok`) keeps the reading its
            # position gives it, and a lone branch that just says which one ran (a knob's `case`) is no choice
            branches = _branch_lists(n)
            plain = [[s for s in b if _plain(s) and _reports(s, node_cmd, report_lines)] for b in branches]
            fails = [bool(b) and st.can_fail(b[-1]) for b in branches]
            # ... or when one branch prints and ends well while another's status can fail: the line is
            # the exit-0 alternative of a check (`if [ -f F ]; then deploy; else echo "F missing"; fi`)
            # (a branch chosen by a knob, `case "$LOG" in brief) echo "logged (brief)"`, is no alternative
            # between worlds: the same branch runs in every world)
            printing = sum(1 for b in plain if b)
            lone = (
                printing == 1
                and any(p and not f for p, f in zip(plain, fails, strict=True))
                and any(fails)
                and _reads_world(_conditions(n), script)
            )
            if printing >= 2 or lone:
                out.update(
                    p for b in plain for s in b for p in _probes_under(s, node_cmd) if p in report_lines
                )
    # A function whose status says whether its check held (`return 1` on one path): its `return 0` is its
    # success path, and a line before it is a pass line by position (`t "…" cmd || exit 1`, a `check()`
    # helper), never a choice. Only an `exit 0` (or a `return 0` in a function that never fails) ends a
    # path well whatever it printed.
    deciding = {
        fn.id for fn in st.functions.values()
        if any(simple_name(n)[0] == "return" and is_fail_exit(n) for n in _walk(fn))
    }  # fmt: skip

    def ends_well(node: Node) -> bool:
        return _is_ok_exit(node) and not _decided_return(node, deciding)

    for stmts in _statement_lists(root):
        ends_well_after = any_after(stmts, ends_well)
        for i, s in enumerate(stmts):
            if ends_well_after[i]:
                out.update(p for p in _probes_under(s, node_cmd) if p in report_lines)
    return frozenset(out)


def _fail_return(node: Node) -> bool:
    """`return N≠0` (a computed status counts) ending a branch inside a function."""
    node = unredirect(node)
    return node.type == "command" and simple_name(node)[0] == "return" and is_fail_exit(node)


def _decided_return(node: Node, deciding: set[int]) -> bool:
    """A `return 0` (or bare `return`) in a function that returns non-zero on another path."""
    if simple_name(node)[0] != "return":
        return False
    parent = node.parent
    while parent is not None and parent.type != "function_definition":
        parent = parent.parent
    return parent is not None and parent.id in deciding


# `test`/`[`/`[[` operators that look at the file system: their answer depends on the world, not the inputs
_FILE_TESTS = frozenset(
    {"-a", "-b", "-c", "-d", "-e", "-f", "-g", "-h", "-k", "-p", "-r", "-s", "-t", "-u", "-w", "-x",
     "-G", "-L", "-N", "-O", "-S", "-nt", "-ot", "-ef"}
)  # fmt: skip
_TESTS = frozenset({"test", "[", "[[", "true", "false", ":"})


def _conditions(n: Node) -> list[Node]:
    """What chooses the branch of an `if`/`elif` chain (its conditions) or of a `case` (its word)."""
    if n.type == "case_statement":
        value = n.child_by_field_name("value")
        return [value] if value is not None else []
    return _if_parts(n)[0]


def _reads_world(conditions: list[Node], script: Script) -> bool:
    """Whether a branch choice can differ between worlds: its conditions run a command (other than a test
    of strings and numbers), test a file, or read a variable the block set from a command or `read`. A
    choice made only from the plan's inputs (`case "$LOG"`, `[ "$MODE" = http ]`) is the same in every
    world."""
    literal = {
        name for name, w in script.values if "$(" not in w.text and "`" not in w.text
    }  # names set to a word; a name set twice, once from a command, is not literal
    from_commands = {name for name, w in script.values if "$(" in w.text or "`" in w.text}
    for cond in conditions:
        for n in _walk(cond):
            t = n.type
            if t in ("command_substitution", "process_substitution"):
                return True
            if t == "test_operator" and (n.text or b"").decode() in _FILE_TESTS:
                return True
            if t == "command":
                name, args = simple_name(n)
                if name not in _TESTS or (name == "test" and any(a in _FILE_TESTS for a in args)):
                    return True
            if t == "variable_name":
                var = (n.text or b"").decode()
                if var in from_commands or (var in script.assigns and var not in literal):
                    return True
    return False


def _reports(node: Node, node_cmd: Mapping[int, int], report_lines: frozenset[int]) -> bool:
    return any(p in report_lines for p in _probes_under(node, node_cmd))


def _plain(node: Node) -> bool:
    """A statement that is one command (maybe redirected, maybe the end of a pipeline): no condition."""
    node = unredirect(node)
    if node.type == "pipeline":
        parts = [c for c in node.children if c.is_named]
        node = unredirect(parts[-1]) if parts else node
    return node.type == "command"

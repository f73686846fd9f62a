"""A verify block's check units: the statements a run's *path* is read off, and whether each can fail.

A unit is a top-level statement that prints a line or exits (with the functions it calls). The path a run
took through a unit is which of those messages and exits ran, by position, never what they said
(`director.plan.bash.trace.unit_paths`). Whether a unit *can fail* is read statically: a unit whose failure
can never show in the block's exit status -- no `exit N≠0` on any of its paths, not the block's last
status, no `set -e` -- can only be judged by contrast with the worlds Director has seen it in
(`director.plan.contrast`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from tree_sitter import Node

from director.plan.bash.shape import flatten, is_fail_exit, simple_name, statements, unredirect
from director.plan.bash.words import Script, node_text

# Commands whose status is 0 whatever they are given (for a statement's own status; `echo` to a closed
# pipe aside).
_ALWAYS_OK = frozenset(
    {"echo", "printf", "true", ":", "export", "local", "declare", "typeset", "readonly", "set", "shopt",
     "unset", "alias", "hash", "umask", "trap", "sleep"}  # sleep: a pause between polls, never their verdict
)  # fmt: skip
_EXITS = frozenset({"exit", "return"})
_LOOP_EXITS = frozenset({"break", "continue"})  # a poll that broke out of its loop took another path


@dataclass(frozen=True)
class Unit:
    """One top-level statement of a verify block that prints or exits.

    `probes` are the observable probes a run of it may execute: its report lines and exits, and those of
    the block's functions it calls. `can_fail` is False when no path through it can make the block exit
    non-zero: its verdict then needs contrast. `lines` are its report lines (by probe), for naming it.
    """

    index: int
    row: int
    end_row: int
    probes: tuple[int, ...]
    can_fail: bool
    lines: tuple[int, ...]
    span: tuple[int, ...] = ()  # every command under it (and in the functions it calls): was it reached?


def errexit(script: Script) -> bool:
    """Whether the block turns on `set -e` (`set -e`, `set -euo pipefail`, `set -o errexit`)."""
    for c in script.commands:
        if c.program != "set":
            continue
        words = [a.static or "" for a in c.args]
        for i, w in enumerate(words):
            if w.startswith("-") and not w.startswith("--") and "e" in w[1:] and w != "-o":
                return True
            if w == "-o" and i + 1 < len(words) and words[i + 1] == "errexit":
                return True
    return False


class _Statuses:
    """Static answers about statements: can their status be non-zero, do they reach an `exit N≠0`."""

    def __init__(self, script: Script, node_cmd: Mapping[int, int], functions: Mapping[str, Node]) -> None:
        self.script = script
        self.node_cmd = node_cmd
        self.functions = functions
        self._fn_fails: dict[str, bool] = {}

    def called(self, node: Node) -> list[str]:
        """The block's own functions a statement calls (directly)."""
        out: list[str] = []
        stack = [node]
        while stack:
            n = stack.pop()
            if n.type == "function_definition":
                continue
            cid = self.node_cmd.get(n.id)
            if cid is not None:
                name = self.script.commands[cid].name
                if name in self.functions and name not in out:
                    out.append(name)
            stack.extend(n.children)
        return out

    def reaches_fail_exit(self, node: Node, seen: frozenset[str] = frozenset()) -> bool:
        """An `exit N≠0` (or computed) under `node`, or in a function it calls: the block can end failed."""
        stack = [node]
        while stack:
            n = stack.pop()
            if n.type in ("function_definition", "subshell"):
                continue  # an `exit` in `( … )` ends the subshell only
            if n.type in ("command", "redirected_statement"):
                name, _ = simple_name(n)
                if name == "exit" and is_fail_exit(n):
                    return True
                body = self.functions[name].child_by_field_name("body") if name in self.functions else None
                if body is not None and name not in seen and self.reaches_fail_exit(body, seen | {name}):
                    return True
            stack.extend(n.children)
        return False

    def can_fail(self, node: Node, seen: frozenset[str] = frozenset()) -> bool:
        """Whether the status of `node` (as the block's last statement) can be non-zero."""
        node = unredirect(node)
        t = node.type
        if t == "list":
            els, ops = flatten(node)
            fails = self.can_fail(els[0], seen)
            for el, op in zip(els[1:], ops[1:], strict=True):
                cf = self.can_fail(el, seen)
                # `a && b`: a's failure is the list's, else b's; `a || b`: b's status, only when a failed
                fails = (fails or cf) if op == "&&" else (fails and cf)
            return fails
        if t in ("compound_statement", "subshell", "do_group"):
            stmts = statements(node)
            return bool(stmts) and self.can_fail(stmts[-1], seen)
        if t == "if_statement":
            return any(self.can_fail(last, seen) for last in _branch_ends(node))
        if t == "case_statement":
            return any(
                self.can_fail(body[-1], seen)
                for item in node.children
                if item.type == "case_item" and (body := statements(item))
            )
        if t in ("for_statement", "while_statement", "c_style_for_statement", "select_statement"):
            loop = next((c for c in node.children if c.type in ("do_group", "compound_statement")), None)
            return loop is not None and self.can_fail(loop, seen)
        if t == "pipeline":
            parts = [c for c in node.children if c.is_named]
            return bool(parts) and self.can_fail(parts[-1], seen)
        if t in ("variable_assignment", "variable_assignments"):
            return any(c.type == "command_substitution" for c in _walk(node))  # `X=$(cmd)` is cmd's status
        if t in ("declaration_command", "function_definition", "comment"):
            return False
        if t == "command":
            base, known = _known_status(node)
            if known is not None:
                return known
            if base in self.functions:
                if base in seen:
                    return True
                fn_body = self.functions[base].child_by_field_name("body")
                return fn_body is None or self.can_fail(fn_body, seen | {base}) or self._returns_fail(base)
            return True
        return True  # `[ ]`, `[[ ]]`, `(( ))`, `! cmd`, anything else

    def errexit_fails(self, node: Node, pipefail: bool, seen: frozenset[str] = frozenset()) -> bool:
        """Under `set -e`: whether a command of `node` whose failure is not tested can end the block.

        Tested (no errexit): every element of an and-or list but the last, `if`/`while` conditions, `!`.
        """
        node = unredirect(node)
        t = node.type
        if t == "list":
            els, _ = flatten(node)
            return self.errexit_fails(els[-1], pipefail, seen)
        if t in ("compound_statement", "subshell", "do_group", "else_clause", "case_item"):
            return any(self.errexit_fails(x, pipefail, seen) for x in statements(node))
        if t in ("if_statement", "elif_clause"):
            return any(self.errexit_fails(x, pipefail, seen) for x in _branch_bodies(node))
        if t == "case_statement":
            return any(self.errexit_fails(c, pipefail, seen) for c in node.children if c.type == "case_item")
        if t in ("for_statement", "while_statement", "c_style_for_statement", "select_statement"):
            body = next((c for c in node.children if c.type in ("do_group", "compound_statement")), None)
            return body is not None and self.errexit_fails(body, pipefail, seen)
        if t == "pipeline":
            parts = [c for c in node.children if c.is_named]
            tail = parts if pipefail else parts[-1:]
            return any(self.errexit_fails(p, pipefail, seen) for p in tail)
        if t in ("variable_assignment", "variable_assignments"):
            return any(c.type == "command_substitution" for c in _walk(node))
        if t in ("declaration_command", "function_definition", "comment", "negated_command"):
            return False
        if t == "command":
            base, known = _known_status(node)
            if known is not None:
                return known
            if base in self.functions:
                fn_body = self.functions[base].child_by_field_name("body")
                return (
                    base not in seen
                    and fn_body is not None
                    and self.errexit_fails(fn_body, pipefail, seen | {base})
                )
            return True
        return True  # `[ ]`, `[[ ]]`, `(( ))` as a statement of their own

    def _returns_fail(self, fn: str) -> bool:
        if fn not in self._fn_fails:
            self._fn_fails[fn] = any(
                simple_name(n)[0] == "return" and is_fail_exit(n) for n in _walk(self.functions[fn])
            )
        return self._fn_fails[fn]


def _known_status(command: Node) -> tuple[str, bool | None]:
    """A command's name (its base name) and, when its name alone says, whether its status can be non-zero:
    `exit N≠0`/`return N≠0` yes, `echo`, `sleep`, `break` and the like never; otherwise None."""
    name, _ = simple_name(command)
    base = name.rsplit("/", 1)[-1]
    if base in _EXITS:
        return base, is_fail_exit(command)
    if base in _ALWAYS_OK or base in _LOOP_EXITS:
        return base, False
    return base, None


def _walk(node: Node) -> list[Node]:
    out: list[Node] = []
    stack = [node]
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(n.children)
    return out


_BRANCHING = frozenset(
    {"list", "if_statement", "case_statement", "for_statement", "while_statement", "c_style_for_statement",
     "select_statement"}
)  # fmt: skip


def _branches(node: Node) -> bool:
    """Whether a statement can take more than one path (a condition, a chain, a loop)."""
    return any(n.type in _BRANCHING for n in _walk(node))


def _functions(root: Node) -> dict[str, Node]:
    """The block's function definitions by name."""
    out: dict[str, Node] = {}
    for n in _walk(root):
        if n.type == "function_definition":
            name = n.child_by_field_name("name")
            if name is not None and name.text:
                out[name.text.decode("utf-8", "surrogateescape")] = n
    return out


def _if_parts(node: Node) -> tuple[list[Node], list[list[Node]]]:
    """An `if` (or `elif`) statement's conditions and the statements of each of its branches: its `then`,
    each `elif`'s and its `else` (tree-sitter nests each `elif` as a sibling clause of the `if`)."""
    conditions: list[Node] = []
    branches: list[list[Node]] = []
    current: list[Node] = []
    mode = "cond"
    for c in node.children:
        if c.type == "then":
            mode = "then"
        elif c.type in ("elif_clause", "else_clause"):
            if mode == "then":
                branches.append(current)
            current, mode = [], "done"
            if c.type == "else_clause":
                branches.append(statements(c))
            else:
                more, theirs = _if_parts(c)
                conditions += more
                branches += theirs
        elif c.is_named and c.type != "comment":
            if mode == "cond":
                conditions.append(c)
            elif mode == "then":
                current.append(c)
    if mode == "then":
        branches.append(current)
    return conditions, branches


def _branch_bodies(node: Node) -> list[Node]:
    """The statements of every branch of an `if` (its `then`, `elif`s and `else`), conditions left out."""
    return [s for branch in _if_parts(node)[1] for s in branch]


def _branch_ends(node: Node) -> list[Node]:
    """The last statement of each branch of an `if` (its `then`, `elif`s and `else`)."""
    return [branch[-1] for branch in _if_parts(node)[1] if branch]


def check_units(
    root: Node, script: Script, node_cmd: Mapping[int, int], report_lines: frozenset[int]
) -> tuple[Unit, ...]:
    """The block's check units, in order (see `Unit`)."""
    functions = _functions(root)
    st = _Statuses(script, node_cmd, functions)
    block_errexit = errexit(script)
    pipefail = any(
        c.program == "set" and any(a.static == "pipefail" for a in c.args) for c in script.commands
    )
    # What a path is made of: the messages, the exits, and the assignments an if/case branch makes (a check
    # that gathers its verdict in a variable, `out+="✅"` or `out+="❌"`, speaks through which branch ran).
    branch_assigns = {
        p for branches in alternatives(root, node_cmd) for b in branches for p in b
        if script.commands[p].kind == "assign" and not script.commands[p].in_subst
    }  # fmt: skip
    observable = {
        c.id
        for c in script.commands
        if c.id in report_lines
        or (c.name in _EXITS | _LOOP_EXITS and not c.in_subst)
        or c.id in branch_assigns
    }
    stmts = _unguarded(statements(root), report_lines, node_cmd)
    units: list[Unit] = []
    for i, s in enumerate(stmts):
        if s.type == "function_definition":
            continue
        mine = _probes_under(s, node_cmd)
        fns = _closure(st, s)
        for fn in fns:
            mine.extend(c.id for c in script.commands if c.function == fn)
        probes = tuple(sorted({p for p in mine if p in observable}))
        if not probes or not (_branches(s) or any(_branches(functions[fn]) for fn in fns)):
            continue  # it prints nothing, or always the same: a header line tells no world from another
        can_fail = (
            (block_errexit and st.errexit_fails(s, pipefail))
            or st.reaches_fail_exit(s)
            or (i == len(stmts) - 1 and st.can_fail(s))
            or any(st._returns_fail(fn) for fn in fns if i == len(stmts) - 1)
        )
        lines = tuple(p for p in probes if p in report_lines)
        span = tuple(sorted(set(mine)))
        units.append(Unit(len(units), s.start_point.row, s.end_point.row, probes, can_fail, lines, span))
    # A tool that speaks for itself (`awk '… {print "FAIL"}'`, `tar -tzf "$B" >/dev/null`, `grep -c …`): no
    # message or exit of the block's own, so its path is what the command marks saw -- did it fail, with
    # which status, did it print (`director.plan.bash.trace.unit_paths`). Numbered after the checks above,
    # so that the checks of a block seen before keep their numbers.
    for i, s in enumerate(stmts):
        tool = _tool(s, script, node_cmd, report_lines)
        if tool is None:
            continue
        can_fail = (block_errexit and st.errexit_fails(s, pipefail)) or (
            i == len(stmts) - 1 and st.can_fail(s)
        )
        span = tuple(sorted(set(_probes_under(s, node_cmd))))
        units.append(Unit(len(units), s.start_point.row, s.end_point.row, (tool,), can_fail, (), span))
    return tuple(units)


# Commands a tool statement is not: they print only what the block gives them, or change only the shell.
_NOT_TOOLS = _ALWAYS_OK | _EXITS | _LOOP_EXITS | frozenset(
    {"cd", "pushd", "popd", "source", ".", "eval", "exec", "shift", "wait", "read", "mapfile", "let", "test",
     "[", "[[", "((", "sleep"}
)  # fmt: skip


def _tool(
    node: Node, script: Script, node_cmd: Mapping[int, int], report_lines: frozenset[int]
) -> int | None:
    """The command of a top-level statement that is one command or pipeline running a program of its own
    (not a message, an exit, an assignment or a shell builtin that changes only the shell): its probe."""
    node = unredirect(node)
    if node.type not in ("command", "pipeline"):
        return None
    ids = _probes_under(node, node_cmd)
    if not ids or any(p in report_lines for p in ids):
        return None
    cmds = [script.commands[p] for p in ids if not script.commands[p].in_subst]
    if not cmds or any(c.kind != "command" for c in cmds):
        return None
    last = max(cmds, key=lambda c: c.id)
    name = last.name.rsplit("/", 1)[-1]
    if not name or name in _NOT_TOOLS or last.program in _NOT_TOOLS or name in script.functions:
        return None  # a function of the block's is a check of its own (or prints nothing)
    return last.id


def _unguarded(stmts: list[Node], report_lines: frozenset[int], node_cmd: Mapping[int, int]) -> list[Node]:
    """The top-level statements, a guard around the whole script opened: a top-level `if … then … fi`
    without `else` (`if ! (return 0 2>/dev/null); then …; fi`, "run only when not sourced") whose body holds
    several checks (statements that print or exit and can take more than one path) is a script of its own,
    and its statements are the units."""
    out: list[Node] = []
    for s in stmts:
        if s.type == "if_statement" and not any(c.type in ("else_clause", "elif_clause") for c in s.children):
            body = _if_parts(s)[1]
            inner = body[0] if body else []
            speaking = [
                x for x in inner
                if x.type != "function_definition" and _branches(x)
                and any(p in report_lines or _is_exit(x, p, node_cmd) for p in _probes_under(x, node_cmd))
            ]  # fmt: skip
            if len(speaking) >= 2:
                out.extend(_unguarded(inner, report_lines, node_cmd))
                continue
        out.append(s)
    return out


def _is_exit(node: Node, probe: int, node_cmd: Mapping[int, int]) -> bool:
    """Whether `probe` (a command under `node`) is an `exit`/`return`."""
    for n in _walk(node):
        if node_cmd.get(n.id) == probe:
            return simple_name(n)[0] in _EXITS
    return False


def _closure(st: _Statuses, node: Node) -> list[str]:
    """The block's functions a statement calls, and those they call."""
    out: list[str] = []
    todo = st.called(node)
    while todo:
        fn = todo.pop(0)
        if fn in out:
            continue
        out.append(fn)
        body = st.functions[fn].child_by_field_name("body")
        if body is not None:
            todo.extend(st.called(body))
    return out


def _commands_under(node: Node, node_cmd: Mapping[int, int], into: Callable[[Node, Node], bool]) -> list[int]:
    """The commands at and below `node`, going into the children `into` allows."""
    ids: list[int] = []
    stack = [node]
    while stack:
        n = stack.pop()
        cid = node_cmd.get(n.id)
        if cid is not None:
            ids.append(cid)
        stack.extend(c for c in n.children if into(n, c))
    return ids


def _probes_under(node: Node, node_cmd: Mapping[int, int]) -> list[int]:
    """The commands of a statement, not those of a function it defines."""
    return _commands_under(node, node_cmd, lambda parent, _child: parent.type != "function_definition")


def alternatives(root: Node, node_cmd: Mapping[int, int]) -> tuple[tuple[frozenset[int], ...], ...]:
    """The branches of every `if … else` / `elif` chain and `case`: the probes of each branch's body.

    Exactly one branch of each runs; a check in a branch that did not run was not chosen, which is
    neither evidence nor its absence (its row is fed by the branch that ran).
    """
    out: list[tuple[frozenset[int], ...]] = []
    for n in _walk(root):
        branches = _branch_lists(n)
        if len(branches) > 1:
            out.append(
                tuple(frozenset(p for s in body for p in _probes_under(s, node_cmd)) for body in branches)
            )
    return tuple(out)


def _branch_lists(n: Node) -> list[list[Node]]:
    """The statements of each branch of an `if … elif … else` or a `case` (none for anything else)."""
    if n.type == "if_statement" and any(c.type in ("else_clause", "elif_clause") for c in n.children):
        return _if_parts(n)[1]
    if n.type == "case_statement":
        return [statements(item) for item in n.children if item.type == "case_item"]
    return []


# Statement lists whose statements run one after another in one shell (an `if`'s branches are read apart).
_LISTS = frozenset(
    {"program", "compound_statement", "subshell", "do_group", "case_item", "command_substitution",
     "process_substitution"}
)  # fmt: skip
_SIMPLE = frozenset(
    {"command", "pipeline", "variable_assignment", "variable_assignments", "declaration_command"}
)
_SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})
_READS_STATUS = ("$?", "${?", "PIPESTATUS")


def unread_status_rows(root: Node, script: Script, node_cmd: Mapping[int, int]) -> frozenset[int]:
    """Rows whose commands' exit statuses nothing reads: plain bash shows them nowhere.

    A command's status is unread when it is a simple statement (a command, a pipeline, an assignment) that
    another statement of its list follows -- which sets `$?` anew -- and that statement does not read `$?`
    (or `PIPESTATUS`), itself or in a function of the block's it calls; never under `set -e` or a
    `trap … ERR` (they read every untested status). The last statement of a list, a condition and an element
    of an and-or list are read (conservatively: the status may become a function's, a branch's, the
    block's). The last statement of a `$(…)` passes its status to the command around it, so it leaves the
    row to that command. A row is unread when at least one of its commands is and every other one is
    unread or such a last statement of a substitution.
    """
    if errexit(script) or any(
        c.program == "trap" and any(a.static == "ERR" for a in c.args[1:]) for c in script.commands
    ):
        return frozenset()
    # a function that reads `$?` reads the status of the statement before its call
    readers = {n for n, fn in _functions(root).items() if any(r in node_text(fn) for r in _READS_STATUS)}
    unread: set[int] = set()
    neutral: set[int] = set()
    for n in _walk(root):
        if n.type in _LISTS:
            lists = [statements(n)]
        elif n.type == "if_statement":
            lists = _if_parts(n)[1]  # its branches, `elif`s and `else` included
        else:
            continue
        for stmts in lists:
            for i, s in enumerate(stmts):
                if unredirect(s).type not in _SIMPLE:
                    continue
                own = _own_commands(s, node_cmd)
                if i == len(stmts) - 1:
                    if n.type in _SUBSTITUTIONS:
                        neutral.update(own)
                elif not _reads_status(stmts[i + 1], script, node_cmd, readers):
                    unread.update(own)
    rows: dict[int, bool] = {}
    for c in script.commands:
        if c.id in neutral:
            continue
        rows[c.row] = rows.get(c.row, True) and c.id in unread
    return frozenset(r for r, ok in rows.items() if ok)


def _reads_status(node: Node, script: Script, node_cmd: Mapping[int, int], readers: set[str]) -> bool:
    """Whether a statement reads `$?` (or `PIPESTATUS`): in its text, or by calling a function that does."""
    if any(r in node_text(node) for r in _READS_STATUS):
        return True
    return any(script.commands[c].name in readers for c in _probes_under(node, node_cmd))


def _own_commands(node: Node, node_cmd: Mapping[int, int]) -> list[int]:
    """The commands of a statement, those inside its `$(…)`/`<(…)` left to their own lists."""
    return _commands_under(node, node_cmd, lambda _parent, child: child.type not in _SUBSTITUTIONS)

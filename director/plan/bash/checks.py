"""The checks a verify block makes, read by structure (`verify_model`): report lines, guards, alternatives.

Which printed lines are pass lines and which are failure lines, which conditions are assertions and which
are preconditions, which branches are alternatives; `director.plan.verify.judge` combines this model with
a run. The rules are those of `docs/verify-semantics.md`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace
from typing import Literal

from tree_sitter import Node

from director.plan.bash.choices import choice_lines
from director.plan.bash.grammar import analysed, descendants, parse
from director.plan.bash.shape import any_after, flatten, group_exits, is_fail_exit, statements, unredirect
from director.plan.bash.units import Unit, alternatives, check_units, unread_status_rows
from director.plan.bash.values import value_lines
from director.plan.bash.words import Script, Word

# ---------------------------------------------------------------------------------------------------
# Verify blocks: the checks they make, read by structure

Polarity = Literal["pass", "fail"]


@dataclass(frozen=True)
class Probe:
    """A command whose execution the block's trace reveals: rows, the name xtrace prints, its words."""

    id: int
    row: int
    end_row: int
    name: str
    function: str | None
    pattern: str  # the words after the name, joined (expansions as written)


@dataclass(frozen=True)
class ReportLine:
    """An `echo`/`printf` that prints a line of the block's output.

    `polarity` is "pass" when it runs on the block's success path and "fail" when it runs on a failure
    path (after `||`, or followed by `exit N≠0`/`return N≠0`/`false` in its own list); a failure line
    is `hard` when its list exits non-zero (the block fails) and soft otherwise (the author let the
    block go on: an exit-0 alternative).
    """

    probe: int
    row: int
    message: str
    label: str | None
    polarity: Polarity
    hard: bool
    alternative: bool = False  # the B of `cond && echo A || echo B`
    # A label passed to a function (`pruefe "1: zone resolves" dig …` where `pruefe` prints "  ✓ $1"): the
    # line is the call (`probe`, `message` the argument), and `via` the function's report lines, whose
    # runs during this call decide it (`director.plan.bash.trace.executed` counts them per call).
    via: tuple[int, ...] = ()


GuardKind = Literal["precondition", "assertion"]


@dataclass(frozen=True)
class Guard:
    """A condition in front of checks.

    `precondition`: `cond && { …its own checks… }` or an `if` without `else` -- a false condition means
    the checks inside were *skipped*. `assertion`: `cond && echo P` -- a condition that ran without its
    pass line printing is a failed check. `poll` marks an assertion that ends its loop (`&& break`),
    which holds when any iteration passed.
    """

    kind: GuardKind
    row: int
    cond: tuple[int, ...]  # probes of the condition
    body: tuple[int, ...]  # probes of what it guards
    lines: tuple[int, ...] = ()  # pass lines (by probe) it guards
    poll: bool = False
    loop: int | None = None  # the `for` head it sits in (an assertion must pass on every iteration)
    # An assertion whose failure shows: the block's last word (bash exits with it) or followed by `|| …`.
    enforced: bool = True


# A verify block's top-level statement: it checks nothing, it checks, or it is the precondition `guards[N]`.
TopStatement = Literal["inert", "check"] | int


@dataclass(frozen=True)
class VerifyModel:
    """What a verify block checks, for judging its run (see `director.plan.verify.judge`).

    `top` classifies the block's top-level statements: "inert" (assignments, declarations, plain
    echoes, `cd`…), "check", or the index into `guards` of the precondition the statement is.
    """

    probes: tuple[Probe, ...]
    lines: tuple[ReportLine, ...]
    guards: tuple[Guard, ...]
    top: tuple[TopStatement, ...]
    trailing_guard: int | None  # the precondition that is the block's last statement, if any
    functions: tuple[str, ...]
    traceable: bool  # False when the block turns tracing off itself (`set +x`)
    has_error: bool = False
    line_offset: int = 0  # plan line of the block's first body line (0-based)
    units: tuple[Unit, ...] = ()  # the top-level statements that print or exit (`units.check_units`)
    choices: frozenset[int] = frozenset()  # report lines whose structure cannot say pass or fail
    alternatives: tuple[tuple[frozenset[int], ...], ...] = ()  # each if/else, case: its branches' probes
    context_row: int | None = None  # rows from here on are session functions' definitions (`context`)
    # For the command marks (`director.plan.bash.trace.unit_paths`): rows inside loops, and rows whose
    # commands only print a message or exit (what the marks would add there, the message already says).
    loop_rows: frozenset[int] = frozenset()
    speaking_rows: frozenset[int] = frozenset()
    unread_rows: frozenset[int] = frozenset()  # rows whose statuses nothing reads (`unread_status_rows`)

    def line(self, probe: int) -> ReportLine | None:
        """The report line of a probe, if it is one."""
        for ln in self.lines:
            if ln.probe == probe:
                return ln
        return None


_LABEL = re.compile(r"^\s*(\d+[a-z]?)\s*:\s")
_INERT_PROGRAMS = frozenset(
    {"cd", "pushd", "popd", "set", "shopt", "export", "local", "declare", "readonly", "typeset", "unset",
     ":", "true", "sleep", "trap", "umask", "alias", "hash", "echo", "printf"}
)  # fmt: skip
_REPORTERS = frozenset({"echo", "printf"})


def label_of(message: str) -> str | None:
    """The contract label (`2a`) a message starts with (`2a: …`), if any."""
    m = _LABEL.match(message)
    return m.group(1) if m else None


def _printf_message(args: tuple[Word, ...]) -> str:
    """The line a `printf FORMAT ARGS…` prints, its conversions replaced by the arguments."""
    if not args:
        return ""
    fmt = args[0].pattern
    rest = [a.pattern for a in args[1:]]

    def sub(m: re.Match[str]) -> str:
        if m.group(0) == "%%":
            return "%"
        return rest.pop(0) if rest else "$_"

    msg = re.sub(r"%%|%[-+ #0]*\d*(?:\.\d+)?[sdifgxXobceEGuq]", sub, fmt)
    return msg.replace("\\n", "\n").replace("\\t", "\t").strip("\n").split("\n")[0]


class _VerifyBuilder:
    """Walks a verify block's statement lists and classifies its checks."""

    def __init__(self, script: Script, node_cmd: dict[int, int]) -> None:
        self.script = script
        self.node_cmd = node_cmd
        self.lines: dict[int, ReportLine] = {}
        self.guards: list[Guard] = []
        self.top: list[TopStatement] = []
        self.trailing_guard: int | None = None
        self.loops: list[int] = []  # enclosing `for` heads (probe ids)

    def probes_under(self, node: Node) -> list[int]:
        """Command ids under `node`, not inside function definitions."""
        ids = []
        stack = [node]
        while stack:
            n = stack.pop()
            cid = self.node_cmd.get(n.id)
            if cid is not None:
                ids.append(cid)
            if n.type == "function_definition":
                continue
            stack.extend(reversed(n.children))
        return sorted(ids)

    def build(self, root: Node) -> None:
        """Classify every statement of the block, then the bodies of its functions."""
        stmts = statements(root)
        fails_after = any_after(stmts, is_fail_exit)
        for i, st in enumerate(stmts):
            exits_after = fails_after[i]
            g = self.statement(st, False, exits_after, tail=i == len(stmts) - 1)
            if g is not None:
                self.top.append(g)
                if i == len(stmts) - 1 and st.type == "list":
                    self.trailing_guard = g
            else:
                self.top.append(self.classify_top(st))
        # Function bodies are checks too when called: classify their lines in their own context.
        for fn in descendants(root, frozenset({"function_definition"})):
            body = fn.child_by_field_name("body")
            if body is not None:
                self.walk_list(statements(body), False)

    def classify_top(self, st: Node) -> Literal["inert", "check"]:
        """Whether a top-level statement (not a precondition) checks something."""
        if st.type == "function_definition":
            return "inert"
        for pid in self.probes_under(st):
            c = self.script.commands[pid]
            if c.in_subst or c.kind in ("assign", "decl"):
                continue  # `X=$(cat f)` gathers a value; it asserts nothing
            if c.kind == "command" and c.program in _INERT_PROGRAMS:
                continue
            return "check"
        return "inert"

    def walk_list(self, stmts: list[Node], fail: bool, tail: bool = False) -> None:
        """Classify a statement list (`fail`: it runs on a failure path)."""
        fails_after = any_after(stmts, is_fail_exit)
        for i, st in enumerate(stmts):
            self.statement(st, fail, fails_after[i], tail=tail and i == len(stmts) - 1)

    # -- statements; each returns the guard it *is* (a whole-statement precondition), if any

    def statement(self, st: Node, fail: bool, exits_after: bool, tail: bool = False) -> int | None:
        """Classify one statement; `tail` when its status is the block's exit status."""
        t = st.type
        if t == "list":
            return self.and_or(st, fail, exits_after, tail)
        if t == "negated_command":
            for c in st.children:
                if c.is_named:
                    self.statement(c, fail, exits_after)
            return None
        if t == "redirected_statement":
            body = st.child_by_field_name("body")
            if body is not None and body.type not in ("command", "test_command", "declaration_command"):
                return self.statement(body, fail, exits_after, tail)
            self.report(st, fail, exits_after)
            return None
        if t in ("command", "pipeline"):
            self.report(st, fail, exits_after)
            return None
        if t == "if_statement":
            return self.if_statement(st, fail, exits_after, tail)
        if t == "case_statement":
            for item in st.children:
                if item.type == "case_item":
                    self.walk_list(statements(item), fail, tail)
            return None
        if t == "compound_statement":
            self.walk_list(statements(st), fail, tail)
            return None
        if t == "subshell":
            before = set(self.lines)
            self.walk_list(statements(st), fail, tail)
            for p in set(self.lines) - before:  # its `exit` ends the subshell, not the block: never hard
                self.lines[p] = replace(self.lines[p], hard=False)
            return None
        if t in ("for_statement", "while_statement", "c_style_for_statement", "select_statement"):
            head = self.node_cmd.get(st.id)
            if head is not None:
                self.loops.append(head)
            for c in st.children:
                if c.type in ("do_group", "compound_statement"):
                    self.walk_list(statements(c), fail)
            if head is not None:
                self.loops.pop()
        return None

    def report(self, node: Node, fail: bool, exits_after: bool) -> int | None:
        """Record `node` as a report line when it is an echo/printf that prints; returns its probe."""
        target = node
        teed = False
        if node.type == "pipeline":
            parts = [c for c in node.children if c.is_named]
            target = parts[-1] if parts else node
            teed = len(parts) == 2 and self._tee(parts[1])
            if teed:
                target = parts[0]  # `echo X | tee -a LOG`: tee passes the line on to the output
        if target.type == "redirected_statement":
            target = target.child_by_field_name("body") or target
        cid = self.node_cmd.get(target.id)
        if cid is None:
            return None
        c = self.script.commands[cid]
        if c.kind != "command" or c.program not in _REPORTERS or c.in_subst:
            return None
        if not (c.last_in_pipeline or teed):
            return None
        if c.stdout_to_file:
            return None
        args = c.args
        if c.program == "echo":
            while args and args[0].static is not None and re.fullmatch(r"-[neE]+", args[0].static):
                args = args[1:]
            message = " ".join(a.pattern for a in args).strip()
        else:
            message = _printf_message(args).strip()
        if not message:
            return None
        polarity: Polarity = "fail" if (fail or exits_after) else "pass"
        self.lines[cid] = ReportLine(cid, c.row, message, label_of(message), polarity, exits_after)
        return cid

    def _tee(self, node: Node) -> bool:
        """`tee [-a] FILE…` writing to the output too (not sent to /dev/null or a file)."""
        cid = self.node_cmd.get(unredirect(node).id)
        if cid is None:
            return False
        tee = self.script.commands[cid]
        return tee.program == "tee" and not tee.stdout_to_file

    def _body_kind(
        self, body_probes: list[int], new_lines: list[ReportLine], exits: bool
    ) -> GuardKind | None:
        """What a guarded body is: "assertion" (only pass lines), "precondition" (its own checks) or None."""
        if not body_probes:
            return None
        progs = [self.script.commands[p] for p in body_probes]
        checks = [
            c for c in progs
            if not (c.kind == "command" and c.program in _INERT_PROGRAMS | {"exit", "return", "false"})
            and c.kind not in ("assign", "decl")
        ]
        has_pass = any(ln.polarity == "pass" for ln in new_lines)
        if exits:
            return None  # a branch that ends the block failed is a failure path: its condition asserts
        if not checks:
            return "assertion" if has_pass else None
        return "precondition" if new_lines else None

    def and_or(self, st: Node, fail: bool, exits_after: bool, tail: bool = False) -> int | None:
        """An and-or list: assertions (`cond && echo P`), preconditions (`cond && { checks }`), lines."""
        elements, ops = flatten(st)
        whole: int | None = None
        passed_before = False  # a pass line after `&&` earlier in the chain: a later `|| echo` is its B
        for k, (el, op) in enumerate(zip(elements, ops, strict=True)):
            el_tail = tail and k == len(elements) - 1
            alternative_after = any(o == "||" for o in ops[k + 1 :])
            # After `||` is the failure path -- unless the `&&` branch before it exits non-zero
            # (`A && { echo bad; exit 1; } || echo C`): then C runs when A is false, the good outcome.
            el_fail = fail or (
                op == "||" and not (k >= 2 and ops[k - 1] == "&&" and group_exits(elements[k - 1]))
            )
            later = elements[k + 1 :]
            if (
                el.type in ("compound_statement", "subshell", "if_statement")
                or (
                    el.type == "redirected_statement"
                    and (el.child_by_field_name("body") or el).type
                    in ("compound_statement", "subshell", "if_statement")
                )
            ):
                before = set(self.lines)
                self.statement(el, el_fail, exits_after, el_tail)
                if op == "&&" and not el_fail:
                    cond = [p for e in elements[:k] for p in self.probes_under(e)]
                    body = self.probes_under(el)
                    new_lines = [ln for p, ln in self.lines.items() if p not in before]
                    kind = self._body_kind(body, new_lines, group_exits(unredirect(el)))
                    if kind is not None and cond:
                        self.guards.append(
                            Guard(
                                kind,
                                el.start_point.row,
                                tuple(cond),
                                tuple(body),
                                tuple(ln.probe for ln in new_lines if ln.polarity == "pass"),
                                poll=self._breaks(later),
                                loop=self.loops[-1] if self.loops else None,
                                enforced=el_tail or alternative_after,
                            )
                        )
                        if kind == "precondition" and k == len(elements) - 1:
                            whole = len(self.guards) - 1
                continue
            # `A && echo F && exit 1`: a line the `&&` chain after it ends failed is a failure line (its
            # condition asserts the opposite), never a pass line.
            if not el_fail and _chain_exits(elements, ops, k):
                el_fail = True
            # `A && { …; exit 1; } || C`, `A || echo F || exit 1`: a failure line whose chain ends in an exit.
            hard = exits_after or (el_fail and any(is_fail_exit(x) or group_exits(x) for x in later))
            pid = self.report(el, el_fail, hard)
            if pid is not None and op == "||" and passed_before and el_fail:
                self.lines[pid] = replace(self.lines[pid], alternative=True)
            if pid is not None and op == "&&" and not el_fail:
                passed_before = True
                cond = [p for e in elements[:k] for p in self.probes_under(e)]
                if cond:
                    self.guards.append(
                        Guard("assertion", el.start_point.row, tuple(cond), (pid,), (pid,),
                              poll=self._breaks(later), loop=self.loops[-1] if self.loops else None,
                              enforced=el_tail or alternative_after)
                    )  # fmt: skip
            elif pid is None and el.type == "negated_command":
                self.statement(el, el_fail, exits_after)
        return whole

    def _breaks(self, later: list[Node]) -> bool:
        """Whether the rest of an and-or chain leaves its loop (`… && echo up && break`)."""
        for e in later:
            for p in self.probes_under(e):
                if self.script.commands[p].name in ("break", "return"):
                    return True
        return False

    def if_statement(self, st: Node, fail: bool, exits_after: bool, tail: bool = False) -> int | None:
        """An `if`: its branches are alternatives; without `else`, a precondition."""
        has_else = any(c.type == "else_clause" for c in st.children)
        conds: list[int] = []
        body: list[int] = []
        before = set(self.lines)
        branch: list[Node] = []

        def flush() -> None:
            fails_after = any_after(branch, is_fail_exit)
            for i, s in enumerate(branch):
                ex = exits_after or fails_after[i]
                self.statement(s, fail, ex, tail and i == len(branch) - 1)
                body.extend(self.probes_under(s))
            branch.clear()

        # The clauses in order, an `elif`'s own parts in its place (a loop: a nested function calling itself
        # would be a reference cycle, left for the cyclic collector on every `if` of a large plan).
        mode = "cond"
        todo = list(reversed(st.children))
        while todo:
            c = todo.pop()
            if c.type == "then":
                mode = "then"
                continue
            if not c.is_named or c.type == "comment":
                continue
            if c.type == "elif_clause":
                flush()
                mode = "cond"
                todo.extend(reversed(c.children))
            elif c.type == "else_clause":
                flush()
                branch.extend(statements(c))
                flush()
            elif mode == "cond":
                conds.extend(self.probes_under(c))
            else:
                branch.append(c)
        flush()
        new_lines = [ln for p, ln in self.lines.items() if p not in before]
        if has_else:
            return None  # alternatives: one branch always runs
        kind = self._body_kind(body, new_lines, group_exits(st))
        if kind == "precondition" and conds:
            self.guards.append(
                Guard("precondition", st.start_point.row, tuple(conds), tuple(body),
                      tuple(ln.probe for ln in new_lines if ln.polarity == "pass"))
            )  # fmt: skip
            return len(self.guards) - 1
        return None


def _chain_exits(elements: list[Node], ops: list[str], k: int) -> bool:
    """Whether element k of an and-or chain is followed, through `&&` only, by an `exit N≠0`."""
    j = k + 1
    while j < len(elements) and ops[j] == "&&":
        if is_fail_exit(elements[j]) or group_exits(elements[j]):
            return True
        j += 1
    return False


_POSITIONAL = re.compile(r"\$\{?([1-9])\}?")


def _positionals(script: Script, fn: str, message: str) -> set[int]:
    """The positional parameters a function's message prints: `$1`, `${2}`, or a name the function set
    from one (`local label=$1`)."""
    out = {int(m.group(1)) for m in _POSITIONAL.finditer(message)}
    for c in script.commands:
        if c.function != fn:
            continue
        for w in c.argv if c.kind == "decl" else c.argv[:1]:
            name, eq, value = (w.static or w.pattern).partition("=")
            m = _POSITIONAL.fullmatch(value.strip('"'))
            if eq and m and re.search(rf"\${{?{re.escape(name)}\b", message):
                out.add(int(m.group(1)))
    return out


def _labelled_calls(script: Script, lines: tuple[ReportLine, ...]) -> tuple[ReportLine, ...]:
    """Calls of the block's functions whose argument is a contract label the function prints
    (`pruefe "1: zone resolves" dig …`, `pruefe` printing "  ✓ $1"): one pass line per call, decided by
    the function's lines that ran during it."""
    by_fn: dict[str, list[ReportLine]] = {}
    for ln in lines:
        fn = script.commands[ln.probe].function
        if fn is not None:
            by_fn.setdefault(fn, []).append(ln)
    printed = {
        fn: {k for ln in fl for k in _positionals(script, fn, ln.message)} for fn, fl in by_fn.items()
    }
    out: list[ReportLine] = []
    for c in script.commands:
        if c.kind != "command" or c.function is not None or c.in_subst or c.name not in printed:
            continue
        for k in sorted(printed[c.name]):
            arg = (c.argv[k].static or c.argv[k].pattern) if k < len(c.argv) else None
            label = label_of(arg) if arg else None  # the label must be written out: `"1: fresh (${n}s)"`
            if arg and label:
                via = tuple(ln.probe for ln in by_fn[c.name])
                out.append(ReportLine(c.id, c.row, arg.strip(), label, "pass", False, via=via))
                break
    return tuple(out)


def verify_model(text: str, line_offset: int = 0, context: str = "") -> VerifyModel:
    """The checks a verify block makes, classified by structure (see `docs/verify-semantics.md`).

    `context` holds the definitions of session functions the block calls (from earlier blocks): what
    they print counts where they are called. They are read after the block's own text.
    """
    model = _verify_model(text, context)
    return replace(model, line_offset=line_offset) if line_offset else model


@functools.lru_cache(maxsize=1024)
def _verify_model(block: str, context: str) -> VerifyModel:
    """`verify_model` at offset 0, cached by text and context: the offset only places the block in the plan
    (parse asks at the block's line, lint at 0: one reading serves both)."""
    text = f"{block}\n{context}" if context else block
    script = parse(text)
    root, b = analysed(text)
    vb = _VerifyBuilder(script, b.by_node)
    vb.build(root)
    probes = tuple(
        Probe(
            c.id,
            c.row,
            c.row if c.kind in ("for", "case") else c.end_row,
            c.name,
            c.function,
            " ".join(w.pattern for w in c.argv[1:]) if c.kind in ("command", "decl") else "",
        )
        for c in script.commands
    )
    values = value_lines(text)  # what a captured function prints is its value, not a line of the output
    lines = tuple(sorted((ln for ln in vb.lines.values() if ln.probe not in values), key=lambda ln: ln.probe))
    reported = frozenset(ln.probe for ln in lines)
    called = _labelled_calls(script, lines)
    traceable = not re.search(r"(?m)^\s*set\s+(?:[^#\n]*\s)?(\+[a-wyzA-Z]*x|\+o\s+xtrace)", text)
    own_rows = block.count("\n") + 1 if context else None
    return VerifyModel(
        probes=probes,
        lines=tuple(sorted(lines + called, key=lambda ln: ln.probe)),
        guards=tuple(vb.guards),
        top=tuple(vb.top),
        trailing_guard=vb.trailing_guard,
        functions=tuple(script.functions),
        traceable=traceable,
        has_error=script.has_error,
        units=check_units(root, script, b.by_node, reported),
        choices=choice_lines(root, script, b.by_node, reported),
        alternatives=alternatives(root, b.by_node),
        context_row=own_rows,
        loop_rows=_loop_rows(root),
        speaking_rows=_speaking_rows(script, reported),
        unread_rows=unread_status_rows(root, script, b.by_node),
    )


_LOOPS = frozenset({"for_statement", "while_statement", "c_style_for_statement", "select_statement"})
_SPEAKERS = frozenset({"exit", "return", "break", "continue"})


def _loop_rows(root: Node) -> frozenset[int]:
    """Rows inside a loop (its head included)."""
    return frozenset(
        r for n in descendants(root, _LOOPS) for r in range(n.start_point.row, n.end_point.row + 1)
    )


def _speaking_rows(script: Script, reported: frozenset[int]) -> frozenset[int]:
    """Rows whose every command prints a report line or exits."""
    rows: dict[int, bool] = {}
    for c in script.commands:
        speaks = c.id in reported or c.name in _SPEAKERS
        rows[c.row] = rows.get(c.row, True) and speaks
    return frozenset(r for r, speaks in rows.items() if speaks)

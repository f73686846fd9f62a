"""The tree-sitter parse of a block: heredocs lifted, then one walk that collects its commands and facts.

`parse(text)` is the `Script` every other question starts from; `analysed(text)` also gives the tree and
the builder (node → command ids, assignments with their values) to the modules that walk the tree again.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import tree_sitter_bash
from tree_sitter import Language, Node, Parser, Tree

from director.plan.bash.words import (
    NAME_RE,
    SUBST,
    Command,
    CommandKind,
    Redirect,
    Script,
    Word,
    collect_vars,
    expansion_name,
    node_text,
    word_of,
)

_PER_THREAD = threading.local()


# A 4-byte UTF-8 character (an emoji, a CJK extension ideograph): tree-sitter-bash 0.25.1 can read out of
# bounds on `{` followed anywhere later by one (tree-sitter/tree-sitter-bash#337, open): a SIGSEGV on Linux
# when the memory layout is unlucky, seen in our CI as a crash of the whole test process.
_ASTRAL = re.compile(rb"[\xf0-\xf7][\x80-\xbf]{3}")
_ASTRAL_STANDIN = b"...."  # a word character, never a name's: `$X🚀` stays `$X` then text


def _parse_bytes(source: bytes) -> Tree:
    """The tree of `source`, read without the grammar ever seeing a 4-byte character.

    Each one is parsed as `....` (the same length: every node's offsets are the text's own), in a buffer
    whose bytes are then put back as they were: py-tree-sitter keeps that buffer as the tree's source and
    reads a node's text from it when asked, so the text of every node is the block's own, emoji and all.
    """
    spans = [m.span() for m in _ASTRAL.finditer(source)]
    if not spans:
        return _parser().parse(source)
    buf = bytearray(source)
    for a, e in spans:
        buf[a:e] = _ASTRAL_STANDIN
    tree = _parser().parse(buf)
    buf[:] = source  # same length; the tree's text is read from here
    return tree


def _parser() -> Parser:
    """The tree-sitter parser for bash, one per thread (a family run reads plans on several threads at
    once, and a parser parses one text at a time)."""
    parser: Parser | None = getattr(_PER_THREAD, "parser", None)
    if parser is None:
        parser = _PER_THREAD.parser = Parser(Language(tree_sitter_bash.language()))
    return parser


# ---------------------------------------------------------------------------------------------------
# Walking a block


class _Builder:
    """Collects commands and facts from a tree in one pass."""

    def __init__(self, text: str, heredocs: dict[int, _Heredoc] | None = None) -> None:
        self.text = text
        self.heredocs = heredocs or {}
        self.commands: list[Command] = []
        self.functions: dict[str, tuple[int, int]] = {}
        self.comments: list[tuple[int, str]] = []
        self.reads: list[str] = []
        self.assigns: set[str] = set()
        self.values: list[tuple[str, Word]] = []  # (name, value) of each assignment, in order
        self.by_node: dict[int, int] = {}  # node id -> command id

    def add(
        self,
        node: Node,
        kind: CommandKind,
        name: str,
        argv: tuple[Word, ...],
        *,
        function: str | None = None,
        in_subst: bool = False,
        last: bool = True,
        redirects: tuple[Redirect, ...] = (),
        assigns: tuple[str, ...] = (),
    ) -> int:
        """Record the command `node` runs; returns its id."""
        cid = len(self.commands)
        self.commands.append(
            Command(
                cid,
                kind,
                name,
                argv,
                redirects,
                node.start_point.row,
                node.end_point.row,
                function,
                in_subst,
                last,
                assigns,
            )
        )
        self.by_node[node.id] = cid
        return cid

    def walk(self, node: Node, fn: str | None = None, in_subst: bool = False, last: bool = True) -> None:
        """Collect the commands and facts under `node` (`fn`: the enclosing function)."""
        t = node.type
        if t == "comment":
            self.comments.append((node.start_point.row, node_text(node)[1:]))
            return
        if t == "function_definition":
            name_node = node.child_by_field_name("name")
            name = node_text(name_node)
            self.functions[name] = (node.start_point.row, node.end_point.row)
            body = node.child_by_field_name("body")
            if body is not None:
                self.walk(body, name, in_subst)
            return
        if t == "redirected_statement":
            body = node.child_by_field_name("body")
            redirects = tuple(self._redirect(r) for r in node.children if r.type.endswith("redirect"))
            if body is not None and body.type in ("command", "test_command", "declaration_command"):
                self._command(body, fn, in_subst, last, redirects)
            elif body is not None:
                self.walk(body, fn, in_subst, last)
            return
        if t == "pipeline":
            parts = [c for c in node.children if c.is_named]
            for i, c in enumerate(parts):
                self.walk(c, fn, in_subst, last=i == len(parts) - 1)
            return
        if t in ("command", "test_command", "declaration_command", "unset_command"):
            self._command(node, fn, in_subst, last, ())
            return
        if t == "variable_assignment" or t == "variable_assignments":
            assigns = self._assignments(node, fn, in_subst)
            self.add(node, "assign", "=", (), function=fn, in_subst=in_subst, assigns=assigns)
            return
        if t in SUBST:
            for c in node.children:
                self.walk(c, fn, True)
            return
        if t == "compound_statement" and node.children and node.children[0].type == "((":
            names: list[str] = []
            collect_vars(node, names)
            self.reads.extend(names)
            self.add(node, "arith", "((", (), function=fn, in_subst=in_subst)
            return
        if t in ("for_statement", "select_statement"):
            var = node.child_by_field_name("variable")
            if var is not None:
                self.assigns.add(node_text(var))
            values = [c for c in node.children_by_field_name("value")]
            argv = tuple(word_of(v) for v in values)
            for w in argv:
                self.reads.extend(w.vars)
            self.add(node, "for", "for", argv, function=fn, in_subst=in_subst)
            for c in node.children:
                if c.type == "do_group":
                    self.walk(c, fn, in_subst)
                elif c in values:
                    for cc in c.children:
                        if cc.type in SUBST:
                            self.walk(cc, fn, True)
            return
        if t == "c_style_for_statement":
            names = []
            collect_vars(node, names)
            self.reads.extend(names)
            self.add(node, "for", "for", (), function=fn, in_subst=in_subst)
            for c in node.children:
                if c.type in ("do_group", "compound_statement"):
                    self.walk(c, fn, in_subst)
            return
        if t == "case_statement":
            value = node.child_by_field_name("value")
            argv = (word_of(value),) if value is not None else ()
            for w in argv:
                self.reads.extend(w.vars)
            self.add(node, "case", "case", argv, function=fn, in_subst=in_subst)
            for c in node.children:
                if c.type == "case_item":
                    for cc in c.children:
                        if cc.is_named and cc.type not in ("word", "extglob_pattern", "string", "raw_string",
                                                           "concatenation", "simple_expansion", "expansion"):
                            self.walk(cc, fn, in_subst)
                        elif cc.type in ("simple_expansion", "expansion", "string", "concatenation"):
                            self.reads.extend(word_of(cc).vars)
            return
        for c in node.children:
            if c.is_named or c.type == "comment":
                self.walk(c, fn, in_subst, last)

    def _assignments(
        self, node: Node, fn: str | None, in_subst: bool, *, sets: bool = True
    ) -> tuple[str, ...]:
        """The names `node` assigns (recording their values and what they read)."""
        names: list[str] = []
        assigns = [node] if node.type == "variable_assignment" else [
            c for c in node.children if c.type == "variable_assignment"
        ]
        for a in assigns:
            name_node = a.child_by_field_name("name")
            if name_node is not None:
                nm = node_text(name_node)
                if name_node.type == "subscript":
                    inner = name_node.child_by_field_name("name")
                    nm = node_text(inner) if inner is not None else nm.split("[", 1)[0]
                names.append(nm)
            value = a.child_by_field_name("value")
            if value is not None:
                self._value_reads(value, fn)
                if name_node is not None:
                    self.values.append((names[-1], word_of(value)))
        if sets:
            self.assigns.update(names)
        return tuple(names)

    def _value_reads(self, value: Node, fn: str | None) -> None:
        """Variables an assigned value expands; substitutions in it run as commands."""
        vars_: list[str] = []
        stack = [value]
        while stack:
            n = stack.pop()
            if n.type in SUBST:
                self.walk(n, fn, True)
                continue
            if n.type in ("simple_expansion", "expansion"):
                name = expansion_name(n)
                if name:
                    vars_.append(name)
            stack.extend(reversed(n.children))
        self.reads.extend(vars_)

    def _redirect(self, node: Node) -> Redirect:
        """A redirection node as a `Redirect` (a lifted heredoc with its body)."""
        op = ""
        fd = ""
        target: Word | None = None
        for c in node.children:
            if c.type == "file_descriptor":
                fd = node_text(c)
            elif not c.is_named:
                op = node_text(c)
            else:
                target = word_of(c)
        doc = self.heredocs.get(node.start_byte)
        if doc is not None:  # the `<____` that stands for a heredoc (see `analysed`)
            self.reads.extend(doc.reads)
            return Redirect(doc.op, Word(doc.delimiter, doc.delimiter, doc.delimiter), fd, doc.body)
        if target is not None:
            self.reads.extend(target.vars)
        return Redirect(op, target, fd, None)

    def _command(
        self, node: Node, fn: str | None, in_subst: bool, last: bool, redirects: tuple[Redirect, ...]
    ) -> None:
        """Record a simple command, a test or a declaration."""
        t = node.type
        # Nested substitutions in any word run as commands of their own.
        for sub in descendants(node, SUBST):
            self.walk(sub, fn, True)
        if t == "test_command":
            first = node.children[0].type if node.children else "["
            names: list[str] = []
            collect_vars(node, names)
            self.reads.extend(names)
            words = tuple(word_of(c) for c in _operands(node))
            self.add(node, "test", first, words, redirects=redirects, function=fn, in_subst=in_subst,
                     last=last)  # fmt: skip
            return
        if t in ("declaration_command", "unset_command"):
            kw = node_text(node.children[0]) if node.children else ""
            argv: list[Word] = [Word(kw, kw, kw)]
            names2: list[str] = []
            for c in node.children[1:]:
                if c.type == "variable_assignment":
                    names2.extend(self._assignments(c, fn, in_subst))
                    argv.append(word_of(c))
                elif c.type == "variable_name":
                    names2.append(node_text(c))
                    argv.append(word_of(c))
                elif c.is_named:
                    w = word_of(c)
                    self.reads.extend(w.vars)
                    argv.append(w)
            if kw != "unset":
                self.assigns.update(names2)
            self.add(node, "decl", kw, tuple(argv), redirects=redirects, function=fn, in_subst=in_subst,
                     last=last, assigns=tuple(names2) if kw != "unset" else ())  # fmt: skip
            return
        # A simple command: leading assignments, the name, the arguments.
        prefix: list[str] = []
        argv2: list[Word] = []
        for c in node.children:
            if c.type == "variable_assignment":
                # `VAR=x cmd` sets VAR for cmd only: not a session assignment.
                prefix.extend(self._assignments(c, fn, in_subst, sets=False))
            elif c.type == "command_name":
                inner = c.children[0] if c.children else c
                argv2.append(word_of(inner))
            elif c.type.endswith("redirect"):
                redirects = (*redirects, self._redirect(c))
            elif c.is_named and c.type != "comment":
                argv2.append(word_of(c))
        for w in argv2:
            self.reads.extend(w.vars)
        if not argv2:
            self.assigns.update(prefix)
            self.add(node, "assign", "=", (), function=fn, in_subst=in_subst, assigns=tuple(prefix))
            return
        name = argv2[0].static if argv2[0].static is not None else ""
        cid = self.add(node, "command", name, tuple(argv2), redirects=redirects, function=fn,
                       in_subst=in_subst, last=last)  # fmt: skip
        cmd = self.commands[cid]
        if cmd.program == "read":
            for w in cmd.args:
                if w.static and NAME_RE.fullmatch(w.static):
                    self.assigns.add(w.static)
        elif cmd.program in ("mapfile", "readarray") and cmd.args:
            last_arg = cmd.args[-1].static
            if last_arg and NAME_RE.fullmatch(last_arg):
                self.assigns.add(last_arg)


_OPERAND_TYPES = frozenset(
    {"word", "string", "raw_string", "ansi_c_string", "simple_expansion", "expansion", "concatenation",
     "number", "command_substitution", "regex", "extglob_pattern"}
)  # fmt: skip


def _operands(node: Node) -> list[Node]:
    """The operand words of a `[ … ]` / `[[ … ]]` expression (operators and brackets left out)."""
    out: list[Node] = []
    stack = list(reversed(node.children))
    while stack:
        n = stack.pop()
        if n.type in _OPERAND_TYPES:
            out.append(n)
        elif n.type not in ("test_operator",) and n.child_count:
            stack.extend(reversed(n.children))
        elif n.type == "test_operator":
            continue
    return out


def descendants(node: Node, types: frozenset[str]) -> Iterator[Node]:
    """Nodes of `types` under `node`, not descending into them."""
    stack = list(reversed(node.children))
    while stack:
        n = stack.pop()
        if n.type in types:
            yield n
            continue
        stack.extend(reversed(n.children))


@dataclass(frozen=True)
class _Heredoc:
    """A heredoc lifted out of the text before the final parse: `<<` or `<<-`, its delimiter and body."""

    op: str
    delimiter: str
    body: str
    reads: tuple[str, ...]  # variables its body expands (none when the delimiter is quoted)


def _lift_heredocs(source: bytes) -> tuple[bytes, dict[int, _Heredoc]]:
    """The source with each heredoc blanked, and the heredocs by the byte where their redirect starts.

    tree-sitter-bash finds heredocs well but nests the rest of their line inside them, and loses its way
    when that rest holds `; then` (`if cmd <<EOF | grep -q x; then`). So a first parse finds them; each
    `<<DELIM` becomes a same-length `<____` redirect and its body and end line become spaces (rows and
    columns unchanged); the second parse then reads every line as bash runs it.
    """
    tree = _parse_bytes(source)
    docs: dict[int, _Heredoc] = {}
    out = bytearray(source)
    stack = [tree.root_node]
    while stack:
        n = stack.pop()
        if n.type != "heredoc_redirect":
            stack.extend(n.children)
            continue
        start = next((c for c in n.children if c.type == "heredoc_start"), None)
        body = next((c for c in n.children if c.type == "heredoc_body"), None)
        end = next((c for c in n.children if c.type == "heredoc_end"), None)
        op_node = n.children[0] if n.children else None
        if start is None or op_node is None:
            continue
        raw = node_text(start)
        quoted = any(q in raw for q in "'\\\"")
        reads: list[str] = []
        if body is not None and not quoted:
            collect_vars(body, reads)
        a, b = op_node.start_byte, start.end_byte
        out[a:b] = b"<" + b"_" * (b - a - 1)
        tail_from = body.start_byte if body is not None else (end.start_byte if end is not None else None)
        tail_to = end.end_byte if end is not None else (body.end_byte if body is not None else None)
        if tail_from is not None and tail_to is not None:
            for i in range(tail_from, tail_to):
                if out[i] != 0x0A:
                    out[i] = 0x20
        docs[a] = _Heredoc(
            node_text(op_node),
            raw.strip("'\"").replace("\\", ""),
            node_text(body) if body is not None else "",
            tuple(reads),
        )
    return bytes(out), docs


# How deep a block's syntax tree may nest (docs/limits.md). The analyser's walks recurse a level or two
# of Python frames per level of the tree, so a block nested thousands deep (3,000 `$(…)` inside each
# other, a chain of 3,000 `&&`) would exhaust Python's recursion limit; such a block is refused here,
# once, before any walk. Real plans nest 16 deep at most (every block of the plans and corpora here).
MAX_DEPTH = 160


class TooDeep(ValueError):
    """A block whose syntax tree nests deeper than `MAX_DEPTH` (the parser names the plan line)."""

    def __init__(self, row: int, depth: int) -> None:
        self.row = row  # 0-based row in the block of the first node past the limit
        self.depth = depth
        super().__init__(f"bash nested more than {MAX_DEPTH} levels deep at row {row}")


def _too_deep(root: Node) -> tuple[int, int] | None:
    """(row, depth) of the first node deeper than `MAX_DEPTH`, found without recursion (a tree cursor)."""
    cursor = root.walk()
    depth = 1
    while True:
        if cursor.goto_first_child():
            depth += 1
            if depth > MAX_DEPTH:
                return cursor.node.start_point.row if cursor.node is not None else 0, depth
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return None
            depth -= 1


@functools.lru_cache(maxsize=64)
def analysed(text: str) -> tuple[Node, _Builder]:
    """The tree of `text` (heredocs lifted) and the builder that walked it.

    Kept for a few blocks only (a tree holds memory outside Python's heap too): what the rest of a run
    asks again is in `parse`'s `Script` and `verify_model`'s model, cached on their own. Raises `TooDeep`
    for a tree deeper than `MAX_DEPTH` (the plan parser refuses such a block, so no later question meets
    one).
    """
    source = text.encode("utf-8", "surrogateescape")
    heredocs: dict[int, _Heredoc] = {}
    if b"<<" in source:
        source, heredocs = _lift_heredocs(source)
    tree = _parse_bytes(source)
    deep = _too_deep(tree.root_node)
    if deep is not None:
        raise TooDeep(*deep)
    b = _Builder(text, heredocs)
    b.walk(tree.root_node)
    return tree.root_node, b


@functools.lru_cache(maxsize=2048)
def parse(text: str) -> Script:
    """The block `text` read with the bash grammar (`has_error` marks broken syntax); raises only
    `TooDeep`."""
    root, b = analysed(text)
    return Script(
        text=text,
        commands=tuple(b.commands),
        functions=dict(b.functions),
        comments=tuple(b.comments),
        reads=tuple(dict.fromkeys(b.reads)),
        assigns=frozenset(b.assigns),
        has_error=root.has_error,
        values=tuple(b.values),
    )

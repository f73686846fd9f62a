"""The one bash analyser: every question Director asks about a block's bash is answered here.

It reads a block with a real grammar (tree-sitter-bash) and answers, by structure and never by wording:
which commands a block runs (with their words, redirections, enclosing function and source lines), which
variables it reads and assigns (fingerprints, gate contents), its comments, which commands destroy
things, whether it calls a program (the wrangler target), and -- for verify blocks -- the *checks* it
makes: which printed lines are pass lines and which are failure lines, which conditions are assertions
and which are preconditions, which branches are alternatives (`verify_model`).

Why tree-sitter: bash has no grammar in the standard library, and a hand-written one had to guess at
heredocs, nested quoting, `case` arms and `$(…)`. tree-sitter-bash is the grammar editors use, it is
maintained, ships wheels, never raises on malformed input (it marks an error node and goes on), and
parses a block in microseconds.

Everything here is pure: text in, frozen data out. Line numbers are 0-based rows of the block body.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Literal

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

# ---------------------------------------------------------------------------------------------------
# The grammar


@functools.cache
def _parser() -> Parser:
    return Parser(Language(tree_sitter_bash.language()))


# Wrappers that run the next word as the command (`command wrangler …`, `sudo rm …`).
_WRAPPERS = frozenset({"command", "builtin", "exec", "nohup", "time", "sudo", "doas", "nice", "env", "xargs"})
# Options of those wrappers that take a value (`nice -n 5`, `sudo -u root`, `env -u NAME`).
_WRAPPER_VALUE_OPTS = {"nice": {"-n"}, "sudo": {"-u", "-g", "-C"}, "env": {"-u", "-C"}, "xargs": {"-I", "-n"}}
_STATEMENT_LIST_PARENTS = frozenset(
    {"program", "compound_statement", "subshell", "do_group", "if_statement", "elif_clause",
     "else_clause", "case_item"}
)  # fmt: skip
_KEYWORDS = frozenset(
    {"if", "then", "else", "elif", "fi", "case", "esac", "in", "do", "done", "for", "while", "until",
     "select", "{", "}", "(", ")", ";", ";;", ";&", ";;&", "&", "\n", "function", "((", "))"}
)  # fmt: skip
_SUBST = frozenset({"command_substitution", "process_substitution"})
_GLOB = re.compile(r"[*?\[]")
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# ---------------------------------------------------------------------------------------------------
# Words and commands


@dataclass(frozen=True)
class Word:
    """One shell word.

    `text` is as written; `pattern` has the quoting removed and every expansion kept as written
    (`workflow $WF registered`); `static` is the value when nothing in it expands (else None); `vars`
    are the variables it expands; `whole_var` is set when the word is exactly one expansion (`"$DB"`);
    `glob` when an unquoted `*`, `?` or `[` makes it a pattern.
    """

    text: str
    pattern: str
    static: str | None
    vars: tuple[str, ...] = ()
    whole_var: str | None = None
    glob: bool = False
    quoted: bool = False


@dataclass(frozen=True)
class Redirect:
    """`op target`: `>` `/dev/null`, `>&` `2`, `<<` `EOF` (a heredoc's body is `body`)."""

    op: str
    target: Word | None
    fd: str = ""
    body: str | None = None


CommandKind = Literal["command", "test", "arith", "assign", "decl", "for", "case"]


@dataclass(frozen=True)
class Command:
    """A command the shell runs (simple commands, `[ ]`/`[[ ]]`, `(( ))`, assignments, loop heads).

    `name` is the command word as xtrace prints it (`echo`, `[`, `[[`, `((`, `for`, `command`); `argv`
    is the words from the command name on; `program` is the command after wrappers (`command wrangler`
    → `wrangler`); `function` is the shell function whose body holds it; `in_subst` marks commands
    inside `$(…)`/`<(…)`; `last_in_pipeline` is False for `echo x` in `echo x | grep`.
    """

    id: int
    kind: CommandKind
    name: str
    argv: tuple[Word, ...]
    redirects: tuple[Redirect, ...]
    row: int
    end_row: int
    function: str | None = None
    in_subst: bool = False
    last_in_pipeline: bool = True
    assigns: tuple[str, ...] = ()

    @property
    def program(self) -> str:
        """The program this runs, after wrappers and their options; "" when it is computed."""
        words = list(self.argv)
        while words:
            w = words[0].static
            if w is None:
                return ""
            base = w.rsplit("/", 1)[-1]
            if base not in _WRAPPERS:
                return base
            words = words[1:]
            takes_value = _WRAPPER_VALUE_OPTS.get(base, set())
            while words and words[0].static is not None and (
                words[0].static.startswith("-") or (base == "env" and "=" in words[0].static)
            ):
                opt = words.pop(0).static
                if opt in takes_value and words:
                    words.pop(0)
        return ""

    @property
    def args(self) -> tuple[Word, ...]:
        """The words after the program (wrappers removed)."""
        prog = self.program
        for i, w in enumerate(self.argv):
            if w.static is not None and w.static.rsplit("/", 1)[-1] == prog:
                return self.argv[i + 1 :]
        return self.argv[1:]

    @property
    def stdout_to_file(self) -> bool:
        """Whether its standard output goes to a file rather than to the block's output."""
        for r in self.redirects:
            if r.op in (">", ">>", ">|", "&>", "&>>") and r.fd in ("", "1"):
                target = r.target.static if r.target else None
                if target not in ("/dev/stdout", "/dev/stderr", "/dev/tty"):
                    return True
        return False


@dataclass(frozen=True)
class Script:
    """A parsed block: its commands in document order, functions, comments and variables."""

    text: str
    commands: tuple[Command, ...]
    functions: dict[str, tuple[int, int]]  # name -> (row, end_row) of its definition
    comments: tuple[tuple[int, str], ...]  # (row, text without the leading `#`)
    reads: tuple[str, ...]  # variables expanded anywhere (first-seen order), heredoc bodies included
    assigns: frozenset[str]  # variables the block sets (assignments, `read`, `for`, declarations)
    has_error: bool

    def calls(self, program: str) -> bool:
        """Whether some command runs `program` (after wrappers: `command wrangler`, `npx wrangler`)."""
        for c in self.commands:
            if c.program == program:
                return True
            if c.program in ("npx", "pnpx", "bunx") and any(a.static == program for a in c.args[:3]):
                return True
        return False


def _text(node: Node | None) -> str:
    return node.text.decode("utf-8", "surrogateescape") if node is not None and node.text else ""


def _expansion_name(node: Node) -> str | None:
    """The variable a `$X` / `${X…}` node expands (positional and special parameters included)."""
    for c in node.children:
        if c.type == "variable_name":
            return _text(c)
        if c.type == "subscript":
            for cc in c.children:
                if cc.type == "variable_name":
                    return _text(cc)
        if c.type == "special_variable_name":
            return _text(c)
    return None


def _word(node: Node) -> Word:
    """A Word from a word-like node (word, string, raw_string, concatenation, expansion, number…)."""
    text = _text(node)
    parts: list[str] = []
    static = True
    quoted = False
    glob = False
    vars_: list[str] = []

    def walk(n: Node, in_quotes: bool) -> None:
        nonlocal static, quoted, glob
        t = n.type
        if t in ("simple_expansion", "expansion"):
            static = False
            name = _expansion_name(n)
            if name:
                vars_.append(name)
            for c in n.children:  # `${X:-$Y}`: Y is read too
                if c.type not in ("variable_name", "subscript", "$", "${", "}"):
                    _collect_vars(c, vars_)
            parts.append(_text(n))
        elif t in _SUBST or t == "arithmetic_expansion":
            static = False
            _collect_vars(n, vars_)
            parts.append(_text(n))
        elif t == "string":
            quoted = True
            for c in n.children:
                if c.type == '"':
                    continue
                walk(c, True)
        elif t == "raw_string":
            quoted = True
            parts.append(_text(n)[1:-1])
        elif t == "ansi_c_string":
            quoted = True
            static = False  # escapes: take the text as a pattern, never as a value
            parts.append(_text(n)[2:-1])
        elif t == "concatenation":
            for c in n.children:
                walk(c, in_quotes)
        elif t == "string_content":
            parts.append(re.sub(r'\\([$`"\\])', r"\1", _text(n)))
        elif t in ("word", "number", "extglob_pattern", "regex"):
            raw = _text(n)
            if not in_quotes and _GLOB.search(raw.replace("\\*", "").replace("\\?", "")):
                glob = True
            parts.append(re.sub(r"\\(.)", r"\1", raw) if not in_quotes else raw)
        elif n.child_count == 0:
            parts.append(_text(n))
        else:
            for c in n.children:
                walk(c, in_quotes)

    walk(node, False)
    pattern = "".join(parts)
    whole = None
    if node.type in ("simple_expansion", "expansion"):
        whole = _expansion_name(node)
    elif node.type == "string":
        inner = [c for c in node.children if c.type != '"']
        if len(inner) == 1 and inner[0].type in ("simple_expansion", "expansion"):
            only = inner[0]
            if not any(c.type not in ("variable_name", "$", "${", "}") for c in only.children):
                whole = _expansion_name(only)
    if (
        whole is not None
        and node.type == "expansion"
        and any(c.type not in ("variable_name", "$", "${", "}") for c in node.children)
    ):
        whole = None  # `${X%/*}` is not X
    return Word(text, pattern, pattern if static else None, tuple(dict.fromkeys(vars_)), whole, glob, quoted)


def _collect_vars(node: Node, out: list[str]) -> None:
    """Every variable expanded under `node` (including arithmetic's bare names)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in ("simple_expansion", "expansion"):
            name = _expansion_name(n)
            if name:
                out.append(name)
        elif n.type == "variable_name" and n.parent is not None and n.parent.type in (
            "binary_expression",
            "unary_expression",
            "postfix_expression",
            "parenthesized_expression",
            "arithmetic_expansion",
            "compound_statement",
        ):
            out.append(_text(n))  # `(( N > 1 ))`, `$(( N + 1 ))`
        stack.extend(reversed(n.children))


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

    def add(self, node: Node, kind: CommandKind, name: str, argv: tuple[Word, ...], **kw: object) -> int:
        cid = len(self.commands)
        fn = kw.pop("function", None)
        self.commands.append(
            Command(
                cid,
                kind,
                name,
                argv,
                tuple(kw.pop("redirects", ())),  # type: ignore[arg-type]
                node.start_point.row,
                node.end_point.row,
                fn if isinstance(fn, str) else None,
                bool(kw.pop("in_subst", False)),
                bool(kw.pop("last", True)),
                tuple(kw.pop("assigns", ())),  # type: ignore[arg-type]
            )
        )
        self.by_node[node.id] = cid
        return cid

    def walk(self, node: Node, fn: str | None = None, in_subst: bool = False, last: bool = True) -> None:
        t = node.type
        if t == "comment":
            self.comments.append((node.start_point.row, _text(node)[1:]))
            return
        if t == "function_definition":
            name_node = node.child_by_field_name("name")
            name = _text(name_node)
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
        if t in _SUBST:
            for c in node.children:
                self.walk(c, fn, True)
            return
        if t == "compound_statement" and node.children and node.children[0].type == "((":
            names: list[str] = []
            _collect_vars(node, names)
            self.reads.extend(names)
            self.add(node, "arith", "((", (), function=fn, in_subst=in_subst)
            return
        if t in ("for_statement", "select_statement"):
            var = node.child_by_field_name("variable")
            if var is not None:
                self.assigns.add(_text(var))
            values = [c for c in node.children_by_field_name("value")]
            argv = tuple(_word(v) for v in values)
            for w in argv:
                self.reads.extend(w.vars)
            self.add(node, "for", "for", argv, function=fn, in_subst=in_subst)
            for c in node.children:
                if c.type == "do_group":
                    self.walk(c, fn, in_subst)
                elif c in values:
                    for cc in c.children:
                        if cc.type in _SUBST:
                            self.walk(cc, fn, True)
            return
        if t == "c_style_for_statement":
            names = []
            _collect_vars(node, names)
            self.reads.extend(names)
            self.add(node, "for", "for", (), function=fn, in_subst=in_subst)
            for c in node.children:
                if c.type in ("do_group", "compound_statement"):
                    self.walk(c, fn, in_subst)
            return
        if t == "case_statement":
            value = node.child_by_field_name("value")
            argv = (_word(value),) if value is not None else ()
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
                            self.reads.extend(_word(cc).vars)
            return
        for c in node.children:
            if c.is_named or c.type == "comment":
                self.walk(c, fn, in_subst, last)

    def _assignments(
        self, node: Node, fn: str | None, in_subst: bool, *, sets: bool = True
    ) -> tuple[str, ...]:
        names: list[str] = []
        assigns = [node] if node.type == "variable_assignment" else [
            c for c in node.children if c.type == "variable_assignment"
        ]
        for a in assigns:
            name_node = a.child_by_field_name("name")
            if name_node is not None:
                nm = _text(name_node)
                if name_node.type == "subscript":
                    inner = name_node.child_by_field_name("name")
                    nm = _text(inner) if inner is not None else nm.split("[", 1)[0]
                names.append(nm)
            value = a.child_by_field_name("value")
            if value is not None:
                self._value_reads(value, fn)
                if name_node is not None:
                    self.values.append((names[-1], _word(value)))
        if sets:
            self.assigns.update(names)
        return tuple(names)

    def _value_reads(self, value: Node, fn: str | None) -> None:
        vars_: list[str] = []
        stack = [value]
        while stack:
            n = stack.pop()
            if n.type in _SUBST:
                self.walk(n, fn, True)
                continue
            if n.type in ("simple_expansion", "expansion"):
                name = _expansion_name(n)
                if name:
                    vars_.append(name)
            stack.extend(reversed(n.children))
        self.reads.extend(vars_)

    def _redirect(self, node: Node) -> Redirect:
        op = ""
        fd = ""
        target: Word | None = None
        for c in node.children:
            if c.type == "file_descriptor":
                fd = _text(c)
            elif not c.is_named:
                op = _text(c)
            else:
                target = _word(c)
        doc = self.heredocs.get(node.start_byte)
        if doc is not None:  # the `<____` that stands for a heredoc (see `_analysed`)
            self.reads.extend(doc.reads)
            return Redirect(doc.op, Word(doc.delimiter, doc.delimiter, doc.delimiter), fd, doc.body)
        if target is not None:
            self.reads.extend(target.vars)
        return Redirect(op, target, fd, None)

    def _command(
        self, node: Node, fn: str | None, in_subst: bool, last: bool, redirects: tuple[Redirect, ...]
    ) -> None:
        t = node.type
        # Nested substitutions in any word run as commands of their own.
        for sub in _descendants(node, _SUBST):
            self.walk(sub, fn, True)
        if t == "test_command":
            first = node.children[0].type if node.children else "["
            names: list[str] = []
            _collect_vars(node, names)
            self.reads.extend(names)
            words = tuple(_word(c) for c in _operands(node))
            self.add(node, "test", first, words, redirects=redirects, function=fn, in_subst=in_subst,
                     last=last)  # fmt: skip
            return
        if t in ("declaration_command", "unset_command"):
            kw = _text(node.children[0]) if node.children else ""
            argv: list[Word] = [Word(kw, kw, kw)]
            names2: list[str] = []
            for c in node.children[1:]:
                if c.type == "variable_assignment":
                    names2.extend(self._assignments(c, fn, in_subst))
                    argv.append(_word(c))
                elif c.type == "variable_name":
                    names2.append(_text(c))
                    argv.append(_word(c))
                elif c.is_named:
                    w = _word(c)
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
                argv2.append(_word(inner))
            elif c.type.endswith("redirect"):
                redirects = (*redirects, self._redirect(c))
            elif c.is_named and c.type != "comment":
                argv2.append(_word(c))
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
                if w.static and _NAME_RE.fullmatch(w.static):
                    self.assigns.add(w.static)
        elif cmd.program in ("mapfile", "readarray") and cmd.args:
            last_arg = cmd.args[-1].static
            if last_arg and _NAME_RE.fullmatch(last_arg):
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


def _descendants(node: Node, types: frozenset[str]) -> Iterator[Node]:
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
    tree = _parser().parse(source)
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
        raw = _text(start)
        quoted = any(q in raw for q in "'\\\"")
        reads: list[str] = []
        if body is not None and not quoted:
            _collect_vars(body, reads)
        a, b = op_node.start_byte, start.end_byte
        out[a:b] = b"<" + b"_" * (b - a - 1)
        tail_from = body.start_byte if body is not None else (end.start_byte if end is not None else None)
        tail_to = end.end_byte if end is not None else (body.end_byte if body is not None else None)
        if tail_from is not None and tail_to is not None:
            for i in range(tail_from, tail_to):
                if out[i] != 0x0A:
                    out[i] = 0x20
        docs[a] = _Heredoc(
            _text(op_node),
            raw.strip("'\"").replace("\\", ""),
            _text(body) if body is not None else "",
            tuple(reads),
        )
    return bytes(out), docs


@functools.lru_cache(maxsize=1024)
def _analysed(text: str) -> tuple[Node, _Builder]:
    source = text.encode("utf-8", "surrogateescape")
    heredocs: dict[int, _Heredoc] = {}
    if b"<<" in source:
        source, heredocs = _lift_heredocs(source)
    tree = _parser().parse(source)
    b = _Builder(text, heredocs)
    b.walk(tree.root_node)
    return tree.root_node, b


@functools.lru_cache(maxsize=2048)
def parse(text: str) -> Script:
    """The block `text` read with the bash grammar (never raises; `has_error` marks broken syntax)."""
    root, b = _analysed(text)
    return Script(
        text=text,
        commands=tuple(b.commands),
        functions=dict(b.functions),
        comments=tuple(b.comments),
        reads=tuple(dict.fromkeys(b.reads)),
        assigns=frozenset(b.assigns),
        has_error=root.has_error,
    )


# ---------------------------------------------------------------------------------------------------
# Variables (fingerprints and gate contents)


def reads(text: str) -> list[str]:
    """Variables a block expands, in first-seen order (heredoc bodies that expand included)."""
    return list(parse(text).reads)


def assigns(text: str) -> frozenset[str]:
    """Variables a block sets (its outputs, not its inputs)."""
    return parse(text).assigns


def inputs(text: str) -> list[str]:
    """Variables a block reads that it does not set itself first: what its outcome depends on."""
    s = parse(text)
    return [v for v in s.reads if v not in s.assigns and _NAME_RE.fullmatch(v)]


def assignments(text: str) -> list[tuple[str, Word]]:
    """(name, value) of every assignment a block makes (`X=…`, `export X=…`, `local X=…`), in order."""
    return list(_analysed(text)[1].values)


def backgrounds(text: str) -> bool:
    """Whether the block starts a job in the background (`server &`, `nohup x >log 2>&1 &`)."""
    root, _ = _analysed(text)
    stack = [root]
    while stack:
        n = stack.pop()
        if n.type == "&" and not n.is_named:
            return True
        stack.extend(n.children)
    return False


def calls(text: str, program: str) -> bool:
    """Whether the block runs `program`."""
    return parse(text).calls(program)


# ---------------------------------------------------------------------------------------------------
# Destructive commands

# Programs that destroy what their arguments name.
_DESTROYING_PROGRAMS = frozenset(
    {"rm", "rmdir", "unlink", "shred", "truncate", "dropdb", "dropuser", "wipefs", "mkfs"}
)
# Subcommands that destroy (`wrangler delete`, `kubectl delete`, `tmux kill-session`, `git branch -D`).
_DESTROYING_VERBS = re.compile(
    r"^(delete|del|destroy|drop|purge|remove|rm|rmi|terminate|truncate|uninstall|"
    r"kill-session|kill-server|prune|wipe|erase)(-[a-z0-9-]+)?$",
    re.IGNORECASE,
)
_SQL_DESTROYING = re.compile(r"\b(drop\s+(table|view|index|database|schema)|delete\s+from|truncate)\b", re.I)
_SQL_CLIENTS = frozenset({"sqlite3", "psql", "mysql", "mariadb", "duckdb"})


@dataclass(frozen=True)
class Destruction:
    """A command that destroys something: what it is and the words that name its targets."""

    row: int
    what: str  # `rm -rf`, `wrangler delete`, `> file`, `sqlite3 DROP TABLE`
    targets: tuple[Word, ...]
    # Strong: destroys a resource (`rm -r`, `… delete`, `DROP TABLE`), what only 💥 sections should do.
    # Weak: removes or overwrites a file (`rm -f f`, `> f`), what create sections do to their own files.
    strong: bool = True


def destructions(text: str, *, plan_functions: frozenset[str] = frozenset()) -> list[Destruction]:
    """Commands that delete, drop, terminate or overwrite, with the words naming what they destroy.

    Function calls are not commands of their own (their bodies are analysed where they are defined), so a
    function named `drop` is not destructive; `plan_functions` names functions defined in other blocks.
    """
    s = parse(text)
    local = frozenset(s.functions) | plan_functions
    out: list[Destruction] = []
    for c in s.commands:
        prog = c.program
        if c.kind != "command" or prog in local:
            continue
        args = c.args
        positional = [a for a in args if not (a.static or "").startswith("-")]
        if prog in _DESTROYING_PROGRAMS:
            flags = "".join(a.static[1:] for a in args if a.static and re.fullmatch(r"-[A-Za-z]+", a.static))
            longs = {a.static for a in args if a.static and a.static.startswith("--")}
            what = f"{prog} -{flags}" if flags else prog
            recursive = "r" in flags.lower() or "--recursive" in longs
            strong = prog != "rm" or recursive
            out.append(Destruction(c.row, what, tuple(positional), strong=strong))
        elif (prog in _SQL_CLIENTS and any(_SQL_DESTROYING.search(a.pattern) for a in args)) or (
            prog in _SQL_CLIENTS
            and any(r.body and _SQL_DESTROYING.search(r.body) for r in c.redirects)
        ):
            out.append(Destruction(c.row, f"{prog} (SQL that drops or deletes)", tuple(positional[:1])))
        elif prog not in ("echo", "printf", "grep", "test", "[", "[[") and prog:
            # `tool verb …` / `tool noun verb …`: a destroying verb among the first words before options.
            for i, a in enumerate(positional[:3]):
                if a.static is not None and not a.quoted and _DESTROYING_VERBS.match(a.static):
                    what = " ".join([prog, *(p.static or p.pattern for p in positional[: i + 1])])
                    out.append(Destruction(c.row, what, tuple(positional[i + 1 :])))
                    break
        for r in c.redirects:
            if (
                r.op in (">", ">|", "&>")
                and r.target is not None
                and r.fd in ("", "1", "2")
                and r.target.static not in ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty")
            ):
                out.append(Destruction(c.row, f"{r.op} (overwrites)", (r.target,), strong=False))
    return out


# Commands that create what their (last, or every) argument names.
_CREATE_EVERY = frozenset({"mkdir", "touch", "tee", "install", "mkfifo", "truncate"})
_CREATE_LAST = frozenset({"cp", "mv", "ln", "rsync", "scp"})


def creates(text: str) -> frozenset[str]:
    """Variables naming something the block creates or writes: `> "$F"`, `mkdir "$D"`, `cp a "$B"`,
    `git init "$R"`, `python3 -m venv "$V"`, `sqlite3 "$DB" …` (a database file it opens read-write)."""
    out: set[str] = set()
    for c in parse(text).commands:
        for r in c.redirects:
            if r.op in (">", ">>", ">|", "&>", "&>>") and r.target is not None and r.target.whole_var:
                out.add(r.target.whole_var)
        if c.kind != "command":
            continue
        prog, args = c.program, c.args
        positional = [a for a in args if not (a.static or "").startswith("-")]
        named = [a.whole_var for a in positional if a.whole_var]
        last = positional[-1].whole_var if positional else None
        if prog in _CREATE_EVERY:
            out.update(named)
        elif last and (
            prog in _CREATE_LAST
            or (prog == "git" and positional[0].static in ("init", "clone"))
            or (prog.startswith("python") and any(a.static == "venv" for a in args))
        ):
            out.add(last)
        elif (
            prog in _SQL_CLIENTS
            and not any(a.static in ("-readonly", "--readonly") for a in args)
            and positional
            and positional[0].whole_var
        ):
            out.add(positional[0].whole_var)  # the database file it opens read-write
    return frozenset(out)


def function_names(text: str) -> frozenset[str]:
    """Shell functions a block defines."""
    return frozenset(parse(text).functions)


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


@dataclass(frozen=True)
class Guard:
    """A condition in front of checks.

    `precondition`: `cond && { …its own checks… }` or an `if` without `else` -- a false condition means
    the checks inside were *skipped*. `assertion`: `cond && echo P` -- a condition that ran without its
    pass line printing is a failed check. `poll` marks an assertion that ends its loop (`&& break`),
    which holds when any iteration passed.
    """

    kind: Literal["precondition", "assertion"]
    row: int
    cond: tuple[int, ...]  # probes of the condition
    body: tuple[int, ...]  # probes of what it guards
    lines: tuple[int, ...] = ()  # pass lines (by probe) it guards
    poll: bool = False
    loop: int | None = None  # the `for` head it sits in (an assertion must pass on every iteration)
    # An assertion whose failure shows: the block's last word (bash exits with it) or followed by `|| …`.
    enforced: bool = True


@dataclass(frozen=True)
class VerifyModel:
    """What a verify block checks, for judging its run (see `director.plan.verify.judge`).

    `top` classifies the block's top-level statements: "inert" (assignments, declarations, plain
    echoes, `cd`…), "guard:N" (a precondition, index into `guards`), or "check".
    """

    probes: tuple[Probe, ...]
    lines: tuple[ReportLine, ...]
    guards: tuple[Guard, ...]
    top: tuple[str, ...]
    trailing_guard: int | None  # the precondition that is the block's last statement, if any
    functions: tuple[str, ...]
    traceable: bool  # False when the block turns tracing off itself (`set +x`)
    has_error: bool = False
    line_offset: int = 0  # plan line of the block's first body line (0-based)

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
        self.top: list[str] = []
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
        stmts = _statements(root)
        for i, st in enumerate(stmts):
            exits_after = any(_is_fail_exit(later) for later in stmts[i + 1 :])
            g = self.statement(st, False, exits_after, tail=i == len(stmts) - 1)
            if g is not None:
                self.top.append(f"guard:{g}")
                if i == len(stmts) - 1 and st.type == "list":
                    self.trailing_guard = g
            else:
                self.top.append(self.classify_top(st))
        # Function bodies are checks too when called: classify their lines in their own context.
        for fn in _descendants(root, frozenset({"function_definition"})):
            body = fn.child_by_field_name("body")
            if body is not None:
                self.walk_list(_statements(body), False)

    def classify_top(self, st: Node) -> str:
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
        for i, st in enumerate(stmts):
            exits_after = any(_is_fail_exit(later) for later in stmts[i + 1 :])
            self.statement(st, fail, exits_after, tail=tail and i == len(stmts) - 1)

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
                    self.walk_list(_statements(item), fail, tail)
            return None
        if t in ("compound_statement", "subshell"):
            self.walk_list(_statements(st), fail, tail)
            return None
        if t in ("for_statement", "while_statement", "c_style_for_statement", "select_statement"):
            head = self.node_cmd.get(st.id)
            if head is not None:
                self.loops.append(head)
            for c in st.children:
                if c.type in ("do_group", "compound_statement"):
                    self.walk_list(_statements(c), fail)
            if head is not None:
                self.loops.pop()
        return None

    def report(self, node: Node, fail: bool, exits_after: bool) -> int | None:
        """Record `node` as a report line when it is an echo/printf that prints; returns its probe."""
        target = node
        if node.type == "pipeline":
            parts = [c for c in node.children if c.is_named]
            target = parts[-1] if parts else node
        if target.type == "redirected_statement":
            target = target.child_by_field_name("body") or target
        cid = self.node_cmd.get(target.id)
        if cid is None:
            return None
        c = self.script.commands[cid]
        if c.kind != "command" or c.program not in _REPORTERS or c.in_subst or not c.last_in_pipeline:
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

    def _body_kind(self, body_probes: list[int], new_lines: list[ReportLine], exits: bool) -> str | None:
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
        if not checks:
            return "assertion" if has_pass and not exits else None
        return "precondition" if (new_lines or exits) else None

    def and_or(self, st: Node, fail: bool, exits_after: bool, tail: bool = False) -> int | None:
        """An and-or list: assertions (`cond && echo P`), preconditions (`cond && { checks }`), lines."""
        elements, ops = _flatten(st)
        whole: int | None = None
        passed_before = False  # a pass line after `&&` earlier in the chain: a later `|| echo` is its B
        for k, (el, op) in enumerate(zip(elements, ops, strict=True)):
            el_tail = tail and k == len(elements) - 1
            alternative_after = any(o == "||" for o in ops[k + 1 :])
            # After `||` is the failure path -- unless the `&&` branch before it exits non-zero
            # (`A && { echo bad; exit 1; } || echo C`): then C runs when A is false, the good outcome.
            el_fail = fail or (
                op == "||" and not (k >= 2 and ops[k - 1] == "&&" and _group_exits(elements[k - 1]))
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
                    kind = self._body_kind(body, new_lines, _group_exits(_unredirect(el)))
                    if kind is not None and cond:
                        self.guards.append(
                            Guard(
                                kind,  # type: ignore[arg-type]
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
            # `A && { …; exit 1; } || C`, `A || echo F || exit 1`: a failure line whose chain ends in an exit.
            hard = exits_after or (el_fail and any(_is_fail_exit(x) or _group_exits(x) for x in later))
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
        has_else = any(c.type == "else_clause" for c in st.children)
        conds: list[int] = []
        body: list[int] = []
        before = set(self.lines)
        branch: list[Node] = []

        def flush() -> None:
            for i, s in enumerate(branch):
                ex = exits_after or any(_is_fail_exit(x) for x in branch[i + 1 :])
                self.statement(s, fail, ex, tail and i == len(branch) - 1)
                body.extend(self.probes_under(s))
            branch.clear()

        def clause(children: list[Node]) -> None:
            mode = "cond"
            for c in children:
                if c.type == "then":
                    mode = "then"
                    continue
                if not c.is_named or c.type == "comment":
                    continue
                if c.type in ("elif_clause", "else_clause"):
                    flush()
                    if c.type == "elif_clause":
                        clause(list(c.children))
                    else:
                        for cc in _statements(c):
                            branch.append(cc)
                        flush()
                    continue
                if mode == "cond":
                    conds.extend(self.probes_under(c))
                else:
                    branch.append(c)
            flush()

        clause(list(st.children))
        new_lines = [ln for p, ln in self.lines.items() if p not in before]
        if has_else:
            return None  # alternatives: one branch always runs
        kind = self._body_kind(body, new_lines, _group_exits(st))
        if kind == "precondition" and conds:
            self.guards.append(
                Guard("precondition", st.start_point.row, tuple(conds), tuple(body),
                      tuple(ln.probe for ln in new_lines if ln.polarity == "pass"))
            )  # fmt: skip
            return len(self.guards) - 1
        return None


def _statements(node: Node) -> list[Node]:
    """The statements of a statement list (program, group, branch, loop body, case arm)."""
    out = []
    skip_first = node.type == "case_item"
    for c in node.children:
        if not c.is_named or c.type == "comment":
            continue
        if skip_first and c.type in ("word", "extglob_pattern", "string", "raw_string", "concatenation",
                                     "simple_expansion", "expansion", "number"):
            continue  # case patterns
        skip_first = False
        if c.type in ("do_group",):
            out.extend(_statements(c))
            continue
        out.append(c)
    return out


def _flatten(node: Node) -> tuple[list[Node], list[str]]:
    """`a && b || c` (left-nested lists) as elements [a, b, c] and ops ["", "&&", "||"]."""
    if node.type != "list":
        return [node], [""]
    kids = [c for c in node.children if c.type != "comment"]
    left, op, right = kids[0], kids[1], kids[2] if len(kids) > 2 else None
    els, ops = _flatten(left)
    if right is not None:
        r_els, r_ops = _flatten(right)
        els.extend(r_els)
        ops.extend([_text(op), *r_ops[1:]])
    return els, ops


def _unredirect(node: Node) -> Node:
    """The statement a redirection wraps (`{ …; } >&2` is the group)."""
    if node.type == "redirected_statement":
        return node.child_by_field_name("body") or node
    return node


def _simple_name(node: Node) -> tuple[str, list[str]]:
    """(command name, argument texts) of a simple `command` node."""
    if node.type == "redirected_statement":
        node = node.child_by_field_name("body") or node
    if node.type != "command":
        return "", []
    name = ""
    args: list[str] = []
    for c in node.children:
        if c.type == "command_name":
            name = _text(c)
        elif c.is_named and c.type != "variable_assignment":
            args.append(_word(c).pattern)
    return name, args


def _is_fail_exit(node: Node) -> bool:
    """`exit N`/`return N` with N ≠ 0 (a computed status counts), or `false`."""
    name, args = _simple_name(node)
    if name in ("exit", "return"):
        if not args:
            return False
        try:
            return int(args[0]) != 0
        except ValueError:
            return True
    return name == "false" and not args


def _group_exits(node: Node) -> bool:
    """A `{ …; exit N; }` / `( … )` / branch that ends the script on failure."""
    if node.type in ("compound_statement", "subshell", "if_statement", "else_clause", "elif_clause"):
        return any(_is_fail_exit(s) or _group_exits(s) for s in _statements(node))
    if node.type == "redirected_statement":
        body = node.child_by_field_name("body")
        return body is not None and _group_exits(body)
    return _is_fail_exit(node)


def verify_model(text: str, line_offset: int = 0) -> VerifyModel:
    """The checks a verify block makes, classified by structure (see `docs/verify-semantics.md`)."""
    return _verify_model(text, line_offset)


@functools.lru_cache(maxsize=1024)
def _verify_model(text: str, line_offset: int) -> VerifyModel:
    script = parse(text)
    root, b = _analysed(text)
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
    lines = tuple(sorted(vb.lines.values(), key=lambda ln: ln.probe))
    traceable = not re.search(r"(?m)^\s*set\s+(?:[^#\n]*\s)?(\+[a-wyzA-Z]*x|\+o\s+xtrace)", text)
    return VerifyModel(
        probes=probes,
        lines=lines,
        guards=tuple(vb.guards),
        top=tuple(vb.top),
        trailing_guard=vb.trailing_guard,
        functions=tuple(script.functions),
        traceable=traceable,
        has_error=script.has_error,
        line_offset=line_offset,
    )


# ---------------------------------------------------------------------------------------------------
# Traces: which commands a run executed (bash xtrace on a private descriptor)

# PS4 for tracing: a record separator, the line, the function, a unit separator. Bash repeats the first
# character once per nesting level, so the prefix is one or more \x1e.
TRACE_PS4 = "\x1e${LINENO}\x1f${FUNCNAME[0]-}\x1f"
_TRACE_ENTRY = re.compile(r"\x1e+(\d+)\x1f([^\x1f]*)\x1f")


@dataclass(frozen=True)
class TraceEntry:
    """One traced command: 1-based line in the block, enclosing function, the first word, the rest."""

    line: int
    function: str
    name: str
    rest: str
    count: int = 1


def parse_trace(raw: str) -> list[TraceEntry]:
    """Entries of an xtrace stream written with `TRACE_PS4` (continuation lines join their entry)."""
    out: list[TraceEntry] = []
    starts = list(_TRACE_ENTRY.finditer(raw))
    for i, m in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(raw)
        body = raw[m.end() : end].rstrip("\n")
        name, rest = _trace_name(body)
        out.append(TraceEntry(int(m.group(1)), m.group(2), name, rest))
    return out


def _trace_name(body: str) -> tuple[str, str]:
    """The command word xtrace printed first (unquoted) and the rest of the line."""
    if body.startswith("'['") or body.startswith("'[' "):
        return "[", body[3:].strip()
    for kw in ("[[", "((", "for", "case", "select"):
        if body == kw or body.startswith(kw + " "):
            return kw, body[len(kw) :].strip()
    m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)(\[[^]]*\])?\+?=", body)
    if m:
        return "=", body
    m = re.match(r"'((?:[^']|'\\'')*)'|(\S+)", body)
    if not m:
        return "", body
    name = m.group(1).replace("'\\''", "'") if m.group(1) is not None else m.group(2)
    return name, body[m.end() :].strip()


def _unquote_trace(rest: str) -> str:
    """xtrace's quoting undone well enough to compare with a message pattern."""
    out: list[str] = []
    i, n = 0, len(rest)
    while i < n:
        c = rest[i]
        if c == "'":
            j = rest.find("'", i + 1)
            j = n if j < 0 else j
            out.append(rest[i + 1 : j])
            i = j + 1
        elif c == "$" and rest.startswith("$'", i):
            j = rest.find("'", i + 2)
            j = n if j < 0 else j
            out.append(rest[i + 2 : j])
            i = j + 1
        elif c == "\\" and i + 1 < n:
            out.append(rest[i + 1])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


@functools.lru_cache(maxsize=4096)
def message_regex(message: str) -> re.Pattern[str]:
    """A message pattern as a regex: literal text, every expansion matching anything."""
    parts: list[str] = []
    pos = 0
    for m in re.finditer(r"\$\{[^}]*\}|\$\([^)]*\)?|\$[A-Za-z_][A-Za-z0-9_]*|\$[0-9@*#?$!_-]", message):
        parts.append(re.escape(message[pos : m.start()]))
        parts.append(".*?")
        pos = m.end()
    parts.append(re.escape(message[pos:]))
    return re.compile("".join(parts), re.DOTALL)


def executed(model: VerifyModel, entries: list[TraceEntry]) -> dict[int, int]:
    """Probe id -> how many times the trace shows it ran."""
    by_row: dict[int, list[Probe]] = {}
    for p in model.probes:
        for r in range(p.row, p.end_row + 1):
            by_row.setdefault(r, []).append(p)
    own_functions = set(model.functions)
    counts: dict[int, int] = {}
    for e in entries:
        fn = e.function or None
        if fn is not None and fn not in own_functions:
            continue  # a function of an earlier block: its lines are not this block's
        cands = [p for p in by_row.get(e.line - 1, ()) if p.function == fn]
        named = [p for p in cands if p.name == e.name or (p.name == "" and e.name not in ("=",))]
        if e.name == "=":
            named = [p for p in cands if p.name in ("=", "")] or named
        if len(named) > 1:
            text = _unquote_trace(e.rest)
            matching = [p for p in named if message_regex(p.pattern).fullmatch(text)]
            named = matching or named[:1]
        for p in named:
            counts[p.id] = counts.get(p.id, 0) + e.count
    return counts


# ---------------------------------------------------------------------------------------------------
# Lint: where a verify block's exit status cannot reflect its checks

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
    root, _ = _analysed(text)
    if not pipefail:
        for st in _statements(root):
            for pl in [st, *_descendants(st, frozenset({"pipeline"}))]:
                if pl.type != "pipeline" or _inside(pl, frozenset({"command_substitution", "list"})):
                    continue
                parts = [c for c in pl.children if c.is_named]
                name, _ = _simple_name(parts[-1]) if parts else ("", [])
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
        msgs = [ln for ln in model.lines if ln.probe in g.lines]
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


def _inside(node: Node, types: frozenset[str]) -> bool:
    p = node.parent
    while p is not None:
        if p.type in types:
            return True
        p = p.parent
    return False

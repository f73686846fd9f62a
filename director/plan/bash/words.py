"""What the grammar yields: shell words, redirections, commands and a parsed block (`Script`).

`word_of` reads a `Word` off a tree-sitter node: its text as written, the pattern with quoting removed and
expansions kept, its static value when nothing expands, and the variables it expands.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from tree_sitter import Node

# Wrappers that run the next word as the command (`command wrangler …`, `sudo rm …`).
_WRAPPERS = frozenset({"command", "builtin", "exec", "nohup", "time", "sudo", "doas", "nice", "env", "xargs"})
# Options of those wrappers that take a value (`nice -n 5`, `sudo -u root`, `env -u NAME`).
_WRAPPER_VALUE_OPTS = {"nice": {"-n"}, "sudo": {"-u", "-g", "-C"}, "env": {"-u", "-C"}, "xargs": {"-I", "-n"}}
SUBST = frozenset({"command_substitution", "process_substitution"})
_GLOB = re.compile(r"[*?\[]")
NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


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
            while (
                words
                and words[0].static is not None
                and (words[0].static.startswith("-") or (base == "env" and "=" in words[0].static))
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
    values: tuple[tuple[str, Word], ...] = ()  # (name, value) of each assignment (`X=…`, `export X=…`)

    def calls(self, program: str) -> bool:
        """Whether some command runs `program` (after wrappers: `command wrangler`, `npx wrangler`)."""
        for c in self.commands:
            if c.program == program:
                return True
            if c.program in ("npx", "pnpx", "bunx") and any(a.static == program for a in c.args[:3]):
                return True
        return False


def node_text(node: Node | None) -> str:
    """The source text of a node ("" for none)."""
    return node.text.decode("utf-8", "surrogateescape") if node is not None and node.text else ""


def expansion_name(node: Node) -> str | None:
    """The variable a `$X` / `${X…}` node expands (positional and special parameters included)."""
    for c in node.children:
        if c.type == "variable_name":
            return node_text(c)
        if c.type == "subscript":
            for cc in c.children:
                if cc.type == "variable_name":
                    return node_text(cc)
        if c.type == "special_variable_name":
            return node_text(c)
    return None


class _WordScan:
    """What `_scan` gathers from a word's parts (a class, not a closure: a recursive nested function is a
    reference cycle, garbage only the cyclic collector frees, thousands of them in a large plan's parse)."""

    __slots__ = ("glob", "parts", "quoted", "static", "vars")

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.vars: list[str] = []
        self.static = True
        self.quoted = False
        self.glob = False


def _scan(n: Node, in_quotes: bool, w: _WordScan) -> None:
    t = n.type
    if t in ("simple_expansion", "expansion"):
        w.static = False
        name = expansion_name(n)
        if name:
            w.vars.append(name)
        for c in n.children:  # `${X:-$Y}`: Y is read too
            if c.type not in ("variable_name", "subscript", "$", "${", "}"):
                collect_vars(c, w.vars)
        w.parts.append(node_text(n))
    elif t in SUBST or t == "arithmetic_expansion":
        w.static = False
        collect_vars(n, w.vars)
        w.parts.append(node_text(n))
    elif t == "string":
        w.quoted = True
        for c in n.children:
            if c.type == '"':
                continue
            _scan(c, True, w)
    elif t == "raw_string":
        w.quoted = True
        w.parts.append(node_text(n)[1:-1])
    elif t == "ansi_c_string":
        w.quoted = True
        w.static = False  # escapes: take the text as a pattern, never as a value
        w.parts.append(node_text(n)[2:-1])
    elif t == "concatenation":
        for c in n.children:
            _scan(c, in_quotes, w)
    elif t == "string_content":
        w.parts.append(re.sub(r'\\([$`"\\])', r"\1", node_text(n)))
    elif t in ("word", "number", "extglob_pattern", "regex"):
        raw = node_text(n)
        if not in_quotes and _GLOB.search(raw.replace("\\*", "").replace("\\?", "")):
            w.glob = True
        w.parts.append(re.sub(r"\\(.)", r"\1", raw) if not in_quotes else raw)
    elif n.child_count == 0:
        w.parts.append(node_text(n))
    else:
        for c in n.children:
            _scan(c, in_quotes, w)


def word_of(node: Node) -> Word:
    """A Word from a word-like node (word, string, raw_string, concatenation, expansion, number…)."""
    text = node_text(node)
    w = _WordScan()
    _scan(node, False, w)
    pattern = "".join(w.parts)
    whole = None
    if node.type in ("simple_expansion", "expansion"):
        whole = expansion_name(node)
    elif node.type == "string":
        inner = [c for c in node.children if c.type != '"']
        if len(inner) == 1 and inner[0].type in ("simple_expansion", "expansion"):
            only = inner[0]
            if not any(c.type not in ("variable_name", "$", "${", "}") for c in only.children):
                whole = expansion_name(only)
    if (
        whole is not None
        and node.type == "expansion"
        and any(c.type not in ("variable_name", "$", "${", "}") for c in node.children)
    ):
        whole = None  # `${X%/*}` is not X
    return Word(
        text, pattern, pattern if w.static else None, tuple(dict.fromkeys(w.vars)), whole, w.glob, w.quoted
    )


def collect_vars(node: Node, out: list[str]) -> None:
    """Every variable expanded under `node` (including arithmetic's bare names)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in ("simple_expansion", "expansion"):
            name = expansion_name(n)
            if name:
                out.append(name)
        elif (
            n.type == "variable_name"
            and n.parent is not None
            and n.parent.type
            in (
                "binary_expression",
                "unary_expression",
                "postfix_expression",
                "parenthesized_expression",
                "arithmetic_expansion",
                "compound_statement",
            )
        ):
            out.append(node_text(n))  # `(( N > 1 ))`, `$(( N + 1 ))`
        stack.extend(reversed(n.children))

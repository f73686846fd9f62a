"""What a block does, by its commands: the variables it reads and sets, what it destroys or creates,
whether it calls a program or starts a background job (fingerprints, gate contents, lint, the targets).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from director.plan.bash.grammar import analysed, descendants, parse
from director.plan.bash.words import NAME_RE, SUBST, Word, node_text

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
    return [v for v in s.reads if v not in s.assigns and NAME_RE.fullmatch(v)]


def assignments(text: str) -> list[tuple[str, Word]]:
    """(name, value) of every assignment a block makes (`X=…`, `export X=…`, `local X=…`), in order."""
    return list(parse(text).values)


def backgrounds(text: str) -> bool:
    """Whether the block starts a job in the background (`server &`, `nohup x >log 2>&1 &`)."""
    root, _ = analysed(text)
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


def function_sources(text: str) -> dict[str, str]:
    """Each shell function a block defines, as its definition's source text (the last one of a name)."""
    if "(" not in text and "function" not in text:
        return {}
    root, _ = analysed(text)
    out: dict[str, str] = {}
    for n in descendants(root, frozenset({"function_definition"})):
        name = n.child_by_field_name("name")
        if name is not None:
            out[node_text(name)] = node_text(n)
    return out


def calls_functions(text: str, known: Mapping[str, str]) -> str:
    """The definitions (from `known`) of the functions a block calls and does not define, and of those
    they call in turn: the context a check needs to read what a session function prints for it."""
    own = parse(text).functions
    todo = [c.name for c in parse(text).commands if c.name in known and c.name not in own]
    seen: list[str] = []
    while todo:
        name = todo.pop(0)
        if name in seen:
            continue
        seen.append(name)
        todo.extend(c.name for c in parse(known[name]).commands if c.name in known and c.name not in seen)
    return "\n".join(known[n] for n in seen)


# ---------------------------------------------------------------------------------------------------
# The session (what a block leaves to the next)

# Builtins that change the shell they run in -- its variables, functions or working directory -- or run
# code in it (`eval`, `.`, a trap's or a completion's handler). Any other builtin, and every program, cannot.
_SESSION_BUILTINS = frozenset(
    {".", "source", "eval", "exec", "cd", "pushd", "popd", "read", "mapfile", "readarray", "getopts",
     "let", "declare", "typeset", "local", "export", "readonly", "unset", "enable", "trap", "coproc",
     "fc", "bind", "complete", "compgen", "umask", "ulimit"}
)  # fmt: skip
# An assignment in arithmetic or an expansion: `=` other than `==` `!=` `<=` `>=`; `<<=` `>>=` `++` `--`.
_ASSIGNING = re.compile(r"(?<![=!<>])=(?!=)|<<=|>>=|\+\+|--")
# `[[ ]]` evaluates the operands of these as arithmetic (`[[ n=5 -eq 5 ]]` assigns n), and `-v`'s subscript.
_ARITH_TEST = re.compile(r"\s-(eq|ne|lt|le|gt|ge|v)\s")
# What a block must hold for `_assigns_in_place` to have something to look at (`$x` never assigns).
_EVALUATING = ("${", "$((", "$[", "((", "[[")
# `{fd}>file` stores the descriptor it opens in a variable (the grammar reads it as a word).
_NAMED_FD = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}\s*[<>]")
# In a heredoc body that expands: a `${…}` that may assign.
_HEREDOC_ASSIGNING = re.compile(r"\$\{[^}]*(=|\+\+|--)")


def keeps_session(text: str, functions: Collection[str] = frozenset()) -> bool:
    """Whether running `text` cannot change the session it runs in: no variable, function or working
    directory of its shell differs afterwards, so the next block needs nothing captured from it.

    Read by structure and conservatively (a "maybe" is a no): the block assigns nothing (no assignment,
    declaration, loop variable, `read`, `${x:=…}` or arithmetic that assigns, `{fd}>` redirect), defines
    no function, and runs only programs and builtins that leave their shell as it was -- none of
    `_SESSION_BUILTINS`, no `printf -v`/`wait -p`, no command whose name is computed, and none of
    `functions` (the session's shell functions, which may do anything; with `command_not_found_handle`
    among them nothing is kept). What runs in `$(…)` or `<(…)` runs in a subshell and cannot.
    """
    called = _called_in_own_shell(text)
    if called is None or "command_not_found_handle" in functions:
        return False
    return called.isdisjoint(functions)


@functools.lru_cache(maxsize=2048)
def _called_in_own_shell(text: str) -> frozenset[str] | None:
    """The names a block runs in its own shell, when nothing else in it can change that shell; else None."""
    script = parse(text)
    if script.has_error or script.functions or script.assigns or "$[" in text or _NAMED_FD.search(text):
        return None
    names: set[str] = set()
    for c in script.commands:
        if c.in_subst:
            continue  # a subshell's: it cannot change this one
        if c.kind in ("assign", "decl", "for"):
            return None
        if any(r.body and _body_assigns(r.body) for r in c.redirects):
            return None
        if c.kind != "command":
            continue  # tests, `(( ))` and `case` heads: their expansions are read below
        prog = c.program
        if not c.name or not prog or c.name in _SESSION_BUILTINS or prog in _SESSION_BUILTINS:
            return None
        if prog in ("printf", "wait"):
            words = [a.static for a in c.args]
            if prog == "printf" and words and (words[0] is None or words[0].startswith("-v")):
                return None  # `printf -v NAME` assigns (a computed first word may be `-v`)
            if prog == "wait" and any(w is None or (w[:1] == "-" and "p" in w) for w in words):
                return None  # `wait -p NAME` assigns
        names.update((c.name, prog))
    if any(mark in text for mark in _EVALUATING) and _assigns_in_place(text):
        return None
    return frozenset(names)


def _body_assigns(body: str) -> bool:
    """Whether a heredoc body (read as if it expands) holds an expansion or arithmetic that may assign."""
    if "$" not in body:
        return False
    if "$[" in body or _HEREDOC_ASSIGNING.search(body):
        return True
    start = body.find("$((")
    while start >= 0:
        depth, i = 2, start + 3
        while i < len(body) and depth:
            depth += {"(": 1, ")": -1}.get(body[i], 0)
            i += 1
        if _ASSIGNING.search(body, start + 3, i):
            return True
        start = body.find("$((", i)
    return False


def _assigns_in_place(text: str) -> bool:
    """Whether a `${…}`, `$((…))`, `(( ))` or `[[ ]]` the block evaluates in its own shell may assign."""
    root, _ = analysed(text)
    stack = [root]
    while stack:
        n = stack.pop()
        t = n.type
        if t in SUBST:
            continue  # a subshell's
        if t in ("expansion", "arithmetic_expansion") or (
            t == "compound_statement" and n.children and n.children[0].type == "(("
        ):
            if _ASSIGNING.search(node_text(n)):
                return True  # `${x:=1}`, `$((n++))`, `(( n = 2 ))`, `${a[i++]}`
            continue
        if t == "test_command" and n.children and n.children[0].type == "[[":
            e = node_text(n)
            if _ARITH_TEST.search(e) and _ASSIGNING.search(e):
                return True  # `[[ n=5 -eq 5 ]]`
        stack.extend(n.children)
    return False

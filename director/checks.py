"""Verify-block check extraction, output matching and check-row feeding (pure, no I/O).

A tolerant mini shell parser lives here too: it understands just enough bash (quotes, `$(…)`,
heredocs, `&&`/`||`, `{ …; }`, `( … )`, `if`/`for`/`while`/`case`, functions) to tell which `echo`
runs on the success path and which one reports a failure. It never raises: malformed shell degrades
to fewer or coarser nodes, because the plan must still parse (the shell itself reports syntax errors
when the block runs).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from director.model import CheckLine, CheckPolarity, CheckRow, ContractItem, Section

# ---------------------------------------------------------------------------------------------------
# Lexer

_OPERATORS = (
    "&&",
    "||",
    ";;",
    "|&",
    "<<<",
    "<<-",
    "<<",
    ">>",
    ">&",
    "<&",
    "&>",
    ">|",
    "|",
    "&",
    ";",
    "(",
    ")",
    "<",
    ">",
)
_OP_RE = re.compile("|".join(re.escape(o) for o in _OPERATORS))
_OP_START = frozenset(o[0] for o in _OPERATORS)
_PLAIN_RUN = re.compile(r"[^\s\\'\"`$<>|&;()]+")
_KEYWORDS_END = {"}", "fi", "done", "esac", "then", "else", "elif", "do"}


@dataclass
class Tok:
    """A shell token: a word (quoted parts kept) or an operator; `line` is 0-based in the block."""

    kind: str  # "word" | "op" | "nl"
    text: str  # as written
    line: int
    value: str = ""  # words: the text with quotes removed (variables left unexpanded)
    quoted: bool = False  # words: some part was quoted


def _scan_balanced(s: str, i: int, open_: str, close: str) -> int:
    """Index just past the `close` matching the `open_` at s[i-1]; quotes inside are skipped."""
    depth = 1
    n = len(s)
    while i < n:
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == "'" and open_ != "{":
            j = s.find("'", i + 1)
            i = n if j < 0 else j + 1
            continue
        if c == '"':
            i = _scan_dquote(s, i + 1)
            continue
        if c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


def _scan_dquote(s: str, i: int) -> int:
    """Index just past the closing `"` of a double-quoted string starting at s[i]."""
    n = len(s)
    while i < n:
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == '"':
            return i + 1
        if c == "$" and i + 1 < n and s[i + 1] == "(":
            i = _scan_balanced(s, i + 2, "(", ")")
            continue
        if c == "`":
            j = s.find("`", i + 1)
            i = n if j < 0 else j + 1
            continue
        i += 1
    return n


def _unquote(word: str) -> tuple[str, bool]:
    """The word with quoting removed (no expansion); whether any part was quoted."""
    out: list[str] = []
    quoted = False
    i, n = 0, len(word)
    while i < n:
        c = word[i]
        if c == "\\" and i + 1 < n:
            out.append(word[i + 1])
            i += 2
        elif c == "'":
            quoted = True
            j = word.find("'", i + 1)
            j = n if j < 0 else j
            out.append(word[i + 1 : j])
            i = j + 1
        elif c == "$" and i + 1 < n and word[i + 1] == "'":
            quoted = True
            j = word.find("'", i + 2)
            j = n if j < 0 else j
            out.append(word[i + 2 : j])
            i = j + 1
        elif c == '"':
            quoted = True
            j = _scan_dquote(word, i + 1)
            inner = word[i + 1 : j - 1] if j <= n and word[j - 1 : j] == '"' else word[i + 1 : j]
            out.append(re.sub(r'\\([$`"\\])', r"\1", inner))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out), quoted


def tokenize(text: str) -> list[Tok]:
    """Shell tokens of `text`; comments and heredoc bodies are dropped, `\\`-newlines joined."""
    toks: list[Tok] = []
    lines = text.split("\n")
    pending_heredocs: list[tuple[str, bool]] = []
    src = "\n".join(lines)
    n = len(src)
    i = 0
    line = 0
    expect_delim = False
    delim_strip = False
    while i < n:
        c = src[i]
        if c == "\n":
            toks.append(Tok("nl", "\n", line))
            line += 1
            i += 1
            if pending_heredocs:
                # Heredoc bodies are data (file contents), never commands: skip them wholesale.
                for delim, strip_tabs in pending_heredocs:
                    while i < n:
                        end = src.find("\n", i)
                        end = n if end < 0 else end
                        body_line = src[i:end]
                        i = end + 1 if end < n else n
                        line += 1
                        if (body_line.lstrip("\t") if strip_tabs else body_line) == delim:
                            break
                pending_heredocs = []
            continue
        if c in " \t\r":
            i += 1
            continue
        if c == "\\" and i + 1 < n and src[i + 1] == "\n":
            line += 1
            i += 2
            continue
        if c == "#":
            end = src.find("\n", i)
            i = n if end < 0 else end
            continue
        m_op = _OP_RE.match(src, i) if c in _OP_START else None
        op = m_op.group(0) if m_op else None
        if op is not None and not (op in ("<", ">") and src.startswith("(", i + 1)):
            toks.append(Tok("op", op, line))
            i += len(op)
            if op in ("<<", "<<-"):
                expect_delim = True
                delim_strip = op == "<<-"
            continue
        # A word: runs until unquoted whitespace or operator.
        start, start_line = i, line
        while i < n:
            plain = _PLAIN_RUN.match(src, i)
            if plain:
                i = plain.end()
                if i >= n:
                    break
            c = src[i]
            if c in " \t\r\n":
                break
            if c == "\\":
                if i + 1 < n and src[i + 1] == "\n":
                    break
                i += 2
                continue
            if c == "'":
                j = src.find("'", i + 1)
                i = n if j < 0 else j + 1
                continue
            if c == '"':
                i = _scan_dquote(src, i + 1)
                continue
            if c == "`":
                j = src.find("`", i + 1)
                i = n if j < 0 else j + 1
                continue
            if c == "$" and i + 1 < n and src[i + 1] in "({":
                i = _scan_balanced(src, i + 2, src[i + 1], ")" if src[i + 1] == "(" else "}")
                continue
            if c in "<>" and i + 1 < n and src[i + 1] == "(":
                i = _scan_balanced(src, i + 2, "(", ")")
                continue
            if c in "|&;()<>":
                break
            i += 1
        word = src[start:i]
        line += src.count("\n", start, i)
        value, quoted = _unquote(word)
        toks.append(Tok("word", word, start_line, value, quoted))
        if expect_delim:
            pending_heredocs.append((value, delim_strip))
            expect_delim = False
    return toks


# ---------------------------------------------------------------------------------------------------
# Parser: statement lists of and-or lists of pipelines of commands.


@dataclass
class Simple:
    """A simple command: its words (redirections removed) and redirection targets."""

    words: list[Tok]
    redirects: list[tuple[str, str]]
    line: int


@dataclass
class Compound:
    """A `{…}`, `(…)`, `if`, loop, `case` or function body; `parts` are its statement lists."""

    kind: str  # "{" | "(" | "if" | "loop" | "case" | "function"
    parts: list[tuple[str, StatementList]]  # ("body"|"cond"|"then"|"else", list)
    line: int
    redirects: list[tuple[str, str]] = field(default_factory=list)


Command = Simple | Compound


@dataclass
class Pipeline:
    """Commands joined by `|`."""

    commands: list[Command]
    negated: bool = False

    @property
    def line(self) -> int:
        """Line of the first command."""
        return self.commands[0].line if self.commands else 0


@dataclass
class AndOr:
    """Pipelines joined by `&&`/`||`: `ops[k]` joins element k-1 to k (`ops[0]` is "")."""

    elements: list[Pipeline]
    ops: list[str]


StatementList = list[AndOr]


class _Parser:
    """Recursive descent over `tokenize` output; unexpected tokens are skipped, never raised."""

    def __init__(self, toks: list[Tok]) -> None:
        self.toks = toks
        self.i = 0

    def peek(self) -> Tok | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def at_word(self, *words: str) -> bool:
        t = self.peek()
        return t is not None and t.kind == "word" and not t.quoted and t.text in words

    def skip_nl(self) -> None:
        while (t := self.peek()) is not None and (
            t.kind == "nl" or (t.kind == "op" and t.text in (";", "&"))
        ):
            self.i += 1

    def statement_list(self, ends: set[str]) -> StatementList:
        out: StatementList = []
        while True:
            self.skip_nl()
            t = self.peek()
            if t is None:
                return out
            if (t.kind == "word" and not t.quoted and t.text in ends) or (t.kind == "op" and t.text in ends):
                return out
            if (t.kind == "op" and t.text in (")", ";;")) or (t.kind == "word" and t.text in _KEYWORDS_END):
                # A stray closer for a construct we are not in: skip it rather than loop forever.
                self.i += 1
                continue
            start = self.i
            ao = self.and_or(ends)
            if ao.elements:
                out.append(ao)
            if self.i == start:
                self.i += 1

    def and_or(self, ends: set[str]) -> AndOr:
        elements = [self.pipeline(ends)]
        ops = [""]
        while (t := self.peek()) is not None:
            if t.kind == "op" and t.text in ("&&", "||"):
                self.i += 1
                while (n := self.peek()) is not None and n.kind == "nl":
                    self.i += 1
                ops.append(t.text)
                elements.append(self.pipeline(ends))
                continue
            if t.kind == "nl":
                # Lenient: a next line starting with `||`/`&&` continues the list (plans write it so).
                j = self.i
                while j < len(self.toks) and self.toks[j].kind == "nl":
                    j += 1
                if j < len(self.toks) and self.toks[j].kind == "op" and self.toks[j].text in ("&&", "||"):
                    self.i = j
                    continue
            break
        pairs = [(e, o) for e, o in zip(elements, ops, strict=True) if e.commands]
        return AndOr([e for e, _ in pairs], [o for _, o in pairs])

    def pipeline(self, ends: set[str]) -> Pipeline:
        negated = False
        if self.at_word("!"):
            negated = True
            self.i += 1
        cmds: list[Command] = []
        while True:
            cmd = self.command(ends)
            if cmd is None:
                break
            cmds.append(cmd)
            t = self.peek()
            if t is not None and t.kind == "op" and t.text in ("|", "|&"):
                self.i += 1
                while (n := self.peek()) is not None and n.kind == "nl":
                    self.i += 1
                continue
            break
        return Pipeline(cmds, negated)

    def redirects(self) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        while (
            (t := self.peek()) is not None
            and t.kind == "op"
            and t.text in ("<", ">", ">>", ">&", "<&", "&>", ">|", "<<", "<<-", "<<<")
        ):
            self.i += 1
            target = self.peek()
            if target is not None and target.kind == "word":
                self.i += 1
                out.append((t.text, target.value))
            else:
                out.append((t.text, ""))
        return out

    def command(self, ends: set[str]) -> Command | None:
        t = self.peek()
        if t is None or t.kind == "nl":
            return None
        line = t.line
        if t.kind == "op" and t.text == "(":
            self.i += 1
            body = self.statement_list({")"})
            self._eat(")")
            return Compound("(", [("body", body)], line, self.redirects())
        if t.kind == "word" and not t.quoted:
            if t.text == "{":
                self.i += 1
                body = self.statement_list({"}"})
                self._eat("}")
                return Compound("{", [("body", body)], line, self.redirects())
            if t.text == "if":
                return self._if(line)
            if t.text in ("for", "while", "until", "select"):
                return self._loop(line)
            if t.text == "case":
                return self._case(line)
            if t.text == "function":
                self.i += 1
                if (n := self.peek()) is not None and n.kind == "word":
                    self.i += 1
                if (p := self.peek()) is not None and p.kind == "op" and p.text == "(":
                    self.i += 1
                    self._eat(")")
                return self._function_body(line)
            if t.text in ends or t.text in _KEYWORDS_END:
                return None
        if t.kind == "op" and t.text not in ("<", ">", ">>", ">&", "<&", "&>", ">|", "<<", "<<-", "<<<"):
            return None
        # name() { … } function definition
        nxt = self.toks[self.i + 1] if self.i + 1 < len(self.toks) else None
        nxt2 = self.toks[self.i + 2] if self.i + 2 < len(self.toks) else None
        if (
            t.kind == "word"
            and nxt is not None
            and nxt.kind == "op"
            and nxt.text == "("
            and nxt2 is not None
            and nxt2.kind == "op"
            and nxt2.text == ")"
        ):
            self.i += 3
            return self._function_body(line)
        words: list[Tok] = []
        redirects: list[tuple[str, str]] = []
        while (t := self.peek()) is not None:
            if t.kind == "word":
                words.append(t)
                self.i += 1
            elif t.kind == "op" and t.text in ("<", ">", ">>", ">&", "<&", "&>", ">|", "<<", "<<-", "<<<"):
                redirects.extend(self.redirects())
            else:
                break
        if not words and not redirects:
            return None
        return Simple(words, redirects, line)

    def _eat(self, text: str) -> None:
        self.skip_nl()
        t = self.peek()
        if t is not None and t.text == text:
            self.i += 1

    def _function_body(self, line: int) -> Compound:
        self.skip_nl()
        body: StatementList = []
        if self.at_word("{"):
            self.i += 1
            body = self.statement_list({"}"})
            self._eat("}")
        elif (t := self.peek()) is not None and t.kind == "op" and t.text == "(":
            self.i += 1
            body = self.statement_list({")"})
            self._eat(")")
        return Compound("function", [("body", body)], line)

    def _if(self, line: int) -> Compound:
        self.i += 1
        parts: list[tuple[str, StatementList]] = [("cond", self.statement_list({"then"}))]
        self._eat("then")
        parts.append(("then", self.statement_list({"elif", "else", "fi"})))
        while self.at_word("elif"):
            self.i += 1
            parts.append(("cond", self.statement_list({"then"})))
            self._eat("then")
            parts.append(("then", self.statement_list({"elif", "else", "fi"})))
        if self.at_word("else"):
            self.i += 1
            parts.append(("else", self.statement_list({"fi"})))
        self._eat("fi")
        return Compound("if", parts, line, self.redirects())

    def _loop(self, line: int) -> Compound:
        kw = self.toks[self.i].text
        self.i += 1
        cond: StatementList = []
        if kw in ("for", "select"):
            # for NAME in WORDS; do — the header is data, not commands.
            while (t := self.peek()) is not None and not self.at_word("do"):
                self.i += 1
                if t.kind == "word" and t.text == "{":
                    break
        else:
            cond = self.statement_list({"do"})
        self._eat("do")
        body = self.statement_list({"done"})
        self._eat("done")
        return Compound("loop", [("cond", cond), ("body", body)], line, self.redirects())

    def _case(self, line: int) -> Compound:
        self.i += 1
        depth = 1
        arms: list[tuple[str, StatementList]] = []
        # Skip `WORD in`, then each `pattern)` arm up to `;;`.
        while (t := self.peek()) is not None and not self.at_word("in"):
            self.i += 1
        self.i += 1
        while (t := self.peek()) is not None:
            if self.at_word("esac"):
                depth -= 1
                self.i += 1
                break
            if t.kind == "op" and t.text == ")":
                self.i += 1
                arms.append(("body", self.statement_list({";;", "esac"})))
                if (t2 := self.peek()) is not None and t2.text == ";;":
                    self.i += 1
                continue
            self.i += 1
        return Compound("case", arms, line, self.redirects())


def parse_shell(text: str) -> StatementList:
    """Parse a shell block into statement lists (tolerant; never raises)."""
    p = _Parser(tokenize(text))
    out: StatementList = []
    while p.peek() is not None:
        before = p.i
        out.extend(p.statement_list(set()))
        if p.i == before:
            p.i += 1
    return out


def iter_simple(stmts: StatementList, *, into_functions: bool = True) -> Iterator[Simple]:
    """Every simple command, depth first, in document order."""
    for ao in stmts:
        for pl in ao.elements:
            for cmd in pl.commands:
                if isinstance(cmd, Simple):
                    yield cmd
                elif into_functions or cmd.kind != "function":
                    for _, part in cmd.parts:
                        yield from iter_simple(part, into_functions=into_functions)


def command_argv(cmd: Simple) -> list[Tok]:
    """The words after leading `VAR=value` assignments."""
    words = cmd.words
    k = 0
    while k < len(words) and re.match(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=", words[k].text):
        k += 1
    return words[k:]


def exit_code(cmd: Command) -> int | None:
    """N for an `exit N`/`return N` command (`exit` alone → None: the status of the last command)."""
    if not isinstance(cmd, Simple):
        return None
    argv = command_argv(cmd)
    if not argv or argv[0].text not in ("exit", "return"):
        return None
    if len(argv) < 2:
        return None
    try:
        return int(argv[1].value)
    except ValueError:
        return 1  # `exit "$rc"`: a computed status is treated as a failure exit


def _pipeline_exits(pl: Pipeline) -> bool:
    """A pipeline that is a failure exit: `exit N`, or a `{ …; exit N; }` group ending the script."""
    if len(pl.commands) != 1:
        return False
    cmd = pl.commands[0]
    if isinstance(cmd, Simple):
        code = exit_code(cmd)
        return code is not None and code != 0
    return cmd.kind != "function" and any(_has_exit(part) for _, part in cmd.parts)


def _is_fail_exit(ao: AndOr) -> bool:
    """An and-or list that is exactly `exit N` with N ≠ 0 (or `false`)."""
    if len(ao.elements) != 1 or len(ao.elements[0].commands) != 1:
        return False
    cmd = ao.elements[0].commands[0]
    code = exit_code(cmd)
    if code is not None:
        return code != 0
    return isinstance(cmd, Simple) and [w.text for w in command_argv(cmd)] == ["false"]


# ---------------------------------------------------------------------------------------------------
# Check extraction

_ALARM = re.compile(
    r"\b(still|re-?run|inconclusive|inspect|fail|failed|fails|failure|missing|suspect|never|not\s+found|"
    r"error|errors)\b",
    re.IGNORECASE,
)
_LABEL = re.compile(r"^(\d+[a-z]?)\s*:\s")


def is_alarm(message: str) -> bool:
    """Whether a message reads as an alarm (a failure) rather than a success."""
    return _ALARM.search(message) is not None


def label_of(message: str) -> str | None:
    """The contract label (`2a`) a message starts with (`2a: …`), if any."""
    m = _LABEL.match(message)
    return m.group(1) if m else None


@dataclass
class _Echo:
    """An echo seen during the walk, before polarity is final."""

    message: str
    line: int
    path: str  # "pass" | "fail" | "else"
    exits: bool  # followed by `exit N≠0` in its own statement list


def _echo_message(cmd: Simple) -> str | None:
    """The message of an `echo` that prints to the block's output; None for other commands."""
    argv = command_argv(cmd)
    if not argv or argv[0].text != "echo":
        return None
    for op, target in cmd.redirects:
        if op in (">", ">>", ">|", "&>") and target not in ("/dev/stderr", "/dev/stdout"):
            return None  # written to a file: not output
    args = argv[1:]
    while args and re.fullmatch(r"-[neE]+", args[0].text):
        args = args[1:]
    msg = " ".join(a.value for a in args).strip()
    return msg or None


def _walk(stmts: StatementList, path: str, out: list[_Echo], pairs: list[tuple[int, int]]) -> None:
    """Collect echoes with the path they run on and whether an exit follows them."""
    for idx, ao in enumerate(stmts):
        exits_after = any(_is_fail_exit(later) for later in stmts[idx + 1 :])
        pass_ids: list[int] = []
        fail_ids: list[int] = []
        for k, (pl, op) in enumerate(zip(ao.elements, ao.ops, strict=True)):
            el_path = "fail" if op == "||" else path
            if k == 0 or (op == "||" and ao.ops[k - 1] == "&&" and _pipeline_exits(ao.elements[k - 1])):
                # `A && { …; exit 1; } || C`: the && branch exits, so C is what runs when A is false.
                el_path = path
            # An echo is a check only as the last command of its pipeline (otherwise it feeds a pipe).
            for ci, cmd in enumerate(pl.commands):
                last = ci == len(pl.commands) - 1
                if isinstance(cmd, Simple):
                    if not last:
                        continue
                    msg = _echo_message(cmd)
                    if msg is not None:
                        out.append(_Echo(msg, cmd.line, el_path, exits_after))
                        (fail_ids if el_path == "fail" else pass_ids).append(len(out) - 1)
                    continue
                before = len(out)
                if cmd.kind == "function":
                    continue  # a function body runs only when called: its echoes are not this block's checks
                if cmd.kind == "if":
                    then_ids: list[int] = []
                    else_ids: list[int] = []
                    for kind, part in cmd.parts:
                        if kind == "cond":
                            continue
                        start = len(out)
                        _walk(part, "else" if kind == "else" else el_path, out, pairs)
                        (else_ids if kind == "else" else then_ids).extend(range(start, len(out)))
                    t_bare = [i for i in then_ids if not out[i].exits and out[i].path != "fail"]
                    e_bare = [i for i in else_ids if not out[i].exits and out[i].path == "else"]
                    if t_bare and e_bare:
                        pairs.append((t_bare[0], e_bare[0]))
                    for i in else_ids:
                        if out[i].path == "else":
                            out[i].path = "fail" if out[i].exits else "pass"
                    continue
                for _, part in cmd.parts:
                    _walk(part, el_path, out, pairs)
                for i in range(before, len(out)):
                    if out[i].path == "fail" and not out[i].exits:
                        fail_ids.append(i)
                    elif not out[i].exits:
                        pass_ids.append(i)
        bare_pass = [i for i in pass_ids if not out[i].exits]
        bare_fail = [i for i in fail_ids if not out[i].exits]
        if bare_pass and bare_fail:
            pairs.append((bare_pass[0], bare_fail[0]))


def extract_checks(text: str, body_start: int = 0) -> tuple[CheckLine, ...]:
    """The check lines a verify block prints, with polarity; lines are made plan-absolute."""
    echoes: list[_Echo] = []
    pairs: list[tuple[int, int]] = []
    _walk(parse_shell(text), "pass", echoes, pairs)
    ambiguous: dict[int, CheckPolarity] = {}
    for a, b in pairs:
        alarm_a, alarm_b = is_alarm(echoes[a].message), is_alarm(echoes[b].message)
        # Exactly one alarm decides; otherwise the shell's own reading (A on success, B on failure).
        swap = alarm_a and not alarm_b
        ambiguous[a] = CheckPolarity.FAIL if swap else CheckPolarity.PASS
        ambiguous[b] = CheckPolarity.PASS if swap else CheckPolarity.FAIL
    out: list[CheckLine] = []
    for i, e in enumerate(echoes):
        if i in ambiguous:
            pol, amb = ambiguous[i], True
        else:
            pol = CheckPolarity.FAIL if (e.exits or e.path == "fail") else CheckPolarity.PASS
            amb = False
        out.append(CheckLine(e.message, pol, body_start + e.line, label_of(e.message), amb))
    return tuple(out)


# ---------------------------------------------------------------------------------------------------
# Matching output lines

_VAR = re.compile(r"\$\{[^}]*\}|\$\([^)]*\)?|\$[A-Za-z_][A-Za-z0-9_]*|\$[0-9@*#?$!-]")


@functools.lru_cache(maxsize=1024)
def _message_regex(message: str) -> re.Pattern[str]:
    parts: list[str] = []
    pos = 0
    for m in _VAR.finditer(message):
        parts.append(re.escape(message[pos : m.start()]))
        parts.append(".+?")
        pos = m.end()
    parts.append(re.escape(message[pos:]))
    return re.compile("".join(parts), re.DOTALL)


def match_check(check: CheckLine, line: str) -> bool:
    """Whether an output line is this check's message, `$VAR`/`${VAR}` parts matching anything."""
    return _message_regex(check.message.strip()).fullmatch(line.strip()) is not None


# ---------------------------------------------------------------------------------------------------
# Feeding the Live State check table

_STOP = {"the", "a", "an", "is", "are", "was", "be", "of", "to", "and", "on", "in", "for", "with", "its"}


def _stem(word: str) -> str:
    """A tiny stemmer so `registered`/`registers`/`register` and `verified`/`verify` compare equal."""
    if len(word) > 4 and word.endswith("ied"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith("ed"):
        return word[:-2]
    if len(word) > 3 and word.endswith("es") and word[-3] in "sxz":
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def words(text: str) -> list[str]:
    """Normalised words: lower case, punctuation and backticks dropped, stemmed."""
    return [_stem(w) for w in re.findall(r"[a-z0-9]+", text.lower())]


def _starts_with(haystack: Sequence[str], prefix: Sequence[str]) -> bool:
    return bool(prefix) and list(haystack[: len(prefix)]) == list(prefix)


def contract_item_for(row_name: str, contract: Sequence[ContractItem]) -> ContractItem | None:
    """The contract item a check-table row names (row words start with the item title's words)."""
    row = words(row_name)
    best: ContractItem | None = None
    for item in contract:
        title = words(item.title)
        if _starts_with(row, title) and (best is None or len(title) > len(words(best.title))):
            best = item
    return best


def feed_check_rows(
    rows: Sequence[CheckRow], contract: Sequence[ContractItem], sections: Sequence[Section]
) -> tuple[CheckRow, ...]:
    """The rows with `fed_by` filled: `label:2a` (contract-labelled checks), `section:K` (verify titles)."""
    labelled: dict[str, None] = {}  # an ordered set: document order, each label once
    for s in sections:
        for b in s.verify_blocks:
            for c in b.checks:
                if c.label and c.polarity is CheckPolarity.PASS:
                    labelled.setdefault(c.label, None)
    out: list[CheckRow] = []
    for row in rows:
        refs: list[str] = []
        item = contract_item_for(row.name, contract)
        if item is not None:
            for lab in labelled:
                m = re.match(r"\d+", lab)
                if m and int(m.group(0)) == item.number:
                    refs.append(f"label:{lab}")
        need = [w for w in words(row.name) if w not in _STOP]
        if need and item is None:
            for s in sections:
                for b in s.verify_blocks:
                    texts = [b.verify_title] + [
                        c.message for c in b.checks if c.polarity is CheckPolarity.PASS
                    ]
                    if any(set(need) <= set(words(t)) for t in texts if t):
                        ref = f"section:{s.key}"
                        if ref not in refs:
                            refs.append(ref)
        out.append(CheckRow(row.name, row.expected, row.observed, row.result, row.line, tuple(refs)))
    return tuple(out)


# ---------------------------------------------------------------------------------------------------
# Verify-block weaknesses (for lint): where the block's exit status cannot reflect its checks

_PASSTHROUGH = frozenset({"tail", "head", "cat", "tee", "sort", "uniq", "less", "more", "column", "nl"})


@dataclass(frozen=True)
class ShellIssue:
    """A weakness of a verify block: `line` is 0-based within the block body."""

    line: int
    code: str
    message: str


def _argv0(cmd: Command) -> str:
    if not isinstance(cmd, Simple):
        return ""
    argv = command_argv(cmd)
    while argv and argv[0].text in ("command", "sudo", "env", "nohup", "time"):
        argv = argv[1:]
    return argv[0].value.rsplit("/", 1)[-1] if argv else ""


def _echo_tail(pl: Pipeline) -> str | None:
    last = pl.commands[-1] if pl.commands else None
    return _echo_message(last) if isinstance(last, Simple) else None


def _issues(stmts: StatementList, final: bool, out: list[ShellIssue]) -> None:
    for idx, ao in enumerate(stmts):
        is_final = final and idx == len(stmts) - 1
        exits_after = any(_is_fail_exit(later) for later in stmts[idx + 1 :])
        if exits_after:
            continue  # diagnostics before an `exit 1`: the block already fails here
        if len(ao.elements) == 1:
            pl = ao.elements[0]
            if len(pl.commands) > 1 and _argv0(pl.commands[-1]) in _PASSTHROUGH:
                tail = _argv0(pl.commands[-1])
                out.append(
                    ShellIssue(
                        pl.line,
                        "verify-exit-status",
                        f"this pipeline's status is `{tail}`'s, which succeeds whatever the command "
                        f"before it printed; the check cannot fail (assert on the output, e.g. "
                        f"`| grep -q …`, or `set -o pipefail`)",
                    )
                )
        has_fail_branch = any(op == "||" for op in ao.ops)
        if len(ao.elements) >= 2 and ao.ops[-1] == "&&" and not has_fail_branch and not is_final:
            msg = _echo_tail(ao.elements[-1])
            if msg is not None:
                out.append(
                    ShellIssue(
                        ao.elements[0].line,
                        "unenforced-check",
                        f"if this condition fails, `{msg}` is just not printed and later "
                        f"statements decide the block's exit status; add "
                        f'`|| {{ echo "…"; exit 1; }}`',
                    )
                )
        for k, (pl, op) in enumerate(zip(ao.elements, ao.ops, strict=True)):
            if op == "||":
                msg = _echo_tail(pl)
                nxt_exit = k + 1 < len(ao.elements) and any(
                    exit_code(c) not in (None, 0) for c in ao.elements[k + 1].commands
                )
                after_exit = k >= 2 and ao.ops[k - 1] == "&&" and _pipeline_exits(ao.elements[k - 1])
                if msg is not None and not nxt_exit and not after_exit and not _pair_partner(ao, k):
                    out.append(
                        ShellIssue(
                            pl.line,
                            "fail-without-exit",
                            f"`{msg}` reports a failure but the block goes on (no `exit 1`)",
                        )
                    )
            for cmd in pl.commands:
                if isinstance(cmd, Compound) and cmd.kind in ("{", "(", "if"):
                    for kind, part in cmd.parts:
                        if kind != "cond" and not (op == "||" and _has_exit(part)):
                            _issues(part, is_final and k == len(ao.elements) - 1, out)


def _pair_partner(ao: AndOr, k: int) -> bool:
    """Whether the `|| echo` at element k is the B of a ternary `… && echo A || echo B` (reported apart)."""
    return any(ao.ops[j] == "&&" and _echo_tail(ao.elements[j]) is not None for j in range(1, k))


def _has_exit(stmts: StatementList) -> bool:
    return any(_is_fail_exit(ao) for ao in stmts)


def verify_issues(text: str) -> list[ShellIssue]:
    """Statements of a verify block whose exit status cannot reflect the check they make."""
    if re.search(r"\bpipefail\b", text):
        return [i for i in _verify_issues(text) if i.code != "verify-exit-status"]
    return _verify_issues(text)


def _verify_issues(text: str) -> list[ShellIssue]:
    out: list[ShellIssue] = []
    _issues(parse_shell(text), True, out)
    return out


_DESTRUCTIVE = re.compile(r"^(delete|terminate|drop|destroy|purge|truncate)(-[a-z0-9-]+)?$", re.IGNORECASE)
_DATA_COMMANDS = frozenset(
    {
        "echo",
        "printf",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "test",
        "[",
        "[[",
        ":",
        "true",
        "false",
        "read",
        "export",
        "local",
        "declare",
        "readonly",
        "cat",
        "sed",
        "awk",
        "jq",
        "tee",
        "wc",
        "sort",
        "head",
        "tail",
        "set",
    }
)


def destructive_commands(text: str) -> list[tuple[int, str]]:
    """(0-based body line, what) for each destructive command word (not in comments, strings or heredocs)."""
    out: list[tuple[int, str]] = []
    for cmd in iter_simple(parse_shell(text)):
        argv = command_argv(cmd)
        if not argv or argv[0].value in _DATA_COMMANDS:
            continue
        prog = argv[0].value.rsplit("/", 1)[-1]
        flags = "".join(w.text[1:] for w in argv[1:] if re.fullmatch(r"-[A-Za-z]+", w.text))
        longs = {w.text for w in argv[1:] if w.text.startswith("--")}
        if prog == "rm" and (
            ("r" in flags.lower() or "--recursive" in longs) and ("f" in flags or "--force" in longs)
        ):
            out.append((cmd.line, "rm -rf"))
            continue
        for w in argv:
            if not w.quoted and _DESTRUCTIVE.match(w.text):
                out.append((cmd.line, " ".join(x.text for x in argv[: argv.index(w) + 1])))
                break
    return out

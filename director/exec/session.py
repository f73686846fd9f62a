"""The shell session that flows from block to block, and the bash text that carries it (pure).

Each block runs in its own bash (`director.exec.shell`); the session (shell variables, exports,
functions, cwd) flows between them in document order as a `SessionState`:

- Before a block, a generated *prelude* (`prelude`) re-declares the session and arms an `EXIT` trap.
  It is sourced through `BASH_ENV` (non-interactive bash reads that file before the `-c` script), so
  the block's own line numbers in error messages stay right; the prelude unsets `BASH_ENV` at once so
  scripts the block starts do not source it.
- The trap writes `$PWD`, `declare -p`, `declare -f`, `declare -F`, the umask and the resource limits
  (`director.exec.ulimits`) into a small state
  file, NUL-separated and ended by a terminator, which `parse_state_file` reads back; a missing or
  truncated file (the block `exec`ed, or was SIGKILLed) leaves the session unchanged. A block's own
  `trap … EXIT` is chained (a `trap` wrapper, `director.exec.wrappers`, records it and the capture runs it
  after saving the state). What the block is shown (`trap`, `trap -p`) is its own handler where
  Director's is, and no line for a traced block's command marks, so saving and restoring traps works as
  in plain bash; a RETURN trap the wrapper sets first fires when the block's function returns, not the
  wrapper. A `kill` wrapper reads `$$` (the session's bash in every block) and `-$$` as the block's own
  shell and group, so that `kill $$` ends the block as it ends a script. Still seen: `trap` and `kill` are
  functions (`type`, `declare -f`); a block's own function of either name replaces the wrapper, and
  flows to later blocks as any function does.
- Captured are the variables the blocks set: not bash's own (BASH*, PPID, RANDOM, LINENO…), not
  those inherited unchanged from the operator's environment (unless a block of the plan assigns one), and
  `PATH` without Director's `path_prepend` entries (they are put first again on restore). Scalars keep
  their attributes (`-x`, `-i`, `-r`, `-l`, `-u`, `-n`); indexed and associative arrays flow as their
  `declare -p` statement. In POSIX mode (a block set POSIXLY_CORRECT) a block's own `trap … EXIT` replaces the
  capture: that block's changes are lost. Not carried: shell options (`set -e`, `shopt`), aliases,
  traps other than EXIT, unsetting an inherited variable. The umask is carried (a block's `umask 077`
  holds for the files later blocks make, as in one script), and so are the resource limits (`ulimit -n
  4096`) and the directory stack (a `pushd` in one section, its `popd` in a later one).

Values are bytes to bash: text here is str with undecodable bytes as lone surrogates
(`surrogateescape`), so any value round-trips.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from director.exec import markers, ulimits
from director.exec.marks import NAMES as MARKS
from director.exec.secrets import secret_values
from director.exec.ulimits import INHERITED
from director.exec.wrappers import ARM as _ARM
from director.exec.wrappers import CAPTURE_FUNCTIONS, OWN
from director.plan.bash import TRACE_PS4

__all__ = [
    "CAPTURE_FUNCTIONS",
    "INHERITED",
    "SESSION_MAX_BYTES",
    "SessionState",
    "kept_cwd",
    "overflowing_name",
    "parse_declare_p",
    "parse_state_file",
    "prelude",
    "quote",
]

STATE_END = b"END"  # the state file's terminator: without it the capture was cut short
# The most session a block may hand on, as bash prints it (`declare -p`, `declare -f`): 16 MiB
# (docs/limits.md). The session is carried whole from block to block -- read back, restored before the
# next block, journaled after each step -- so a 100 MB variable once cost Director 1.8 GB; a capture past
# this size is not read further and the run stops (`SessionTooLarge`), naming the variable.
SESSION_MAX_BYTES = 16 * 1024 * 1024
STATE_KEPT = b"KEPT"  # instead of END: a block that kept the session reported only its status and directory

# Variables bash sets or computes itself: never session state.
_BASH_OWNED = frozenset(
    {
        "BASH", "BASHOPTS", "BASHPID", "COLUMNS", "COMP_WORDBREAKS", "DIRSTACK", "EPOCHREALTIME",
        "EPOCHSECONDS", "EUID", "FUNCNAME", "GROUPS", "HISTCMD", "HOSTNAME", "HOSTTYPE", "LINENO",
        "LINES", "MACHTYPE", "OPTARG", "OSTYPE", "PIPESTATUS", "PPID", "PWD", "RANDOM", "SECONDS",
        "SHELL", "SHELLOPTS", "SHLVL", "SRANDOM", "UID", "_",
    }
)  # fmt: skip
# Variables bash creates with a default value when the environment lacks them.
_BASH_DEFAULTS = {"IFS": " \t\n", "OPTIND": "1", "OPTERR": "1", "PS4": "+ ", "PS2": "> ", "TERM": "dumb"}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")



def quote(value: str) -> str:
    """Quote a value for bash (bare when it is safe as it is)."""
    return shlex.quote(value)


# -- session state --------------------------------------------------------------------------------


@dataclass(frozen=True)
class SessionState:
    """The shell session that flows from block to block."""

    variables: dict[str, str] = field(default_factory=dict)  # scalar values
    exported: frozenset[str] = frozenset()
    functions: str = ""  # `declare -f` text, plus `export -f NAME` lines
    cwd: str = ""  # "" means the Shell's workdir
    attributes: dict[str, str] = field(default_factory=dict)  # name -> declare flags besides x ("i", "r"…)
    arrays: dict[str, str] = field(default_factory=dict)  # name -> its `declare -a/-A …` statement
    # as `umask` prints it ("0077") when a block set one; "" for Director's own (in a section's change,
    # `run.session.delta`: "" unchanged, `INHERITED` set back to Director's own)
    umask: str = ""
    # The directory stack below its top (the top is `cwd`), as `DIRSTACK` lists it; None when it is empty.
    # In a section's change (`run.session.delta`), () says the section emptied it.
    dirstack: tuple[str, ...] | None = None
    # The resource limits a block changed: option letter -> `SOFT:HARD` in bash's units (`ulimits`).
    limits: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON-able data (the journal's `session_json`)."""
        return {
            "variables": dict(sorted(self.variables.items())),
            "exported": sorted(self.exported),
            "functions": self.functions,
            "cwd": self.cwd,
            "attributes": dict(sorted(self.attributes.items())),
            "arrays": dict(sorted(self.arrays.items())),
            **({"umask": self.umask} if self.umask else {}),
            **({"dirstack": list(self.dirstack)} if self.dirstack is not None else {}),
            **({"limits": dict(sorted(self.limits.items()))} if self.limits else {}),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | str) -> SessionState:
        """The state saved by `to_json` (a mapping or its JSON text)."""
        d: Mapping[str, Any] = json.loads(data) if isinstance(data, str) else data
        return cls(
            variables={str(k): str(v) for k, v in dict(d.get("variables") or {}).items()},
            exported=frozenset(str(x) for x in d.get("exported") or ()),
            functions=str(d.get("functions") or ""),
            cwd=str(d.get("cwd") or ""),
            attributes={str(k): str(v) for k, v in dict(d.get("attributes") or {}).items()},
            arrays={str(k): str(v) for k, v in dict(d.get("arrays") or {}).items()},
            umask=_umask(str(d.get("umask") or "")),
            dirstack=_dirstack(d.get("dirstack")),
            limits=ulimits.valid(d.get("limits")),
        )

    def persistable(self, is_secret: Callable[[str], bool]) -> SessionState:
        """A copy without secret-looking names (those stay in memory, never in the journal)."""
        return replace(
            self,
            variables={k: v for k, v in self.variables.items() if not is_secret(k)},
            exported=frozenset(k for k in self.exported if not is_secret(k)),
            attributes={k: v for k, v in self.attributes.items() if not is_secret(k)},
            arrays={k: v for k, v in self.arrays.items() if not is_secret(k)},
        )  # the rest (functions, cwd, umask, directory stack, limits) as it is

    def secret_values(self, is_secret: Callable[[str], bool]) -> list[str]:
        """Values of the secret-named scalars and of the elements of secret-named arrays (to extend a
        Redactor)."""
        elements = [v for k, stmt in self.arrays.items() if is_secret(k) for v in array_values(stmt) if v]
        return secret_values(self.variables, is_secret) + elements


# -- declare -p / state file parsing --------------------------------------------------------------

_ANSI_SIMPLE = {
    "a": b"\a", "b": b"\b", "e": b"\x1b", "E": b"\x1b", "f": b"\f", "n": b"\n", "r": b"\r",
    "t": b"\t", "v": b"\v", "\\": b"\\", "'": b"'", '"': b'"', "?": b"?",
}  # fmt: skip


def _enc(s: str) -> bytes:
    return s.encode("utf-8", "surrogateescape")


def _dec(b: bytes | bytearray) -> str:
    return b.decode("utf-8", "surrogateescape")


# A double-quoted word as `declare -p` prints it: runs without `"` or `\\`, and backslash escapes.
_DQ_BODY = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*', re.S)
_DQ_ESCAPE = re.compile(r'\\([$`"\\\n])')
_ANSI_RUN = re.compile(r"[^'\\]+")


def _unescape_dq(m: re.Match[str]) -> str:
    return "" if m.group(1) == "\n" else m.group(1)


def _parse_dq(text: str, i: int) -> tuple[str, int]:
    """Decode a bash double-quoted word starting at text[i] == '"'; returns (value, index after).

    By runs (regular expressions), not a character at a time: a 15 MB value is one match, not fifteen
    million list items (docs/limits.md). An unterminated word raises IndexError."""
    m = _DQ_BODY.match(text, i + 1)
    end = m.end() if m is not None else i + 1
    if end >= len(text) or text[end] != '"':
        raise IndexError("unterminated double-quoted word")
    body = text[i + 1 : end]
    if "\\" in body:
        body = _DQ_ESCAPE.sub(_unescape_dq, body)
    return body, end + 1


def _parse_ansi(text: str, i: int) -> tuple[str, int]:
    """Decode a bash $'…' word starting at text[i:i+2] == "$'"; returns (value, index after)."""
    out = bytearray()
    i += 2
    while True:
        run = _ANSI_RUN.match(text, i)
        if run is not None:
            out += _enc(run.group(0))
            i = run.end()
        c = text[i]
        if c == "'":
            return _dec(bytes(out)), i + 1
        e = text[i + 1]  # c is a backslash
        i += 2
        if e in _ANSI_SIMPLE:
            out += _ANSI_SIMPLE[e]
        elif e in "01234567":
            j = i - 1
            while i < j + 3 and text[i] in "01234567":
                i += 1
            out.append(int(text[j:i], 8) & 0xFF)
        elif e in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[e]
            j = i
            while i < j + width and text[i] in "0123456789abcdefABCDEF":
                i += 1
            if i == j:
                out += _enc("\\" + e)
            elif e == "x":
                out.append(int(text[j:i], 16))
            else:
                out += _enc(chr(int(text[j:i], 16)))
        elif e == "c":
            out.append(ord(text[i]) & 0x1F)
            i += 1
        else:
            out += _enc("\\" + e)


def _skip_compound(text: str, i: int) -> int:
    """Index after the `( … )` array value starting at text[i] == '('."""
    i += 1
    while True:
        c = text[i]
        if c == ")":
            return i + 1
        if c == '"':
            _, i = _parse_dq(text, i)
        elif c == "$" and text[i + 1] == "'":
            _, i = _parse_ansi(text, i)
        elif c == "'":
            i = text.index("'", i + 1) + 1
        elif c == "\\":
            i += 2
        else:
            i += 1


def array_values(stmt: str) -> list[str]:
    """The element values of an array's `declare -a/-A NAME=(…)` statement ([] if it is not one)."""
    start = stmt.find("=(")
    if start < 0:
        return []
    text, i = stmt, start + 2
    out: list[str] = []
    try:
        while True:
            while text[i] == " ":
                i += 1
            if text[i] != "[":
                return out  # `)`: the end
            # the key: bare, "quoted" or $'quoted', then `]=`
            if text[i + 1] == '"':
                _, i = _parse_dq(text, i + 1)
            elif text.startswith("$'", i + 1):
                _, i = _parse_ansi(text, i + 1)
            else:
                i = text.index("]", i)
            i = text.index("]=", i) + 2
            if text[i] == '"':
                value, i = _parse_dq(text, i)
            elif text.startswith("$'", i):
                value, i = _parse_ansi(text, i)
            else:
                j = i
                while text[i] not in " )":
                    i += 1
                value = text[j:i]
            out.append(value)
    except (IndexError, ValueError):
        return out


_FUNCTION_START = re.compile(r"^(\S+) \(\) $", re.M)


def _without_own(functions: str) -> str:
    """`declare -f` text without Director's own wrappers (`wrappers.OWN`: never session state). A block's own
    function of the same name replaced its wrapper, and is carried; theirs are known by the `__director_`
    names only they use."""
    if "__director_" not in functions:
        return functions
    parts = split_functions(functions)
    kept = [text for name, text in parts.items() if name not in OWN or "__director_" not in text]
    return functions if len(kept) == len(parts) else "".join(kept)


def _umask(text: str) -> str:
    """A umask as `umask` prints it (or a change's `INHERITED`), or "" for anything else (a journal's text
    is not trusted as bash)."""
    return text if text == INHERITED or re.fullmatch(r"[0-7]{1,4}", text) else ""


def _dirstack(data: object) -> tuple[str, ...] | None:
    """A journaled directory stack: its entries as `DIRSTACK` lists them (a `pushd -n dir` keeps `dir` as
    written, relative or not; the prelude quotes each), or None for anything else (no change)."""
    if not isinstance(data, list) or not all(isinstance(d, str) and "\0" not in d for d in data):
        return None
    return tuple(data)


def split_functions(text: str) -> dict[str, str]:
    """`declare -f` text (with Director's `export -f NAME` lines) as NAME -> its definition and export.

    `declare -f` indents every line of a body: only a function's first line, its braces and export
    lines start at the margin.
    """
    body: list[str] = []
    exports: dict[str, str] = {}
    for line in text.splitlines(keepends=True):
        if line.startswith("export -f "):
            exports[line[len("export -f ") :].strip()] = line.rstrip("\n") + "\n"
        else:
            body.append(line)
    joined = "".join(body)
    starts = list(_FUNCTION_START.finditer(joined))
    out: dict[str, str] = {}
    for n, m in enumerate(starts):
        end = starts[n + 1].start() if n + 1 < len(starts) else len(joined)
        out[m.group(1)] = joined[m.start() : end]
    for name, line in exports.items():
        out[name] = out.get(name, "") + line
    return out


def parse_declare_p(text: str) -> Iterator[tuple[str, str, str | None, str]]:
    """(name, flags, scalar value or None, the whole statement) for each `declare -p` line (the statement
    is "" for a scalar: its value says it all, and is not copied twice)."""
    i, n = 0, len(text)
    while i < n:
        end_of_line = text.find("\n", i)
        if end_of_line < 0:
            end_of_line = n
        if not text.startswith("declare -", i):
            i = end_of_line + 1  # not ours to understand: skip the line
            continue
        sp = text.index(" ", i + 8)
        flags = text[i + 9 : sp].strip("-")
        j = sp + 1
        while j < n and text[j] not in "=\n":
            j += 1
        name = text[sp + 1 : j]
        value: str | None = None
        if j < n and text[j] == "=":
            k = j + 1
            if k < n and text[k] == '"':
                value, j = _parse_dq(text, k)
            elif text.startswith("$'", k):
                value, j = _parse_ansi(text, k)
            elif k < n and text[k] == "(":
                j = _skip_compound(text, k)
            else:
                j = text.find("\n", k)
                j = n if j < 0 else j
                value = text[k:j]
        # the statement itself only when it is what flows (an array): a scalar's is its value again
        yield name, flags, value, text[i:j] if value is None else ""
        i = j + 1


_DECLARED = re.compile(rb"(?:^|\n)declare -[-a-zA-Z]* ([A-Za-z_][A-Za-z0-9_]*)")
_DEFINED = re.compile(rb"(?:^|\n)(\S+) \(\) \n")


def overflowing_name(head: bytes) -> str:
    """The variable (or function) a capture cut at `SESSION_MAX_BYTES` was printing when it reached the
    limit: the last one `head` (the capture up to there) begins, or "" when it cannot be told."""
    parts = head.split(b"\0")
    if len(parts) >= 4:  # past `declare -p`: in the functions
        found = list(_DEFINED.finditer(parts[3]))
        return f"function {_dec(found[-1].group(1))}" if found else ""
    if len(parts) == 3:
        found = list(_DECLARED.finditer(parts[2]))
        return _dec(found[-1].group(1)) if found else ""
    return ""


def kept_cwd(raw: bytes | bytearray) -> str | None:
    """The working directory a block that kept the session ended in (its capture says `KEPT`), else None."""
    if not raw.endswith(b"\0" + STATE_KEPT + b"\0"):
        return None  # a full capture (or none): not split here, `parse_state_file` reads it
    parts = raw.split(b"\0")
    return _dec(parts[1]) if len(parts) == 7 and parts[5] == STATE_KEPT else None


def _fields(raw: bytes | bytearray, count: int) -> list[str] | None:
    """The first `count` NUL-ended fields of `raw`, decoded straight from it (no copy of the whole
    capture as bytes first: a session near its limit is 16 MB); None when there are fewer."""
    out: list[str] = []
    start = 0
    with memoryview(raw) as view:
        for _ in range(count):
            end = raw.find(b"\0", start)
            if end < 0:
                return None
            out.append(str(view[start:end], "utf-8", "surrogateescape"))
            start = end + 1
    return out


def parse_state_file(
    raw: bytes | bytearray,
    *,
    base_env: Mapping[str, str],
    path_prepend: Sequence[str],
    assigned: Collection[str] = frozenset(),
    inherited_umask: str = "",
    inherited_limits: Mapping[str, str] | None = None,
) -> SessionState | None:
    """The session captured by the EXIT trap, or None if the file is incomplete.

    A variable inherited unchanged from the operator's environment is not session state, unless it is one
    of `assigned` (the plan's blocks assign it: `export ENV="dev"` in §0 makes ENV the plan's, whatever the
    operator's environment happened to hold). Nor is the umask Director's own process has
    (`inherited_umask`, as `umask` prints it): a section that did not change it hands on no umask; the
    same for the limits (`inherited_limits`, `ulimits.inherited()` when None)."""
    fields = _fields(raw, 9)
    if fields is None or fields[8] != STATE_END.decode():
        return None
    _, cwd, declared, functions, fnames, mask, soft, hard, _ = fields
    variables: dict[str, str] = {}
    exported: set[str] = set()
    attributes: dict[str, str] = {}
    arrays: dict[str, str] = {}
    dirstack: tuple[str, ...] | None = None
    for name, flags, value, stmt in parse_declare_p(declared):
        if name == "DIRSTACK" and "a" in flags:
            # below the top, which is the cwd; the capture names it after the whole list, which shows it empty
            dirstack = tuple(array_values(stmt)[1:]) or None
            continue
        if name in _BASH_OWNED or name in MARKS or name.startswith(("BASH_", "__director")):
            continue
        if not _NAME.fullmatch(name):
            continue
        if "a" in flags or "A" in flags:
            arrays[name] = stmt
            continue
        if value is None:
            continue  # declared but unset: nothing to carry
        is_exported = "x" in flags
        if name == "PATH" and path_prepend:
            value = ":".join(p for p in value.split(":") if p not in path_prepend)
        if name in base_env:
            if base_env[name] == value and is_exported and name not in assigned:
                continue  # inherited from the operator's environment, unchanged
        elif not is_exported and _BASH_DEFAULTS.get(name) == value:
            continue  # bash's own default
        variables[name] = value
        if is_exported:
            exported.add(name)
        extra = flags.replace("x", "")
        if extra:
            attributes[name] = extra
    functions = _without_own(functions)
    exported_fns = [
        line.split()[-1]
        for line in fnames.splitlines()
        if line.startswith("declare -f") and "x" in line.split()[1]
    ]
    if exported_fns:
        functions += "".join(f"export -f {n}\n" for n in exported_fns)
    umask = _umask(mask.strip())
    if umask == inherited_umask:
        umask = ""
    base = ulimits.inherited() if inherited_limits is None else inherited_limits
    limits = ulimits.parse(soft, hard, base)
    return SessionState(
        variables, frozenset(exported), functions, cwd, attributes, arrays, umask, dirstack, limits
    )


def prelude(
    state: SessionState,
    *,
    state_file: str,
    original_bash_env: str | None,
    path_prepend: Sequence[str],
    trace_fd: int | None = None,
    xtrace: bool = True,
    define_capture: bool = True,
) -> bytes:
    """The bash text that restores `state` and arms the EXIT capture.

    With `trace_fd`, bash's trace goes to that descriptor with Director's PS4, and (with `xtrace`) the
    prelude ends with `set -x`; without it, the caller turns tracing on where the block begins. Without
    `define_capture`, the shell already has `CAPTURE_FUNCTIONS` (the session's bash defines them once).
    """
    # Encoded line by line and joined once: a session near its limit (16 MB) is not held as text, then as
    # joined text, then as bytes (docs/limits.md).
    out: list[bytes] = [b"# Director session prelude: generated, sourced through BASH_ENV before the block"]

    def line(text: str) -> None:
        out.append(_enc(text))

    line(
        "unset BASH_ENV" if original_bash_env is None else f"export BASH_ENV={quote(original_bash_env)}"
    )
    line(f"__director_state_file={quote(state_file)}")
    # Arm the capture before restoring anything: a restored POSIXLY_CORRECT (posix mode forbids a
    # function named `trap`) or a broken restored function must not cost the block its capture.
    if define_capture:
        line(CAPTURE_FUNCTIONS)
    line(_ARM)
    for name, value in state.variables.items():
        if not _NAME.fullmatch(name) or name in MARKS:
            continue
        if name == "PATH" and path_prepend:
            value = ":".join([*path_prepend, value]) if value else ":".join(path_prepend)
        flags = state.attributes.get(name, "") + ("x" if name in state.exported else "")
        # the name, then the value encoded on its own: a large value is not copied into an f-string first
        out.append(_enc(f"declare -{flags} {name}=" if flags else f"{name}=") + _enc(quote(value)))
    out.extend(_enc(stmt) for name, stmt in state.arrays.items() if _NAME.fullmatch(name))
    if state.functions:
        line(state.functions)
    if state.umask and state.umask != INHERITED:
        line(f"builtin umask {state.umask}")
    for directory in reversed(state.dirstack or ()):  # each goes in below the top (the block's cwd)
        line(f"builtin pushd -n -- {quote(directory)} >/dev/null")
    for text in ulimits.restore(state.limits):
        line(text)
    if trace_fd is not None:
        # Last, so that nothing of the prelude is traced: the block's commands go to Director's pipe.
        line(f"__director_traced=1 __director_marks=1 __director_trace_ps4={quote(TRACE_PS4)}")
        line("__director_ps4_set=${PS4+x} __director_ps4=${PS4-}")
        # The command marks (`director.exec.markers`): what failed and what printed, in the output's order;
        # armed after the rest, so that no command of the prelude is marked.
        xtrace_on = "; set -x" if xtrace else ""
        line(f"BASH_XTRACEFD={trace_fd}; PS4=$__director_trace_ps4; {markers.TRAP}{xtrace_on}")
    return b"\n".join(out)

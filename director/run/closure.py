"""The gate's content is the act's closure: everything a gated act can read when it runs.

A 🔴/💥 approval covers the act, not its text alone. The closure is the act blocks' text (after
substitution) plus everything they can read (docs/approvals.md, "What a signature covers"):

- the whole session the act starts in, not only the variables its text names: every scalar (with its
  attributes and whether it is exported), every indexed and associative array, every function body
  (also one named `echo` or `printf`, exported or not), and every field a session may carry;
- the directory each act block starts in (the session's, an earlier block's `cd`, the fence's `cwd=`);
- the environment every process the act starts inherits (Director's own, the operator's: `PATH`,
  anything `sh -c` or `printenv` can read), less Director's per-step marks (`DIRECTOR_STEP`…);
- the bash that runs it (path and content hash: its default options are its own);
- each command the act runs, resolved as bash would (its path, and the content hash of the file), each
  file it `source`s or names as an argument or an input redirection (a script an earlier block wrote);
- each file a 🔴 template writes (its content).

A secret is never in the closure: a secret-named variable, a value holding a secret (or a fragment of
one), a function or array holding one, and every value of the inherited environment are *sealed*: a keyed
digest (HMAC-SHA256) under a key kept outside the journal (`closure.key` in the plan's state directory,
0600), so that nobody who reads the journal can test guesses of a value. Sealed values show as
`*** (sealed 1a2b3c4d)`.

What the act can read is a `Reach`: built from the live session by the engine and `director plan`
(`live_reach`), or read back from what a waiting run recorded by `director approve` (which never sees
the run's secrets or environment). `gate_content` turns a reach and the act's text into the content
that is hashed, shown and signed: the one function the gate, `plan --section N` and `approve` use.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import shutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from director.exec.marks import NAMES as MARKS
from director.exec.session import SessionState, split_functions
from director.plan import bash, knobs
from director.plan.fence import start_cwd
from director.plan.model import Plan, Section, SectionKind
from director.run.fingerprint import Templates
from director.run.gates import GateContent

SEALED = "sealed:"  # a keyed digest in place of a value
KEY_FILE = "closure.key"
_HASH_WHOLE = 64 * 1024 * 1024  # files up to this size are hashed whole; larger ones by size and times
_PROCESS_KEY = secrets.token_bytes(32)  # when no key file is given (an engine built in-process)
# Director's own options, read from its environment (`cli_options`): how Director runs, never passed to
# a block (`commands.run`), so no act can read them (`DIRECTOR_STATE_URL` may hold a password).
DIRECTOR_OPTIONS = frozenset(
    {
        "DIRECTOR_ALLOWED_SIGNERS", "DIRECTOR_APPROVE", "DIRECTOR_AUTO_APPROVE", "DIRECTOR_EVENTS",
        "DIRECTOR_JOBS", "DIRECTOR_LINT_FORMAT", "DIRECTOR_LINT_STRICT", "DIRECTOR_MAX_RECOVERIES",
        "DIRECTOR_NON_INTERACTIVE", "DIRECTOR_OPERATOR", "DIRECTOR_PLAIN", "DIRECTOR_SECRET", "DIRECTOR_SET",
        "DIRECTOR_SIGNING_KEY", "DIRECTOR_STATE_DIR", "DIRECTOR_STATE_URL", "DIRECTOR_STEP_TIMEOUT",
        "DIRECTOR_TARGET", "DIRECTOR_WAIT_FOR_APPROVAL", "DIRECTOR_WORKDIR",
    }
)  # fmt: skip
# Set by bash for each shell (not inherited as such): the session's `cwd` stands for PWD.
_BASH_SETS = frozenset({"PWD", "SHLVL", "_", "BASH_ENV"})
_BUILTINS = frozenset(
    {
        ".", ":", "[", "[[", "alias", "bg", "bind", "break", "builtin", "caller", "cd", "command", "compgen",
        "complete", "compopt", "continue", "declare", "dirs", "disown", "echo", "enable", "eval", "exec",
        "exit", "export", "false", "fc", "fg", "getopts", "hash", "help", "history", "jobs", "kill", "let",
        "local", "logout", "mapfile", "popd", "printf", "pushd", "pwd", "read", "readarray", "readonly",
        "return", "set", "shift", "shopt", "source", "suspend", "test", "times", "trap", "true", "type",
        "typeset", "ulimit", "umask", "unalias", "unset", "wait", "!", "{", "}", "case", "do", "done", "elif",
        "else", "esac", "fi", "for", "function", "if", "in", "select", "then", "time", "until", "while", "((",
    }
)  # fmt: skip
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def load_key(state_dir: Path) -> bytes:
    """The plan's closure key (32 random bytes in `state_dir/closure.key`, made 0600 on first use)."""
    path = state_dir / KEY_FILE
    try:
        data = path.read_bytes()
        if len(data) >= 32:
            return data[:32]
    except FileNotFoundError:
        pass
    state_dir.mkdir(parents=True, exist_ok=True)
    key = secrets.token_bytes(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_bytes()[:32]  # another process made it meanwhile
    with os.fdopen(fd, "wb") as f:
        f.write(key)
    return key


def process_key() -> bytes:
    """A key for this process only (an engine built in-process, without a state directory)."""
    return _PROCESS_KEY


def is_sealed(value: str) -> bool:
    return value.startswith(SEALED)


def shown(value: str) -> str:
    """A value as the panel shows it: a sealed one as `*** (sealed 1a2b3c4d)`."""
    return f"*** (sealed {value[len(SEALED) :][:8]})" if is_sealed(value) else value


@dataclass(frozen=True)
class Sealer:
    """Seals what must not be kept: secret-named, or holding a secret (`redact` changes it)."""

    key: bytes
    redact: Callable[[str], str]
    is_secret: Callable[[str], bool]

    def seal(self, *parts: str) -> str:
        data = "\0".join(parts).encode("utf-8", "surrogateescape")
        return SEALED + hmac.new(self.key, data, hashlib.sha256).hexdigest()

    def keep(self, kind: str, name: str, value: str) -> str:
        """`value`, or its seal when it is a secret or holds one."""
        if self.is_secret(name) or self.redact(value) != value:
            return self.seal(kind, name, value)
        return value


def file_digest(path: str) -> str | None:
    """`sha256:<hex>` of a regular file (`stat:` size and times past 64 MiB); None if it is not one."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not os.path.isfile(path):
        return None
    if st.st_size > _HASH_WHOLE:
        return f"stat:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}"
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    except OSError:
        return "unreadable"
    return "sha256:" + h.hexdigest()


@dataclass
class Reach:
    """What a gated act can read besides its own text, with every secret sealed (JSON-able, no secret)."""

    session: dict[str, Any]  # the session as `SessionState.to_json` has it, values sealed where needed
    env: dict[str, str]  # the inherited environment: name -> sealed value
    path: str  # the PATH the act starts with (resolves its commands)
    bash: str  # the bash that runs it: `path sha256:…`
    workdir: str  # the directory a session without one starts in
    templates: dict[str, dict[str, str]] = field(default_factory=dict)  # path -> {digest, text}
    shown_env: dict[str, str] = field(default_factory=dict)  # environment values shown (not secret)
    files: dict[str, str] = field(default_factory=dict)  # path -> digest (known; others hashed now)
    resolved: dict[str, str] = field(default_factory=dict)  # `cwd\0name` -> path (known; others now)

    def to_json(self) -> dict[str, Any]:
        return {"session": self.session, "env": self.env, "path": self.path, "bash": self.bash,
                "workdir": self.workdir, "templates": self.templates, "shown_env": self.shown_env,
                "files": self.files, "resolved": self.resolved}  # fmt: skip

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Reach:
        return cls(
            session=dict(data.get("session") or {}),
            env={str(k): str(v) for k, v in dict(data.get("env") or {}).items()},
            path=str(data.get("path") or ""),
            bash=str(data.get("bash") or ""),
            workdir=str(data.get("workdir") or ""),
            templates={str(k): dict(v) for k, v in dict(data.get("templates") or {}).items()},
            shown_env={str(k): str(v) for k, v in dict(data.get("shown_env") or {}).items()},
            files={str(k): str(v) for k, v in dict(data.get("files") or {}).items()},
            resolved={str(k): str(v) for k, v in dict(data.get("resolved") or {}).items()},
        )

    def display(self) -> dict[str, str]:
        """The values the panel puts into the commands it shows: sealed ones as `***`."""
        out = {k: v for k, v in self.shown_env.items()}
        for k, v in dict(self.session.get("variables") or {}).items():
            out[k] = "***" if is_sealed(str(v)) else str(v)
        return out

    def file(self, path: str) -> str | None:
        if path not in self.files:
            d = file_digest(path)
            if d is None:
                return None
            self.files[path] = d
        return self.files[path]

    def which(self, name: str, cwd: str) -> str | None:
        """Where bash finds command `name` (PATH as the session or the environment has it)."""
        key = f"{cwd}\0{name}"
        if key not in self.resolved:
            variables = dict(self.session.get("variables") or {})
            path = variables.get("PATH") if "PATH" in variables else self.path
            if path is None or is_sealed(path):
                path = self.path
            found = shutil.which(name, path=_absolute_path(path, cwd))
            if found is None:
                return None
            self.resolved[key] = os.path.normpath(found)
        return self.resolved[key]


def _absolute_path(path: str, cwd: str) -> str:
    return os.pathsep.join(
        p if os.path.isabs(p) else os.path.join(cwd, p or ".") for p in path.split(os.pathsep)
    )


def seal_session(state: SessionState, sealer: Sealer) -> dict[str, Any]:
    """The session as JSON with every secret (or value holding one) sealed; every field kept."""
    data = state.to_json()
    data["variables"] = {k: sealer.keep("var", k, v) for k, v in data["variables"].items()}
    data["arrays"] = {k: sealer.keep("array", k, v) for k, v in data["arrays"].items()}
    functions = split_functions(state.functions)
    data["functions"] = {k: sealer.keep("function", k, v) for k, v in sorted(functions.items())}
    return data


def live_reach(
    state: SessionState,
    environment: Mapping[str, str],
    templates: Templates,
    sealer: Sealer,
    bash_path: str,
    workdir: str,
    reads: Iterable[str] = (),
) -> Reach:
    """What an act starting in `state` can read, now (the engine's gate and `director plan`)."""
    env = {k: v for k, v in environment.items() if k not in MARKS and k not in _BASH_SETS}
    wanted = set(reads)
    return Reach(
        session=seal_session(state, sealer),
        env={k: sealer.seal("env", k, v) for k, v in sorted(env.items())},
        path=environment.get("PATH", os.defpath),
        bash=f"{bash_path} {file_digest(bash_path) or 'missing'}",
        workdir=workdir,
        templates={
            path: {"digest": sealer.seal("file", path, text), "text": sealer.redact(text)}
            for path, text in templates.values()
        },
        shown_env={k: v for k, v in env.items() if k in wanted and sealer.keep("env", k, v) == v},
    )


def _words(text: str, lookup: Callable[[str], str | None]) -> tuple[list[tuple[str, bool]], list[str]]:
    """(command name, run as a program) of each command, and the words that may name a file it reads."""
    script = bash.parse(text)
    names: list[tuple[str, bool]] = []
    words: list[str] = []

    def value(w: bash.Word) -> str | None:
        if w.static is not None:
            return w.static
        if w.glob:
            return None
        out, ok = w.pattern, True
        for m in list(_VAR.finditer(w.pattern)):
            v = lookup(m.group(1) or m.group(2))
            if v is None:
                ok = False
                break
            out = out.replace(m.group(0), v)
        return out if ok and "$" not in out and "`" not in out else None

    for c in script.commands:
        if c.kind != "command" or not c.argv:
            continue
        first = value(c.argv[0])
        if first is None:
            continue
        base = first.rsplit("/", 1)[-1]
        if first in ("source", ".") and len(c.argv) > 1:
            src = value(c.argv[1])
            if src is not None:
                names.append((src, False))
        elif "/" in first or (first not in _BUILTINS and first not in script.functions):
            names.append((first, True))
        if c.program and c.program != base and c.program not in script.functions:
            names.append((c.program, True))  # `sudo deploy`, `env X=1 tool`
        for w in c.argv[1:]:
            v = value(w)
            if v and not v.startswith("-"):
                words.append(v.split("=", 1)[1] if v.startswith("--") and "=" in v else v)
        for r in c.redirects:
            if r.op in ("<", "<>") and r.target is not None:
                v = value(r.target)
                if v:
                    words.append(v)
    return names, words


def _reads(
    texts: list[tuple[str, str]], reach: Reach, functions: Mapping[str, str]
) -> tuple[dict[str, str], dict[str, str]]:
    """The files the act blocks read or run (path -> digest) and the commands they run (name -> path)."""
    variables = dict(reach.session.get("variables") or {})

    def lookup(name: str) -> str | None:
        v = variables.get(name, reach.shown_env.get(name))
        return None if v is None or is_sealed(v) else v

    files: dict[str, str] = {}
    commands: dict[str, str] = {}
    for text, cwd in texts:
        names, words = _words(text, lookup)
        for name, program in names:
            if program and "/" not in name:
                if name in functions:
                    continue  # the session's function: its body is in the closure
                found = reach.which(name, cwd)
            else:
                found = os.path.normpath(os.path.join(cwd, os.path.expanduser(name)))
                if reach.file(found) is None and not program:
                    found = reach.which(name, cwd) or found  # `source lib.sh`: bash looks on PATH too
            d = reach.file(found) if found else None
            commands[name] = found if d is not None and found else f"{found or name} (not found)"
            if d is not None and found:
                files[found] = d
        for w in words:
            p = os.path.normpath(os.path.join(cwd, os.path.expanduser(w)))
            d = reach.file(p) if len(p) < 4096 else None
            if d is not None:
                files[p] = d
    return dict(sorted(files.items())), dict(sorted(commands.items()))


def block_cwd(session_cwd: str, cwd: str | None, workdir: str) -> str:
    """Where an act block starts: the session's directory, or its fence's `cwd=` under it."""
    return start_cwd(session_cwd or workdir, cwd) if cwd else (session_cwd or workdir)


def gate_content(
    plan: Plan, section: Section, knob_values: Mapping[str, str], texts: Mapping[int, str], reach: Reach
) -> GateContent | None:
    """What a gate's approval covers: the act's closure (the one function of the engine, `plan` and
    `approve`). None when the section is not gated for these inputs."""
    gate = knobs.gate_of(section, dict(knob_values))
    if gate is None:
        return None
    session_cwd = str(reach.session.get("cwd") or "")
    blocks = [(texts[b.index], block_cwd(session_cwd, b.cwd, reach.workdir)) for b in section.act_blocks]
    commands = [t for t, _ in blocks]
    variables = dict(reach.session.get("variables") or {})
    arrays = dict(reach.session.get("arrays") or {})
    functions = dict(reach.session.get("functions") or {})
    read: dict[str, str] = {}
    for text in commands:
        for name in bash.reads(text):
            if name in variables:
                read[name] = variables[name]
            elif name in arrays:
                read[name] = arrays[name] if is_sealed(arrays[name]) else arrays[name].split("=", 1)[-1]
            elif name in reach.shown_env:
                read[name] = reach.shown_env[name]
            elif name in reach.env:
                read[name] = reach.env[name]
    commands += [f"# write {path}\n{t['text']}" for path, t in reach.templates.items()]
    files, resolved = _reads(blocks, reach, functions)
    context: dict[str, str] = {}
    if section.kind is SectionKind.TEARDOWN and plan.live_state is not None:
        context = {row.key: row.value for row in plan.live_state.kv_rows}
    closure = {
        "session": reach.session,
        "env": reach.env,
        "cwd": [c for _, c in blocks],
        "bash": reach.bash,
        "commands": resolved,
        "files": files,
        "templates": {p: t["digest"] for p, t in reach.templates.items()},
    }
    return GateContent(
        section.key, section.title, gate.marker.value, gate.note, section.quotes, tuple(commands),
        read, dict(knob_values), context, closure=closure,
    )  # fmt: skip


def describe(closure: Mapping[str, Any]) -> list[str]:
    """The closure as lines (the panel's full view, and what a re-ask diffs): every value, sealed ones
    as `***` with their fingerprint."""
    if not closure:
        return []
    s = dict(closure.get("session") or {})
    out = [f"cwd {c}" for c in dict.fromkeys(closure.get("cwd") or [])]
    exported = set(s.get("exported") or ())
    attributes = dict(s.get("attributes") or {})
    for k, v in dict(s.get("variables") or {}).items():
        flags = attributes.get(k, "") + ("x" if k in exported else "")
        out.append(f"variable {k}{f' (-{flags})' if flags else ''}={shown(v)}")
    for k, v in dict(s.get("arrays") or {}).items():
        out.append(f"array {k}: {shown(v)}")
    for k, v in dict(s.get("functions") or {}).items():
        body = shown(v) if is_sealed(v) else " ".join(v.split())
        out.append(f"function {k}: {body}")
    for k, v in s.items():
        if k not in ("variables", "arrays", "functions", "cwd", "exported", "attributes") and v:
            if isinstance(v, dict):  # `limits`: `-n 4096:4096`
                v = " ".join(f"-{letter} {value}" for letter, value in v.items())
            out.append(f"session {k}: {' '.join(map(str, v)) if isinstance(v, list) else v}")  # `dirstack`
    out += [f"environment {k}={shown(v)}" for k, v in dict(closure.get("env") or {}).items()]
    out += [f"runs {k} → {v}" for k, v in dict(closure.get("commands") or {}).items()]
    out += [f"reads {k} {v}" for k, v in dict(closure.get("files") or {}).items()]
    out += [f"writes {k} {shown(v)}" for k, v in dict(closure.get("templates") or {}).items()]
    if closure.get("bash"):
        out.append(f"bash {closure['bash']}")
    return out


def _item(line: str) -> str:
    """What a `describe` line is about: `function deploy`, `variable PATH`, `environment MODE`, `cwd`."""
    head = line.split("=", 1)[0].split(":", 1)[0]
    words = head.split(" ")
    if words[0] in ("cwd", "bash"):
        return words[0]
    return " ".join(words[:2])


def changed(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """What differs between two closures, by name (`function echo`, `environment PATH`, `cwd`)."""
    a, b = set(describe(old)), set(describe(new))
    out = [_item(ln) for ln in describe(old) if ln not in b] + [
        _item(ln) for ln in describe(new) if ln not in a
    ]
    return list(dict.fromkeys(out))


def panel_lines(closure: Mapping[str, Any]) -> list[str]:
    """The closure for the gate panel's full view: `describe`, the inherited environment as names (every
    value sealed: it is hashed, never shown)."""
    lines = [ln for ln in describe(closure) if not ln.startswith("environment ")]
    env = sorted(dict(closure.get("env") or {}))
    if env:
        lines.append(f"environment ({len(env)} variables, values sealed): {', '.join(env)}")
    return lines


def summary(closure: Mapping[str, Any]) -> str:
    """One line: what the act can read besides its text (the compact panel)."""
    if not closure:
        return ""
    s = dict(closure.get("session") or {})
    n = {k: len(dict(s.get(k) or {})) for k in ("variables", "arrays", "functions")}
    parts = [f"{n['variables']} variables", f"{n['arrays']} arrays"]
    fns = list(dict(s.get("functions") or {}))
    parts.append(f"{n['functions']} functions" + (f" ({', '.join(fns[:6])})" if fns else ""))
    parts.append(f"{len(dict(closure.get('env') or {}))} inherited environment variables")
    files = len(dict(closure.get("files") or {}))
    if files:
        parts.append(f"{files} files")
    cwd = list(dict.fromkeys(closure.get("cwd") or []))
    return "the approval also covers: " + ", ".join(parts) + (f"; in {', '.join(cwd)}" if cwd else "")

"""Run a plan's bash blocks under plain bash — no Director involved — to prove the plan itself is sound.

What it does, independently of `director.plan.parse`:

- splits the plan into `##` sections and their fenced blocks (a tiny reader: fences, info strings, headings);
- runs the executable blocks of `## 0.`, `## Requires-discovery`, `## 1.` … in document order, each in its own
  `bash` (so `exit 1` ends one block, as the format says), all sharing ONE session: variables (with their
  attributes), functions, the working directory, the umask and the open-files limit flow from block to block
  through a state file that an `EXIT` trap writes and the next block's prelude sources;
- writes every file template (a non-shell block under a heading that names a file in backticks) exactly as
  written in the plan — the default-knob rendering — to the file the heading names: `${VAR}/x` is expanded in
  the session, a bare `x.ini` is the session variable whose value ends with `/x.ini`;
- optionally *observes first*: a section's verify blocks run once before its act blocks (as Director does), and
  their outcome is recorded separately;
- optionally runs the teardown (observed first as well).

A block "passed" when it exited 0, or when its last statement is a precondition
`[ -n "$VAR" ] && { … }` whose variable is empty (the format's *skipped*, the seed's Requires-discovery).
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

SHELL_LANGS = {"bash", "sh", "shell"}
BLOCK_TIMEOUT_S = 120.0

# Names bash owns or computes: never part of the carried session.
_PRELUDE = r"""
if [ -f {state} ]; then . {state}; fi
__pb_capture() {{
  local __pb_rc=$? __pb_n __pb_d __pb_f
  {{
    for __pb_n in $(compgen -v); do
      case "$__pb_n" in
        BASH*|SHELLOPTS|EUID|PPID|UID|SHLVL|RANDOM|SRANDOM|LINENO|SECONDS|_|FUNCNAME|GROUPS|PIPESTATUS) continue ;;
        DIRSTACK|HISTCMD|COMP_WORDBREAKS|EPOCHREALTIME|EPOCHSECONDS|OPTIND|OPTERR|OPTARG|OLDPWD|PWD|IFS) continue ;;
        PS1|PS2|PS4|HOSTNAME|HOSTTYPE|MACHTYPE|OSTYPE|COLUMNS|LINES|__pb_*) continue ;;
      esac
      __pb_d="$(declare -p "$__pb_n" 2>/dev/null)" || continue
      __pb_f="${{__pb_d#declare }}"; __pb_f="${{__pb_f%% *}}"
      case "$__pb_f" in *r*) continue ;; esac
      printf '%s\n' "$__pb_d"
    done
    declare -f
    printf 'cd %q\n' "$PWD"
    printf 'umask %s\n' "$(umask)"
    printf 'ulimit -S -n %s\n' "$(ulimit -S -n)"
  }} > {state}.new 2>/dev/null && mv -f {state}.new {state}
  return $__pb_rc
}}
trap __pb_capture EXIT
"""

_PRECONDITION = re.compile(r'^\[\[?\s+-n\s+"?\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?"?\s+\]\]?\s+&&\s+\{')


@dataclass(frozen=True)
class Block:
    section: str  # the heading text after `## `
    kind: str  # "variables" | "discovery" | "numbered" | "teardown"
    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    role: str  # "act" | "verify" | "template"
    target: str | None = None  # templates: the file named in the heading


@dataclass
class Ran:
    block: Block
    phase: str  # "apply" | "observe" | "teardown" | "teardown-observe"
    rc: int
    output: str
    skipped: bool = False  # a trailing precondition whose variable was empty

    @property
    def ok(self) -> bool:
        return self.rc == 0 or self.skipped

    def describe(self) -> str:
        return f"{self.phase} {self.block.role} block at line {self.block.line} ({self.block.section}): rc={self.rc}"


@dataclass
class Run:
    workdir: Path
    ran: list[Ran] = field(default_factory=list)

    def phase(self, *phases: str) -> list[Ran]:
        return [r for r in self.ran if r.phase in phases]

    def failures(self, *phases: str) -> list[Ran]:
        return [r for r in self.phase(*phases) if not r.ok]

    def report(self, runs: list[Ran]) -> str:
        return "\n\n".join(f"{r.describe()}\n{r.output[-2000:]}" for r in runs)


# --- reading the plan --------------------------------------------------------------------------------


def _kind(title: str) -> str | None:
    if re.match(r"0\.\s", title):
        return "variables"
    if title.startswith("Requires-discovery"):
        return "discovery"
    if re.match(r"\d+\.\s", title):
        return "numbered"
    if title.startswith("Teardown"):
        return "teardown"
    return None


def _template_target(title: str) -> str | None:
    """The last backticked path in a heading, or a backticked variable naming the file whole (`${CONF}`)."""
    paths = [
        p for p in re.findall(r"`([^`]+)`", title)
        if (re.search(r"[./]", p) or re.fullmatch(r"\$\{?[A-Za-z_]\w*\}?", p)) and not re.search(r"\s", p)
    ]  # fmt: skip
    return paths[-1] if paths else None


def blocks(text: str) -> list[Block]:
    """The executable and template blocks of a plan, in document order."""
    out: list[Block] = []
    lines = text.split("\n")
    title, kind = "", None
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            title = line[3:].strip()
            kind = _kind(title)
            i += 1
            continue
        m = re.match(r"^(`{3,}|~{3,})\s*([^\s`{]*)", line)
        if not m:
            i += 1
            continue
        fence, lang = m.group(1), m.group(2).lower()
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and not lines[i].startswith(fence):
            body.append(lines[i])
            i += 1
        i += 1  # the closing fence
        if kind is None:
            continue
        block_text = "\n".join(body)
        if lang in SHELL_LANGS:
            check_section = kind == "discovery" or "✔" in title.split("  ", 1)[-1]
            first = block_text.lstrip().split("\n", 1)[0]
            role = "verify" if check_section or first.startswith("# ✔") else "act"
            out.append(Block(title, kind, start + 1, lang, block_text, role))
        elif kind == "numbered" and lang and lang != "yaml-illustrative":
            target = _template_target(title)
            if target:
                out.append(Block(title, kind, start + 1, lang, block_text, "template", target))
    return out


def trailing_precondition(text: str) -> str | None:
    """The variable of a block's last top-level statement when it is `[ -n "$VAR" ] && { … }`."""
    top = [ln for ln in text.split("\n") if ln.strip() and not ln.startswith((" ", "\t", "#", "}"))]
    if not top:
        return None
    m = _PRECONDITION.match(top[-1])
    return m.group(1) if m else None


# --- running -----------------------------------------------------------------------------------------


class Session:
    """One plain-bash session: each block in its own bash, state carried through a file."""

    def __init__(self, workdir: Path, scratch: Path, env: dict[str, str] | None = None) -> None:
        self.workdir = workdir
        self.scratch = scratch
        scratch.mkdir(parents=True, exist_ok=True)
        self.state = scratch / "session.sh"
        self.state.write_text(f"cd {shlex.quote(str(workdir))}\n")
        self.env = dict(os.environ if env is None else env)
        self.count = 0

    def run(self, text: str, timeout: float = BLOCK_TIMEOUT_S) -> tuple[int, str]:
        self.count += 1
        script = self.scratch / f"block-{self.count:03d}.sh"
        out_path = self.scratch / f"block-{self.count:03d}.out"
        script.write_text(_PRELUDE.format(state=shlex.quote(str(self.state))) + text + "\n", encoding="utf-8")
        with open(out_path, "wb") as out:  # a file, not a pipe: background jobs keep no pipe open on us
            proc = subprocess.Popen(
                ["bash", "--noprofile", "--norc", str(script)],
                cwd=self.workdir,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            try:
                rc = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                rc = 124
        return rc, out_path.read_text(encoding="utf-8", errors="replace")

    def value(self, expr: str) -> str:
        rc, out = self.run(f'printf "%s" "{expr}"')
        assert rc == 0, out
        return out

    def path_ending_with(self, name: str) -> str:
        rc, out = self.run(
            'for __n in $(compgen -v); do case "${!__n}" in */'
            + shlex.quote(name)
            + ') printf "%s\\n" "${!__n}";; esac; done | sort -u'
        )
        found = [ln for ln in out.splitlines() if ln.strip()]
        assert rc == 0 and len(found) == 1, f"no single session variable ends with /{name}: {found}"
        return found[0]


def template_path(session: Session, target: str) -> Path:
    if "$" in target:
        return Path(session.value(target))
    if "/" not in target:
        return Path(session.path_ending_with(target))
    return session.workdir / target


def _run_block(session: Session, b: Block, phase: str) -> Ran:
    rc, out = session.run(b.text)
    skipped = False
    if rc != 0:
        var = trailing_precondition(b.text)
        if var is not None and session.value("${" + var + "}") == "":
            skipped = True
    return Ran(b, phase, rc, out, skipped)


def run_plan(
    plan: Path,
    workdir: Path,
    scratch: Path,
    *,
    observe_first: bool = True,
    teardown: bool = True,
    env: dict[str, str] | None = None,
) -> Run:
    """Apply path (and teardown) of `plan` under plain bash in `workdir`; every block's outcome recorded."""
    all_blocks = blocks(plan.read_text(encoding="utf-8"))
    session = Session(workdir, scratch, env)
    run = Run(workdir)
    apply_blocks = [b for b in all_blocks if b.kind != "teardown"]
    seen_sections: set[str] = set()
    for b in apply_blocks:
        if b.section not in seen_sections:
            seen_sections.add(b.section)
            section_blocks = [x for x in apply_blocks if x.section == b.section]
            for t in (x for x in section_blocks if x.role == "template"):
                path = template_path(session, t.target or "")
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(t.text + "\n", encoding="utf-8")
                run.ran.append(Ran(t, "apply", 0, f"wrote {path}"))
            has_act = any(x.role == "act" for x in section_blocks)
            if observe_first and b.kind == "numbered" and has_act:
                for v in (x for x in section_blocks if x.role == "verify"):
                    run.ran.append(_run_block(session, v, "observe"))
        if b.role == "template":
            continue
        run.ran.append(_run_block(session, b, "apply"))
    if teardown:
        td = [b for b in all_blocks if b.kind == "teardown"]
        if observe_first:
            for v in (x for x in td if x.role == "verify"):
                run.ran.append(_run_block(session, v, "teardown-observe"))
        for b in td:
            run.ran.append(_run_block(session, b, "teardown"))
    return run


# --- leftovers ---------------------------------------------------------------------------------------


def processes_under(root: Path) -> list[tuple[int, str]]:
    """Live processes whose cwd, command line or environment names `root` (for the leftover check)."""
    needle = str(root).encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
            if stat[stat.rfind(b")") + 2 :].split()[:1] in ([b"Z"], [b"X"]):
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
            cwd = os.readlink(f"/proc/{entry}/cwd").encode()
        except OSError:
            continue
        if needle in cmdline or cwd.startswith(needle):
            found.append((int(entry), cmdline.replace(b"\0", b" ").decode(errors="replace")[:200]))
    return found


def kill_processes_under(root: Path, grace: float = 2.0) -> list[tuple[int, str]]:
    """SIGTERM, then SIGKILL, every process `processes_under(root)` finds (each one by its pid)."""
    found = processes_under(root)
    for pid, _ in found:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and processes_under(root):
        time.sleep(0.05)
    for pid, _ in processes_under(root):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return found


def wait_no_processes(root: Path, timeout: float = 5.0) -> list[tuple[int, str]]:
    deadline = time.monotonic() + timeout
    while True:
        left = processes_under(root)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)

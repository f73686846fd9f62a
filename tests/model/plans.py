"""Generated plans, written the way authors write them: a few sections that create files, start a loopback
server, mint a token, write a list; verify blocks in every shape the format allows; a knob naming the
resources (`orders-$ENV`), sometimes a second one that makes a section a 🔴 gate; a 💥 teardown that removes
what exists.

A `PlanSpec` is small and printable (hypothesis shows it in a falsifying example); `render` turns it into the
plan's text. Every act logs one line when it starts and one when it ends to `$OUT/acts` (`OUT` comes from
`MODEL_OUT`), with what the act sees of the session: its `$BASE` (the resources' identity), whether the
variable its own verify assigns is set (`seen=`), the bytes of `IFS`, the `umask` and the open-files soft
limit (`nofile=`). Those lines are the test's evidence that an act ran and with which session; nothing else in a plan exists for the test's sake.

Resources of section k live under `$BASE` = `<workdir>/<svc>-<env>`, named after `resource(k)`:
`file` → `<res>.conf` + `<res>.env`; `server` → a python listener writing `<res>.pid` and `<res>.port`;
`token` → `<res>.token`; `list` → `<res>.list` (two lines). Every act also writes `<res>.rev` (`<res> rev N`),
the line an edit of the block changes.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, replace
from typing import Literal

from hypothesis import strategies as st

Kind = Literal["file", "server", "token", "list"]
Gate = Literal["", "red", "red-if-large"]
Shape = Literal["status", "andor", "message", "function", "failbranch"]
KnobStyle = Literal["assign", "one-line", "unassigned"]

ENVS = ("dev", "stg", "prod")
TIERS = ("small", "large")
RESOURCES = ("api", "web", "cache", "jobs", "mail")
SERVICES = ("orders", "ledger", "billing", "search")


@dataclass(frozen=True)
class SectionSpec:
    """One numbered section: what its act creates and how its verify is written."""

    kind: Kind = "file"
    gate: Gate = ""
    verify: Shape = "status"
    assigns: bool = (
        False  # the verify keeps what it reads in a variable (a list's: an array, under IFS=$'\n')
    )
    shares_var: bool = False  # … and that variable is the one its act reads (`WEB_PORT=…` in both)
    readonly: bool = False  # the verify declares a `readonly` it measures the resource with
    secret_var: bool = False  # (token) the verify reads the token into `<RES>_TOKEN`, a secret-looking name
    hint: Literal["quote", "comment"] = (
        "quote"  # `> → Live State: KEY` after the blocks, or `# → …` in the act
    )
    hides_trace: bool = False  # the verify starts with `{ set +x; } 2>/dev/null` (tracing off, quietly)
    # (token) the act runs `umask 077` before it writes the token, not in a subshell: every file the session
    # creates after it is private, as under plain bash (a umask is session state a later act inherits)
    umask: bool = False
    # (server) the act raises the open-files soft limit before it starts the server (`ulimit -S -n 2048`),
    # at top level: every process the session starts after it has that limit, as under plain bash
    nofile: bool = False

    @property
    def confirmable(self) -> bool:
        """Whether a run can confirm this check at all: one that turns tracing off leaves Director its exit
        status and output only, and a `message` check exits 0 and prints a line either way (promise 11:
        in sync only on evidence, so its act runs on every apply and its row never says ✅)."""
        return not (self.hides_trace and self.verify == "message")


@dataclass(frozen=True)
class PlanSpec:
    """A whole plan: the service name, how §0 sets the knobs, the sections, an acceptance ✔, the teardown."""

    svc: str = "orders"
    knobs: KnobStyle = "assign"
    tier: bool = False  # a second input, TIER (small/large); `red-if-large` sections are 🔴 only for large
    sections: tuple[SectionSpec, ...] = (SectionSpec(),)
    acceptance: bool = False
    teardown_marker: bool = True  # 💥 on the teardown heading (it is destructive either way)
    # the teardown's check: `exit 1` while `$BASE` is there, or a line either way after `set +x` (which no
    # run can confirm: a teardown then always acts and ends unconfirmed, never "already gone")
    teardown_check: Literal["status", "hidden-message"] = "status"

    # -- what the model needs to know about the plan ---------------------------------------------------

    @property
    def n(self) -> int:
        return len(self.sections)

    def section(self, k: int) -> SectionSpec:
        return self.sections[k - 1]

    @property
    def all_confirmable(self) -> bool:
        """Whether a completed apply can confirm every section's check (exit 0; otherwise 10)."""
        return all(s.confirmable for s in self.sections)

    def resource(self, k: int) -> str:
        return RESOURCES[k - 1]

    def gated(self, k: int, knobs: dict[str, str]) -> bool:
        g = self.section(k).gate
        return g == "red" or (g == "red-if-large" and knobs.get("TIER") == "large")

    def realized_key(self, k: int) -> str:
        res, kind = self.resource(k).upper(), self.section(k).kind
        return {"file": f"{res}_CONF", "server": f"{res}_URL", "token": f"{res}_FINGERPRINT",
                "list": f"{res}_LIST"}[kind]  # fmt: skip

    def probe_var(self, k: int) -> str:
        """The variable k's verify assigns (and that its act must not see when it starts)."""
        res, kind = self.resource(k), self.section(k).kind
        if self.section(k).shares_var and self.section(k).assigns:
            return {"file": f"{res.upper()}_CONF", "server": f"{res.upper()}_PORT",
                    "token": f"{res.upper()}_FINGERPRINT", "list": f"{res.upper()}_LIST"}[kind]  # fmt: skip
        return {"file": f"{res}_conf", "server": f"{res}_port", "token": f"{res}_fp", "list": f"{res}_list"}[
            kind
        ]

    def ifs_section(self) -> int | None:
        """The section whose verify sets `IFS=$'\\n'` for the rest of the session (a list's), if any."""
        return next((k for k in range(1, self.n + 1) if self.section(k).kind == "list" and self.section(k).assigns),
                    None)  # fmt: skip

    def sets(self, setting: str) -> int | None:
        """The first section whose act sets `setting` (one of `SETTINGS`) for the rest of the session."""
        return next((k for k in range(1, self.n + 1) if getattr(self.section(k), setting)), None)

    def splits(self, k: int) -> bool:
        """A file section's verify loops over a space-separated list (only where IFS is still the default)."""
        j = self.ifs_section()
        return self.section(k).kind == "file" and (j is None or k < j)

    def defaults(self) -> dict[str, str]:
        return {"ENV": "dev", **({"TIER": "small"} if self.tier else {})}

    def options(self) -> dict[str, tuple[str, ...]]:
        return {"ENV": ENVS, **({"TIER": TIERS} if self.tier else {})}

    def rev_line(self, k: int, rev: int) -> str:
        return f'echo "{self.resource(k)} rev {rev}" > "$BASE/{self.resource(k)}.rev"'


# -- rendering ---------------------------------------------------------------------------------------------

_PROMPT = """\
## 🤖 Director prompt

You are the Director. Execute this plan:
- Observe-before-act; verify each step before advancing (verified frontier)
- Stop at every 🔴 GATE and 💥 for human "go"
- Write realized values + verify results back into Live State
- Teardown is resumable and removes only what this plan created
- Use only the commands in this plan

```
Legend  🟢 create · 🟡 config · 🔴 GATE (human go) · 💥 destructive (human go) · ⏳ wait · ✔ verify
```
"""

# A loopback listener in stdlib Python: binds the port given (or any free one), then writes its pid and its
# port next to NAME (the port last, atomically: a reader that sees the port sees a listening server).
_SERVE = """\
serve() {  # serve DIR/NAME [PORT]: a loopback listener that writes NAME.pid and NAME.port once it listens
  nohup python3 -S - "$@" >"$1.log" 2>&1 <<'PY' &
import os, socket, sys
name = sys.argv[1]
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[2]) if len(sys.argv) > 2 else 0))
s.listen(16)
open(name + ".pid", "w").write("%d\\n" % os.getpid())
open(name + ".port~", "w").write("%d\\n" % s.getsockname()[1])
os.replace(name + ".port~", name + ".port")
while True:
    c = s.accept()[0]
    c.sendall(b"ok\\n")
    c.close()
PY
}
probe() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
"""

#: The listener's source, for the test's own heals (the same program the plan starts).
LISTENER = _SERVE.split("<<'PY' &\n", 1)[1].split("\nPY\n", 1)[0]


def _title(spec: PlanSpec, k: int) -> str:
    res = spec.resource(k).capitalize()
    return {"file": f"{res} config", "server": f"{res} server", "token": f"{res} token",
            "list": f"{res} job list"}[spec.section(k).kind]  # fmt: skip


def _heading(spec: PlanSpec, k: int) -> str:
    s = spec.section(k)
    plain = "🟡" if s.kind == "file" else "🟢"
    if s.gate == "red":
        marks = "🔴"
    elif s.gate == "red-if-large":
        marks = f"🔴 *(`TIER=large` — reachable by every client)*  /  {plain} *(`small`)*"
    else:
        marks = plain
    return f"## {k}. {_title(spec, k)}  {marks}"


def check_title(spec: PlanSpec, k: int) -> str:
    res = spec.resource(k)
    return {"file": f"{res} config written", "server": f"{res} answers", "token": f"{res} token present",
            "list": f"{res} list has two entries"}[spec.section(k).kind]  # fmt: skip


def _probe_line(spec: PlanSpec, k: int) -> str:
    return (
        f'echo "start {k} base=$BASE seen=$(declare -p {spec.probe_var(k)} 2>/dev/null | wc -l) '
        'ifs=$(declare -p IFS | od -An -tx1 | tr -d \' \\n\') umask=$(umask) nofile=$(ulimit -S -n)" >> "$OUT/acts"'
    )


def _act(spec: PlanSpec, k: int, rev: int) -> str:
    s, res, RES = spec.section(k), spec.resource(k), spec.resource(k).upper()
    lines = [_probe_line(spec, k), 'mkdir -p "$BASE"']
    if s.kind == "file":
        lines += [
            f'{RES}_CONF="$BASE/{res}.conf"',
            f'echo "name=$SVC-{res}-$ENV" > "${RES}_CONF"',
            f'echo "{RES}_ENV=$ENV" > "$BASE/{res}.env"',
            spec.rev_line(k, rev),
            f'export {RES}_CONF {RES}_FILES="${RES}_CONF $BASE/{res}.env"',
        ]
    elif s.kind == "server":
        lines += ["ulimit -S -n 2048"] if s.nofile else []
        lines += [
            f'if [ -s "$BASE/{res}.pid" ] && kill -0 "$(cat "$BASE/{res}.pid")" 2>/dev/null; then',
            f'  echo "{res} already serving (pid $(cat "$BASE/{res}.pid"))"',
            "else",
            f'  rm -f "$BASE/{res}.port"',
            f'  serve "$BASE/{res}"',
            f'  for i in $(seq 1 200); do [ -s "$BASE/{res}.port" ] && break; sleep 0.05; done',
            "fi",
            f'{RES}_PORT="$(cat "$BASE/{res}.port")"',
            spec.rev_line(k, rev),
            f'export {RES}_URL="http://127.0.0.1:${RES}_PORT/"',
            f'echo "{res} serving on ${RES}_URL"',
        ]
    elif s.kind == "token":
        mint = f'od -An -N16 -tx1 /dev/urandom | tr -d \' \\n\' > "$BASE/{res}.token"'
        lines += [
            *(["umask 077", f'[ -s "$BASE/{res}.token" ] || {mint}'] if s.umask
              else [f'[ -s "$BASE/{res}.token" ] || ( umask 077; {mint} )']),
            spec.rev_line(k, rev),
            f'export {RES}_FINGERPRINT="$(sha256sum < "$BASE/{res}.token" | cut -c1-12)"',
        ]
    else:
        lines += [
            f'{RES}_LIST="$BASE/{res}.list"',
            f'printf \'%s\\n\' "{res} one" "{res} two" > "${RES}_LIST"',
            spec.rev_line(k, rev),
            f"export {RES}_LIST",
        ]
    if s.hint == "comment":
        lines.append(f"# → Live State: {spec.realized_key(k)}")
    lines.append(f'echo "end {k} base=$BASE" >> "$OUT/acts"')
    return "\n".join(lines)


def _condition(spec: PlanSpec, k: int) -> tuple[list[str], str, str, str]:
    """(setup lines, a condition that holds iff the resource is there, the pass line, the failure line)."""
    s, res, var = spec.section(k), spec.resource(k), spec.probe_var(k)
    setup: list[str] = []
    if s.kind == "file":
        path = f'"$BASE/{res}.conf"'
        if s.assigns:
            setup.append(f"{var}={path}")
            path = f'"${var}"'
        if spec.splits(k):  # word splitting of a variable the act exported: bash's default IFS assumed
            setup.append(
                f'for f in ${res.upper()}_FILES; do [ -f "$f" ] || {{ echo "missing $f"; exit 1; }}; done'
            )
        cond = f'grep -qx "name=$SVC-{res}-$ENV" {path} 2>/dev/null'
        ok, bad = f"{res} config written", f"{res} config missing"
    elif s.kind == "server":
        port = f'"$(cat "$BASE/{res}.port" 2>/dev/null)"'
        if s.assigns:
            setup.append(f"{var}={port}")
            port = f'"${var}"'
        cond = f'[ -n {port} ] && kill -0 "$(cat "$BASE/{res}.pid" 2>/dev/null)" 2>/dev/null && probe {port}'
        ok, bad = f"{res} answers", f"{res} does not answer"
    elif s.kind == "token":
        if s.assigns:
            setup.append(f'{var}="$(cat "$BASE/{res}.token" 2>/dev/null | sha256sum | cut -c1-12)"')
        if s.secret_var:
            setup.append(f'{res.upper()}_TOKEN="$(cat "$BASE/{res}.token" 2>/dev/null)"')
            cond = f'[ -n "${res.upper()}_TOKEN" ]'
        else:
            cond = f'[ -s "$BASE/{res}.token" ]'
        ok, bad = f"{res} token present", f"{res} token missing"
    elif s.assigns:
        setup += [
            "IFS=$'\\n'",
            f'{res}_entries=($(cat "$BASE/{res}.list" 2>/dev/null))',
            f'{var}="$BASE/{res}.list"',
        ]
        cond = f'[ "${{#{res}_entries[@]}}" -eq 2 ]'
        ok, bad = f"{res} list has two entries", f"{res} list has ${{#{res}_entries[@]}} entries"
    else:
        cond = f'[ "$(cat "$BASE/{res}.list" 2>/dev/null | wc -l)" -eq 2 ]'
        ok, bad = f"{res} list has two entries", f"{res} list is incomplete"
    if s.readonly:
        main = {"file": "conf", "server": "port", "token": "token", "list": "list"}[s.kind]
        setup += [
            f'readonly {res}_size="$(cat "$BASE/{res}.{main}" 2>/dev/null | wc -c)"',
            f'[ "${res}_size" -gt 0 ] || {{ echo "{res}.{main} is empty"; exit 1; }}',
        ]
    return setup, cond, ok, bad


# Turning tracing off without bash's own trace line for it: the usual idiom of scripts that print `set -x`
# output only where they want it.
QUIET_UNTRACE = "{ set +x; } 2>/dev/null"


def _verify(spec: PlanSpec, k: int) -> str:
    s, res = spec.section(k), spec.resource(k)
    setup, cond, ok, bad = _condition(spec, k)
    body = [f"# ✔ {check_title(spec, k)}", *([QUIET_UNTRACE] if s.hides_trace else []), *setup]
    if s.verify == "status":
        body += [f"{cond} || exit 1", f'echo "{ok}"']
    elif s.verify == "andor":
        body += [f'{cond} && echo "{ok}" || {{ echo "{bad}"; exit 1; }}']
    elif s.verify == "message":
        body += [f'if {cond}; then echo "{ok}"; else echo "{bad}"; fi']
    elif s.verify == "function":
        body += [
            f"{res}_holds() {{ {cond}; }}",
            'report() { if "$1"; then echo "✓ $2"; else echo "✗ $2"; return 1; fi; }',
            f'report {res}_holds "{ok}" || exit 1',
        ]
    else:
        body += [f'if ! {{ {cond}; }}; then echo "{bad}"; exit 1; fi', f'echo "{ok}"']
    return "\n".join(body)


def _variables(spec: PlanSpec) -> str:
    lines = [f'export SVC="{spec.svc}"']
    knob = 'export ENV="dev"' + (' TIER="small"' if spec.tier else "")
    if spec.knobs == "assign":
        lines.append('export ENV="dev"')
        if spec.tier:
            lines.append('export TIER="small"')
    elif spec.knobs == "one-line":
        lines[0] = knob.replace("export ", f'export SVC="{spec.svc}" ', 1)
    base = '"$PWD/${SVC}-${ENV}"' if spec.knobs != "unassigned" else '"$PWD/${SVC}-${ENV:-dev}"'
    lines += [
        'export OUT="${MODEL_OUT:-$PWD/.acts}"',
        f"export BASE={base}",
        'mkdir -p "$OUT"',
        _SERVE.rstrip(),
    ]
    return "\n".join(lines)


def _acceptance(spec: PlanSpec, k: int) -> str:
    lines = []
    for j in range(1, spec.n + 1):
        s, res, RES = spec.section(j), spec.resource(j), spec.resource(j).upper()
        if s.kind == "server":
            lines.append(
                f'probe "${RES}_PORT" || {{ echo "1: {res} does not answer on ${RES}_PORT"; exit 1; }}'
            )
        elif s.kind == "file":
            lines.append(f'[ -f "${RES}_CONF" ] || {{ echo "1: no {res} config"; exit 1; }}')
        elif s.kind == "token":
            lines.append(f'[ -n "${RES}_FINGERPRINT" ] || {{ echo "1: no {res} token"; exit 1; }}')
        else:
            lines.append(f'[ -f "${RES}_LIST" ] || {{ echo "1: no {res} list"; exit 1; }}')
    lines.append('echo "1: stack answers"')
    return f"## {k}. Acceptance  ✔\n\n```bash\n" + "\n".join(lines) + "\n```\n"


def _teardown(spec: PlanSpec) -> str:
    marker = "  💥" if spec.teardown_marker else ""
    return f"""\
## Teardown (observe-first, resumable){marker}

> Stops every server this plan started (by its pid file) and removes `$BASE`. Re-entry is safe.

```bash
echo "start teardown base=$BASE" >> "$OUT/acts"
for pidfile in "$BASE"/*.pid; do
  [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null
done
for i in $(seq 1 100); do
  left=no
  for pidfile in "$BASE"/*.pid; do
    [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null && left=yes
  done
  [ "$left" = no ] && break
  sleep 0.05
done
rm -rf "$BASE"
echo "end teardown base=$BASE" >> "$OUT/acts"
```
```bash
# ✔ nothing left
{_teardown_check(spec)}
```
"""


def _teardown_check(spec: PlanSpec) -> str:
    if spec.teardown_check == "status":
        return 'if [ -e "$BASE" ]; then echo "$BASE is still there"; exit 1; fi\necho "nothing left of $SVC-$ENV"'
    return 'set +x\n[ -e "$BASE" ] && echo "$BASE is still there" || echo "removed $SVC-$ENV"'


def render(spec: PlanSpec, revs: dict[int, int] | None = None) -> str:
    """The plan's text (each section's act at revision `revs[k]`, 1 by default)."""
    revs = revs or {}
    title = spec.svc.capitalize()
    inputs = [
        "| # | Question | Options (closed enum) | Default | Sets | Gates |",
        "|---|----------|-----------------------|---------|------|-------|",
        f"| 1 | Environment | `dev` / `stg` / `prod` | `dev` | `ENV` | resource names (`{spec.svc}-dev`) |",
    ]
    gated_by_tier = [str(k) for k in range(1, spec.n + 1) if spec.section(k).gate == "red-if-large"]
    if spec.tier:
        which = ", ".join(f"§{k}" for k in gated_by_tier) or "nothing yet"
        inputs.append(f"| 2 | Tier | `small` / `large` | `small` | `TIER` | {which} gate severity |")
    resolved = "{ env: dev" + (", tier: small" if spec.tier else "") + " }"
    parts = [
        f"# {title} — a small local stack\n",
        f"> Self-executing Markdown: {spec.n} parts of the `{spec.svc}` stack on this machine, named per environment.\n",
        _PROMPT,
        "## Intent\n",
        "**Acceptance contract:**\n1. **Stack answers** — every part is there.\n",
        "## Provisioning Inputs\n",
        "\n".join(inputs) + "\n",
        "## 0. Variables\n",
        "```bash\n" + _variables(spec) + "\n```\n",
    ]
    for k in range(1, spec.n + 1):
        s = spec.section(k)
        parts.append(_heading(spec, k) + "\n")
        parts.append(
            "```bash\n" + _act(spec, k, revs.get(k, 1)) + "\n```\n```bash\n" + _verify(spec, k) + "\n```\n"
        )
        parts.append(f"> → Live State: {spec.realized_key(k)}\n" if s.hint == "quote" else "")
    if spec.acceptance:
        parts.append(_acceptance(spec, spec.n + 1))
    kv = [
        "| key | value (filled on apply) |",
        "|-----|-------------------------|",
        "| NAME | `${SVC}-${ENV}` |",
    ]
    kv += [f"| {spec.realized_key(k)} | `—` |" for k in range(1, spec.n + 1)]
    rows = ["| ✔ check | expected | observed | result |", "|---------|----------|----------|--------|"]
    rows += [f"| {check_title(spec, k)} | it holds | | |" for k in range(1, spec.n + 1)]
    if spec.acceptance:
        rows.append("| stack answers | every part | | |")
    rows.append("| nothing left | after teardown | | |")
    parts += [
        "## Live State\n",
        "```yaml\nstatus:        not-created      # run it to realize state\nlast_action:   —\nlast_verified: —\n"
        f"resolved_inputs: {resolved}\n```\n",
        "\n".join(kv) + "\n",
        "\n".join(rows) + "\n",
        _teardown(spec),
    ]
    return "\n".join(p for p in parts if p != "")


# -- the strategy --------------------------------------------------------------------------------------------


@st.composite
def section_specs(draw: st.DrawFn, kind: Kind, tier: bool) -> SectionSpec:
    gates: list[Gate] = ["", "", "red"]
    if tier:
        gates.append("red-if-large")
    return SectionSpec(
        kind=kind,
        gate=draw(st.sampled_from(gates)),
        verify=draw(st.sampled_from(["status", "andor", "message", "function", "failbranch"])),
        assigns=draw(st.booleans()),
        shares_var=draw(st.booleans()),
        readonly=draw(st.sampled_from([False] * 7 + [True])),
        secret_var=kind == "token" and draw(st.sampled_from([False, True, True])),
        hint=draw(st.sampled_from(["quote", "comment"])),
        hides_trace=draw(st.sampled_from([False] * 5 + [True])),
        umask=kind == "token" and draw(st.sampled_from([False, True])),
        nofile=kind == "server" and draw(st.sampled_from([False, True])),
    )


@st.composite
def plan_specs(draw: st.DrawFn) -> PlanSpec:
    """Plans of 2-4 sections; at most one list (its verify leaves `IFS=$'\\n'` to the sections after it)."""
    tier = draw(st.booleans())
    n = draw(st.integers(2, 4))
    kinds: list[Kind] = []
    for _ in range(n):
        allowed: list[Kind] = ["file", "server", "token"]
        if "list" not in kinds:
            allowed.append("list")
        kinds.append(draw(st.sampled_from(allowed)))
    return PlanSpec(
        svc=draw(st.sampled_from(SERVICES)),
        knobs=draw(st.sampled_from(["assign", "assign", "one-line", "unassigned"])),
        tier=tier,
        sections=tuple(draw(section_specs(k, tier)) for k in kinds),
        acceptance=draw(st.booleans()),
        teardown_marker=draw(st.booleans()),
        teardown_check=draw(st.sampled_from(["status"] * 5 + ["hidden-message"])),
    )


def default_ifs_hex() -> str:
    """What an act's `ifs=` says when IFS is bash's default."""
    out = subprocess.run(
        ["bash", "--noprofile", "--norc", "-c", "declare -p IFS | od -An -tx1 | tr -d ' \\n'"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return out.stdout.strip()


# What an act that sets one of these sets it to (the act's text says the same).
SETTINGS = {"umask": "0077", "nofile": "2048"}


def default_settings() -> dict[str, str]:
    """What an act's `umask=` and `nofile=` say when no section set them: what the test runs Director with."""
    out = subprocess.run(["bash", "--noprofile", "--norc", "-c", "umask; ulimit -S -n"], capture_output=True,
                         text=True, check=True).stdout.split()  # fmt: skip
    return dict(zip(SETTINGS, out, strict=True))


def with_section(spec: PlanSpec, k: int, **changes: object) -> PlanSpec:
    """`spec` with section k changed (for hand-written regressions)."""
    sections = list(spec.sections)
    sections[k - 1] = replace(sections[k - 1], **changes)  # type: ignore[arg-type]
    return replace(spec, sections=tuple(sections))

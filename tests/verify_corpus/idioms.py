"""Verify idioms of the kind real runbooks use, each with the worlds that decide its truth.

Why a Python module and not YAML/TOML: every field is bash, full of both quote characters, `\\`
continuations, `$VAR`, heredocs and `|`; a raw triple-quoted string holds it byte for byte with no second
escaping layer (YAML block scalars and TOML multi-line strings each have their own rules for `\\`, `#`,
indentation and trailing newlines, which is exactly where a corpus silently stops meaning what it says).
Being Python, the corpus is type-checked, validated on import (`_validate`), and needs no parser
dependency; it is still plain data: a list of frozen `Idiom` records, nothing computed.

Conventions every idiom follows:
- `$W` is the idiom's world directory (absolute; it exists and starts empty for every world).
  `$HTTP_PORT` is set when `server` is true: a loopback HTTP server serving the files of `$W`.
- `holds` / `broken` / `na` are bash that build a world in the empty `$W`; `fix` turns any of them
  (and `holds` itself) into a world where the check holds. Director runs `fix` as the act block of the
  idiom's section and of its teardown, so it must always exit 0 and be idempotent.
- The block never assigns `W`, `CTR` or `HTTP_PORT` (a Director session carries variables from block
  to block) and sets every variable it reads before reading it.
  No variable name looks secret (`TOKEN`, `…_KEY`): Director handles those apart (never stored, a
  later block cannot read them back), which is another subject than reading a check.
- `kind`:
  `hard`: a failed check changes the block's exit status (exit 0 in `holds`, non-zero in `broken`);
  `soft`: the block exits 0 in both; a failed check only prints its exit-0 alternative `f` (or, for a
  non-trailing `cond && echo P`, prints nothing in place of `p`);
  `precondition`: a guard (`[ -n "$X" ] && { …checks… }`, `if cond; then …checks…; fi`) that is false in
  the `na` world, where the block prints no check line at all; otherwise it behaves as `hard`.
- Expected verdicts: holds → passed; broken → failed (hard, precondition) / inconclusive (soft);
  na → skipped.
- `p` is a line the block prints in `holds` (its pass line; required for soft), `f` the line it prints
  in `broken` (its failure line; required for soft unless the failure is silence).
- `lint` is the set of verify-reading findings (`LINT_CODES`) `director lint` is right to report on the
  block: empty when the block's exit status reflects every check; `ambiguous-check` for a soft ternary
  (`cond && echo P || echo F` exits 0 either way), `unenforced-check` for a non-trailing `cond && echo P`.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from typing import Literal

Kind = Literal["hard", "soft", "precondition"]
World = Literal["holds", "broken", "na"]
Verdict = Literal["passed", "failed", "inconclusive", "skipped"]

#: The lint codes that say "this block's exit status cannot reflect its check".
LINT_CODES = frozenset({"verify-exit-status", "unenforced-check", "fail-without-exit", "soft-alternative"})
_AMBIGUOUS = frozenset({"soft-alternative"})
_SECRETISH = re.compile(r"TOKEN|SECRET|PASSW|APIKEY|CREDENTIAL|_KEY$", re.IGNORECASE)


def sh(text: str) -> str:
    """Bash text written indented in this file, as an author would write it in a fence."""
    return textwrap.dedent(text).strip("\n")


@dataclass(frozen=True)
class Idiom:
    name: str
    kind: Kind
    block: str
    holds: str
    broken: str
    fix: str
    na: str | None = None
    p: str | None = None
    f: str | None = None
    server: bool = False
    tools: tuple[str, ...] = ()
    lint: frozenset[str] = frozenset()
    note: str = ""

    def worlds(self) -> dict[World, str]:
        out: dict[World, str] = {"holds": self.holds, "broken": self.broken}
        if self.na is not None:
            out["na"] = self.na
        return out

    def verdict(self, world: World) -> Verdict:
        if world == "holds":
            return "passed"
        if world == "na":
            return "skipped"
        return "inconclusive" if self.kind == "soft" else "failed"


def _i(name: str, kind: Kind, block: str, holds: str, broken: str, fix: str, **kw: object) -> Idiom:
    return Idiom(name, kind, sh(block), sh(holds), sh(broken), sh(fix), **kw)  # type: ignore[arg-type]


# Blocks shared by several idioms (the same check, different worlds exercising different branches).
_IF_ELIF = r"""
    if [ -f "$W/out.json" ]; then
      python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$W/out.json" 2>/dev/null \
        || { echo "1: output is not valid json"; exit 1; }
      echo "1: ok (json)"
    elif [ -f "$W/out.txt" ]; then
      grep -q . "$W/out.txt" || { echo "1: text output is empty"; exit 1; }
      echo "1: ok (text)"
    else
      echo "1: no output at all"
      exit 1
    fi
"""

_CASE = r"""
    STATE=$(cat "$W/state" 2>/dev/null)
    case "$STATE" in
      running) echo "3: service up (running)" ;;
      idle | sleeping) echo "3: service up ($STATE)" ;;
      *) echo "3: service down: '$STATE'"; exit 1 ;;
    esac
"""

_NON_TRAILING = r"""
    [ -f "$W/robots.txt" ] && echo "robots.txt present"
    [ -d "$W/public" ] || { echo "public dir missing"; exit 1; }
    echo "public dir present"
"""

IDIOMS: tuple[Idiom, ...] = (
    # ---------------------------------------------------------------- test / [ ] / [[ ]]
    _i(
        "file-exists-trailing-assertion",
        "hard",
        r'''[ -f "$W/app.pid" ] && echo "pid file present"''',
        r'''echo 4242 > "$W/app.pid"''',
        r""":""",
        r'''echo 4242 > "$W/app.pid"''',
        p="pid file present",
    ),
    _i(
        "test-s-trailing-assertion",
        "hard",
        r'''test -s "$W/out.log" && echo "log has content"''',
        r'''echo started > "$W/out.log"''',
        r''': > "$W/out.log"''',
        r'''echo started >> "$W/out.log"''',
        p="log has content",
    ),
    _i(
        "dir-ternary-exit",
        "hard",
        r"""[ -d "$W/data" ] && echo "data dir present" || { echo "data dir missing"; exit 1; }""",
        r'''mkdir "$W/data"''',
        r""":""",
        r'''mkdir -p "$W/data"''',
        p="data dir present",
        f="data dir missing",
    ),
    _i(
        "string-eq-double-bracket-var-message",
        "hard",
        r"""
        MODE=$(cat "$W/mode" 2>/dev/null)
        [[ "$MODE" == prod ]] && echo "mode is $MODE" || { echo "mode is '$MODE', want prod"; exit 1; }
        """,
        r'''echo prod > "$W/mode"''',
        r'''echo dev > "$W/mode"''',
        r'''echo prod > "$W/mode"''',
        p="mode is prod",
        f="mode is 'dev', want prod",
    ),
    _i(
        "glob-match-double-bracket",
        "hard",
        r"""
        [[ "$(cat "$W/branch")" == release/* ]] && echo "on a release branch" \
          || { echo "not on a release branch"; exit 1; }
        """,
        r'''echo release/1.4 > "$W/branch"''',
        r'''echo main > "$W/branch"''',
        r'''echo release/1.4 > "$W/branch"''',
        p="on a release branch",
        f="not on a release branch",
    ),
    _i(
        "regex-match-semver",
        "hard",
        r"""
        [[ "$(cat "$W/version")" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]] && echo "version is semver" \
          || { echo "version is not semver"; exit 1; }
        """,
        r'''echo v1.2.3 > "$W/version"''',
        r'''echo latest > "$W/version"''',
        r'''echo v1.2.3 > "$W/version"''',
        p="version is semver",
        f="version is not semver",
    ),
    _i(
        "number-ge-or-exit-then-echo",
        "hard",
        r"""
        [ "$(cat "$W/replicas")" -ge 3 ] || { echo "fewer than 3 replicas"; exit 1; }
        echo "at least 3 replicas"
        """,
        r'''echo 3 > "$W/replicas"''',
        r'''echo 1 > "$W/replicas"''',
        r'''echo 3 > "$W/replicas"''',
        p="at least 3 replicas",
        f="fewer than 3 replicas",
    ),
    _i(
        "nonempty-and-chain-is-an-assertion-not-a-precondition",
        "hard",
        r"""
        REGION=$(cat "$W/region" 2>/dev/null)
        [ -n "$REGION" ] && [ "$REGION" != unset ] && echo "region set" || { echo "region unset"; exit 1; }
        """,
        r'''echo eu-west-1 > "$W/region"''',
        r'''echo unset > "$W/region"''',
        r'''echo eu-west-1 > "$W/region"''',
        p="region set",
        f="region unset",
        note='starts like a precondition (`[ -n "$X" ] && …`) but is one enforced chain',
    ),
    # ---------------------------------------------------------------- grep
    _i(
        "grep-q-or-exit",
        "hard",
        r"""
        grep -q '^  listen 8080;$' "$W/nginx.conf" || { echo "nginx does not listen on 8080"; exit 1; }
        echo "nginx listens on 8080"
        """,
        r'''printf 'server {\n  listen 8080;\n}\n' > "$W/nginx.conf"''',
        r'''printf 'server {\n  listen 80;\n}\n' > "$W/nginx.conf"''',
        r'''printf 'server {\n  listen 8080;\n}\n' > "$W/nginx.conf"''',
        p="nginx listens on 8080",
        f="nginx does not listen on 8080",
    ),
    _i(
        "grep-qx-exact-line",
        "hard",
        r"""grep -qx 'enabled' "$W/flag" && echo "flag enabled" || { echo "flag not enabled"; exit 1; }""",
        r'''echo enabled > "$W/flag"''',
        r'''echo "not enabled" > "$W/flag"''',
        r'''echo enabled > "$W/flag"''',
        p="flag enabled",
        f="flag not enabled",
        note="the broken world matches `grep -q` but not `grep -qx`",
    ),
    _i(
        "grep-c-eq-n",
        "hard",
        r"""
        [ "$(grep -c '^worker ' "$W/procs")" -eq 4 ] && echo "4 workers running" \
          || { echo "worker count is not 4"; exit 1; }
        """,
        r'''printf 'master 1\nworker 2\nworker 3\nworker 4\nworker 5\n' > "$W/procs"''',
        r'''printf 'master 1\nworker 2\nworker 3\nworker 4\n' > "$W/procs"''',
        r'''printf 'master 1\nworker 2\nworker 3\nworker 4\nworker 5\n' > "$W/procs"''',
        p="4 workers running",
        f="worker count is not 4",
    ),
    _i(
        "grep-c-into-variable-message-with-var",
        "hard",
        r"""
        N=$(grep -c ERROR "$W/app.log" || true)
        [ "$N" -eq 0 ] || { echo "$N errors in the log"; exit 1; }
        echo "no errors in the log"
        """,
        r'''printf 'INFO start\nINFO ready\n' > "$W/app.log"''',
        r'''printf 'INFO start\nERROR boom\n' > "$W/app.log"''',
        r'''printf 'INFO start\nINFO ready\n' > "$W/app.log"''',
        p="no errors in the log",
        f="1 errors in the log",
    ),
    # ---------------------------------------------------------------- curl against a loopback server
    _i(
        "curl-sf-or-exit",
        "hard",
        r"""
        curl -sf "http://127.0.0.1:$HTTP_PORT/health" >/dev/null || { echo "health endpoint down"; exit 1; }
        echo "health endpoint answers"
        """,
        r'''echo ok > "$W/health"''',
        r""":""",
        r'''echo ok > "$W/health"''',
        p="health endpoint answers",
        f="health endpoint down",
        server=True,
        tools=("curl",),
    ),
    _i(
        "curl-pipe-grep-q-ternary",
        "hard",
        r"""
        curl -sf "http://127.0.0.1:$HTTP_PORT/status.json" | grep -q '"status": *"ok"' \
          && echo "status is ok" || { echo "status is not ok"; exit 1; }
        """,
        r'''echo '{"status": "ok"}' > "$W/status.json"''',
        r'''echo '{"status": "degraded"}' > "$W/status.json"''',
        r'''echo '{"status": "ok"}' > "$W/status.json"''',
        p="status is ok",
        f="status is not ok",
        server=True,
        tools=("curl",),
    ),
    _i(
        "poll-for-break-curl",
        "hard",
        r"""
        OK=no
        for i in 1 2 3; do
          curl -sf "http://127.0.0.1:$HTTP_PORT/ready" >/dev/null && { OK=yes; break; }
          sleep 0.2
        done
        [ "$OK" = yes ] && echo "8: ready" || { echo "8: not ready after $i tries"; exit 1; }
        """,
        r'''echo yes > "$W/ready"''',
        r""":""",
        r'''echo yes > "$W/ready"''',
        p="8: ready",
        f="8: not ready after 3 tries",
        server=True,
        tools=("curl",),
    ),
    _i(
        "soft-curl-ternary",
        "soft",
        r"""
        curl -sf "http://127.0.0.1:$HTTP_PORT/version" >/dev/null && echo "version endpoint up" \
          || echo "version endpoint DOWN"
        """,
        r'''echo 1.0 > "$W/version"''',
        r""":""",
        r'''echo 1.0 > "$W/version"''',
        p="version endpoint up",
        f="version endpoint DOWN",
        server=True,
        tools=("curl",),
        lint=_AMBIGUOUS,
    ),
    # ---------------------------------------------------------------- loops
    _i(
        "until-loop-with-a-bound",
        "hard",
        r"""
        n=0
        until grep -qx up "$W/health" 2>/dev/null; do
          n=$((n + 1))
          [ "$n" -ge 3 ] && { echo "still down after $n tries"; exit 1; }
          sleep 0.2
        done
        echo "health is up"
        """,
        r'''echo up > "$W/health"''',
        r'''echo down > "$W/health"''',
        r'''echo up > "$W/health"''',
        p="health is up",
        f="still down after 3 tries",
        note="`[ … ] && { echo; exit 1; }` inside the loop is a failure exit, not a precondition",
    ),
    _i(
        "for-loop-over-a-function",
        "hard",
        r"""
        listening() { grep -qx "$1" "$W/ports"; }
        for p in 80 443; do
          listening "$p" || { echo "port $p closed"; exit 1; }
        done
        echo "ports 80 and 443 open"
        """,
        r'''printf '22\n80\n443\n' > "$W/ports"''',
        r'''printf '22\n80\n' > "$W/ports"''',
        r'''printf '22\n80\n443\n' > "$W/ports"''',
        p="ports 80 and 443 open",
        f="port 443 closed",
    ),
    # ---------------------------------------------------------------- if / case alternatives
    _i(
        "if-elif-shared-label-json-branch",
        "hard",
        _IF_ELIF,
        r'''echo '{"a": 1}' > "$W/out.json"''',
        r'''echo '{"a":' > "$W/out.json"''',
        r'''echo '{"a": 1}' > "$W/out.json"''',
        p="1: ok (json)",
        f="1: output is not valid json",
    ),
    _i(
        "if-elif-shared-label-text-branch",
        "hard",
        _IF_ELIF,
        r'''echo hello > "$W/out.txt"''',
        r''': > "$W/out.txt"''',
        r'''echo hello > "$W/out.txt"''',
        p="1: ok (text)",
        f="1: text output is empty",
    ),
    _i(
        "if-elif-shared-label-else-branch",
        "hard",
        _IF_ELIF,
        r'''echo '{"a": 1}' > "$W/out.json"''',
        r""":""",
        r'''echo '{"a": 1}' > "$W/out.json"''',
        p="1: ok (json)",
        f="1: no output at all",
    ),
    _i(
        "if-not-negation-else-exit",
        "hard",
        r"""
        if ! grep -q maintenance "$W/mode"; then
          echo "2: serving traffic"
        else
          echo "2: in maintenance"
          exit 1
        fi
        """,
        r'''echo live > "$W/mode"''',
        r'''echo maintenance > "$W/mode"''',
        r'''echo live > "$W/mode"''',
        p="2: serving traffic",
        f="2: in maintenance",
    ),
    _i(
        "case-shared-label-first-alternative",
        "hard",
        _CASE,
        r'''echo running > "$W/state"''',
        r'''echo crashed > "$W/state"''',
        r'''echo running > "$W/state"''',
        p="3: service up (running)",
        f="3: service down: 'crashed'",
    ),
    _i(
        "case-shared-label-second-alternative",
        "hard",
        _CASE,
        r'''echo idle > "$W/state"''',
        r''': > "$W/state"''',
        r'''echo idle > "$W/state"''',
        p="3: service up (idle)",
        f="3: service down: ''",
    ),
    _i(
        "arith-if-else-var-message",
        "hard",
        r"""
        free=$(cat "$W/free_mb")
        if (( free >= 512 )); then
          echo "10: $free MB free"
        else
          echo "10: only $free MB free"
          exit 1
        fi
        """,
        r'''echo 2048 > "$W/free_mb"''',
        r'''echo 100 > "$W/free_mb"''',
        r'''echo 2048 > "$W/free_mb"''',
        p="10: 2048 MB free",
        f="10: only 100 MB free",
    ),
    # ---------------------------------------------------------------- ternaries and failure exits
    _i(
        "reversed-ternary-exit-then-pass",
        "hard",
        r'''ls "$W"/*.tmp >/dev/null 2>&1 && { echo "temp files remain"; exit 1; } || echo "no temp files left"''',
        r'''touch "$W/keep.txt"''',
        r'''touch "$W/a.tmp"''',
        r"""rm -f "$W"/*.tmp""",
        p="no temp files left",
        f="temp files remain",
        note="the seed's teardown shape: the failure is the && branch, the pass the || branch",
    ),
    _i(
        "identical-messages-on-both-branches",
        "hard",
        r"""[ -f "$W/tls.crt" ] && echo "tls: checked" || { echo "tls: checked"; exit 1; }""",
        r'''echo cert > "$W/tls.crt"''',
        r""":""",
        r'''echo cert > "$W/tls.crt"''',
        p="tls: checked",
        f="tls: checked",
        note="only the exit status can tell the branches apart",
    ),
    _i(
        "multi-line-backslash-chain",
        "hard",
        r"""
        grep -q '^user=app$' "$W/svc.ini" \
          && grep -q '^restart=always$' "$W/svc.ini" \
          && echo "unit configured" \
          || { echo "unit misconfigured"; exit 1; }
        """,
        r'''printf 'user=app\nrestart=always\n' > "$W/svc.ini"''',
        r'''printf 'user=app\nrestart=no\n' > "$W/svc.ini"''',
        r'''printf 'user=app\nrestart=always\n' > "$W/svc.ini"''',
        p="unit configured",
        f="unit misconfigured",
    ),
    # ---------------------------------------------------------------- negation
    _i(
        "bang-grep-or-exit",
        "hard",
        r"""
        ! grep -q ERROR "$W/app.log" || { echo "errors in app.log"; exit 1; }
        echo "app.log is clean"
        """,
        r'''printf 'INFO start\n' > "$W/app.log"''',
        r'''printf 'INFO start\nERROR disk full\n' > "$W/app.log"''',
        r'''printf 'INFO start\n' > "$W/app.log"''',
        p="app.log is clean",
        f="errors in app.log",
    ),
    _i(
        "bang-inside-test-ternary",
        "hard",
        r"""[ ! -e "$W/maintenance.flag" ] && echo "not in maintenance" || { echo "maintenance flag set"; exit 1; }""",
        r'''touch "$W/other"''',
        r'''touch "$W/maintenance.flag"''',
        r'''rm -f "$W/maintenance.flag"''',
        p="not in maintenance",
        f="maintenance flag set",
    ),
    # ---------------------------------------------------------------- pipelines
    _i(
        "pipeline-awk-sort-grep-qx",
        "hard",
        r"""
        cat "$W/ps.txt" | awk '{print $2}' | sort -u | grep -qx nginx && echo "nginx running" \
          || { echo "nginx not running"; exit 1; }
        """,
        r'''printf '1 nginx\n2 php-fpm\n3 nginx\n' > "$W/ps.txt"''',
        r'''printf '2 php-fpm\n' > "$W/ps.txt"''',
        r'''printf '1 nginx\n2 php-fpm\n3 nginx\n' > "$W/ps.txt"''',
        p="nginx running",
        f="nginx not running",
    ),
    _i(
        "pipefail-tail",
        "hard",
        r"""
        set -o pipefail
        bash "$W/probe.sh" 2>&1 | tail -5 || { echo "probe failed"; exit 1; }
        echo "probe passed"
        """,
        r'''printf 'echo probing\nexit 0\n' > "$W/probe.sh"''',
        r'''printf 'echo probing\nexit 3\n' > "$W/probe.sh"''',
        r'''printf 'echo probing\nexit 0\n' > "$W/probe.sh"''',
        p="probe passed",
        f="probe failed",
    ),
    _i(
        "pipeline-ls-wc-l",
        "hard",
        r"""
        [ "$(ls "$W/workers" | wc -l)" -eq 3 ] && echo "3 workers" || { echo "expected 3 workers"; exit 1; }
        """,
        r'''mkdir "$W/workers" && touch "$W/workers/w1" "$W/workers/w2" "$W/workers/w3"''',
        r'''mkdir "$W/workers" && touch "$W/workers/w1" "$W/workers/w2"''',
        r'''mkdir -p "$W/workers" && touch "$W/workers/w1" "$W/workers/w2" "$W/workers/w3"''',
        p="3 workers",
        f="expected 3 workers",
    ),
    _i(
        "wc-l-redirect-arith",
        "hard",
        r"""
        lines=$(wc -l < "$W/hosts.txt")
        (( lines == 2 )) || { echo "hosts.txt has $lines lines, want 2"; exit 1; }
        echo "2 hosts listed"
        """,
        r'''printf 'web1\nweb2\n' > "$W/hosts.txt"''',
        r'''printf 'web1\n' > "$W/hosts.txt"''',
        r'''printf 'web1\nweb2\n' > "$W/hosts.txt"''',
        p="2 hosts listed",
        f="hosts.txt has 1 lines, want 2",
    ),
    _i(
        "find-pipe-grep-q",
        "hard",
        r"""
        find "$W/releases" -name '*.tar.gz' 2>/dev/null | grep -q . || { echo "no release archive"; exit 1; }
        echo "release archive found"
        """,
        r'''mkdir "$W/releases" && touch "$W/releases/app-1.0.tar.gz"''',
        r'''mkdir "$W/releases" && touch "$W/releases/NOTES.txt"''',
        r'''mkdir -p "$W/releases" && touch "$W/releases/app-1.0.tar.gz"''',
        p="release archive found",
        f="no release archive",
    ),
    # ---------------------------------------------------------------- functions
    _i(
        "function-and-chain-or-exit",
        "hard",
        r"""
        installed() { [ -x "$W/bin/$1" ] || { echo "6: $1 not installed"; return 1; }; }
        installed api && installed worker || exit 1
        echo "6: binaries installed"
        """,
        r"""
        mkdir "$W/bin"
        for b in api worker; do printf '#!/bin/sh\n' > "$W/bin/$b"; chmod +x "$W/bin/$b"; done
        """,
        r"""
        mkdir "$W/bin"
        printf '#!/bin/sh\n' > "$W/bin/api"; chmod +x "$W/bin/api"
        """,
        r"""
        mkdir -p "$W/bin"
        for b in api worker; do printf '#!/bin/sh\n' > "$W/bin/$b"; chmod +x "$W/bin/$b"; done
        """,
        p="6: binaries installed",
        f="6: worker not installed",
    ),
    # ---------------------------------------------------------------- heredocs: python / node
    _i(
        "python-heredoc-json-sys-exit",
        "hard",
        r"""
        python3 - "$W/config.json" <<'PY'
        import json, sys
        cfg = json.load(open(sys.argv[1]))
        if cfg.get("replicas", 0) < 2:
            print("7: replicas below 2")
            sys.exit(1)
        print("7: replicas ok")
        PY
        """,
        r'''echo '{"replicas": 3}' > "$W/config.json"''',
        r'''echo '{"replicas": 1}' > "$W/config.json"''',
        r'''echo '{"replicas": 3}' > "$W/config.json"''',
        p="7: replicas ok",
        f="7: replicas below 2",
    ),
    _i(
        "python-c-json-ternary",
        "hard",
        r"""
        python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(0 if d["status"] == "active" else 1)' \
          "$W/svc.json" && echo "service active" || { echo "service not active"; exit 1; }
        """,
        r'''echo '{"status": "active"}' > "$W/svc.json"''',
        r'''echo '{"status": "failed"}' > "$W/svc.json"''',
        r'''echo '{"status": "active"}' > "$W/svc.json"''',
        p="service active",
        f="service not active",
    ),
    _i(
        "node-e-process-exit",
        "hard",
        r"""
        node -e 'const p = require(process.argv[1]); if (!(p.scripts && p.scripts.start)) { console.log("no start script"); process.exit(1); }' \
          "$W/package.json" || exit 1
        echo "start script defined"
        """,
        r'''echo '{"scripts": {"start": "node server.js"}}' > "$W/package.json"''',
        r'''echo '{"scripts": {"test": "true"}}' > "$W/package.json"''',
        r'''echo '{"scripts": {"start": "node server.js"}}' > "$W/package.json"''',
        p="start script defined",
        f="no start script",
        tools=("node",),
    ),
    _i(
        "node-heredoc-process-exit",
        "hard",
        r"""
        node - "$W/deps.json" <<'JS'
        const fs = require("fs");
        const deps = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
        if (!deps.express) { console.log("express missing"); process.exit(1); }
        console.log("express " + deps.express + " pinned");
        JS
        """,
        r'''echo '{"express": "4.19.2"}' > "$W/deps.json"''',
        r'''echo '{"koa": "2.15.0"}' > "$W/deps.json"''',
        r'''echo '{"express": "4.19.2"}' > "$W/deps.json"''',
        p="express 4.19.2 pinned",
        f="express missing",
        tools=("node",),
    ),
    # ---------------------------------------------------------------- $(…), read, diff, cmp, stat, sqlite3, awk
    _i(
        "cmdsub-string-compare",
        "hard",
        r"""
        [ "$(cat "$W/owner")" = deploy ] && echo "owner is deploy" \
          || { echo "owner is $(cat "$W/owner" 2>/dev/null)"; exit 1; }
        """,
        r'''echo deploy > "$W/owner"''',
        r'''echo root > "$W/owner"''',
        r'''echo deploy > "$W/owner"''',
        p="owner is deploy",
        f="owner is root",
    ),
    _i(
        "read-from-file",
        "hard",
        r"""
        read -r version _ < "$W/VERSION" || { echo "no VERSION file"; exit 1; }
        [ "$version" = 2.4.1 ] || { echo "deployed $version, want 2.4.1"; exit 1; }
        echo "2.4.1 deployed"
        """,
        r'''echo "2.4.1 build-7" > "$W/VERSION"''',
        r'''echo "2.4.0 build-3" > "$W/VERSION"''',
        r'''echo "2.4.1 build-7" > "$W/VERSION"''',
        p="2.4.1 deployed",
        f="deployed 2.4.0, want 2.4.1",
    ),
    _i(
        "diff-q-ternary",
        "hard",
        r"""
        diff -q "$W/expected.conf" "$W/live.conf" >/dev/null && echo "config matches" \
          || { echo "config drifted"; exit 1; }
        """,
        r'''echo 'a=1' > "$W/expected.conf"; echo 'a=1' > "$W/live.conf"''',
        r'''echo 'a=1' > "$W/expected.conf"; echo 'a=2' > "$W/live.conf"''',
        r'''echo 'a=1' > "$W/expected.conf"; cp "$W/expected.conf" "$W/live.conf"''',
        p="config matches",
        f="config drifted",
    ),
    _i(
        "cmp-s-or-exit",
        "hard",
        r"""
        cmp -s "$W/a.bin" "$W/b.bin" || { echo "artifacts differ"; exit 1; }
        echo "artifacts identical"
        """,
        r'''printf 'AB' > "$W/a.bin"; printf 'AB' > "$W/b.bin"''',
        r'''printf 'AB' > "$W/a.bin"; printf 'AC' > "$W/b.bin"''',
        r'''printf 'AB' > "$W/a.bin"; printf 'AB' > "$W/b.bin"''',
        p="artifacts identical",
        f="artifacts differ",
    ),
    _i(
        "stat-size-arith",
        "hard",
        r"""
        size=$(stat -c %s "$W/backup.tar" 2>/dev/null || echo 0)
        (( size > 1024 )) || { echo "backup too small: $size bytes"; exit 1; }
        echo "backup is $size bytes"
        """,
        r'''head -c 4096 /dev/zero > "$W/backup.tar"''',
        r'''head -c 10 /dev/zero > "$W/backup.tar"''',
        r'''head -c 4096 /dev/zero > "$W/backup.tar"''',
        p="backup is 4096 bytes",
        f="backup too small: 10 bytes",
    ),
    _i(
        "sqlite3-count-grep-qx",
        "hard",
        r"""
        sqlite3 "$W/db" 'select count(*) from t' | grep -qx 3 && echo "3 rows in t" \
          || { echo "t does not have 3 rows"; exit 1; }
        """,
        r"""sqlite3 "$W/db" 'create table t(x); insert into t values (1), (2), (3);' """,
        r"""sqlite3 "$W/db" 'create table t(x); insert into t values (1), (2);' """,
        r"""rm -f "$W/db"; sqlite3 "$W/db" 'create table t(x); insert into t values (1), (2), (3);' """,
        p="3 rows in t",
        f="t does not have 3 rows",
        tools=("sqlite3",),
    ),
    _i(
        "awk-exit-status",
        "hard",
        r"""
        awk -F, '$2 > 90 { bad = 1 } END { exit bad }' "$W/disk.csv" || { echo "a disk is over 90% full"; exit 1; }
        echo "all disks below 90%"
        """,
        r'''printf 'sda,40\nsdb,85\n' > "$W/disk.csv"''',
        r'''printf 'sda,40\nsdb,95\n' > "$W/disk.csv"''',
        r'''printf 'sda,40\nsdb,85\n' > "$W/disk.csv"''',
        p="all disks below 90%",
        f="a disk is over 90% full",
    ),
    # ---------------------------------------------------------------- block structure
    _i(
        "exit-in-the-middle-labelled",
        "hard",
        r"""
        [ -d "$W/run" ] || exit 1
        echo "9a: run dir present"
        pid=$(cat "$W/run/app.pid" 2>/dev/null) || exit 1
        echo "9b: pid $pid recorded"
        """,
        r'''mkdir "$W/run" && echo 77 > "$W/run/app.pid"''',
        r'''mkdir "$W/run"''',
        r'''mkdir -p "$W/run" && echo 77 > "$W/run/app.pid"''',
        p="9b: pid 77 recorded",
        note="the broken world prints 9a's pass line, then exits 1 with no message",
    ),
    _i(
        "set-e-block",
        "hard",
        r"""
        set -e
        test -f "$W/schema.sql"
        grep -q 'CREATE TABLE users' "$W/schema.sql"
        echo "schema defines users"
        """,
        r'''echo 'CREATE TABLE users (id int);' > "$W/schema.sql"''',
        r'''echo 'CREATE TABLE orders (id int);' > "$W/schema.sql"''',
        r'''echo 'CREATE TABLE users (id int);' > "$W/schema.sql"''',
        p="schema defines users",
    ),
    _i(
        "labelled-2a-2b-trailing-assertion",
        "hard",
        r"""
        grep -q '^key=' "$W/app.ini" || { echo "2a: key missing"; exit 1; }
        echo "2a: key present"
        [ -f "$W/app.lock" ] && echo "2b: lock taken"
        """,
        r'''echo key=1 > "$W/app.ini"; touch "$W/app.lock"''',
        r'''echo key=1 > "$W/app.ini"''',
        r'''echo key=1 > "$W/app.ini"; touch "$W/app.lock"''',
        p="2b: lock taken",
        note="the broken world passes 2a and fails the trailing 2b assertion",
    ),
    _i(
        "variables-set-and-used-later",
        "hard",
        r"""
        CONF="$W/app.env"
        PORT_LINE=$(grep '^PORT=' "$CONF" || true)
        APP_PORT=${PORT_LINE#PORT=}
        [ -n "$APP_PORT" ] || { echo "PORT not set in app.env"; exit 1; }
        [ "$APP_PORT" -gt 1024 ] || { echo "PORT $APP_PORT is privileged"; exit 1; }
        echo "app port $APP_PORT"
        """,
        r'''printf 'NAME=x\nPORT=8080\n' > "$W/app.env"''',
        r'''printf 'NAME=x\nPORT=80\n' > "$W/app.env"''',
        r'''printf 'NAME=x\nPORT=8080\n' > "$W/app.env"''',
        p="app port 8080",
        f="PORT 80 is privileged",
    ),
    _i(
        "non-trailing-assertion-later-check-broken",
        "hard",
        _NON_TRAILING,
        r'''mkdir "$W/public"; touch "$W/robots.txt"''',
        r'''touch "$W/robots.txt"''',
        r'''mkdir -p "$W/public"; touch "$W/robots.txt"''',
        p="public dir present",
        f="public dir missing",
        lint=frozenset({"unenforced-check"}),
        note="lint is right about line 1 (unenforced) even though this world breaks the enforced check",
    ),
    # ---------------------------------------------------------------- soft: exit 0 either way
    _i(
        "non-trailing-assertion-broken",
        "soft",
        _NON_TRAILING,
        r'''mkdir "$W/public"; touch "$W/robots.txt"''',
        r'''mkdir "$W/public"''',
        r'''mkdir -p "$W/public"; touch "$W/robots.txt"''',
        p="robots.txt present",
        f=None,
        lint=frozenset({"unenforced-check"}),
        note="a non-trailing `cond && echo P` that is false: exit 0, P not printed (its alternative is silence)",
    ),
    _i(
        "soft-ternary-file",
        "soft",
        r'''[ -f "$W/cache.db" ] && echo "cache present" || echo "cache missing"''',
        r'''touch "$W/cache.db"''',
        r""":""",
        r'''touch "$W/cache.db"''',
        p="cache present",
        f="cache missing",
        lint=_AMBIGUOUS,
    ),
    _i(
        "soft-ternary-alarm-wording",
        "soft",
        r'''grep -qx ready "$W/status" && echo "worker ready" || echo "worker STILL STARTING — re-run later"''',
        r'''echo ready > "$W/status"''',
        r'''echo starting > "$W/status"''',
        r'''echo ready > "$W/status"''',
        p="worker ready",
        f="worker STILL STARTING — re-run later",
        lint=_AMBIGUOUS,
    ),
    _i(
        "soft-ternary-inconclusive-wording-labelled",
        "soft",
        r'''grep -q '"ok"' "$W/probe.json" && echo "3b: probe ok" || echo "3b: probe inconclusive — inspect by hand"''',
        r'''echo '["ok"]' > "$W/probe.json"''',
        r'''echo '["err"]' > "$W/probe.json"''',
        r'''echo '["ok"]' > "$W/probe.json"''',
        p="3b: probe ok",
        f="3b: probe inconclusive — inspect by hand",
        lint=_AMBIGUOUS,
    ),
    _i(
        "soft-ternary-wc-count",
        "soft",
        r'''[ "$(wc -l < "$W/queue")" -eq 0 ] && echo "queue drained" || echo "queue not drained yet"''',
        r''': > "$W/queue"''',
        r'''printf 'job-1\njob-2\n' > "$W/queue"''',
        r''': > "$W/queue"''',
        p="queue drained",
        f="queue not drained yet",
        lint=_AMBIGUOUS,
    ),
    _i(
        "soft-ternary-after-hard-check",
        "soft",
        r"""
        [ -d "$W/site" ] || { echo "site dir missing"; exit 1; }
        echo "site dir present"
        [ -f "$W/site/index.html" ] && echo "index present" || echo "index missing"
        """,
        r'''mkdir "$W/site"; touch "$W/site/index.html"''',
        r'''mkdir "$W/site"''',
        r'''mkdir -p "$W/site"; touch "$W/site/index.html"''',
        p="index present",
        f="index missing",
        note="the hard check passes in the broken world; only the soft one fails",
        lint=_AMBIGUOUS,
    ),
    # ---------------------------------------------------------------- preconditions
    _i(
        "precondition-trailing",
        "precondition",
        r"""
        FEATURE=$(cat "$W/feature" 2>/dev/null)
        [ -n "$FEATURE" ] && {
          [ -f "$W/$FEATURE.conf" ] || { echo "4: $FEATURE config missing"; exit 1; }
          echo "4: $FEATURE configured"
        }
        """,
        r'''echo search > "$W/feature"; touch "$W/search.conf"''',
        r'''echo search > "$W/feature"''',
        r'''[ -s "$W/feature" ] || echo search > "$W/feature"; touch "$W/$(cat "$W/feature").conf"''',
        na=r""":""",
        p="4: search configured",
        f="4: search config missing",
    ),
    _i(
        "precondition-not-trailing",
        "precondition",
        r"""
        BIND=$(cat "$W/bind" 2>/dev/null)
        [ -n "$BIND" ] && {
          grep -qx "$BIND" "$W/bindings" || { echo "binding $BIND missing"; exit 1; }
          echo "binding $BIND present"
        }
        true  # a false guard is nothing to check
        """,
        r'''echo kv-cache > "$W/bind"; echo kv-cache > "$W/bindings"''',
        r'''echo kv-cache > "$W/bind"; echo other > "$W/bindings"''',
        r'''[ -s "$W/bind" ] || echo kv-cache > "$W/bind"; cat "$W/bind" >> "$W/bindings"''',
        na=r""":""",
        p="binding kv-cache present",
        f="binding kv-cache missing",
    ),
    _i(
        "precondition-two-guards-in-sequence",
        "precondition",
        r"""
        KV=$(cat "$W/kv" 2>/dev/null); DB=$(cat "$W/dbname" 2>/dev/null)
        [ -n "$KV" ] && { grep -qx "$KV" "$W/bound" || { echo "5a: kv $KV not bound"; exit 1; }; echo "5a: kv $KV bound"; }
        [ -n "$DB" ] && { grep -qx "$DB" "$W/bound" || { echo "5b: db $DB not bound"; exit 1; }; echo "5b: db $DB bound"; }
        """,
        r'''echo cache > "$W/kv"; echo main > "$W/dbname"; printf 'cache\nmain\n' > "$W/bound"''',
        r'''echo cache > "$W/kv"; echo main > "$W/dbname"; printf 'main\n' > "$W/bound"''',
        r"""
        [ -s "$W/kv" ] || echo cache > "$W/kv"
        [ -s "$W/dbname" ] || echo main > "$W/dbname"
        cat "$W/kv" "$W/dbname" > "$W/bound"
        """,
        na=r""":""",
        p="5b: db main bound",
        f="5a: kv cache not bound",
    ),
    _i(
        "precondition-if-without-else",
        "precondition",
        r"""
        if [ -n "$(cat "$W/replica_of" 2>/dev/null)" ]; then
          grep -qx streaming "$W/replication" || { echo "replica not streaming"; exit 1; }
          echo "replica streaming"
        fi
        """,
        r'''echo db1 > "$W/replica_of"; echo streaming > "$W/replication"''',
        r'''echo db1 > "$W/replica_of"; echo stopped > "$W/replication"''',
        r'''[ -s "$W/replica_of" ] || echo db1 > "$W/replica_of"; echo streaming > "$W/replication"''',
        na=r""":""",
        p="replica streaming",
        f="replica not streaming",
        note="`if cond; then checks; fi` is the `cond && { checks }` guard written as an if",
    ),
)

BY_NAME: dict[str, Idiom] = {i.name: i for i in IDIOMS}


def _validate() -> None:
    assert len(BY_NAME) == len(IDIOMS), "idiom names must be unique"
    for i in IDIOMS:
        assert (i.na is not None) == (i.kind == "precondition"), i.name
        if i.kind == "soft":
            assert i.p is not None, f"{i.name}: a soft idiom names its pass line"
            assert i.lint, f"{i.name}: a check that exits 0 either way is worth a lint finding"
        assert i.lint <= LINT_CODES, i.name
        for var in ("W", "CTR", "HTTP_PORT"):
            assert f"\n{var}=" not in "\n" + i.block, f"{i.name} assigns ${var}"
        assert i.server == ("HTTP_PORT" in i.block), i.name
        for var in re.findall(r"\b([A-Za-z_][A-Za-z0-9_]*)=", i.block):
            assert not _SECRETISH.search(var), f"{i.name}: ${var} looks like a secret to Director"


_validate()

"""Worlds, a loopback HTTP server, and the small plans the corpus harness runs through Director.

One plan per idiom (never several idioms in one plan: a failed section stops the run, so sharing a plan
would hide the idioms after it). The full plan is

- §0 exporting `W` (the world), `CTR` (act counters, outside the world) and `HTTP_PORT`;
- `## 1. Thing  🟢`: act = `echo act >> "$CTR/acts"` + the idiom's `fix`, verify = the idiom;
- `## 2. Contract  ✔`: the idiom again;
- `## Live State` with a check row `thing holds` fed by §1's verify title;
- `## Teardown (…)  💥`: act = `echo td >> "$CTR/td"` + `fix`, verify = the idiom.

The ✔-only plan is §0 and `## 1. Contract  ✔` (the idiom), with a check row `contract holds`.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

from tests.verify_corpus.idioms import Idiom, World

HEADER = """\
# Corpus idiom `{name}`

> Self-executing Markdown written by `tests/test_verify_corpus.py`: one verify idiom, run as a section
> verify, a contract check and a teardown observation.

## 🤖 Director prompt

You are the Director. Execute this plan:
- Observe-before-act; verify each step before advancing (verified frontier)
- Stop at every 🔴 GATE and 💥 for human "go"

```
Legend  🟢 create · 🟡 config · 🔴 GATE (human go) · 💥 destructive (human go) · ⏳ wait · ✔ verify
```

## 0. Variables

```bash
export W="{w}"
export CTR="{ctr}"
export HTTP_PORT="{port}"
mkdir -p "$CTR"
```
"""

THING = """\
## 1. Thing  🟢

```bash
echo act >> "$CTR/acts"
{fix}
```
```bash
# ✔ thing holds
{block}
```

## 2. Contract  ✔

```bash
# ✔ contract holds
{block}
```
"""

CONTRACT_ONLY = """\
## 1. Contract  ✔

```bash
# ✔ contract holds
{block}
```
"""

LIVE_STATE = """\
## Live State

```yaml
status:        not-created
last_action:   —
last_verified: —
```

| ✔ check        | expected | observed | result |
|----------------|----------|----------|--------|
| {row} | holds    | —        | —      |
"""

TEARDOWN = """\
## Teardown (observe-first, resumable)  💥

```bash
echo td >> "$CTR/td"
{fix}
```
```bash
# ✔ teardown observation
{block}
```
"""


def full_plan(idiom: Idiom, w: Path, ctr: Path, port: int | None) -> str:
    return life_plan(idiom.name, idiom.block, idiom.fix, w, ctr, port)


def life_plan(name: str, block: str, fix: str, w: Path, ctr: Path, port: int | None) -> str:
    """The full plan of one check: §1 acts with `fix` and verifies with `block`, §2 checks it, teardown."""
    head = HEADER.format(name=name, w=w, ctr=ctr, port=port or "")
    return "\n".join(
        [
            head,
            THING.format(fix=fix, block=block),
            LIVE_STATE.format(row="thing holds"),
            TEARDOWN.format(fix=fix, block=block),
        ]
    )


def contract_plan(idiom: Idiom, w: Path, ctr: Path, port: int | None) -> str:
    head = HEADER.format(name=idiom.name, w=w, ctr=ctr, port=port or "")
    return "\n".join([head, CONTRACT_ONLY.format(block=idiom.block), LIVE_STATE.format(row="contract holds")])


def lint_plan(idioms: list[Idiom]) -> tuple[str, dict[str, tuple[int, int]]]:
    """One plan with every idiom as its own 🟢 section; the 1-based line span of each idiom's section."""
    parts = [HEADER.format(name="lint", w="/nonexistent/w", ctr="/nonexistent/ctr", port="")]
    spans: dict[str, tuple[int, int]] = {}
    line = parts[0].count("\n") + 2
    for n, idiom in enumerate(idioms, start=1):
        text = (
            f"## {n}. {idiom.name}  🟢\n\n```bash\n{idiom.fix}\n```\n"
            f"```bash\n# ✔ {idiom.name} holds\n{idiom.block}\n```\n"
        )
        spans[idiom.name] = (line, line + text.count("\n") - 1)
        parts.append(text)
        line += text.count("\n") + 1
    parts.append(LIVE_STATE.format(row="nothing fed"))
    parts.append(
        TEARDOWN.format(fix=":", block='[ -n "$W" ] || { echo "no world"; exit 1; }\necho "world named"')
    )
    return "\n".join(parts), spans


def check_row(plan_text: str, row: str) -> str:
    """The result cell of a Live State check-table row ('' when the row is not there)."""
    for ln in plan_text.splitlines():
        cells = [c.strip() for c in ln.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0] == row:
            return cells[3]
    return ""


# ---------------------------------------------------------------------------------------------- worlds


def make_world(idiom: Idiom, world: World | str, w: Path, port: int | None) -> None:
    """Empty `w` (keeping the directory: the HTTP server serves it by path) and build a world in it."""
    w.mkdir(parents=True, exist_ok=True)
    for p in w.iterdir():
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink()
    script = idiom.fix if world == "fix" else idiom.worlds()[world]  # type: ignore[index]
    r = subprocess.run(
        ["bash", "-c", "set -e\n" + script],
        env=world_env(w, port),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert r.returncode == 0, f"{idiom.name}: the {world} world could not be built: {r.stderr}"


def world_env(w: Path, port: int | None) -> dict[str, str]:
    """The environment a world script or a block runs in under plain bash."""
    env = {k: v for k, v in os.environ.items() if k not in ("W", "CTR", "HTTP_PORT")}
    env.update({"W": str(w), "LC_ALL": "C.UTF-8"})
    if port is not None:
        env["HTTP_PORT"] = str(port)
    return env


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def http_server(root: Path) -> Iterator[int]:
    """A loopback HTTP server (a thread of this process) serving the files of `root`; yields its port."""
    handler = functools.partial(_Quiet, directory=str(root))
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=srv.serve_forever, args=(0.05,), name=f"corpus-http-{root.name}", daemon=True)
    t.start()
    try:
        yield srv.server_address[1]
    finally:
        srv.shutdown()
        srv.server_close()
        t.join(timeout=5)


def lint_flags(plan_text: str) -> list[str]:
    """`--ignore-lint-errors` when the plan's only lint errors are `gated-verify-acts` (a mined check that
    removes or chmods something runs, in these life plans, as the verify of the 💥 teardown; `apply` rightly
    refuses such a plan, and these tests judge verdicts, not lint — `tests/test_lint.py` does); no flag when
    lint finds no error. Any other error fails the test: the harness plan itself would be wrong."""
    from director.plan import lint
    from director.plan.lint import Severity
    from director.plan.parse import parse

    errors = {f.code for f in lint.lint(parse(plan_text)) if f.severity is Severity.ERROR}
    assert errors <= {"gated-verify-acts"}, f"the life plan has lint errors: {sorted(errors)}"
    return ["--ignore-lint-errors"] if errors else []

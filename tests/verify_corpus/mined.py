"""Verify idioms mined from public repositories, each with its provenance and the worlds that decide its truth.

A second corpus beside `idioms.py` (the 62 idioms the team wrote): here every check is one a real author
wrote in a public repository (a Dockerfile `HEALTHCHECK`, a CI smoke test, an install or deploy script, a
runbook), found with the code search, and adapted only as far as running it against a world needs: the
paths, URLs, service names and commands it probes are moved into the world directory `$W` (or the loopback
HTTP server on `$HTTP_PORT`); its *shape* — branches, exits, functions, the language and symbols of its
messages — is kept as the author wrote it. `source` names the repository and path it came from.

Conventions (the same as `idioms.py`, which explains them at length):
- `$W` is the world directory (absolute, empty at the start of each world); `$HTTP_PORT` is set when
  `server` is true (a loopback HTTP server serving the files of `$W`).
- `held` and `broken` are bash that build a world in the empty `$W`; `act` turns *any* world (also `held`
  itself) into one where the check holds: Director runs it as the act of the idiom's section and of its
  teardown, so it exits 0 and is idempotent.
- The block never assigns `W`, `CTR` or `HTTP_PORT`, sets every variable it reads before reading it, names
  no variable that looks secret, and never reads stdin.
- `kind` says how the truth shows under plain bash:
  `exit`: the block exits 0 in `held` and non-zero in `broken`;
  `message`: the block exits 0 in **both** worlds; only what it prints differs;
  `failure-branch`: an `if …; then …; exit 1; fi` (or a `cond && … && exit 1` chain) whose *failure* branch
  is the one with the message: exit 0 in `held` (often silent), non-zero in `broken`.
- `p` is a line (whole, stripped) the block prints in `held` and not in `broken`; `f` one it prints in
  `broken` and not in `held`. At least one of them is given; for `message` both are. These words are for the
  *test's* truth only: Director never sees them.
- `lang`: the language of its messages, an ISO 639-1 code (`en`, `de`, `fr`, …) or `symbols` when they are
  marks only (`✔`/`✗`, `[OK]`/`[!!]`…).

Two mined checks were left out because no reading without words can tell their worlds apart: the same
messages and exits run in both, and only the *text* a command prints differs (whyNat/hello-world-printer-
app2's Makefile smoke test prints what `curl` fetched, a greeting or a 404 page, exit 0 either way;
suxin2017/ng-m's nginx check prints `$?`, 0 or 1, then a malformed `test` that takes the same branch in
both worlds). Director judges by exit status, structure and the path a run takes; a check that speaks only
through the words or values it prints is out of its reach by design (docs/verify-semantics.md).
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from typing import Literal

MinedKind = Literal["exit", "message", "failure-branch"]
MinedWorld = Literal["held", "broken"]

_SECRETISH = re.compile(r"TOKEN|SECRET|PASSW|APIKEY|CREDENTIAL|_KEY$", re.IGNORECASE)
_SOURCE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+:\S.*$")


def sh(text: str) -> str:
    """Bash text written indented in this file, as an author would write it in a fence."""
    return textwrap.dedent(text).strip("\n")


@dataclass(frozen=True)
class Mined:
    name: str
    source: str  # "owner/repo:path/in/repo" where the check was found
    kind: MinedKind
    lang: str
    block: str
    held: str
    broken: str
    act: str
    p: str | None = None
    f: str | None = None
    server: bool = False
    tools: tuple[str, ...] = ()
    note: str = ""  # what was adapted, when more than paths/URLs

    def worlds(self) -> dict[MinedWorld, str]:
        return {"held": self.held, "broken": self.broken}


def m(
    name: str, source: str, kind: MinedKind, lang: str, block: str, held: str, broken: str, act: str, **kw: object
) -> Mined:
    """A mined idiom, its bash fields dedented."""
    return Mined(name, source, kind, lang, sh(block), sh(held), sh(broken), sh(act), **kw)  # type: ignore[arg-type]


def validate(idioms: tuple[Mined, ...]) -> None:
    """The conventions above, checked on import (the truth itself is checked under bash by the tests)."""
    names = [i.name for i in idioms]
    dup = {n for n in names if names.count(n) > 1}
    assert not dup, f"mined idiom names must be unique: {sorted(dup)}"
    for i in idioms:
        assert _SOURCE.match(i.source), f"{i.name}: source must be 'owner/repo:path', got {i.source!r}"
        assert i.p is not None or i.f is not None, f"{i.name}: name a line of held (p) or broken (f)"
        if i.kind == "message":
            assert i.p is not None and i.f is not None, f"{i.name}: a message check names both lines"
        assert re.fullmatch(r"[a-z]{2}|symbols", i.lang), f"{i.name}: lang {i.lang!r}"
        for var in ("W", "CTR", "HTTP_PORT"):
            assert not re.search(rf"(?m)^\s*(export\s+)?{var}=", i.block), f"{i.name} assigns ${var}"
        assert i.server == ("HTTP_PORT" in i.block), f"{i.name}: server= must match the use of $HTTP_PORT"
        for var in re.findall(r"\b([A-Za-z_][A-Za-z0-9_]*)=", i.block):
            assert not _SECRETISH.search(var), f"{i.name}: ${var} looks like a secret to Director"


def corpus() -> tuple[Mined, ...]:
    """Every mined idiom, validated together: `mined_a` and `mined_b` (the corpus the contrast rules were
    built against) and `mined_c` (16 checks mined afterwards, from repositories in neither, as an
    out-of-sample test of those rules: all 16 passed their whole life the first time they ran) and `mined_d`
    (50 more, mined for issue 34 from repositories in none of the others; their first score is in
    docs/verify-semantics.md)."""
    from tests.verify_corpus import mined_a, mined_b, mined_c, mined_d

    out = (*mined_a.IDIOMS, *mined_b.IDIOMS, *mined_c.IDIOMS, *mined_d.IDIOMS)
    validate(out)
    return out

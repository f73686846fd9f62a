"""CI conventions in one place: whether this is CI, and GitHub Actions' workflow commands and job summary.

`CI` counts only when it says yes (`true`, `1`, `yes`): GitHub, GitLab and most runners set `CI=true`, and
`CI=false` / `CI=0` / an empty value is how a user says "not CI". `GITHUB_ACTIONS=true` turns on
annotations (`::error file=…,line=…::…`, shown on the pull request's diff) and the Markdown summary
appended to `$GITHUB_STEP_SUMMARY` (the job's summary page). Both are documented in docs/ci.md.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Literal

Level = Literal["error", "warning", "notice"]

_YES = frozenset({"1", "true", "yes", "on"})


def truthy(value: str | None) -> bool:
    """An environment flag's yes: `1`, `true`, `yes`, `on` (any case); anything else is no."""
    return value is not None and value.strip().lower() in _YES


def in_ci(env: Mapping[str, str] | None = None) -> bool:
    """Whether this runs in CI (`CI=true`/`1`); `CI=false`, `CI=0` and an empty `CI` do not count."""
    return truthy((os.environ if env is None else env).get("CI"))


def github_actions(env: Mapping[str, str] | None = None) -> bool:
    """Whether this runs as a GitHub Actions step (`GITHUB_ACTIONS=true`)."""
    return truthy((os.environ if env is None else env).get("GITHUB_ACTIONS"))


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(
    level: Level, message: str, *, file: str | None = None, line: int | None = None, title: str | None = None
) -> str:
    """One workflow command line: `::error file=plan.md,line=12,title=…::message` (values escaped)."""
    props = []
    if file:
        props.append(f"file={_escape_property(file)}")
    if line:
        props.append(f"line={line}")
    if title:
        props.append(f"title={_escape_property(title)}")
    head = f"::{level} {','.join(props)}" if props else f"::{level}"
    return f"{head}::{_escape_data(message)}"


def append_summary(markdown: str, env: Mapping[str, str] | None = None) -> bool:
    """Append Markdown to the job summary (`$GITHUB_STEP_SUMMARY`); False when there is none."""
    path = (os.environ if env is None else env).get("GITHUB_STEP_SUMMARY")
    if not path:
        return False
    with open(path, "a", encoding="utf-8") as f:
        f.write(markdown.rstrip("\n") + "\n\n")
    return True


def md_cell(text: object) -> str:
    """A value for a Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|") if text is not None else ""

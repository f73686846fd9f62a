"""The repository's plans as committed, for every test that reads one.

A user's run writes Live State back into the plan it ran: the README's main job rewrites the tracked
`plans/workflow.cloudflare.md`, an example run rewrites its `plans/examples/*.md`. Tests must not depend on
that, so none reads the working tree's `plans/`: they read the byte-identical copies under
`tests/pristine/plans/` (same relative layout, so `cwd=PRISTINE` and `plans/workflow.cloudflare.md` name
what a user names). `tests/test_pristine.py` keeps each copy equal to the committed file (`git show HEAD:…`)
and finds any test that reaches for the working tree's plans again.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: A directory laid out like the repository's root, holding only `plans/` as committed.
PRISTINE = Path(__file__).resolve().parent / "pristine"
#: The seed plan as committed.
SEED = PRISTINE / "plans" / "workflow.cloudflare.md"
#: The example plans as committed.
EXAMPLES = PRISTINE / "plans" / "examples"


def every_plan() -> list[Path]:
    """The seed and the examples (as committed), in path order."""
    return sorted([*PRISTINE.glob("plans/*.md"), *EXAMPLES.glob("*.md")])

"""`director docs [PAGE]`: the documentation that ships inside the package (`director/docs/`, the
repository's `docs/`), so that an installed copy has the pages its `--help` names."""

from __future__ import annotations

import sys
from importlib import resources

from director.errors import ExitCode, UsageError


def _pages() -> dict[str, str]:
    """Page name (`families`) → its text, every `*.md` shipped."""
    root = resources.files("director").joinpath("docs")
    if not root.is_dir():
        return {}
    return {
        f.name.removesuffix(".md"): f.read_text(encoding="utf-8")
        for f in sorted(root.iterdir(), key=lambda f: f.name)
        if f.name.endswith(".md")
    }


def docs_command(page: str | None) -> ExitCode:
    """Every page with its title, or one page's Markdown."""
    pages = _pages()
    if not pages:
        raise UsageError("this copy of Director has no documentation installed (director/docs/ is missing)")
    if page is None:
        width = max(len(n) for n in pages)
        for name, text in pages.items():
            title = next((ln.lstrip("# ").strip() for ln in text.splitlines() if ln.startswith("# ")), "")
            sys.stdout.write(f"{name.ljust(width)}  {title}\n")
        return ExitCode.OK
    name = page.removeprefix("docs/").removesuffix(".md")
    if name not in pages:
        raise UsageError(f"PAGE: no page {page!r} (pages: {', '.join(pages)})")
    sys.stdout.write(pages[name])
    return ExitCode.OK

"""The plain console (logs, pipes, `--plain`, `NO_COLOR`) without importing rich until something needs it.

A plain run prints plain lines -- the run's own lines, its summary, how it ended -- and rich's import is
about 22 ms of every start-up. `PlainConsole` writes a plain string (no markup to read, no control
character) straight to its stream, exactly as rich's plain console would print it, and hands everything
else (markup, `Text`, tables, any other attribute) to that rich console, created on first use.
"""

from __future__ import annotations

import re
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

# What rich would change in a string it prints: a control character other than the newline (it strips or
# expands them). A `[`, which may open markup, is looked for only when markup is read.
_NOT_AS_IS = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")


class PlainConsole:
    """A rich plain console (no colour, no terminal, no wrapping, no emoji codes) made when first needed."""

    is_terminal = False
    color_system = None

    def __init__(self, file: IO[str]) -> None:
        self.file = file
        self._console: Console | None = None

    def rich(self) -> Console:
        """The rich console this one stands for (`make_console`'s plain configuration)."""
        if self._console is None:
            from rich.console import Console

            self._console = Console(
                file=self.file, no_color=True, force_terminal=False, highlight=False, emoji=False,
                width=max(100, Console(file=self.file).width), color_system=None, soft_wrap=True,
            )  # fmt: skip
        return self._console

    def print(self, *objects: Any, markup: bool | None = None, **options: Any) -> None:
        """Print as rich would; a plain string with nothing for rich to read is written as it is."""
        if (
            len(objects) == 1
            and type(objects[0]) is str
            and not (options.keys() - {"highlight", "soft_wrap"})
            and options.get("soft_wrap") is not False
            and not _NOT_AS_IS.search(objects[0])
            and (markup is False or "[" not in objects[0])
        ):
            self.file.write(objects[0] + "\n")
            return
        self.rich().print(*objects, markup=markup, **options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.rich(), name)

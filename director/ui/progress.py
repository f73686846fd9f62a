"""What a target says while it prepares (`targets.base.Progress`), on the console.

A message is a line of its own; an `ongoing` one (`installing wrangler 4.86.0 … 7 s`) is a status that the
next message replaces: at a terminal it is rewritten in place on one line, in plain output and logs it is
not written at all (the lines before and after it say what happened and how long it took).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console


class ProgressLine:
    """A `Progress` callback printing to `console`; `close()` ends a status left on screen."""

    def __init__(self, console: Console) -> None:
        self._console = console
        self._in_place = bool(console.is_terminal)  # the plain console (pipes, --plain, NO_COLOR) is not
        self._status_shown = False

    def __call__(self, message: str, /, *, ongoing: bool = False) -> None:
        if ongoing:
            if self._in_place:
                from rich.text import Text

                self._erase()
                self._console.print(
                    Text(message, style="dim"), end="", no_wrap=True, overflow="ellipsis", crop=True
                )
                self._status_shown = True
            return
        self.close()
        if self._in_place:
            from rich.text import Text

            self._console.print(Text(message, style="dim"))
        else:
            self._console.print(message, markup=False)

    def close(self) -> None:
        """Erase a status still on screen, so that what is printed next starts a clean line."""
        if self._status_shown:
            self._erase()
            self._status_shown = False

    def _erase(self) -> None:
        if not self._status_shown:
            return
        from rich.control import Control
        from rich.segment import ControlType

        self._console.control(Control.move_to_column(0), Control((ControlType.ERASE_IN_LINE, 2)))

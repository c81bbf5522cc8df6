"""How a command's `--help` is laid out: click's plain layout, which wraps every line between words.

typer's rich layout sets a command's options in a table of six columns (name, short name, the `--no-`
names, type, help) that rich narrows by cutting cells short: at 80 columns `moot run --help` showed
"--stop-on-repetit…" and cut the `-p` syntax. Click's layout puts the names first and wraps the help under
them, so nothing is cut at any width. The top-level command list keeps typer's panel, which wraps too.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperCommand


class PlainHelpCommand(TyperCommand):
    """A typer command whose `--help` (and usage error) is click's plain layout."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rich_markup_mode = None

"""Whether a table fits the terminal: a module of its own so that `moot list` and `moot models` lay out their
tables without importing the debate renderer and all it draws on (a fast start)."""

from __future__ import annotations

import io

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text


def fits(table: Table, console: Console) -> bool:
    """Whether `table` is drawn at the console's width with no cell cut short. Drawn to find out: rich narrows
    the widest wrapping columns first, whatever their longest word, and marks each cut with an ellipsis."""
    # Its columns' least widths (a measurement is capped at the width it is given: measured unbounded).
    if Measurement.get(console, console.options.update_width(10_000), table).minimum > console.width:
        return False
    file = io.StringIO()
    Console(file=file, width=console.width, color_system=None, legacy_windows=False).print(table)
    texts = [str(c.header) for c in table.columns] + [str(cell) for c in table.columns for cell in c.cells]
    return file.getvalue().count("…") <= sum(text.count("…") for text in texts)


def stacked(rows: list[tuple[str, str, str]]) -> Table:
    """The narrow layout of a listing that does not fit side by side: each name with its description beside it
    and its facts dimmed under that, wrapped, never cut. Rows are (name, description, facts)."""
    table = Table(box=None, show_header=False, padding=(0, 2, 1, 0))
    table.add_column("name", no_wrap=True, style="bold")
    table.add_column("what")
    for name, description, facts in rows:
        table.add_row(name, Text.assemble(description, "\n", (facts, "dim")))
    return table

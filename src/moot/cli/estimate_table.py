"""How the CLI shows an estimate (`moot run --estimate`, `moot arena --estimate`): one table of calls, tokens and
cost per model, low to high, and the note saying what low and high mean."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from moot.engine import Estimate


def estimate_table(est: Estimate, title: str) -> Table:
    from moot.engine import estimate_lines
    from moot.export.formatting import money

    table = Table(title=title)
    for heading in ("Model", "Calls", "Input tokens", "Output tokens", "Cost (USD)"):
        table.add_column(heading, justify="left" if heading == "Model" else "right")
    rows = estimate_lines(est, lambda c: "unknown" if c is None else money(c))
    for row in rows[:-1]:
        table.add_row(*row)
    table.add_row(*rows[-1], style="bold")
    return table


def estimate_note(how: str) -> Text:
    """`how`: what was run on the stand-ins, in a sentence."""
    from moot.engine import HIGH_SHARE, LOW_SHARE

    return Text(
        f"Low: replies of {LOW_SHARE:.0%} of each speaker's max_tokens; high: {HIGH_SHARE:.0%}. {how} "
        "No model was called.",
        style="dim",
    )

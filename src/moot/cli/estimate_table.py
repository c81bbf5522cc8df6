"""How the CLI shows an estimate (`moot run --estimate`, `moot arena --estimate`): one table of calls, tokens and
cost per model, low to high, under a title line, and the note saying what low and high mean."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Group
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from moot.engine import Estimate


def estimate_table(est: Estimate, title: str, groups: Sequence[tuple[str, Sequence[str]]] = ()) -> Group:
    """The title on a line of its own (a table's own title wraps at the table's width, often narrower), then
    the table. `groups`: (heading, models) in order, each group's rows under its heading (an arena's
    contenders, then its judges); models in no group, and every model when there are no groups, follow."""
    from moot.engine import estimate_lines
    from moot.export.formatting import money

    table = Table()
    for heading in ("Model", "Calls", "Input tokens", "Output tokens", "Cost (USD)"):
        table.add_column(heading, justify="left" if heading == "Model" else "right")
    rows = estimate_lines(est, lambda c: "unknown" if c is None else money(c))
    by_model = {row[0]: row for row in rows[:-1]}
    shown: set[str] = set()
    for heading, models in groups:
        members = [m for m in dict.fromkeys(models) if m in by_model and m not in shown]
        if not members:
            continue
        table.add_row(Text(heading, style="bold"))
        for i, model in enumerate(members):
            table.add_row(*by_model[model], end_section=i == len(members) - 1)
            shown.add(model)
    for row in rows[:-1]:
        if row[0] not in shown:
            table.add_row(*row)
    table.add_row(*rows[-1], style="bold")
    return Group(Text(title, style="bold"), table)


def estimate_note(how: str) -> Text:
    """`how`: what was run on the stand-ins, in a sentence."""
    from moot.engine import HIGH_SHARE, LOW_SHARE

    return Text(
        f"Low: replies of {LOW_SHARE:.0%} of each speaker's max_tokens; high: {HIGH_SHARE:.0%}. {how} "
        "No model was called.",
        style="dim",
    )

"""`moot formats`: the debate formats `--format` accepts, and the phases of their rounds."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from moot.domain.config import MAX_ROUNDS, DebateConfig
from moot.protocols import PROTOCOLS

_DEFAULT_ROUNDS: int = DebateConfig.model_fields["rounds"].default


def formats_command(
    rounds: Annotated[
        int,
        typer.Option(
            "--rounds", "-r", min=1, max=MAX_ROUNDS, help="Show the phases of a debate this many rounds long."
        ),
    ] = _DEFAULT_ROUNDS,
) -> None:
    """The debate formats and the phases their rounds go through."""
    table = Table()
    for col in ("format", "description"):
        table.add_column(col, no_wrap=col == "format")
    for col in ("phase", "rounds"):
        table.add_column(col, no_wrap=True)
    table.add_column("what speakers do")
    for name, protocol in PROTOCOLS.items():
        for i, phase in enumerate(protocol.phases(rounds)):
            table.add_row(
                name if i == 0 else "",
                Text(protocol.description if i == 0 else ""),
                phase.name,
                phase.rounds,
                Text(phase.description),
            )
        table.add_section()
    out = Console(highlight=False)
    out.print(table)
    out.print(f"Phases of a {rounds}-round debate; -r N shows another length.")
    out.print("Choose a format with: moot run TOPIC --format NAME")

"""Options several commands declare. A module of its own, light to import: `moot --help` reads every command's
options, and must not load what the commands use to run (a fast start)."""

from __future__ import annotations

from typing import Annotated

import typer

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db", help="Database file or SQLAlchemy URL (default: $MOOT_DATABASE_URL, else $MOOT_HOME/moot.db)"
    ),
]
QueueUrlOption = Annotated[
    str | None,
    typer.Option(
        "--queue-url",
        help="The queue: an SQLite file or a postgresql:// URL (default: $MOOT_QUEUE_URL, else beside the store).",
    ),
]

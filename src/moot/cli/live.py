"""What `moot run` and `moot resume` share: a running debate drawn live, and errors turned into exit codes."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Coroutine
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from moot.cli.render import DebateRenderer
from moot.domain.events import DebateFailed, DebateInterrupted, Event
from moot.errors import MootError, UserError

T = TypeVar("T")
# Errors are one line each, whatever the terminal width: scripts and people both read them as lines.
err = Console(stderr=True, highlight=False, soft_wrap=True)
DbOption = Annotated[
    str | None,
    typer.Option(
        "--db", help="Database file or SQLAlchemy URL (default: $MOOT_DATABASE_URL, else $MOOT_HOME/moot.db)"
    ),
]


def run_command(coro: Coroutine[Any, Any, T]) -> T:
    """Run a command's coroutine; user mistakes exit 2, run failures 1, Ctrl-C 130, all as one line."""
    try:
        return asyncio.run(coro)
    except UserError as exc:
        err.print(f"[bold red]error:[/bold red] {escape(str(exc))}")
        raise typer.Exit(2) from None
    except MootError as exc:
        err.print(f"[bold red]failed:[/bold red] {escape(str(exc))}")
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/yellow]")
        raise typer.Exit(130) from None


async def follow(events: AsyncIterator[Event], renderer: DebateRenderer, *, json_lines: bool = False) -> int:
    """Draw a debate's events as they come (or print them as JSON lines); the exit code its end means.

    Ctrl-C cancels the consumer, which makes the engine record `debate_interrupted` before `run_command` exits.
    """
    last: Event | None = None
    try:
        async for event in events:
            last = event
            if json_lines:
                sys.stdout.write(event.model_dump_json() + "\n")
                sys.stdout.flush()
            else:
                renderer.handle(event)
    finally:
        renderer.close()
    if isinstance(last, DebateFailed):
        return 1
    if isinstance(last, DebateInterrupted):
        return 130
    return 0

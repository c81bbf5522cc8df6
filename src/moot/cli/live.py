"""What `moot run` and `moot resume` share: a running debate drawn live, and errors turned into exit codes."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Coroutine
from typing import Annotated, Any, TypeVar

import typer
from rich.text import Text

from moot.cli.render import DebateRenderer
from moot.cli.safe_text import SafeConsole, terminal_safe_json
from moot.domain.events import DebateFailed, DebateInterrupted, Event
from moot.errors import MootError, UserError

T = TypeVar("T")
# Errors are one line each, whatever the terminal width: scripts and people both read them as lines.
err = SafeConsole(stderr=True, soft_wrap=True)
DbOption = Annotated[
    str | None,
    typer.Option(
        "--db", help="Database file or SQLAlchemy URL (default: $MOOT_DATABASE_URL, else $MOOT_HOME/moot.db)"
    ),
]


def print_error(message: str, *, label: str = "error", style: str = "bold red") -> None:
    """One line on stderr, `label: message`; the message is text, never markup."""
    err.print(Text.assemble((f"{label}:", style), " ", message) if message else Text(label, style=style))


def run_command(coro: Coroutine[Any, Any, T]) -> T:
    """Run a command's coroutine; user mistakes exit 2, run failures 1, Ctrl-C 130, all as one line."""
    try:
        return asyncio.run(coro)
    except UserError as exc:
        print_error(str(exc))
        raise typer.Exit(2) from None
    except MootError as exc:
        print_error(str(exc), label="failed")
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        print_error("", label="interrupted", style="yellow")
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
                sys.stdout.write(terminal_safe_json(event.model_dump_json()) + "\n")
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

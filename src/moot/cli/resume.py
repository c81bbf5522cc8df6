"""`moot resume`: carry a stopped or crashed debate on from its stored log, drawn live as `moot run` draws it."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Annotated

import typer

from moot.cli.live import DbOption, confirm, follow_pauses, run_command
from moot.cli.people import exit_code, people_for
from moot.cli.render import DebateRenderer
from moot.cli.safe_text import SafeConsole
from moot.domain.events import Event
from moot.domain.state import fold
from moot.errors import StateError
from moot.store import EventStore, db_url_from

REASON = "resumed with moot resume"


def check_resumable(debate_id: str, events: Sequence[Event]) -> None:
    """A StateError, naming what to do instead, when the stored debate has nothing left to run."""
    from moot.engine import verdict_failed  # a completed debate whose verdict failed has its verdict to run

    short = debate_id[:8]
    state = fold(events)
    if state.status == "completed" and not verdict_failed(state):
        raise StateError(f"debate {short} has completed; nothing to resume; see `moot show {short}`")


def replay(renderer: DebateRenderer, events: Sequence[Event]) -> None:
    """Draw the story so far, as `moot show` does: stored turns are printed whole, never as live panels."""
    live = renderer.live_enabled
    renderer.live_enabled = False
    try:
        for event in events:
            renderer.handle(event)
    finally:
        renderer.live_enabled = live


def resume_command(
    debate_id: Annotated[str, typer.Argument(help="Debate id or a unique prefix of it (see `moot list`).")],
    db: DbOption = None,
    json_lines: Annotated[
        bool, typer.Option("--json", help="Print the new events as JSON lines (not the stored ones).")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the verdict.")] = False,
) -> None:
    """Carry an interrupted, paused, failed or crashed debate on from its last completed turn.

    Completed turns are kept and never asked again; a turn cut off half-way is run again. Resume a debate
    only when no other process (a `moot run`, `moot serve` or worker) is running it: a crashed run and a live
    one look alike in the store, and of two processes writing one debate one stops at its next write.
    """
    out = SafeConsole()

    async def go() -> int:
        from moot.engine import resume_debate  # only a resume needs the engine and its provider SDKs

        # No store: no debate to carry on, and nothing to create while saying so.
        async with await EventStore.open(db_url_from(db), create=False) as store:
            full_id = await store.resolve_id(debate_id)
            events = await store.events(full_id)
            check_resumable(full_id, events)
            renderer = DebateRenderer(out, quiet=quiet)
            if not json_lines:
                replay(renderer, events)
            # A person in the debate answers here, as in `moot run` (moot.cli.people).
            people = people_for(fold(events).config, renderer, json_lines=json_lines)
            code = await follow_pauses(
                resume_debate(events, log=store, reason=REASON, people=people),
                renderer,
                store=store,
                ask=confirm if sys.stdin.isatty() and not json_lines else None,  # at limits.pause_at_cost
                db=db,
                json_lines=json_lines,
                people=people,
            )
            return exit_code(code, people, full_id, db)

    code = run_command(go())
    if code:
        raise typer.Exit(code)

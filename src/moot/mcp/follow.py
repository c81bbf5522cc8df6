"""Holding a debate for one tool call: start it, report each turn as an MCP progress notification, and answer
with its state once it has ended. Cancelling the call stops the debate, as the page's Stop button does: the turn
under way is cut and the judge rules on what exists; the debate is the runner's, not the call's, so it reaches
its verdict and is stored whether or not anyone still waits for the answer."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio

from moot.domain.config import DebateConfig
from moot.domain.events import DebateStopping, Event, JudgingStarted, TurnCompleted, VerdictGiven
from moot.domain.state import DebateState
from moot.mcp.host import Runs

# Far above what one debate emits between two reads (token deltas of one turn are merged as they wait), so the
# feed is never cut for falling behind while the client takes a progress notification.
FEED_SIZE = 1_000_000
EXCERPT = 160  # characters of a turn shown in its progress message

Report = Callable[[float, str], Awaitable[None]]


async def hold(runs: Runs, debate_id: str, config: DebateConfig, report: Report) -> DebateState:
    """Follow the debate `debate_id` to its end, reporting progress; its stored state. For a debate this process
    runs, call it right after the start with no await in between, so no event is missed; a worker's debate is
    read from the store from its first event."""
    feed = runs.subscribe(debate_id, size=FEED_SIZE)
    step = 0
    try:
        await report(step, f"debate {debate_id} started: {config.topic}")
        while feed is not None and (event := await feed.get()) is not None:
            message = progress_message(event, config)
            if message is not None:
                step += 1
                await report(step, message)
    except anyio.get_cancelled_exc_class():
        runs.stop(debate_id)  # synchronous: a cancelled scope allows no await without a shield
        raise
    await runs.store.flush()
    return await runs.store.state(debate_id)


def progress_message(event: Event, config: DebateConfig) -> str | None:
    """What a progress notification says of `event`; None for events not worth one (token deltas, markers)."""
    if isinstance(event, TurnCompleted):
        return f"round {event.round}, {config.speaker_name(event.participant_id)}: {_excerpt(event.text)}"
    if isinstance(event, DebateStopping):
        return f"debating ended: {event.reason.detail}"
    if isinstance(event, JudgingStarted):
        return "the judge is weighing the debate"
    if isinstance(event, VerdictGiven):
        if event.verdict is None:
            return f"the verdict failed: {event.error}"
        return f"verdict: {event.verdict.summary}"
    return None


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= EXCERPT else flat[: EXCERPT - 1] + "…"


__all__ = ["FEED_SIZE", "hold", "progress_message"]

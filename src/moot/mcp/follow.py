"""Following a debate for a tool call: report each turn as an MCP progress notification until the run ends, or
until the call's wait is up.

The debate is the runner's, never the call's. A call that times out, is cancelled or loses its connection lets go
of its feed and nothing else: the debate goes on to its end and its verdict, and is stored, for `get_debate` to
collect. Only `stop_debate` (or the page's Stop button) stops one. MCP hosts give a tool call about 60 s whatever
progress it reports, so a client that treated its own timeout as a stop would stop every real debate after its
first turn."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager

import anyio

from moot.domain.config import DebateConfig
from moot.domain.events import DebateStopping, Event, JudgingStarted, TurnCompleted, VerdictGiven
from moot.domain.state import DebateState
from moot.domain.status import Status
from moot.mcp.host import Feed, Runs

# Far above what one debate emits between two reads (token deltas of one turn are merged as they wait), so the
# feed is never cut for falling behind while the client takes a progress notification.
FEED_SIZE = 1_000_000
EXCERPT = 160  # characters of a turn shown in its progress message
# How long `get_debate` waits for a debate to end: MCP hosts (Claude Desktop, Claude Code) give a tool call about
# 60 s, and progress notifications do not put that off, so a wait ends a few seconds before, answering with
# the progress so far.
WAIT_S = 45.0
WAIT_MOST_S = 55.0
POLL_S = 1.0  # how often a wait reads the stored status of a debate another process runs
# The statuses of a debate whose run is under way: waiting longer may see it further on.
UNDER_WAY: frozenset[Status] = frozenset({"queued", "pending", "running", "judging"})

Report = Callable[[float, str], Awaitable[None]]


async def hold(runs: Runs, debate_id: str, config: DebateConfig, report: Report) -> DebateState:
    """Follow the debate `debate_id` to its end, reporting progress; its stored state. For a debate this process
    runs, call it right after the start with no await in between, so no event is missed; a worker's debate is
    read from the store from its first event."""
    feed = runs.subscribe(debate_id, size=FEED_SIZE)
    with _let_go(runs, debate_id, feed):
        await report(0, f"debate {debate_id} started: {config.topic}")
        if feed is not None:
            await _follow(feed, config, report)
    await runs.store.flush()
    return await runs.store.state(debate_id)


async def wait_for_end(
    runs: Runs, debate_id: str, config: DebateConfig, wait_s: float, report: Report
) -> None:
    """Wait at most `wait_s` for a debate to end, reporting its turns when this process runs it; one another
    process runs (a second `moot mcp`, `moot run`) is read from the store every POLL_S. Returns early, never
    late: the host's clock is running."""
    if wait_s <= 0:
        return
    feed = runs.subscribe(debate_id, size=FEED_SIZE)
    with anyio.move_on_after(wait_s):
        if feed is None:
            await _stored_end(runs, debate_id)
            return
        with _let_go(runs, debate_id, feed):
            await _follow(feed, config, report)


async def _stored_end(runs: Runs, debate_id: str) -> None:
    """Until the stored status says the run has ended: another process's events reach this one only there."""
    while True:
        if (await runs.store.summary(debate_id)).status not in UNDER_WAY:
            return
        await anyio.sleep(POLL_S)


async def _follow(feed: Feed, config: DebateConfig, report: Report) -> None:
    step = 0
    while (event := await feed.get()) is not None:
        message = progress_message(event, config)
        if message is not None:
            step += 1
            await report(step, message)


@contextmanager
def _let_go(runs: Runs, debate_id: str, feed: Feed | None) -> Iterator[None]:
    """On a cancel (the caller is gone, or its wait is up), let go of the feed, which would otherwise fill with
    events nobody reads. The debate runs on."""
    try:
        yield
    except anyio.get_cancelled_exc_class():
        if feed is not None:  # synchronously: a cancelled scope allows no await without a shield
            runs.unsubscribe(debate_id, feed)
        raise


def progress_message(event: Event, config: DebateConfig) -> str | None:
    """What a progress notification says of `event`; None for events not worth one (token deltas, markers)."""
    if isinstance(event, TurnCompleted):
        return f"round {event.round}, {config.speaker_name(event.participant_id)}: {excerpt(event.text, EXCERPT)}"
    if isinstance(event, DebateStopping):
        return f"debating ended: {event.reason.detail}"
    if isinstance(event, JudgingStarted):
        return "the judge is weighing the debate"
    if isinstance(event, VerdictGiven):
        if event.verdict is None:
            return f"the verdict failed: {event.error}"
        return f"verdict: {event.verdict.summary}"
    return None


def excerpt(text: str, most: int) -> str:
    """`text` on one line, at most `most` characters, an ellipsis where it was cut."""
    flat = " ".join(text.split())
    return flat if len(flat) <= most else flat[: most - 1] + "…"


__all__ = [
    "EXCERPT",
    "FEED_SIZE",
    "POLL_S",
    "UNDER_WAY",
    "WAIT_MOST_S",
    "WAIT_S",
    "excerpt",
    "hold",
    "progress_message",
    "wait_for_end",
]

"""The one-call Python API: `moot.run(request)` holds a debate and returns it finished, with its result.

    import moot
    debate = moot.run({"topic": "Tabs or spaces?", "rounds": 1}, db="debates.db")
    print(debate.state.headline)

A request is a `DebateRequest` or a mapping of config fields (in any spelling moot reads, `preset:` and
`template:` included), composed as every other way in composes it (moot.config_files.compose): the saved
defaults of `moot configure` apply, as they do to `moot run`. `moot.run_debate` stays the event stream for a
caller that shows the debate as it happens; `on_event` gives the same events to this call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from moot.config_files.compose import DebateRequest, compose
from moot.domain import DebateConfig, Event
from moot.engine import EventLog, ModelResolver, run_debate
from moot.errors import UserError
from moot.export import DebateRecord


async def arun(
    request: DebateRequest | Mapping[str, Any],
    *,
    db: str | None = None,
    log: EventLog | None = None,
    resolve: ModelResolver | None = None,
    on_event: Callable[[Event], object] | None = None,
    stream: bool | None = None,
) -> DebateRecord:
    """Hold the debate `request` asks for and return it finished: its events, and through `.state` its status,
    verdict and headline. `db` (a SQLite path or a database URL, as `moot run --db`) stores it, or `log` (an
    open `EventStore`); with neither it is held in memory. `resolve` replaces the model lookup (your own
    pydantic-ai models); `on_event` sees every event as it comes, tokens included. `stream`: whether the models
    stream their replies; by default only when `on_event` is given, since without it nobody sees a token before
    the end, and whole replies cost a fraction of a stream's CPU. A mistake in the request is a ConfigError
    naming the field, before anything is stored or any model called."""
    if db is not None and log is not None:
        raise UserError("give the debate one place to be kept: db= or log=", field="db")
    if not isinstance(request, DebateRequest):
        request = DebateRequest.of(request, given_by="python")
    config = compose(request).config
    streamed = stream if stream is not None else on_event is not None
    if db is None:
        return await _held(config, log, resolve, on_event, streamed)
    from moot.store import EventStore, db_url_from

    async with await EventStore.open(db_url_from(db)) as store:
        return await _held(config, store, resolve, on_event, streamed)


def run(
    request: DebateRequest | Mapping[str, Any],
    *,
    db: str | None = None,
    resolve: ModelResolver | None = None,
    on_event: Callable[[Event], object] | None = None,
    stream: bool | None = None,
) -> DebateRecord:
    """`arun` for code without an event loop of its own (a store is opened in its loop: give `db`)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(arun(request, db=db, resolve=resolve, on_event=on_event, stream=stream))
    raise UserError("moot.run was called inside a running event loop; use `await moot.arun(...)` there")


async def _held(
    config: DebateConfig,
    log: EventLog | None,
    resolve: ModelResolver | None,
    on_event: Callable[[Event], object] | None,
    stream: bool,
) -> DebateRecord:
    events: list[Event] = []
    async for event in run_debate(config, log=log, resolve=resolve, watched=stream):
        if on_event is not None:
            on_event(event)
        events.append(event)
    return DebateRecord.from_events(events)


__all__ = ["arun", "run"]

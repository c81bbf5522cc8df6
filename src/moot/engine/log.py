"""Where a run's events go to become durable: the `EventLog` protocol the store implements, and an in-memory one."""

from __future__ import annotations

from typing import Protocol

from moot.domain.events import DebateResumed, Event, require_debate_id
from moot.errors import StoreConflictError


class EventLog(Protocol):
    """Where events go to become durable. The store implements it; so does InMemoryLog."""

    async def append(self, event: Event) -> Event: ...


class InMemoryLog:
    """Numbers events like the store does, but keeps them only in memory."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    async def append(self, event: Event) -> Event:
        if not event.durable:
            return event
        require_debate_id(event)
        if isinstance(event, DebateResumed) and event.after_seq not in (None, len(self.events)):
            raise StoreConflictError(f"debate {event.debate_id!r} was written since this run read it")
        stored = event.model_copy(update={"seq": len(self.events) + 1})
        self.events.append(stored)
        return stored

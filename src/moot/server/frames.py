"""Live events serialised once for all their subscribers.

Every SSE and WebSocket subscriber of a debate sends the same JSON for a live event; made per subscriber, the
JSON cost grew with the audience (12-19 % of the server's loop at 50 debates). The manager registers each event it
publishes here (`published`); the first subscriber to send it makes its JSON (`wire_json`), the others reuse it.

The cache holds the event itself beside its JSON, so the identity it is keyed by cannot be reused while the entry
lives, and it is bounded: a subscriber far behind (or an event never published, such as a replayed one) gets its
JSON made afresh, the same text.
"""

from __future__ import annotations

import collections

from moot.domain.events import Event

CACHED = 4096  # live events whose JSON is kept: a few seconds of a busy server's traffic

_cache: collections.OrderedDict[int, tuple[Event, str | None]] = collections.OrderedDict()


def published(event: Event) -> None:
    """`event` goes to subscribers: its JSON, once made, is kept for the others."""
    _cache[id(event)] = (event, None)
    if len(_cache) > CACHED:
        _cache.popitem(last=False)


def wire_json(event: Event) -> str:
    """The event as JSON, as SSE frames and WebSocket messages carry it."""
    found = _cache.get(id(event))
    if found is None or found[0] is not event:
        return _dump(event)
    if found[1] is not None:
        return found[1]
    text = _dump(event)
    _cache[id(event)] = (event, text)
    return text


def _dump(event: Event) -> str:
    return event.model_dump_json()

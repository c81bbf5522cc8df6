"""What the MCP tools need of whoever runs debates: moot.server's `DebateManager`, as the server's `ServerRuns`
wraps it for one call, so the tools run, stream and stop debates exactly as the HTTP API does, without this
package importing the server."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from moot.domain.config import DebateConfig
from moot.domain.events import Event
from moot.store import EventStore


class Feed(Protocol):
    """A running debate's live events; None once the run has ended (or the feed was cut)."""

    async def get(self) -> Event | None: ...


class Runs(Protocol):
    """Debates run in the background, each stored in `store` as it happens, seen by one tool call's caller."""

    @property
    def store(self) -> EventStore: ...

    def subscribe(self, debate_id: str, *, size: int | None = None) -> Feed | None: ...

    def unsubscribe(self, debate_id: str, feed: Feed) -> None:
        """Let go of a feed nobody reads any more (a call that timed out): the debate runs on."""
        ...

    async def stop(self, debate_id: str) -> None:
        """End the debate as the page's Stop button does: a running one is cut and judged on what exists, a
        paused, interrupted or failed one judged as it stands. A UserError when it is none of these."""
        ...

    def page(self, debate_id: str) -> str | None:
        """The debate's page on the server people reach (its public base, MOOT_PUBLIC_URL where set); None
        where there is none to name (stdio, with no public URL set)."""
        ...


def page_path(debate_id: str) -> str:
    """The web page's route of one debate (moot.web's app.js reads it from the fragment), under a server's base."""
    return f"/#/debates/{debate_id}"


# Starts a config for the caller and returns the debate's id (a UserError names what is wrong with it): the
# stdio server starts it on its manager; the HTTP server counts it against the
# caller's token, applies its limits (moot.server.security.admit) and queues it for workers under `--enqueue`;
# `request` is the HTTP request. It must not wait between starting a debate here and returning, so that the
# subscription that follows misses none of its events.
Admit = Callable[[DebateConfig, Any], Awaitable[str]]


__all__ = ["Admit", "Feed", "Runs", "page_path"]

"""MCP's streamable HTTP transport at /mcp: moot's MCP tools (moot.mcp) on the server's own debates.

The tools run debates through the server's `DebateManager`, so a debate an MCP client starts is checked
against the server's limits and counted against the caller's token like a `POST /api/debates`, shows on the
page and in /api while it runs, and can be stopped there; under `moot serve --enqueue` it is queued for the
workers like any other, and followed in the store as they write it. /mcp sits behind the same middleware as /api
(the token, the Host and Origin checks, the body limit: moot.server.security), so the SDK's own Host/Origin
check, which would know nothing of MOOT_ALLOWED_HOSTS or MOOT_CORS_ORIGINS, is left off.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from mcp.server.mcpserver import MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from moot.domain.config import DebateConfig
from moot.domain.events import Event
from moot.engine import public_url
from moot.errors import UserError
from moot.mcp import Feed, build_server, page_path
from moot.server.manager import DebateManager, Subscriber
from moot.server.seats import link_base
from moot.server.security import admit, claim
from moot.store import EventStore

PATH = "/mcp"


class Followed:
    """A debate a worker runs, as a feed: its stored events from the first, as the worker stores them."""

    def __init__(self, events: AsyncIterator[Event]) -> None:
        self._events = events

    async def get(self) -> Event | None:
        return await anext(self._events, None)


class ServerRuns:
    """The server's manager as the tools' `Runs` for one call: a debate that runs on a worker is followed in the
    store; `request` is the call's HTTP request (None on stdio), whose caller a stop that sets a debate running
    again is counted against, and whose address names the page where MOOT_PUBLIC_URL does not."""

    def __init__(self, manager: DebateManager, request: Request | None = None) -> None:
        self.manager = manager
        self.request = request

    @property
    def store(self) -> EventStore:
        return self.manager.store

    def subscribe(self, debate_id: str, *, size: int | None = None) -> Feed | None:
        live = self.manager.subscribe(debate_id, size=size, tokens=False)  # turns only
        if live is not None or self.manager.dispatcher is None:
            return live
        return Followed(self.manager.follow(debate_id, 0))

    def unsubscribe(self, debate_id: str, feed: Feed) -> None:
        if isinstance(feed, Subscriber):  # a follower of the store holds nothing once it is no longer read
            self.manager.unsubscribe(debate_id, feed)

    async def stop(self, debate_id: str) -> None:
        # As POST /api/debates/{id}/stop: a running debate (a worker's too, on PostgreSQL) is cut and judged;
        # another is judged as it stands, a run counted against the caller.
        if self.manager.stop(debate_id):
            return
        if self.request is not None:
            try:
                claim(self.request, debate_id)
            except HTTPException as exc:  # too many running for this token: a tool error the caller reads
                raise UserError(str(exc.detail)) from None
        await self.manager.carry_on(debate_id, "stop")

    def page(self, debate_id: str) -> str | None:
        base = link_base(self.request) if self.request is not None else public_url()
        return f"{base}{page_path(debate_id)}" if base else None


class _Current:
    """The route's ASGI app: the session manager of the lifespan under way (starlette calls an instance as
    ASGI, a plain function as a request handler)."""

    def __init__(self, current: list[StreamableHTTPASGIApp]) -> None:
        self._current = current

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._current:  # a request outside the app's lifespan: no sessions are running
            raise RuntimeError("the MCP sessions run only inside the app's lifespan")
        await self._current[0](scope, receive, send)


def _runs(request: Any) -> ServerRuns:
    manager = _manager(request)
    assert isinstance(request, Request)  # _manager refused anything else
    return ServerRuns(manager, request)


def _manager(request: Any) -> DebateManager:
    # The HTTP transport always passes its request; anything else is a bug, not a caller's mistake.
    if not isinstance(request, Request):  # pragma: no cover
        raise UserError("an MCP debate over HTTP needs its request")
    manager: DebateManager = request.app.state.manager
    return manager


async def _start(config: DebateConfig, request: Any) -> str:
    manager = _manager(request)
    queued = manager.dispatcher is not None
    try:
        run = admit(
            request, config, lambda c: manager.start(c, hold=queued, how="an MCP tool", watched=False)
        )
    except HTTPException as exc:  # too many running for this token: a tool error the caller reads
        raise UserError(str(exc.detail)) from None
    if queued:  # as POST /api/debates queues one: recorded here, run by a worker
        await manager.settled(run)
        await manager.carry_on(run.id, "start", watched=False)  # a tool call shows turns, not tokens
    return run.id


@functools.cache
def _tools() -> MCPServer[Any]:
    """The tools, built once a process: reading their signatures into schemas costs more than the rest of an
    app, and each call finds its app's manager through its request."""
    return build_server(_runs, admit=_start, local_files=False)


# A session manager is made by the server (`streamable_http_app`) and read back from it: two apps' lifespans
# starting at once on two threads (test clients) must not read each other's.
_MAKING = threading.Lock()


def mount_mcp(app: FastAPI) -> Callable[[], AbstractAsyncContextManager[None]]:
    """Serve the MCP tools at /mcp on `app`; the returned context manager runs the MCP sessions and is entered
    in the app's lifespan, after the manager exists."""
    server = _tools()
    current: list[StreamableHTTPASGIApp] = []
    endpoint = _Current(current)

    @asynccontextmanager
    async def sessions() -> AsyncIterator[None]:
        # A session manager runs once only, while an app's lifespan may run more than once (a test client
        # after another, schemathesis): each lifespan gets its own. Its Starlette app is not used: the route
        # keeps FastAPI's scope (the caller's token digest, this app's state) for the tools.
        with _MAKING:
            server.streamable_http_app(
                streamable_http_path=PATH,
                transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
            )
            manager = server.session_manager
        async with manager.run():
            current[:] = [StreamableHTTPASGIApp(manager)]
            try:
                yield
            finally:
                current.clear()

    app.router.routes.append(Route(PATH, endpoint=endpoint))
    return sessions


__all__ = ["PATH", "Followed", "ServerRuns", "mount_mcp"]

"""MCP's streamable HTTP transport at /mcp: moot's MCP tools (moot.mcp) on the server's own debates.

The tools run debates through the server's `DebateManager`, so a debate an MCP client starts is checked
against the server's limits and counted against the caller's token like a `POST /api/debates`, shows on the
page and in /api while it runs, and can be stopped there. /mcp sits behind the same middleware as /api (the
token, the Host and Origin checks, the body limit: moot.server.security), so the SDK's own Host/Origin check,
which would know nothing of MOOT_ALLOWED_HOSTS or MOOT_CORS_ORIGINS, is left off.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from starlette.routing import Route

from moot.domain.config import DebateConfig
from moot.errors import UserError
from moot.mcp import build_server
from moot.server.manager import DebateManager
from moot.server.security import admit

PATH = "/mcp"


def mount_mcp(app: FastAPI) -> Callable[[], AbstractAsyncContextManager[None]]:
    """Serve the MCP tools at /mcp on `app`; the returned context manager runs the MCP sessions and is entered
    in the app's lifespan, after the manager exists."""

    def manager() -> DebateManager:
        running: DebateManager = app.state.manager
        return running

    def start(config: DebateConfig, request: Any) -> str:
        # The HTTP transport always passes its request; anything else is a bug, not a caller's mistake.
        if not isinstance(request, Request):  # pragma: no cover
            raise UserError("an MCP debate over HTTP needs its request")
        try:
            return admit(request, config, manager().start).id
        except HTTPException as exc:  # too many running for this token: a tool error the caller reads
            raise UserError(str(exc.detail)) from None

    server = build_server(manager, admit=start)
    # Makes the session manager; its own Starlette app is not used: the route below keeps FastAPI's scope (the
    # caller's token digest, this app's state) for the tools.
    server.streamable_http_app(
        streamable_http_path=PATH,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    app.router.routes.append(Route(PATH, endpoint=StreamableHTTPASGIApp(server.session_manager)))
    return server.session_manager.run


__all__ = ["PATH", "mount_mcp"]

"""One line per request on the `moot.server.access` logger: who asked, the method, the path without its
query string, the status, how long it took, and the debate the path names.

    127.0.0.1 POST /api/debates/3f2a.../stop 202 4.1ms debate=3f2a...

Never a header or a query string: tokens travel in those (`?access_token=` on the streams). A WebSocket
session is one line when it ends, with method WS, status 101 when accepted (else the refusal's status),
its whole duration and the close code. The path is percent-encoded again, so a client cannot put control
characters or a second line into the log. The fields are also on the record (`extra`) for structured handlers.
"""

from __future__ import annotations

import logging
import re
import time
from typing import Any
from urllib.parse import quote

from starlette.types import ASGIApp, Message, Receive, Scope, Send

LOGGER_NAME = "moot.server.access"
logger = logging.getLogger(LOGGER_NAME)

_DEBATE = re.compile(r"^/api/(?:debates|ws)/([^/]+)")
_SAFE = "/:@!$&'()*+,;="  # what may stay unescaped in a path besides letters, digits and -._~


def debate_in(path: str) -> str | None:
    """The debate id a path names (/api/debates/ID/..., /api/ws/ID), as it would be logged."""
    found = _DEBATE.match(path)
    return quote(found.group(1), safe=_SAFE) if found else None


class AccessLog:
    """Logs each request and WebSocket session once it is over (a stream, when it ends)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        began = time.perf_counter()
        status: int | None = None
        close: int | None = None

        async def watched_send(message: Message) -> None:
            nonlocal status, close
            kind = message["type"]
            if kind in ("http.response.start", "websocket.http.response.start"):
                status = message["status"]
            elif kind == "websocket.accept":
                status = 101
            elif kind == "websocket.close":
                status = status or 403  # closed before it was accepted: the server answers 403
                close = close or message.get("code", 1000)
            await send(message)

        async def watched_receive() -> Message:
            nonlocal close
            message = await receive()
            if message["type"] == "websocket.disconnect":
                close = close or message.get("code", 1005)
            return message

        try:
            await self.app(scope, watched_receive, watched_send)
        except BaseException:
            status = status or 500
            raise
        finally:
            _write(scope, status, (time.perf_counter() - began) * 1000, close)


def _write(scope: Scope, status: int | None, duration_ms: float, close: int | None) -> None:
    if not logger.isEnabledFor(logging.INFO):
        return
    websocket = scope["type"] == "websocket"
    method = "WS" if websocket else str(scope.get("method", "-"))
    path = quote(str(scope.get("path", "")), safe=_SAFE)
    debate_id = debate_in(str(scope.get("path", "")))
    client = scope.get("client")
    who = quote(str(client[0]), safe=":[]") if client else "-"
    fields: dict[str, Any] = {
        "client": who,
        "method": method,
        "path": path,
        "status": status,
        "duration_ms": round(duration_ms, 1),
        "debate_id": debate_id,
        "close_code": close if websocket else None,
    }
    line = f"{who} {method} {path} {status or '-'} {duration_ms:.1f}ms"
    if debate_id is not None:
        line += f" debate={debate_id}"
    if websocket and close is not None:
        line += f" close={close}"
    logger.info("%s", line, extra=fields)


__all__ = ["LOGGER_NAME", "AccessLog", "debate_in"]

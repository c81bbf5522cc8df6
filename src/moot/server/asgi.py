"""The ASGI plumbing moot's middleware share: read a request header, answer with a one-line JSON reason,
refuse a WebSocket handshake with a status and that reason; and the words every answer is made in."""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from moot.errors import answering_a_client

# ASGI's extension for answering a WebSocket handshake with an HTTP response (uvicorn and the TestClient have it).
_DENIAL = "websocket.http.response"


def header(scope: Scope, name: bytes) -> str | None:
    """The first `name` header of the request (lower-case bytes), stripped; None when absent."""
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value).decode("latin-1").strip()
    return None


async def send_json(
    send: Send,
    status: int,
    body: dict[str, Any],
    headers: tuple[tuple[bytes, bytes], ...] = (),
    *,
    prefix: str = "http.response",
) -> None:
    raw = json.dumps(body).encode()
    length = str(len(raw)).encode()
    await send(
        {
            "type": f"{prefix}.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", length), *headers],
        }
    )
    await send({"type": f"{prefix}.body", "body": raw})


async def deny(scope: Scope, receive: Receive, send: Send, status: int, detail: str) -> None:
    """Answer `status` with {"detail": detail}, on a plain request or a WebSocket handshake alike."""
    if scope["type"] != "websocket":
        await send_json(send, status, {"detail": detail})
        return
    await receive()  # websocket.connect
    if _DENIAL in scope.get("extensions", {}):
        await send_json(send, status, {"detail": detail}, prefix="websocket.http.response")
    else:
        # A server without the extension answers a handshake closed before it was accepted with 403.
        await send({"type": "websocket.close", "code": 1008})


class ClientWords:
    """Every request is answered in words for another machine's user (moot.errors.answering_a_client): its
    errors name no `moot` command to run, and a name like none of the choices lists only a few of them."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        with answering_a_client():
            await self.app(scope, receive, send)


__all__ = ["ClientWords", "deny", "header", "send_json"]

"""One rule for request bodies on every way in (/api, /v1, /mcp), and each way's own error shape.

`JsonDepth` reads a JSON body (already bounded by the size limit, moot.server.security.BodyLimit) and refuses one
that nests deeper than MAX_DEPTH before any parser sees it: Python's json module recurses, and a 6 KB array
nested 3,000 deep raised RecursionError inside /v1 (a 500 and a traceback per request) while FastAPI's /api
parser answered 400. The scan counts brackets outside strings, in one pass, without recursion.

`WireErrors` answers every refusal on /v1 in OpenAI's error body (`{"error": {"message", "type", "param",
"code"}}`, which the OpenAI SDKs read into their exception classes: AuthenticationError for 401, BadRequestError
for 400, ...); /api keeps moot's `{"detail": ...}`, and /mcp the MCP SDK's JSON-RPC errors for what it parses
(the guards' refusals before it keep moot's shape, which MCP clients report by status). It sits outside every
guard, so the token's 401, the size limit's 413 and the body rules' 400 and 415 are translated in one place.
It also marks every /v1 refusal but a 429 `x-should-retry: false`, which the OpenAI SDKs obey: they retry a 5xx
on their own, and asking again after a debate failed would run it again; a 429 (too many debates of the token)
started nothing, so a retry there is harmless and may find room.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from moot.server.asgi import send_json
from moot.server.guards import has_body

# Deeper than any request moot takes: a config nests at most 32 levels (moot.server.configs.MAX_DEPTH), and the
# MCP and OpenAI envelopes add a few around it.
MAX_DEPTH = 64
_OPEN, _CLOSE = frozenset(b"[{"), frozenset(b"]}")
_QUOTE, _ESCAPE = ord('"'), ord("\\")
_WAYS_IN = ("/api/", "/v1/", "/mcp")
RETRYABLE = frozenset({429})


def too_deep(body: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether the JSON text `body` opens more than `limit` arrays or objects inside one another."""
    depth = 0
    in_string = escaped = False
    for byte in body:
        if in_string:
            if escaped:
                escaped = False
            elif byte == _ESCAPE:
                escaped = True
            elif byte == _QUOTE:
                in_string = False
        elif byte == _QUOTE:
            in_string = True
        elif byte in _OPEN:
            depth += 1
            if depth > limit:
                return True
        elif byte in _CLOSE:
            depth -= 1
    return False


class JsonDepth:
    """400 for a request body on a way in that nests deeper than MAX_DEPTH; the body is read here once and
    handed on whole."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not str(scope["path"]).startswith(_WAYS_IN):
            await self.app(scope, receive, send)
            return
        if not has_body(scope):  # a GET, a stream's request: nothing to read, and its receive stays the app's
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            try:
                message = await receive()
            except HTTPException as exc:  # the size limit, met while the body streamed in
                await send_json(send, exc.status_code, {"detail": exc.detail})
                return
            if message["type"] != "http.request":  # the client went away: nothing to check
                await self.app(scope, _replay(message, receive), send)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if too_deep(body):
            detail = f"the JSON body nests more than {MAX_DEPTH} levels deep; no request to this server does"
            await send_json(send, 400, {"detail": detail})
            return
        whole: Message = {"type": "http.request", "body": body, "more_body": False}
        await self.app(scope, _replay(whole, receive), send)


def _replay(first: Message, receive: Receive) -> Receive:
    """`first`, then whatever the client sends next (its disconnect, which a streaming answer listens for)."""
    given = False

    async def replayed() -> Message:
        nonlocal given
        if not given:
            given = True
            return first
        return await receive()

    return replayed


# OpenAI's error `type` and `code` for moot's refusals on /v1, by status.
_OPENAI: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "forbidden"),
    404: ("invalid_request_error", "not_found"),
    413: ("invalid_request_error", "request_too_large"),
    415: ("invalid_request_error", "unsupported_media_type"),
    422: ("invalid_request_error", None),
    429: ("rate_limit_exceeded", "rate_limit_exceeded"),
}


class WireErrors:
    """Translates a `{"detail": ...}` refusal on /v1 into OpenAI's error body (the status and headers kept)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not str(scope.get("path", "")).startswith("/v1/"):
            await self.app(scope, receive, send)
            return
        start: Message | None = None
        held: list[bytes] = []

        async def translating(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                message = _retry_said(message)
                if message["status"] >= 400 and _is_json(message):
                    start = message  # held until its body says whether it is moot's shape
                    return
                await send(message)
                return
            if start is None:
                await send(message)
                return
            held.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            status, body = start["status"], b"".join(held)
            shaped = _openai(status, body)
            if shaped is None:
                await send(start)
                await send({"type": "http.response.body", "body": body})
                return
            kept = tuple(
                (k, v)
                for k, v in start.get("headers", [])
                if k.lower() not in (b"content-type", b"content-length")
            )
            await send_json(send, status, shaped, kept)

        await self.app(scope, receive, translating)


def _retry_said(start: Message) -> Message:
    """`start` with `x-should-retry: false` when it refuses and a retry could not help (see the module's doc)."""
    headers = list(start.get("headers", []))
    if start["status"] < 400 or start["status"] in RETRYABLE:
        return start
    if any(k.lower() == b"x-should-retry" for k, _ in headers):
        return start
    return {**start, "headers": [*headers, (b"x-should-retry", b"false")]}


def _is_json(start: Message) -> bool:
    return any(
        k.lower() == b"content-type" and v.split(b";")[0].strip() == b"application/json"
        for k, v in start.get("headers", [])
    )


def _openai(status: int, body: bytes) -> dict[str, Any] | None:
    """`body` in OpenAI's error shape; None when it is not moot's `{"detail": ...}` (already shaped)."""
    try:
        data = json.loads(body)
    except ValueError:
        return None
    if not isinstance(data, dict) or "detail" not in data or "error" in data:
        return None
    detail = data["detail"]
    field = data.get("field")
    if isinstance(detail, list):  # FastAPI's validation errors: [{field, message}, ...]
        first = detail[0] if detail and isinstance(detail[0], dict) else {}
        message = "; ".join(
            f"{d.get('field')}: {d.get('message')}" if d.get("field") else str(d.get("message"))
            for d in detail
            if isinstance(d, dict)
        )
        field = field or first.get("field")
    else:
        message = str(detail)
    kind, code_name = _OPENAI.get(status, ("invalid_request_error" if status < 500 else "server_error", None))
    return {"error": {"message": message, "type": kind, "param": field, "code": code_name}}


__all__ = ["MAX_DEPTH", "JsonDepth", "WireErrors", "too_deep"]

"""What a request must look like before anything reads it, token or no token.

Threat: a web page the user opens elsewhere. A browser sends some requests to any site without asking it
first (a POST with no body or a text/plain one, a WebSocket handshake), and a page whose name an attacker
re-points at 127.0.0.1 (DNS rebinding) becomes, to the browser, the same origin as this server. So:

- `HostGuard`: the Host must be a name this server answers to (loopback names, the address the client
  reached, MOOT_ALLOWED_HOSTS); else 400. A rebinding page's requests carry its own name.
- `OriginGuard`: a state-changing request (POST, PUT, PATCH, DELETE, a WebSocket handshake) whose Origin is
  neither the server's own (scheme, host and port of its Host) nor one in MOOT_CORS_ORIGINS, or which the
  browser marks `Sec-Fetch-Site: cross-site`, gets 403. No Origin (curl, the CLI, scripts) passes: only
  browsers send one, and they always do on such requests.
- `JsonBodies`: a request body must be JSON; else 415. Browsers cannot send JSON cross-site without asking
  the server first (a CORS preflight), which only MOOT_CORS_ORIGINS pass.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from moot.server.asgi import deny, header
from moot.server.settings import ServerSettings, env_name, host_name, is_loopback

STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_SHOWN = 100  # characters of a refused header value quoted back


def _shown(value: str) -> str:
    return repr(value if len(value) <= _SHOWN else value[:_SHOWN] + "...")


def _host_port(value: str) -> tuple[str, int | None] | None:
    """A Host header's name (as `host_name` gives it) and port; None when it is not a valid one."""
    try:
        parts = urlsplit(f"//{value}")
        port = parts.port
    except ValueError:
        return None
    if parts.path or parts.query or parts.fragment or parts.username is not None or not parts.hostname:
        return None
    name = host_name(parts.hostname)
    return None if name is None else (name, port)


class HostGuard:
    """400 unless the request's Host is loopback, the address the client connected to, or allowed."""

    def __init__(self, app: ASGIApp, settings: ServerSettings) -> None:
        self.app = app
        self.allowed = frozenset(settings.allowed_hosts)

    def answers_to(self, name: str, scope: Scope) -> bool:
        if is_loopback(name) or name in self.allowed:
            return True
        # The address this connection reached (an IP from the socket, under a real server): a page can make
        # a browser send that only by being on that address itself, so no rebinding hides behind it. It is
        # also how a server on 0.0.0.0 answers to clients that use one of the machine's addresses.
        server = scope.get("server")
        return server is not None and host_name(str(server[0])) == name

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        given = header(scope, b"host")
        parsed = _host_port(given) if given else None
        if parsed is not None and self.answers_to(parsed[0], scope):
            await self.app(scope, receive, send)
            return
        what = "no Host header" if not given else f"Host {_shown(given)} is not a name this server answers to"
        await deny(
            scope,
            receive,
            send,
            400,
            f"{what}; the operator lists the names clients use to reach it in {env_name('allowed_hosts')} "
            "(or `moot serve --allowed-host`); loopback names and the address it listens on need no listing",
        )


def own_origin(scope: Scope) -> str | None:
    """This server's origin as the client addressed it: the request's scheme, its Host, and the port."""
    given = header(scope, b"host")
    parsed = _host_port(given) if given else None
    if parsed is None:
        return None
    scheme = "https" if scope.get("scheme") in ("https", "wss") else "http"
    name, port = parsed
    shown = f"[{name}]" if ":" in name else name
    return f"{scheme}://{shown}:{port or _default_port(scheme)}"


def _default_port(scheme: str) -> int:
    return 443 if scheme == "https" else 80


def _origin_key(origin: str) -> str | None:
    """An Origin header in `own_origin`'s form (explicit port); None for "null" or anything not http(s)."""
    try:
        parts = urlsplit(origin)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    name = host_name(parts.hostname)
    if name is None:
        return None
    shown = f"[{name}]" if ":" in name else name
    return f"{parts.scheme}://{shown}:{port or _default_port(parts.scheme)}"


class OriginGuard:
    """403 for a state-changing request or a WebSocket handshake that another site's page sent."""

    def __init__(self, app: ASGIApp, settings: ServerSettings) -> None:
        self.app = app
        self.any_origin = "*" in settings.cors_origins
        self.listed = frozenset(o for o in settings.cors_origins if o != "*")

    def refusal(self, scope: Scope) -> str | None:
        """Why this request may not go on, or None."""
        origin = header(scope, b"origin")
        if origin is not None and (self.any_origin or origin.rstrip("/") in self.listed):
            return None  # a page the operator trusts: CORS lets its requests through too
        doing = (
            "open this server's WebSocket"
            if scope["type"] == "websocket"
            else "change anything on this server"
        )
        fix = f"the operator lists trusted pages' origins in {env_name('cors_origins')} (or `moot serve --cors-origin`)"
        if origin is not None:
            own = own_origin(scope)
            if own is None or _origin_key(origin) != own:
                # Also a page on this host at another port: another origin, another program's page.
                return f"a page from {_shown(origin)} may not {doing}: it is not this server's origin; {fix}"
        if (header(scope, b"sec-fetch-site") or "").lower() == "cross-site":
            return f"a cross-site request (Sec-Fetch-Site: cross-site) may not {doing}; {fix}"
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        checked = scope["type"] == "websocket" or (
            scope["type"] == "http" and str(scope.get("method", "")).upper() in STATE_CHANGING
        )
        why = self.refusal(scope) if checked else None
        if why is None:
            await self.app(scope, receive, send)
            return
        await deny(scope, receive, send, 403, why)


def is_json(content_type: str) -> bool:
    """application/json or application/<something>+json, with any parameters (charset): what FastAPI parses."""
    media = content_type.split(";", 1)[0].strip().lower()
    kind, _, sub = media.partition("/")
    return kind == "application" and (sub == "json" or sub.endswith("+json"))


class JsonBodies:
    """415 for a request that has a body which is not JSON; a request without a body needs no type."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and has_body(scope):
            given = header(scope, b"content-type")
            if given is None or not is_json(given):
                what = "no Content-Type" if given is None else f"Content-Type {_shown(given)}"
                await deny(
                    scope,
                    receive,
                    send,
                    415,
                    f"a request body must be JSON; send Content-Type: application/json (got {what})",
                )
                return
        await self.app(scope, receive, send)


def has_body(scope: Scope) -> bool:
    """Whether the request carries a body (a length above 0, or a chunked one)."""
    length = header(scope, b"content-length")
    if length is not None:
        return not length.isdigit() or int(length) > 0
    return header(scope, b"transfer-encoding") is not None


__all__ = ["STATE_CHANGING", "HostGuard", "JsonBodies", "OriginGuard", "has_body", "is_json", "own_origin"]

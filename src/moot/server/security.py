"""What guards the API: the bearer token, CORS, the body size limit, and the checks on a debate request
that keep a client from choosing this server's files, code, URLs or spending without bound. `secure` also
puts on the guards against other sites' pages (guards.py) and the access log (access_log.py).

Only /api and /mcp (the MCP tools) need the token. /health (for load balancers) and /docs, /redoc,
/openapi.json (they describe the API, they run nothing) stay open.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit

from fastapi import FastAPI, HTTPException, Request
from pydantic import BaseModel
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from moot.domain.config import DebateConfig, ModelOptions
from moot.errors import ConfigError
from moot.server.access_log import AccessLog
from moot.server.asgi import ClientWords, header, send_json
from moot.server.bodies import JsonDepth, WireErrors
from moot.server.guards import HostGuard, JsonBodies, OriginGuard
from moot.server.seats import SEAT, SEAT_HEADER, SeatAuth
from moot.server.settings import ServerSettings, env_name

SCHEME = "bearerAuth"
PRINCIPAL = "moot.principal"  # scope key: who is asking (a digest of the token, never the token)
ANONYMOUS = "anonymous"
# Browsers cannot put headers on EventSource or WebSocket: these two take the token in the query too.
_STREAM = re.compile(r"^/api/(?:.+/)?events$")
_CHALLENGE = 'Bearer realm="moot"'


class _Runs(Protocol):
    def running(self, debate_id: str) -> bool: ...


class _Started(Protocol):
    @property
    def id(self) -> str: ...


RunT = TypeVar("RunT", bound=_Started)


# --- the request's config -------------------------------------------------------------------------


def model_options(value: object, path: str = "") -> Iterator[tuple[str, ModelOptions]]:
    """Every ModelOptions inside `value` with its dotted field path (participants.0, judge.fallback.1, ...).
    Walked generically, so a model field added to the config later is checked too."""
    if isinstance(value, ModelOptions):
        yield path, value
    if isinstance(value, BaseModel):
        # An unset judge is a copy of judges.0 or participants.0: name the field the user wrote first.
        for name in sorted(type(value).model_fields, key=lambda n: n == "judge"):
            yield from model_options(getattr(value, name), f"{path}.{name}" if path else name)
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from model_options(item, f"{path}.{i}")


def url_allowed(url: str, prefix: str) -> bool:
    """Whether `url` lies under `prefix`: same scheme, host and port, and a path below the prefix's path
    on a segment boundary (http://a:8000/v1 allows http://a:8000/v1/x, not http://a:8000/v10)."""
    u, p = urlsplit(url), urlsplit(prefix)
    if (u.scheme, u.hostname, _port(u.scheme, u.port)) != (p.scheme, p.hostname, _port(p.scheme, p.port)):
        return False
    base, path = _resolved(p.path).rstrip("/"), _resolved(u.path)
    return path.rstrip("/") == base or path.startswith(base + "/")


def _resolved(path: str) -> str:
    """The path a server answers for `path`: percent-encoded dots are dots, and dot segments are resolved
    (RFC 3986, 5.2.4), so `/ok/../x` and `/ok/%2e%2e/x` are judged as the `/x` they reach. An encoded slash
    stays part of its segment, as servers route it."""
    segments: list[str] = []
    for segment in re.sub(r"%2e", ".", path, flags=re.IGNORECASE).split("/")[1:]:
        if segment == "..":
            if segments:
                segments.pop()
        elif segment != ".":
            segments.append(segment)
    return "/" + "/".join(segments)  # a trailing slash is not compared (url_allowed strips it)


def _port(scheme: str, port: int | None) -> int:
    return port if port is not None else 443 if scheme == "https" else 80


def check_model_options(path: str, options: ModelOptions, settings: ServerSettings) -> None:
    """Refuse, naming `path`, a model this server may not call: a base_url outside the operator's allowlist,
    max_tokens over its limit. Debates and the saved defaults (/api/config) are held to the same rule."""
    if options.base_url is not None:
        url = str(options.base_url)
        if not any(url_allowed(url, p) for p in settings.allowed_base_urls):
            raise ConfigError(
                f"{url} is not among the servers this API may call; the operator lists them in "
                f"{env_name('allowed_base_urls')} (or `moot serve --allow-base-url`)",
                field=f"{path}.base_url",
            )
    if options.max_tokens is not None and options.max_tokens > settings.max_tokens:
        raise ConfigError(
            f"{options.max_tokens} is above this server's limit of {settings.max_tokens} tokens per call "
            f"({env_name('max_tokens')})",
            field=f"{path}.max_tokens",
        )


def check_config(config: DebateConfig, settings: ServerSettings) -> None:
    """Refuse, with a ConfigError naming the field, what this server's operator has not allowed."""
    if len(config.participants) > settings.max_participants:
        raise ConfigError(
            f"{len(config.participants)} participants; this server allows at most {settings.max_participants} "
            f"({env_name('max_participants')})",
            field="participants",
        )
    if config.rounds > settings.max_rounds:
        raise ConfigError(
            f"{config.rounds} rounds; this server allows at most {settings.max_rounds} ({env_name('max_rounds')})",
            field="rounds",
        )
    for path, options in model_options(config):
        check_model_options(path, options, settings)
    for i, hook in enumerate(config.notify):
        # A webhook is a request this server makes: the same allowlist as a model's base_url.
        if not any(url_allowed(hook.url, p) for p in settings.allowed_base_urls):
            raise ConfigError(
                f"{hook.url} is not among the servers this API may call; the operator lists them in "
                f"{env_name('allowed_base_urls')} (or `moot serve --allow-base-url`)",
                field=f"notify.{i}.url",
            )
    for i, participant in enumerate(config.participants):
        for j, tool in enumerate(participant.tools):
            if tool not in settings.allowed_tools:
                raise ConfigError(
                    f"{tool!r} is not a tool this server offers (a module:function tool runs code on it); "
                    f"allowed: {', '.join(settings.allowed_tools) or 'none'} ({env_name('allowed_tools')})",
                    field=f"participants.{i}.tools.{j}",
                )
    _check_skills_dir(config, settings)


def _check_skills_dir(config: DebateConfig, settings: ServerSettings) -> None:
    raw = config.format_options.get("skills_dir")
    if raw is None:
        return
    folder = Path(str(raw)).expanduser()
    # resolve() follows `..` and symlinks, so a path cannot climb out of an allowed folder.
    inside = folder.is_absolute() and any(
        folder.resolve().is_relative_to(allowed) for allowed in settings.allowed_skills_dirs
    )
    if not inside:
        raise ConfigError(
            "a request may not read skills from this server's files unless the folder is under one the "
            f"operator allows in {env_name('allowed_skills_dirs')}",
            field="format_options.skills_dir",
        )


def admit(request: Request, config: DebateConfig, start: Callable[[DebateConfig], RunT]) -> RunT:
    """Check `config` against the settings and the caller's running debates, start it, and count it
    against the caller. No await in between, so two requests cannot both take the last place."""
    check_config(config, request.app.state.settings)
    mine = _quota(request)
    run = start(config)
    _own(request, mine | {run.id})
    return run


def claim(request: Request, debate_id: str) -> None:
    """Count a stored debate the caller sets running again (start, resume, retry) against the caller;
    429 when the caller has as many running or queued as the server allows. Call it before starting."""
    _own(request, _quota(request) | {debate_id})


def _quota(request: Request) -> set[str]:
    """The caller's debates that are running or queued, once there is room for one more; else 429."""
    settings: ServerSettings = request.app.state.settings
    manager: _Runs = request.app.state.manager
    owned: dict[str, set[str]] = request.app.state.debates_by_token
    mine = {d for d in owned.get(_caller(request), set()) if manager.running(d)}
    if len(mine) >= settings.max_running_per_token:
        raise HTTPException(
            429,
            f"{len(mine)} debates of this token are running or queued, the most this server allows "
            f"({env_name('max_running_per_token')}); wait for one to end or stop one",
        )
    return mine


def _own(request: Request, debate_ids: set[str]) -> None:
    # Ended debates drop out here, so the mapping holds only what may still be running.
    request.app.state.debates_by_token[_caller(request)] = debate_ids


def _caller(request: Request) -> str:
    return str(request.scope.get(PRINCIPAL, ANONYMOUS))


# --- ASGI middleware ------------------------------------------------------------------------------


class BodyLimit:
    """413 for a request body over `limit` bytes: at once from Content-Length, else while it streams in."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    def _too_large(self) -> str:
        return (
            f"request body is over this server's limit of {self.limit} bytes ({env_name('max_body_bytes')}); "
            "send a smaller config"
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = header(scope, b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await send_json(send, 413, {"detail": self._too_large()})
            return
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > self.limit:
                # FastAPI re-raises an HTTPException met while reading the body; its handler answers it.
                raise HTTPException(413, self._too_large())
            return message

        await self.app(scope, counted, send)


class BearerAuth:
    """/api and /mcp need `Authorization: Bearer <token>`; the event streams also take ?access_token=."""

    def __init__(self, app: ASGIApp, settings: ServerSettings) -> None:
        self.app = app
        token = settings.api_token
        self.token = token.get_secret_value().strip().encode() if token is not None else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        protected = path in ("/api", "/mcp", "/v1") or path.startswith(("/api/", "/mcp/", "/v1/"))
        streams = scope["type"] == "websocket" or _STREAM.match(path) is not None
        # Taken off every request, so it reaches neither a handler nor the access log; honoured on streams only.
        in_query = _take_query_token(scope)
        given = _bearer(scope) or (in_query if streams else None)
        # A seat's join link (SeatAuth checked its token, for the routes a seat may use) needs no API token.
        if self.token is None or not protected or scope.get(SEAT) is not None:
            await self.app(scope, receive, send)
            return
        if given is None or not hmac.compare_digest(given.encode(), self.token):
            why = "missing bearer token" if given is None else "invalid bearer token"
            await _refuse(scope, receive, send, why)
            return
        scope[PRINCIPAL] = principal(given)
        await self.app(scope, receive, send)


def principal(token: str) -> str:
    """Who holds `token`, as the per-token counts name it: a digest, so the token itself is kept nowhere."""
    return hashlib.sha256(token.encode()).hexdigest()[:16]


def _bearer(scope: Scope) -> str | None:
    value = header(scope, b"authorization")
    if value is None:
        return None
    kind, _, token = value.partition(" ")
    return token.strip() if kind.lower() == "bearer" and token.strip() else None


def _take_query_token(scope: Scope) -> str | None:
    """The ?access_token= value, removed from the scope so no handler sees it and the server's access
    log (which prints the path and query from this scope) never records it."""
    query = bytes(scope.get("query_string", b"")).decode("latin-1")
    if "access_token" not in query:
        return None
    pairs = parse_qsl(query, keep_blank_values=True)
    tokens = [v for k, v in pairs if k == "access_token"]
    scope["query_string"] = urlencode([(k, v) for k, v in pairs if k != "access_token"]).encode("latin-1")
    return tokens[-1] if tokens and tokens[-1] else None


async def _refuse(scope: Scope, receive: Receive, send: Send, why: str) -> None:
    detail = f"{why}; send Authorization: Bearer <MOOT_API_TOKEN>"
    if scope["type"] == "websocket":
        # Accept first: a browser sees the close code and reason only on an open socket (a refused
        # handshake reaches it as a bare 1006).
        await receive()  # websocket.connect
        await send({"type": "websocket.accept"})
        await send({"type": "websocket.close", "code": 1008, "reason": f"{why}; add ?access_token=<token>"})
        return
    error = "invalid_token" if why.startswith("invalid") else None
    challenge = _CHALLENGE + (f', error="{error}"' if error else "")
    await send_json(send, 401, {"detail": detail}, ((b"www-authenticate", challenge.encode()),))


# --- the app --------------------------------------------------------------------------------------


def secure(app: FastAPI, settings: ServerSettings) -> None:
    """Put the settings, the middleware and the OpenAPI security scheme on `app`. A request passes, from
    the outside in: the access log, the Host check (400), CORS (when origins are set), the Origin check
    (403), the JSON body check (415), a seat's join-link token (403 when wrong: moot.server.seats), the body
    size limit (413), the token (401), the body's depth (400). On /v1 each refusal is in OpenAI's error shape."""
    app.state.settings = settings
    app.state.debates_by_token = {}
    # add_middleware wraps what was added before: the last one added sees a request first.
    app.add_middleware(JsonDepth)  # inside the size limit: it reads a body the limit has bounded
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)
    app.add_middleware(BearerAuth, settings=settings)
    app.add_middleware(SeatAuth)  # before the bearer token: a join link needs none
    app.add_middleware(JsonBodies)
    app.add_middleware(OriginGuard, settings=settings)
    if settings.cors_origins:
        # Before auth: a preflight carries no token and must be answered first, and a 401 needs the
        # CORS headers for the browser to let the page read it.
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(settings.cors_origins),
            allow_methods=["GET", "POST", "DELETE", "PUT", "PATCH"],
            allow_headers=["Authorization", "Content-Type", "Last-Event-ID", SEAT_HEADER],
        )
    # Before anything answers, CORS included: a rebinding page must learn nothing, not even a preflight.
    app.add_middleware(HostGuard, settings=settings)
    app.add_middleware(WireErrors)  # outside every guard: /v1's refusals in OpenAI's shape, whichever refused
    app.add_middleware(ClientWords)  # around every guard: a refusal is an answer to a client too
    app.add_middleware(AccessLog)  # outermost, so refusals are logged too
    if settings.api_token is not None:
        _declare_scheme(app)


def _declare_scheme(app: FastAPI) -> None:
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = build()
        schema.setdefault("components", {}).setdefault("securitySchemes", {})[SCHEME] = {
            "type": "http",
            "scheme": "bearer",
            "description": "MOOT_API_TOKEN of the server. The events stream and the WebSocket also take it "
            "as ?access_token= (browsers cannot set headers there). /health and the docs need none.",
        }
        for path, operations in schema.get("paths", {}).items():
            if path == "/api" or path.startswith("/api/"):
                for operation in operations.values():
                    operation["security"] = [{SCHEME: []}]
                    operation.setdefault("responses", {}).setdefault(
                        "401", {"description": "No token, or not the server's token"}
                    )
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


__all__ = [
    "PRINCIPAL",
    "BearerAuth",
    "BodyLimit",
    "admit",
    "check_config",
    "claim",
    "model_options",
    "principal",
    "secure",
    "url_allowed",
]

"""Model clients shared by every debate of a process: one provider (its SDK client and HTTP connection pool) per
provider, server and key, per event loop.

Building an OpenAI client cost ~22 ms of CPU (its SSL context loads the CA bundle) and gave each debate its own
connection pool; a server with 200 debates on one provider paid that 200 times and opened 200 pools. Here the
first debate builds it and the others reuse it, its connections kept alive between calls.

- The key is part of what a client is shared by (two keys never share a client), held as a SHA-256 fingerprint:
  the key itself stays in the client that sends it, nowhere else.
- A client belongs to the event loop it was built in (its pooled connections are that loop's); built outside a
  running loop, it is not shared.
- A client for an `https://` server verifies with one SSL context a process: loading the CA bundle costs ~25 ms of
  CPU, which every event loop (a `moot run`, an eval item's loop, each test) paid again. An SSL context is made to
  be shared by many connections; it is read from the environment (SSL_CERT_FILE, SSL_CERT_DIR) once, when the
  first such client is built.
- A client for an `http://` server gets no CA bundle (nothing to verify on plain HTTP): an SSL context that trusts
  nothing, so a redirect to `https://` fails closed rather than unverified. With a proxy set in the environment it
  gets the default client, which reads the proxy.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import ssl
import urllib.request
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import httpx2

T = TypeVar("T")
Key = tuple[str, str | None, str]

_BY_LOOP: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Key, Any]] = weakref.WeakKeyDictionary()
# Matches pydantic-ai's own clients (create_async_httpx2_client): the OpenAI and Anthropic SDKs' limits.
_PLAIN_LIMITS = (1000, 100)


def fingerprint(api_key: str | None) -> str:
    """What the cache keeps of a key: enough to tell two keys apart, nothing to call with."""
    return hashlib.sha256(api_key.encode()).hexdigest() if api_key else ""


def shared(kind: str, base_url: str | None, api_key: str | None, make: Callable[[], T]) -> T:
    """The `kind` (a provider's name) of client for `base_url` and `api_key` in this event loop: built by `make`
    once, then the same one."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return make()
    built = _BY_LOOP.setdefault(loop, {})
    key = (kind, base_url, fingerprint(api_key))
    if key not in built:
        built[key] = make()
    found: T = built[key]
    return found


def http_client(base_url: str | None) -> httpx2.AsyncClient:
    """pydantic-ai's HTTP client (its timeouts, pool limits, user agent) for calls to `base_url`."""
    import httpx2
    from pydantic_ai.models import create_async_httpx2_client

    if _proxied():
        return create_async_httpx2_client()
    plain = base_url is not None and base_url.startswith("http://")
    transport = httpx2.AsyncHTTPTransport(
        verify=plain_http_context() if plain else verified_context(),
        limits=httpx2.Limits(max_connections=_PLAIN_LIMITS[0], max_keepalive_connections=_PLAIN_LIMITS[1]),
    )
    return create_async_httpx2_client(transport=transport)


@functools.cache
def verified_context() -> ssl.SSLContext:
    """httpx's default SSL context (the CA bundle it would load for a client of its own), made once."""
    import httpx2

    return httpx2.create_ssl_context()


def plain_http_context() -> ssl.SSLContext:
    """An SSL context that verifies certificates against no CA at all: cheap to make (no bundle to load), and
    any TLS connection made with it fails."""
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def _proxied() -> bool:
    return bool(urllib.request.getproxies())


def clear() -> None:
    """Forget every shared client (tests)."""
    _BY_LOOP.clear()

"""The web page: static files served by `moot serve` at `/`, talking only to the /api routes.

Plain HTML, CSS and ES modules, no build step; the two vendored libraries (markdown-it, DOMPurify) are
committed, and `scripts/vendor-web.sh` rebuilds them from npm.
"""

from __future__ import annotations

from pathlib import Path

from starlette.middleware.gzip import GZipMiddleware
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

STATIC = Path(__file__).parent / "static"

# Debaters' text is untrusted. The page escapes and sanitises it; this policy is the second wall: no inline
# script, no script or image from elsewhere, no frames, no form posted away, no plugin.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "font-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)
_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    # The page's modules change with moot's version; revalidate rather than run a stale mix.
    (b"cache-control", b"no-cache"),
]


class _PageHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *_HEADERS]}
            await send(message)

        await self.app(scope, receive, with_headers)


def page_app() -> ASGIApp:
    """The static page as an ASGI app, compressed, with its security headers."""
    return _PageHeaders(GZipMiddleware(StaticFiles(directory=STATIC, html=True), minimum_size=1024))


__all__ = ["CSP", "STATIC", "page_app"]

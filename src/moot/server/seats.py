"""Join links: how the people in a debate reach it through this server.

Each person's seat (a participant whose model is `human`: its id; a person judging: `judge`, or `judge-<n>` for
panel seat n; the audience's people: `audience`) gets a secret token when the debate is created, shown once in the
creation's answer as a link, `<server>/#/join/<debate>/<seat>/<token>` (in the fragment, so it reaches no access
log). The store keeps only its SHA-256 (moot.store.seats).

A request carrying `X-Moot-Seat: <token>` speaks for that seat (`SeatAuth`), with or without the server's bearer
token: it may read its debate (the debate, its events, its status, its ledger, who the seat is) and make only its
own kind of change (a participant's turn, a judge's verdict, an audience vote); never anything of another debate or
on any other route. A wrong, replaced or revoked token is refused (403) on those routes. Nobody else speaks for a
person: giving a turn or a verdict, or voting, needs the seat's token, whoever asks.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
import secrets
from collections.abc import AsyncIterator, Iterator
from typing import TypeVar
from urllib.parse import urlsplit

from fastapi import HTTPException, Request
from pydantic import BaseModel, Field
from starlette.types import ASGIApp, Receive, Scope, Send

from moot.domain.config import DebateConfig
from moot.domain.events import utc_now
from moot.engine import public_url
from moot.errors import ConfigError
from moot.server.asgi import deny, header
from moot.server.settings import is_loopback
from moot.store import EventStore
from moot.store.seats import SeatKind, SeatRecord

T = TypeVar("T")

SEAT = "moot.seat"  # scope key: the SeatRecord a request speaks for (its token checked)
SEAT_HEADER = "X-Moot-Seat"
AUDIENCE = "audience"
JOIN_PATH = "/#/join"

_DEBATE_PATH = re.compile(r"^/api/debates/([^/]+)(/.*)?$")
# What a seat may ask, by method and the path after /api/debates/<id>: None, any seat of the debate; else its kind.
SEAT_ROUTES: dict[tuple[str, str], SeatKind | None] = {
    ("GET", ""): None,
    ("GET", "/events"): None,
    ("GET", "/status"): None,
    ("GET", "/ledger"): None,
    ("GET", "/seat"): None,
    ("GET", "/audience"): "audience",
    ("POST", "/turns"): "participant",
    ("POST", "/verdict"): "judge",
    ("POST", "/audience/voters"): "audience",
    ("POST", "/audience/votes"): "audience",
}
_WHAT: dict[SeatKind, str] = {
    "participant": "give a turn",
    "judge": "give a verdict",
    "audience": "vote or see the audience's counts",
}


class SeatLink(BaseModel):
    """A seat's join link, as the debate's creator gets it once."""

    kind: SeatKind
    name: str
    token: str
    url: str
    local_only: bool = Field(
        default=False,
        description="The link names this machine (a loopback address): it opens only here. Set the address others "
        "reach the server at with `moot serve --public-url` (or MOOT_PUBLIC_URL)",
    )


class SeatInfo(BaseModel):
    """A seat as anyone may see it: never its token."""

    debate_id: str
    seat: str
    kind: SeatKind
    name: str


class SeatState(SeatInfo):
    revoked: bool


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    return secrets.token_urlsafe(32)


def join_url(base: str, debate_id: str, seat: str, token: str) -> str:
    return f"{base.rstrip('/')}{JOIN_PATH}/{debate_id}/{seat}/{token}"


def link_base(request: Request) -> str:
    """The base of every link this server hands out (join links, a debate's page): the public URL where one is
    set (moot.engine.public_url: `moot serve --public-url`, MOOT_PUBLIC_URL), else the address the request came to."""
    return public_url() or str(request.base_url).rstrip("/")


def seat_link(base: str, debate_id: str, seat: str, kind: SeatKind, name: str, token: str) -> SeatLink:
    url = join_url(base, debate_id, seat, token)
    local = is_loopback(urlsplit(url).hostname or "")
    return SeatLink(kind=kind, name=name, token=token, url=url, local_only=local)


def seat_plan(config: DebateConfig) -> list[tuple[str, SeatKind, str]]:
    """The seats people take in `config`: (seat, kind, name), in config order. A ConfigError when a participant's
    id is a judge's or the audience's seat (rename the participant)."""
    plan: list[tuple[str, SeatKind, str]] = [
        (p.id, "participant", p.name) for p in config.participants if p.model.is_person
    ]
    taken = {p.id: i for i, p in enumerate(config.participants)}
    others: list[tuple[str, SeatKind, str]] = []
    if config.judges:
        others += [(f"judge-{i}", "judge", j.name) for i, j in enumerate(config.judges) if j.model.is_person]
    elif config.judge is not None and config.judge.model.is_person:
        others.append(("judge", "judge", config.judge.name))
    if config.audience is not None and config.audience.people:
        others.append((AUDIENCE, "audience", "Audience"))
    for seat, _, _ in others:
        if seat in taken:
            raise ConfigError(
                f"the participant's id {seat!r} is also a seat for people here; give the participant another name",
                field=f"participants.{taken[seat]}.name",
            )
    return plan + others


async def open_seats(
    store: EventStore, debate_id: str, config: DebateConfig, base: str
) -> dict[str, SeatLink]:
    """Make a new debate's seats: their tokens' hashes stored, their links returned (the only time they are)."""
    now = utc_now()
    links: dict[str, SeatLink] = {}
    records: list[SeatRecord] = []
    for seat, kind, name in seat_plan(config):
        token = new_token()
        records.append(SeatRecord(debate_id, seat, kind, name, token_hash(token), now))
        links[seat] = seat_link(base, debate_id, seat, kind, name, token)
    await store.add_seats(records)
    return links


def seat_of(scope: Scope) -> SeatRecord | None:
    """The seat a request speaks for, its token checked (SeatAuth); None when it carries none."""
    seat = scope.get(SEAT)
    return seat if isinstance(seat, SeatRecord) else None


def seat_route(method: str, path: str) -> tuple[str, SeatKind | None] | None:
    """The debate id and the kind of seat a request may be made for with a seat's token; None: no seat may."""
    found = _DEBATE_PATH.match(path)
    if found is None:
        return None
    rest = (found.group(2) or "").rstrip("/") if found.group(2) != "/" else ""
    key = (method.upper(), rest)
    if key not in SEAT_ROUTES:
        return None
    return found.group(1), SEAT_ROUTES[key]


class SeatAuth:
    """Checks `X-Moot-Seat` on the routes a seat may use, before the bearer token is asked for (see the module
    docstring); elsewhere the header is ignored, and the route needs what it needs without one."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        scope.pop(SEAT, None)
        token = header(scope, SEAT_HEADER.lower().encode())
        method = str(scope.get("method", "GET")).upper()
        path: str = scope["path"]
        route = seat_route(method, path)
        if token is None or (route is None and (method, path) != ("GET", "/api/meta")):
            await self.app(scope, receive, send)
            return
        store: EventStore = scope["app"].state.manager.store
        debate_id = route[0] if route is not None else None
        found = await store.seat_by_token(token_hash(token), debate_id) if token else None
        if found is None or found.revoked:
            why = (
                "revoked" if found is not None else "not a seat of this debate" if debate_id else "not valid"
            )
            await deny(
                scope,
                receive,
                send,
                403,
                f"this join link's token is {why}; ask the debate's creator for a new link ({SEAT_HEADER})",
            )
            return
        kind = route[1] if route is not None else None
        if kind is not None and found.kind != kind:
            await deny(
                scope,
                receive,
                send,
                403,
                f"the {found.kind} seat {found.seat!r} may not {_WHAT[kind]}; that takes the {kind}'s own link",
            )
            return
        scope[SEAT] = found
        await self.app(scope, receive, send)


def needs_seat(scope: Scope, kind: SeatKind) -> SeatRecord:
    """The seat a request speaks for, which must be of `kind` (SeatAuth checked its debate and kind); 403 when
    the request carries no seat's token: nobody else speaks for a person, the API token's holder included."""
    seat = seat_of(scope)
    if seat is None or seat.kind != kind:
        raise HTTPException(
            403,
            f"only the person in the seat may {_WHAT[kind]}: send their join link's token as {SEAT_HEADER} "
            "(the API token does not speak for a person)",
        )
    return seat


__all__ = [
    "AUDIENCE",
    "SEAT",
    "SEAT_HEADER",
    "SeatAuth",
    "SeatInfo",
    "SeatLink",
    "SeatState",
    "join_url",
    "link_base",
    "needs_seat",
    "new_token",
    "open_seats",
    "seat_link",
    "seat_of",
    "seat_plan",
    "seat_route",
    "token_hash",
]


class OpenStreams:
    """The event streams a seat's link has open in this server, so revoking the link (or replacing its token) ends
    them at once: a leaked link stops reading the debate now, not when its reader reconnects."""

    def __init__(self) -> None:
        self._open: dict[tuple[str, str], set[asyncio.Event]] = {}

    @contextlib.contextmanager
    def watch(self, debate_id: str, seat: str) -> Iterator[asyncio.Event]:
        """An event set when this seat's link is revoked or replaced, for as long as the stream is open."""
        revoked = asyncio.Event()
        self._open.setdefault((debate_id, seat), set()).add(revoked)
        try:
            yield revoked
        finally:
            watching = self._open.get((debate_id, seat), set())
            watching.discard(revoked)
            if not watching:
                self._open.pop((debate_id, seat), None)

    def revoke(self, debate_id: str, seat: str) -> None:
        for revoked in self._open.pop((debate_id, seat), set()):
            revoked.set()


async def until_set(items: AsyncIterator[T], stop: asyncio.Event) -> AsyncIterator[T]:
    """`items` until `stop` is set (then it ends, the rest unread), even while no item comes."""
    it = aiter(items)
    stopped = asyncio.ensure_future(stop.wait())
    following: asyncio.Future[T] | None = None
    try:
        while True:
            following = asyncio.ensure_future(anext(it))
            await asyncio.wait({following, stopped}, return_when=asyncio.FIRST_COMPLETED)
            if not following.done():
                return
            try:
                item = following.result()
            except StopAsyncIteration:
                return
            following = None
            yield item
    finally:
        stopped.cancel()
        if following is not None and not following.done():
            following.cancel()
        if following is not None:
            # Read its end (cancelled, finished or the feed's own end), so nothing is left unretrieved.
            following.add_done_callback(lambda f: f.cancelled() or f.exception())

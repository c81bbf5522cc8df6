"""The HTTP API: debates over REST, their events live over Server-Sent Events and WebSocket.

    uvicorn --factory moot.server:create_app     (or `moot serve`)

POST /api/debates checks the config, starts the debate in the background and answers 202 with its
id at once: a separate start call would only add a state (created, never started) to explain.
API keys live on the server only: a request can neither send one nor read one. A debate with people in it
(a participant or judge whose model is `human`, an audience's people) answers with each person's join link,
once (moot.server.seats); they take their turns through moot.server.people_api.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, Header, Query, Request, WebSocket, WebSocketDisconnect
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse
from fastapi.sse import EventSourceResponse, ServerSentEvent
from pydantic import BaseModel, ConfigDict, Field

from moot import __version__
from moot.config_files import RequestedConfig
from moot.domain.config import MAX_JUDGES, FormatName
from moot.domain.events import ConfigEdited, DebatePaused, DebateStarted, Event
from moot.domain.ledger import LedgerRow, ledger
from moot.domain.rubric import Rubric
from moot.domain.state import DebateState
from moot.domain.status import Status
from moot.domain.text import first_sentence
from moot.domain.usage import Usage
from moot.engine import ModelResolver, costs_nothing
from moot.errors import ConfigError, NotFoundError, StateError, UserError
from moot.export import ExportFormat, export
from moot.export.backfill import backfilled, fold_backfilled, lacks_display, state_lacks_display
from moot.protocols import PROTOCOLS, format_title, get_protocol
from moot.server.configs import router as configs_router
from moot.server.edit import router as edit_router
from moot.server.frames import wire_json
from moot.server.manager import RUN_ENDS, Action, DebateManager, Subscriber
from moot.server.mcp_mount import mount_mcp
from moot.server.meta import router as meta_router
from moot.server.openai_compat import router as openai_router
from moot.server.openai_idempotency import Requests
from moot.server.people_api import DebateView, debate_view
from moot.server.people_api import router as people_router
from moot.server.presets_api import router as presets_router
from moot.server.seat_view import seat_event, seat_state, secrets_of
from moot.server.seats import (
    OpenStreams,
    SeatLink,
    link_base,
    open_seats,
    seat_of,
    seat_plan,
    until_set,
)
from moot.server.security import admit, claim, secure
from moot.server.settings import ServerSettings
from moot.server.user_config import router as user_config_router
from moot.server.voters import IssueLimit
from moot.store import DebateSummary, EventStore, db_url_from
from moot.telemetry_setup import check_telemetry
from moot.web import page_app

# Sequence numbers and offsets fit the databases' 64-bit integers with room to spare; larger ones are a 422.
MAX_SEQ = 2**53

_MEDIA: dict[str, str] = {
    "markdown": "text/markdown; charset=utf-8",
    "json": "application/json",
    "text": "text/plain; charset=utf-8",
    "html": "text/html; charset=utf-8",
}


class Started(BaseModel):
    id: str
    status: Literal["queued", "running", "created"]
    links: dict[str, SeatLink] | None = Field(
        default=None,
        description="With people in the debate: each seat's join link (participant id, `judge`, `judge-<n>`, "
        "`audience`), shown this once; left out otherwise",
    )


class DebateStatus(BaseModel):
    id: str
    status: Status | Literal["queued"]
    round: int
    turns: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    requests: int = Field(default=0, description="Model calls made so far (a debate with none has cost $0)")
    free: bool = Field(
        default=False,
        description="Every model the debate may call costs nothing (local, fake, people's seats): its cost is $0, "
        "never unknown",
    )


class Control(BaseModel):
    """What a control action set going; the events and /status show when it is done."""

    id: str
    status: Literal["starting", "pausing", "resuming", "retrying", "stopping", "judging"]


class JudgeAgain(BaseModel):
    """Who gives a debate its new verdict (`POST /api/debates/{id}/judge`)."""

    model_config = ConfigDict(extra="forbid")

    judges: list[dict[str, Any]] = Field(
        default_factory=list,
        max_length=MAX_JUDGES,
        description="Empty: the debate's own judge or panel; one: another judge; several: a panel. Each a judge's "
        "config (at least `model`); instructions, retries and rubric left out are the debate judge's",
    )
    rubric: Rubric | None = Field(
        default=None,
        description="The rubric for every judge asked, as `judge.rubric` is written (left out: each judge's own); a "
        "bare weight for a criterion the debate describes keeps its description",
    )


class PhaseInfo(BaseModel):
    name: str
    first: int
    last: int
    description: str


class FormatInfo(BaseModel):
    name: str = Field(description="What a config's `format` takes")
    title: str = Field(description="The name as a person reads it, e.g. 'Structured rounds'")
    summary: str = Field(description="The description's first sentence, for a one-line list")
    description: str
    phases: list[PhaseInfo]
    assesses_rounds: bool = Field(
        description="Whether its judge assesses every round when `stopping.assess_rounds` is left out"
    )
    asks_participants: str | None = Field(
        description="What it asks every participant for as a structured answer (at the judge's temperature, "
        "`temperatures.judge`), e.g. 'to rank the others' answers'; null: only turns"
    )


class LedgerReport(BaseModel):
    """Who spent what: the ledger's rows and its totals by speaker, role, round ('after': the verdict and
    other calls outside the rounds) and model."""

    rows: list[LedgerRow]
    total: Usage
    by_who: dict[str, Usage]
    by_role: dict[str, Usage]
    by_round: dict[str, Usage]
    by_model: dict[str, Usage]


def manager_of(request: Request | WebSocket) -> DebateManager:
    manager: DebateManager = request.app.state.manager
    return manager


async def known(request: Request, debate_id: str) -> str:
    """The id of a debate that is running or stored; 404 otherwise (checked before a stream starts)."""
    manager = manager_of(request)
    if not manager.running(debate_id) and not await _exists(manager.store, debate_id):
        raise NotFoundError(f"no debate {debate_id!r}")
    return debate_id


async def state_of(request: Request, debate_id: str) -> DebateState:
    store = manager_of(request).store
    state = await store.state(debate_id)
    # A debate an older moot recorded: completed as the exports complete it, so the page says what they say.
    return fold_backfilled(await store.events(debate_id)) if state_lacks_display(state) else state


def create_app(
    db_url: str | None = None,
    *,
    max_running: int = 4,
    resolve: ModelResolver | None = None,
    settings: ServerSettings | None = None,
    on_restart: Literal["resume", "interrupt"] = "resume",
    enqueue_to: str | None = None,
) -> FastAPI:
    """The API over the event store at `db_url` (the default store when None). `resolve` replaces the
    model lookup (tests pass fakes); `settings` (token, CORS, limits) default to the environment's. At start,
    debates that were running when the server stopped are resumed, or marked interrupted (`on_restart`).
    With `enqueue_to` (a queue URL), debates are queued for `moot worker` processes instead of run here.
    MOOT_OTEL=1 without the otel extra is refused here, before the server listens."""
    check_telemetry()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            store = await stack.enter_async_context(await EventStore.open(db_url_from(db_url)))
            dispatcher = None
            if enqueue_to is not None:
                from moot.workers.client import QueueClient  # DBOS only for a server that queues

                dispatcher = await stack.enter_async_context(await QueueClient.open(enqueue_to))
            app.state.manager = DebateManager(
                store, max_running=max_running, resolve=resolve, dispatcher=dispatcher
            )
            await app.state.manager.recover(on_restart)
            await stack.enter_async_context(mcp_sessions())  # the MCP tools at /mcp
            try:
                yield
            finally:
                await app.state.manager.close()

    app = FastAPI(title="moot", version=__version__, lifespan=lifespan)
    app.state.seat_streams = OpenStreams()  # join links' open streams, ended when a link is revoked
    app.state.voter_ids = IssueLimit()  # audience voter ids issued per client address (moot.server.voters)
    app.state.openai_requests = Requests()  # /v1's debates by request key (moot.server.openai_idempotency)
    secure(app, settings or ServerSettings.from_env())

    @app.exception_handler(UserError)
    async def user_error(request: Request, exc: UserError) -> JSONResponse:
        code = 404 if isinstance(exc, NotFoundError) else 409 if isinstance(exc, StateError) else 422
        return JSONResponse({"detail": exc.public(), "field": exc.field}, status_code=code)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        # Field paths as dotted strings ("participants.0.model"), the way the CLI names them.
        # The message as a validator wrote it, without pydantic's "Value error, " before it.
        errors = [
            {
                "field": ".".join(str(p) for p in e["loc"] if p != "body"),
                "message": str(e["msg"]).removeprefix("Value error, "),
            }
            for e in exc.errors()
        ]
        return JSONResponse({"detail": errors}, status_code=422)

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok", "version": __version__}

    @app.post("/api/debates", status_code=202, response_model_exclude_none=True)
    async def create(request: Request, config: RequestedConfig, start: bool = True) -> Started:
        """Check the config, then start the debate in the background (or, with `moot serve --enqueue`, queue
        it for a worker); `start=false` only records it (status `created`) for a later `POST .../start`.
        What a config file may leave out is filled as `moot run --config` fills it: participants' names,
        the stances of a two-sided debate, a format's own rounds. With people in it (model `human`,
        `audience.people`), the answer's `links` hold their join links: shown this once."""
        manager = manager_of(request)
        people = config.people()
        if people and manager.dispatcher is not None:
            raise ConfigError(
                "a person answers here, and this server queues debates for workers (`moot serve --enqueue`), "
                "which cannot take a person's turn; hold it on a server without --enqueue, or with `moot run`",
                field=_field_path(people[0]),
            )
        seat_plan(config)  # a participant named like a judge's or the audience's seat is refused first
        queued = start and manager.dispatcher is not None
        run = admit(request, config, lambda c: manager.start(c, hold=not start or queued, seats=True))
        links = await open_seats(manager.store, run.id, config, link_base(request)) if people else None
        await manager.recorded(
            run
        )  # stored before the answer: accepted is durable, and a GET finds it at once
        if queued:
            await manager.carry_on(run.id, "start")  # on the queue, for a worker
            return Started(id=run.id, status="queued")
        if not start:
            return Started(id=run.id, status="created", links=links)
        return Started(id=run.id, status="running" if run.started else "queued", links=links)

    @app.get("/api/debates")
    async def list_debates(
        request: Request,
        status: Status | None = None,
        text: str | None = None,
        format: FormatName | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: Annotated[int, Query(ge=1, le=500)] = 50,
        offset: Annotated[int, Query(ge=0, le=MAX_SEQ)] = 0,
        include_eval: bool = False,
        eval_run: Annotated[str | None, Query(min_length=1, max_length=64)] = None,
    ) -> list[DebateSummary]:
        """Debates newest first. Those `moot eval` held are left out unless `include_eval=true`; `eval_run`
        lists only that run's."""
        if format is not None:
            get_protocol(format)  # an unknown name is a mistake to report, not a filter that matches nothing
        store = manager_of(request).store
        return await store.list_debates(
            text=text,
            status=status,
            format=format,
            since=since,
            until=until,
            limit=limit,
            offset=offset,
            include_eval=include_eval,
            eval_run=eval_run,
        )

    @app.get("/api/debates/{debate_id}", response_model=DebateView)
    async def get_debate(request: Request, debate_id: str) -> DebateView | JSONResponse:
        """The debate's whole state, folded from its events; `awaiting_people` lists what it waits for from
        people and `audience` the audience's votes (moot.server.people_api). Read with a join link's token, the
        config holds only what the debate's people may see (moot.server.seat_view)."""
        state = await state_of(request, debate_id)
        view = await debate_view(manager_of(request), state)
        if seat_of(request.scope) is None:
            return view
        return JSONResponse(seat_state(view.model_dump(mode="json"), state.config))

    @app.get("/api/debates/{debate_id}/status")
    async def debate_status(request: Request, debate_id: str) -> DebateStatus:
        manager = manager_of(request)
        run = manager.get(debate_id)
        try:
            state = await state_of(request, debate_id)
        except NotFoundError:
            if run is None:
                raise
            # Waiting for a slot, or holding one an instant before its first event is stored.
            return DebateStatus(
                id=debate_id,
                status="pending" if run.started else "queued",
                round=0,
                turns=0,
                input_tokens=0,
                output_tokens=0,
                cost_usd=None,
                free=costs_nothing(run.config),
            )
        usage = state.usage
        return DebateStatus(
            id=debate_id,
            status=state.status,
            round=len(state.rounds),
            turns=len(state.turns),
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cost_usd=usage.cost_usd,
            requests=usage.requests,
            free=state.config is not None and costs_nothing(state.config),
        )

    @app.delete("/api/debates/{debate_id}", status_code=204)
    async def delete(request: Request, debate_id: str) -> None:
        manager = manager_of(request)
        async with manager.before_start(debate_id, "stop it first") as queued:
            if queued is not None:  # it waits for a running slot: it leaves the queue, and never starts
                await manager.unqueue(queued)
            await manager.store.delete(debate_id)
        manager.forget(debate_id)

    @app.post("/api/debates/{debate_id}/start", status_code=202)
    async def start_debate(request: Request, debate_id: str) -> Control:
        """Run a debate created with `start=false`."""
        return await _carry_on(request, debate_id, "start")

    @app.post("/api/debates/{debate_id}/pause", status_code=202)
    async def pause(request: Request, debate_id: str) -> Control:
        """Pause after the turn under way (all of them, for speakers who speak at once); resume carries on."""
        if not manager_of(request).pause(debate_id):
            await _not_running(request, debate_id, "pause")
        return Control(id=debate_id, status="pausing")

    @app.post("/api/debates/{debate_id}/resume", status_code=202)
    async def resume(request: Request, debate_id: str) -> Control:
        """Carry a paused or interrupted debate on from its last completed turn."""
        return await _carry_on(request, debate_id, "resume")

    @app.post("/api/debates/{debate_id}/retry", status_code=202)
    async def retry(request: Request, debate_id: str) -> Control:
        """Carry a failed debate on from its last completed turn."""
        return await _carry_on(request, debate_id, "retry")

    @app.post("/api/debates/{debate_id}/stop", status_code=202)
    async def stop(request: Request, debate_id: str) -> Control:
        """End the debate now: the turn under way is cut, and the judge rules on what exists. A paused,
        interrupted or failed debate is judged as it stands."""
        if manager_of(request).stop(debate_id):
            return Control(id=debate_id, status="stopping")
        return await _carry_on(request, debate_id, "stop")  # judging a stopped debate is a run too

    @app.post("/api/debates/{debate_id}/judge", status_code=202)
    async def judge(request: Request, debate_id: str, body: JudgeAgain | None = None) -> Control:
        """A new verdict on a debate that has turns and is not running: by its own judge, another judge or a
        panel, whether its verdict failed or not. Every verdict is kept; the result becomes the new one. The
        judges are checked first (422 naming `judges.N` or `rubric`); the verdict streams like any run."""
        asked = body or JudgeAgain()
        for i, judge in enumerate(asked.judges):
            model = judge.get("model")
            if isinstance(model, str) and model.strip().lower().partition(":")[0] == "human":
                raise ConfigError(
                    "a person judges from a seat given when the debate was created; give a model here (the "
                    "debate's own judges, people included, are asked again with judges left empty)",
                    field=f"judges.{i}.model",
                )
        claim(request, debate_id)
        await manager_of(request).judge(debate_id, judges=asked.judges, rubric=asked.rubric)
        return Control(id=debate_id, status="judging")

    @app.get(
        "/api/debates/{debate_id}/export",
        response_class=PlainTextResponse,
        responses={200: {"content": {media: {} for media in _MEDIA.values()}}},
    )
    async def export_debate(
        request: Request, debate_id: str, format: ExportFormat = "markdown", include_code: bool = False
    ) -> PlainTextResponse:
        stored = await manager_of(request).store.events(debate_id)
        if not stored:
            raise NotFoundError(f"no debate {debate_id!r}")
        document = export(stored, format, include_code=include_code, code_field="include_code")
        return PlainTextResponse(document, media_type=_MEDIA[format])

    @app.get("/api/debates/{debate_id}/ledger")
    async def debate_ledger(request: Request, debate_id: str) -> LedgerReport:
        stored = await manager_of(request).store.events(debate_id)
        if not stored:
            raise NotFoundError(f"no debate {debate_id!r}")
        book = ledger(stored)
        return LedgerReport(
            rows=book.rows,
            total=book.total,
            by_who=book.by_who(),
            by_role=book.by_role(),
            by_round=book.by_round(),
            by_model=book.by_model(),
        )

    @app.get("/api/formats")
    async def formats(rounds: Annotated[int, Query(ge=1, le=50)] = 3) -> list[FormatInfo]:
        """Every format a config's `format` takes: its title, what it is, and its phases in a debate of
        `rounds` rounds."""
        return [
            FormatInfo(
                name=name,
                title=format_title(name),
                summary=first_sentence(protocol.description),
                description=protocol.description,
                assesses_rounds=protocol.traits.assesses_by_default,
                asks_participants=protocol.traits.asks_participants,
                phases=[
                    PhaseInfo(name=p.name, first=p.first, last=p.last, description=p.description)
                    for p in protocol.phases(rounds)
                ],
            )
            for name, protocol in PROTOCOLS.items()
        ]

    @app.get("/api/debates/{debate_id}/events", response_class=EventSourceResponse)
    async def events(
        request: Request,
        debate_id: Annotated[str, Depends(known)],
        last_event_id: Annotated[int | None, Header(ge=0, le=MAX_SEQ)] = None,
    ) -> AsyncIterator[ServerSentEvent]:
        """Every stored event after Last-Event-ID (each with `id: seq`), then the live stream (token
        deltas without an id); ends after the terminal event, or at once when the join link it was opened with
        is revoked."""
        manager = manager_of(request)
        feed = _feed(manager, debate_id, last_event_id or 0)
        seat = seat_of(request.scope)
        # A join link reads each event as its people may (moot.server.seat_view), against the debate's config.
        secrets = secrets_of((await manager.store.state(debate_id)).config) if seat is not None else []
        streams = request.app.state.seat_streams
        with (
            streams.watch(seat.debate_id, seat.seat)
            if seat is not None
            else contextlib.nullcontext() as revoked
        ):
            async for item in until_set(feed, revoked) if revoked is not None else feed:
                if isinstance(item, str):
                    yield ServerSentEvent(event="disconnected", data={"reason": item})
                    return
                seq = str(item.seq) if item.durable else None
                if seat is None:
                    yield ServerSentEvent(raw_data=wire_json(item), event=item.type, id=seq)
                    continue
                if isinstance(item, DebateStarted | ConfigEdited):
                    secrets = secrets_of(item.config)
                if (seen := seat_event(item, secrets)) is not None:
                    yield ServerSentEvent(raw_data=json.dumps(seen), event=item.type, id=seq)
            if revoked is not None and revoked.is_set():
                reason = "this join link was revoked; ask the debate's creator for a new link"
                yield ServerSentEvent(event="disconnected", data={"reason": reason})

    @app.websocket("/api/ws/{debate_id}")
    async def ws(
        websocket: WebSocket, debate_id: str, after: Annotated[int, Query(ge=0, le=MAX_SEQ)] = 0
    ) -> None:
        """The events stream as JSON messages; `after` plays the part of Last-Event-ID."""
        await websocket.accept()
        try:
            async for item in _feed(manager_of(websocket), debate_id, after):
                if isinstance(item, str):
                    await websocket.send_json({"type": "disconnected", "reason": item})
                    break
                await websocket.send_text(wire_json(item))
        except NotFoundError as exc:
            await websocket.send_json({"type": "error", "detail": str(exc)})
        except WebSocketDisconnect:
            return
        await websocket.close()

    app.include_router(configs_router)
    app.include_router(edit_router)  # PATCH a created debate's config
    app.include_router(meta_router)
    app.include_router(openai_router)  # /v1: presets as OpenAI models
    app.include_router(people_router)  # join links: people's turns, verdicts, votes; the seats
    app.include_router(presets_router)
    app.include_router(user_config_router)  # /api/config: `moot configure`'s defaults
    mcp_sessions = mount_mcp(app)
    # Last, so that every route above wins over a file of the same name.
    app.mount("/", page_app(), name="page")
    return app


async def _feed(manager: DebateManager, debate_id: str, after: int) -> AsyncIterator[Event | str]:
    """Stored events after `after`, then live ones, with no gap and no repeat; a str is the reason the
    feed was cut. Raises NotFoundError (before yielding anything) for an unknown debate."""
    last = after
    while True:
        # A created debate's feed replays its log, waits for its start, then goes on from where it was.
        created = False
        async for item in _feed_once(manager, debate_id, after, last):
            if isinstance(item, int):  # the pass's last item: it ends (and unsubscribes) right after
                last, created = item, True
                continue
            yield item
            if not isinstance(item, str):
                last = item.seq or last
        if not created:
            return
        await manager.until_carried_on(debate_id)


async def _feed_once(
    manager: DebateManager, debate_id: str, after: int, last: int
) -> AsyncIterator[Event | str | int]:
    """One pass of `_feed` from `last`; ends with the last seq sent (an int) when the debate is created and not
    started, so the caller waits for its start and comes back."""
    # Subscribe before reading the store: an event appended in between then arrives live and is
    # dropped by seq, instead of falling between the two.
    sub: Subscriber | None = manager.subscribe(debate_id)
    try:
        # Progress markers wait in memory for the next checkpoint; one already sent live to others
        # would otherwise be in neither the store nor this feed.
        await manager.store.flush()
        stored = await manager.store.events(debate_id, after_seq=last)
        if sub is None and not stored and last == after and not await _exists(manager.store, debate_id):
            raise NotFoundError(f"no debate {debate_id!r}")
        if any(lacks_display(e) for e in stored):  # recorded by an older moot: completed as the exports are
            stored = backfilled(stored, await manager.store.state(debate_id) if last else DebateState())
        for event in stored:  # a resumed debate's log holds earlier runs' ends: replay past them
            yield event
            last = event.seq or last
        if sub is None:
            if await _created(manager, debate_id, stored):
                yield last  # nothing runs it yet: its start is worth waiting for
                return
            async for event in manager.follow(debate_id, last):  # a worker's debate: tail the store
                yield event
            return
        while (live := await sub.get()) is not None:
            if live.durable:
                if (live.seq or 0) <= last:
                    continue
                last = live.seq or last
            yield live
            if isinstance(live, RUN_ENDS):
                return
        if sub.reason is not None:
            yield sub.reason
    finally:
        if sub is not None:
            manager.unsubscribe(debate_id, sub)


async def _created(manager: DebateManager, debate_id: str, stored: list[Event]) -> bool:
    """Whether the debate was created and not started: its log ends at the pause of its creation, and no worker
    has it (a worker's run is followed through the store)."""
    tail = stored[-1] if stored else await manager.store.last_event(debate_id)
    if not (isinstance(tail, DebatePaused) and tail.before_start):
        return False
    return not (manager.dispatcher is not None and await manager.dispatcher.active(debate_id))


_UNDER_WAY: dict[Action, Literal["starting", "resuming", "retrying", "stopping"]] = {
    "start": "starting",
    "resume": "resuming",
    "retry": "retrying",
    "stop": "stopping",
}


async def _carry_on(request: Request, debate_id: str, action: Action) -> Control:
    """A new run over a stored debate's log, counted against the caller's running debates."""
    claim(request, debate_id)
    await manager_of(request).carry_on(debate_id, action)
    return Control(id=debate_id, status=_UNDER_WAY[action])


async def _not_running(request: Request, debate_id: str, action: Action | Literal["pause"]) -> None:
    """Raise the right error for an action that needs a running debate: 404 unknown, 409 otherwise."""
    state = await state_of(request, debate_id)
    dispatcher = manager_of(request).dispatcher
    if dispatcher is not None and await dispatcher.active(debate_id):
        raise StateError(
            f"debate {debate_id!r} is queued or running on a worker; {action} reaches only debates this server runs"
        )
    raise StateError(f"debate {debate_id!r} is {state.status}, not running; {action} needs a running debate")


def _field_path(seat: str) -> str:
    """A seat of `DebateConfig.people()` (participants[0], judge, audience.people) as the API names fields."""
    path = re.sub(r"\[(\d+)\]", r".\1", seat)
    return path if path.startswith("audience") else f"{path}.model"


async def _exists(store: EventStore, debate_id: str) -> bool:
    try:
        await store.summary(debate_id)
    except NotFoundError:
        return False
    return True


__all__ = ["create_app"]

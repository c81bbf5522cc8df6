"""`/v1`: every preset as a model of an OpenAI-compatible API, so any OpenAI client can hold a debate.

    GET  /v1/models              every preset, as moot/NAME
    POST /v1/chat/completions    model: moot/NAME; the last user message is the topic, earlier ones the context

The debate runs as `POST /api/debates` runs it (the same checks, the same per-token limit, stored like any
other) and the reply is the format's answer (moot.domain.answer), with `usage` summed over the whole
debate (its cost and cached tokens included) and its id as `moot_debate_id` (and in `id`: chatcmpl-<debate id>).
With `stream: true` the answer comes as chunks, and an SSE comment at least every KEEPALIVE_S keeps the
connection from looking idle while nothing else is sent; `moot_stream_turns: true` streams each turn as it is
completed first, `moot_reasoning: true` as `reasoning_content`.

Clients ask again on their own (the openai SDK retries a timeout, a dropped connection and a 5xx twice), and each
time would be a whole debate: a request with the `Idempotency-Key` of one before, or an SDK's retry of one, joins
that debate (moot.server.openai_idempotency), and every refusal after which asking again would run a debate again
says `x-should-retry: false` (moot.server.bodies.WireErrors). A client that goes away, streaming or not, stops
the debate once no other request waits on it (the verdict is given on what exists, and the debate is kept),
unless it asked for `moot_keep`. The bearer token and origin rules are /api's (moot.server.security).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import ValidationError

from moot.config_files.compose import DebateRequest, compose
from moot.config_files.presets import Preset, list_presets, load_preset
from moot.domain.answer import debate_answer
from moot.domain.config import DebateConfig, config_error
from moot.domain.events import DebateFailed, DebatePaused, Event, TurnCompleted
from moot.domain.state import DebateState, Turn
from moot.errors import UserError, one_line
from moot.server.manager import RUN_ENDS, DebateManager, Run, Subscriber
from moot.server.openai_idempotency import KEY_HEADER, RETRY_HEADER, Requests, digest, request_key
from moot.server.openai_wire import (
    DONE,
    ChatRequest,
    WireError,
    chunk,
    completion,
    event,
    model_id,
    preset_name,
)
from moot.server.security import ANONYMOUS, PRINCIPAL, admit

router = APIRouter(prefix="/v1", tags=["openai-compatible"])
TURN_SPOKEN = ": a turn was spoken\n\n"
KEEPALIVE = ": still debating\n\n"
# Proxies and clients commonly drop a connection idle for 30-60 s; a judge alone may work longer than that.
KEEPALIVE_S = 15.0
GONE_STATUS = 499  # nobody reads it: the client has gone; the access log shows why the request ended


@router.get("/models")
async def models() -> JSONResponse:
    """Every preset as an OpenAI model, `moot/NAME`."""
    return await _answered(lambda: {"object": "list", "data": [_model(p) for p in list_presets()]})


@router.get("/models/{name:path}")
async def model(name: str) -> JSONResponse:
    return await _answered(lambda: _model(_preset(name)))


@router.post("/chat/completions", response_model=None)
async def chat_completions(request: Request) -> Response:
    """A debate of the preset `model` names on the last user message; the format's answer as the reply."""
    manager: DebateManager = request.app.state.manager
    requests: Requests = request.app.state.openai_requests
    try:
        body, asked = await _request(request)
        asked.refuse_unsupported()
        preset = _preset(asked.model)
        topic, context = asked.question()
        question = digest(preset.name, topic, context or "")
        caller = str(request.scope.get(PRINCIPAL, ANONYMOUS))
        key, joinable = request_key(
            caller, request.headers.get(KEY_HEADER), request.headers.get(RETRY_HEADER), body
        )
        before = requests.find(key) if joinable else None
        if before is not None and before.question != question:
            raise WireError(
                400,
                "the Idempotency-Key header was sent before with another question (model or messages); send "
                "a new key for a new question",
                param="Idempotency-Key",
                code="idempotency_key_reused",
            )
        if before is not None:
            debate_id, keep = before.debate_id, asked.moot_keep or before.kept
            feed: AsyncGenerator[Event, None] = _joined(manager, debate_id)
            config: DebateConfig | None = None  # read from the store once it is awaited
        else:
            fields = {"topic": topic, **({"context": context} if context is not None else {})}
            config = compose(DebateRequest(fields=fields, given_by="chat request", preset=preset.name)).config
            queued = manager.dispatcher is not None
            how = "an OpenAI-compatible request"
            run = admit(request, config, lambda c: manager.start(c, hold=queued, how=how, watched=False))
            # Subscribed before anything awaits: the run has not stepped yet, so no event is missed.
            feed = _feed(
                manager, run, None if queued else manager.subscribe(run.id, tokens=False), queued=queued
            )
            debate_id, keep = run.id, asked.moot_keep
            requests.remember(key, run.id, question, kept=keep)
    except WireError as exc:
        return _refused(exc)
    except UserError as exc:
        return _refused(WireError(400, exc.public(), param=exc.field, code="invalid_config"))
    except HTTPException as exc:  # the per-token limit (429)
        return _refused(WireError(exc.status_code, str(exc.detail)))
    if config is None:
        config = (await manager.store.state(debate_id)).config
    waiting = _Waiting(manager, requests, debate_id, keep=keep)
    name = model_id(preset.name)
    if asked.stream:
        include_usage = asked.stream_options is not None and asked.stream_options.include_usage
        streamed = _Streamed(
            debate_id,
            name,
            config,
            turns=asked.moot_stream_turns,
            reasoning=asked.moot_reasoning,
            include_usage=include_usage,
        )
        return StreamingResponse(
            streamed.frames(manager, feed, waiting),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
    with waiting:
        if not await _until_ended_or_gone(request, feed):
            return Response(status_code=GONE_STATUS)
        waiting.ended = True
    state, failure = await _ended(manager, debate_id)
    if failure is not None:
        return _refused(failure)
    reasoning = "".join(_turn_text(state.config, t) for t in state.turns) if asked.moot_reasoning else None
    return JSONResponse(completion(debate_id, name, debate_answer(state), state.usage, reasoning=reasoning))


async def _request(request: Request) -> tuple[bytes, ChatRequest]:
    """The body as sent (an SDK's retry sends it again byte for byte) and as read."""
    body = await request.body()
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):  # RecursionError: nesting past what JsonDepth lets through
        raise WireError(400, "the body is not JSON moot can read; send a chat completion request") from None
    try:
        return body, ChatRequest.model_validate(data)
    except ValidationError as exc:
        problem = config_error(exc)
        raise WireError(400, str(problem), param=problem.field) from None


def _preset(model: str) -> Preset:
    try:
        return load_preset(preset_name(model), field="model")
    except UserError:
        known = ", ".join(model_id(p.name) for p in list_presets())
        raise WireError(
            404,
            f"the model {model!r} does not exist; available: {known}",
            param="model",
            code="model_not_found",
        ) from None


def _model(preset: Preset) -> dict[str, Any]:
    return {
        "id": model_id(preset.name),
        "object": "model",
        "created": 0,
        "owned_by": "moot",
        "description": preset.description,
        "moot_format": preset.format,
        "moot_source": preset.source,
    }


async def _answered(make: Any) -> JSONResponse:
    try:
        return JSONResponse(make())
    except WireError as exc:
        return _refused(exc)
    except UserError as exc:  # a preset file that cannot be read
        return _refused(WireError(500, exc.public(), code="preset_unreadable"))


def _refused(exc: WireError) -> JSONResponse:
    return JSONResponse(exc.body(), status_code=exc.status)


class _Waiting:
    """A request waiting on a debate: counted while it waits; leaving before the end stops the debate when no
    other request waits on it, unless it is to be kept."""

    def __init__(self, manager: DebateManager, requests: Requests, debate_id: str, *, keep: bool) -> None:
        self.manager = manager
        self.requests = requests
        self.debate_id = debate_id
        self.keep = keep
        self.ended = False

    def __enter__(self) -> _Waiting:
        self.requests.wait(self.debate_id)
        return self

    def __exit__(self, *exc: object) -> None:
        last = self.requests.leave(self.debate_id)
        if not self.ended and last and not self.keep:
            self.manager.stop(self.debate_id)


async def _feed(
    manager: DebateManager, run: Run, sub: Subscriber | None, *, queued: bool
) -> AsyncGenerator[Event, None]:
    """The run's events as they happen, until it ends (each turn whole; token deltas included live)."""
    if queued:  # recorded here, run by a worker: what it stores is followed
        await manager.settled(run)
        await manager.carry_on(run.id, "start", watched=False)  # the answer shows turns, not tokens
        async for stored in manager.follow(run.id, 0):
            yield stored
        return
    try:
        if sub is not None:
            while (live := await sub.get()) is not None:
                yield live
                if isinstance(live, RUN_ENDS):
                    break
        await manager.settled(run)  # a feed dropped for falling behind still waits for the end
    finally:
        if sub is not None:
            manager.unsubscribe(run.id, sub)


async def _joined(manager: DebateManager, debate_id: str) -> AsyncGenerator[Event, None]:
    """A debate an earlier request started: what is stored of it, then what it does until its run ends."""
    if manager.dispatcher is not None:  # run by a worker: followed through the store
        tail = await manager.store.last_event(debate_id)
        if isinstance(tail, DebatePaused) and tail.before_start:  # the first request is about to start it
            await manager.until_carried_on(debate_id)
        async for followed in manager.follow(debate_id, 0):
            yield followed
        return
    # Subscribed before the store is read: an event stored in between arrives live, and is dropped by its seq.
    sub = manager.subscribe(debate_id, tokens=False)
    try:
        await manager.store.flush()
        last = 0
        for stored in await manager.store.events(debate_id):
            yield stored
            last = stored.seq or last
        if sub is None:  # ended, or run by a worker: followed until no worker has it
            async for followed in manager.follow(debate_id, last):
                yield followed
            return
        while (live := await sub.get()) is not None:
            if live.durable and (live.seq or 0) <= last:
                continue
            yield live
            if isinstance(live, RUN_ENDS):
                return
        run = manager.get(debate_id)
        if run is not None:  # dropped for falling behind: the end is still waited for
            await manager.settled(run)
    finally:
        if sub is not None:
            manager.unsubscribe(debate_id, sub)


async def _until_ended_or_gone(request: Request, feed: AsyncGenerator[Event, None]) -> bool:
    """Wait for the debate's run to end (True), or for the client to go away first (False)."""
    ended = asyncio.ensure_future(_drained(feed))
    gone = asyncio.ensure_future(_disconnected(request))
    try:
        await asyncio.wait({ended, gone}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (ended, gone):
            task.cancel()
        await asyncio.gather(ended, gone, return_exceptions=True)
    if ended.cancelled():
        return False
    ended.result()  # the feed's error, if it failed
    return True


async def _drained(feed: AsyncGenerator[Event, None]) -> None:
    async with contextlib.aclosing(feed) as events:
        async for _ in events:
            pass


async def _disconnected(request: Request) -> None:
    """Return when the client goes away. The body has been read, so the server's next message is its
    disconnect (uvicorn sends it when the connection closes; an ASGI server with nothing to say blocks)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def _ended(manager: DebateManager, debate_id: str) -> tuple[DebateState, WireError | None]:
    """The debate's state once its run is over, and why it has no answer (None: it has one)."""
    await manager.store.flush()
    state = await manager.store.state(debate_id)
    last = (await manager.store.last_event(debate_id)) if state.status != "completed" else None
    if state.status == "completed":
        return state, None
    if isinstance(last, DebateFailed):
        why = f"the debate failed: {one_line(last.error)}"
    else:  # paused (a cost limit asks before going on) or interrupted: /api carries it on
        why = f"the debate is {state.status}, without an answer; GET /api/debates/{debate_id} says why"
    return state, WireError(502, f"{why} (debate {debate_id})", code=f"debate_{state.status}")


class _Streamed:
    """One streamed reply: the turns as they come (when asked for), the answer, the usage."""

    def __init__(
        self,
        debate_id: str,
        model: str,
        config: DebateConfig | None,
        *,
        turns: bool,
        reasoning: bool,
        include_usage: bool,
    ) -> None:
        self.debate_id = debate_id
        self.model = model
        self.config = config
        self.turns = turns
        self.reasoning = reasoning
        self.include_usage = include_usage

    def _chunk(self, delta: dict[str, Any] | None, **kw: Any) -> str:
        return chunk(self.debate_id, self.model, delta, **kw)

    async def frames(
        self, manager: DebateManager, feed: AsyncGenerator[Event, None], waiting: _Waiting
    ) -> AsyncIterator[str]:
        items: asyncio.Queue[Event | None] = asyncio.Queue()
        pump = asyncio.ensure_future(_pumped(feed, items.put_nowait))
        with waiting:
            try:
                yield self._chunk({"role": "assistant", "content": ""})
                shown = False
                while True:
                    try:
                        item = await asyncio.wait_for(items.get(), KEEPALIVE_S)
                    except TimeoutError:
                        # An SSE comment (clients skip it) while the debate sends nothing: proxies and clients
                        # that drop idle connections keep this one through a long turn or a judge at work.
                        yield KEEPALIVE
                        continue
                    if item is None:
                        break
                    if not isinstance(item, TurnCompleted):
                        continue
                    text = _turn_text(self.config, item) if item.text.strip() else ""
                    if text and self.reasoning:
                        yield self._chunk({"reasoning_content": text})
                    elif text and self.turns:
                        shown = True
                        yield self._chunk({"content": text})
                    else:
                        yield TURN_SPOKEN  # a raw reader sees the debate move on
                await pump  # the feed's error, if it failed
                waiting.ended = True
                async for frame in self._answer(manager, shown):
                    yield frame
            finally:
                pump.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await pump

    async def _answer(self, manager: DebateManager, shown: bool) -> AsyncIterator[str]:
        state, failure = await _ended(manager, self.debate_id)
        if failure is not None:
            # OpenAI's clients raise an APIError for an `error` event in a stream.
            yield event(failure.body())
            return
        answer = ("---\n\n" if shown else "") + debate_answer(state)
        yield self._chunk({"content": answer})
        yield self._chunk({}, finish="stop", usage=None if self.include_usage else state.usage)
        if self.include_usage:
            yield self._chunk(None, usage=state.usage)
        yield DONE


async def _pumped(feed: AsyncGenerator[Event, None], put: Callable[[Event | None], None]) -> None:
    """Each event of `feed` to `put`, then None; a task of its own, so that waiting for the next event can
    time out (for a keep-alive) without cancelling the feed."""
    try:
        async with contextlib.aclosing(feed) as events:
            async for item in events:
                put(item)
    finally:
        put(None)


def _turn_text(config: DebateConfig | None, turn: TurnCompleted | Turn) -> str:
    who = config.speaker_name(turn.participant_id) if config is not None else turn.participant_id
    return f"**{who}** (round {turn.round}):\n\n{turn.text.strip()}\n\n"

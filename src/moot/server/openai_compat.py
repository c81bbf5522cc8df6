"""`/v1`: every preset as a model of an OpenAI-compatible API, so any OpenAI client can hold a debate.

    GET  /v1/models              every preset, as moot/NAME
    POST /v1/chat/completions    model: moot/NAME; the last user message is the topic, earlier ones the context

The debate runs as `POST /api/debates` runs it (the same checks, the same per-token limit, stored like any
other) and the reply is the format's answer (moot.domain.answer), with `usage` summed over the whole
debate and its id as `moot_debate_id` (and in `id`: chatcmpl-<debate id>). With `stream: true` the answer
comes as chunks; `moot_stream_turns: true` streams each turn as it is completed first. A client that goes
away mid-stream stops the debate: the verdict is given on what exists, and the debate is kept.
The bearer token and origin rules are /api's (moot.server.security).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import ValidationError

from moot.config_files.compose import DebateRequest, compose
from moot.config_files.presets import Preset, list_presets, load_preset
from moot.domain.answer import debate_answer
from moot.domain.config import config_error
from moot.domain.events import DebateFailed, Event, TurnCompleted
from moot.domain.state import DebateState
from moot.errors import UserError, one_line
from moot.server.manager import RUN_ENDS, DebateManager, Run, Subscriber
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
from moot.server.security import admit

router = APIRouter(prefix="/v1", tags=["openai-compatible"])
KEEPALIVE = ": a turn was spoken\n\n"


@router.get("/models")
async def models() -> JSONResponse:
    """Every preset as an OpenAI model, `moot/NAME`."""
    return await _answered(lambda: {"object": "list", "data": [_model(p) for p in list_presets()]})


@router.get("/models/{name:path}")
async def model(name: str) -> JSONResponse:
    return await _answered(lambda: _model(_preset(name)))


@router.post("/chat/completions", response_model=None)
async def chat_completions(request: Request) -> JSONResponse | StreamingResponse:
    """A debate of the preset `model` names on the last user message; the format's answer as the reply."""
    try:
        asked = await _request(request)
        preset = _preset(asked.model)
        topic, context = asked.question()
        fields = {"topic": topic, **({"context": context} if context is not None else {})}
        config = compose(DebateRequest(fields=fields, given_by="chat request", preset=preset.name)).config
        manager: DebateManager = request.app.state.manager
        queued = manager.dispatcher is not None
        how = "an OpenAI-compatible request"
        run = admit(request, config, lambda c: manager.start(c, hold=queued, how=how))
        # Subscribed before anything awaits: the run has not stepped yet, so no event is missed.
        feed = _feed(manager, run, None if queued else manager.subscribe(run.id), queued=queued)
    except WireError as exc:
        return JSONResponse(exc.body(), status_code=exc.status)
    except UserError as exc:
        return _refused(WireError(400, exc.public(), param=exc.field, code="invalid_config"))
    except HTTPException as exc:  # the per-token limit (429)
        return _refused(WireError(exc.status_code, str(exc.detail)))
    name = model_id(preset.name)
    if asked.stream:
        include_usage = asked.stream_options is not None and asked.stream_options.include_usage
        return StreamingResponse(
            _streamed(manager, run, feed, name, turns=asked.moot_stream_turns, include_usage=include_usage),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
    async for _ in feed:
        pass
    state, failure = await _ended(manager, run.id)
    if failure is not None:
        return _refused(failure)
    return JSONResponse(completion(run.id, name, debate_answer(state), state.usage))


async def _request(request: Request) -> ChatRequest:
    try:
        body = await request.json()
    except (ValueError, RecursionError):  # RecursionError: nesting past what JsonDepth lets through
        raise WireError(400, "the body is not JSON moot can read; send a chat completion request") from None
    try:
        return ChatRequest.model_validate(body)
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


async def _feed(
    manager: DebateManager, run: Run, sub: Subscriber | None, *, queued: bool
) -> AsyncIterator[Event]:
    """The run's events as they happen, until it ends (each turn whole; token deltas included live)."""
    if queued:  # recorded here, run by a worker: what it stores is followed
        await manager.settled(run)
        await manager.carry_on(run.id, "start")
        async for stored in manager.follow(run.id, 0):
            yield stored
        return
    if sub is not None:
        while (live := await sub.get()) is not None:
            yield live
            if isinstance(live, RUN_ENDS):
                break
    await manager.settled(run)  # a feed dropped for falling behind still waits for the end


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


async def _streamed(
    manager: DebateManager,
    run: Run,
    feed: AsyncIterator[Event],
    model: str,
    *,
    turns: bool,
    include_usage: bool,
) -> AsyncIterator[str]:
    ended = False
    try:
        yield chunk(run.id, model, {"role": "assistant", "content": ""})
        shown = False
        async for item in feed:
            if not isinstance(item, TurnCompleted):
                continue
            if turns and item.text.strip():
                shown = True
                yield chunk(run.id, model, {"content": _turn_text(run, item)})
            else:
                # An SSE comment (clients skip it): the connection is not idle for a whole debate, so proxies
                # and clients that time out idle streams keep it.
                yield KEEPALIVE
        ended = True
        state, failure = await _ended(manager, run.id)
        if failure is not None:
            # OpenAI's clients raise an APIError for an `error` event in a stream.
            yield event(failure.body())
            return
        answer = ("---\n\n" if shown else "") + debate_answer(state)
        yield chunk(run.id, model, {"content": answer})
        yield chunk(run.id, model, {}, finish="stop", usage=None if include_usage else state.usage)
        if include_usage:
            yield chunk(run.id, model, None, usage=state.usage)
        yield DONE
    finally:
        if not ended:  # the client went away: end the debate (the verdict on what exists), keep it stored
            manager.stop(run.id)


def _turn_text(run: Run, turn: TurnCompleted) -> str:
    who = run.config.speaker_name(turn.participant_id)
    return f"**{who}** (round {turn.round}):\n\n{turn.text.strip()}\n\n"

"""Cheaper turns: token deltas coalesced without loss, clients shared per provider, server and key,
answer schemas and agents built once per shape, live events serialised once for all subscribers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel

from moot.domain.config import DebateConfig, ModelOptions, Participant
from moot.domain.events import Event, TokenDelta, TurnCompleted
from moot.domain.state import fold
from moot.engine import InMemoryLog, resume_debate, run_debate
from moot.engine.calls import replies as engine_calls
from moot.engine.coalesce import DeltaBuffer
from moot.judging import assessment as judging_assessment
from moot.judging import schema as judging_schema
from moot.models import shared
from moot.models.fake import fake_model
from moot.models.providers import build_model
from moot.server import frames
from moot.server.manager import DebateManager, Run, Subscriber

TOKENS = [f"tok{i} " for i in range(120)]


def many_tokens() -> FunctionModel:
    """A reply of 120 tokens streamed as fast as the loop runs: far more tokens than 30 ms windows."""

    async def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("".join(TOKENS))])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        for token in TOKENS:
            yield token

    return FunctionModel(whole, stream_function=stream, model_name="many")


def resolver(speaker: Model) -> Any:
    judge = fake_model("judge")
    return lambda options: speaker if options.model.name == "many" else judge


def config(rounds: int = 2) -> DebateConfig:
    return DebateConfig(
        topic="Tokens",
        participants=[Participant(name="A", model="fake:many"), Participant(name="B", model="fake:many")],
        judge={"model": "fake:judge"},
        rounds=rounds,
        stopping={"assess_rounds": False},
    )


def turn_deltas(events: list[Event]) -> list[tuple[str, str]]:
    """(participant, deltas joined) per turn, closed by each TurnCompleted; checks no delta follows its turn."""
    out: list[tuple[str, str]] = []
    open_text: dict[str, str] = {}
    for event in events:
        if isinstance(event, TokenDelta):
            open_text[event.participant_id] = open_text.get(event.participant_id, "") + event.text
        elif isinstance(event, TurnCompleted):
            out.append((event.participant_id, open_text.pop(event.participant_id, "")))
    assert open_text == {}, "deltas after the last turn completed"
    return out


async def test_deltas_are_fewer_than_tokens_and_join_up_to_each_turn_in_order() -> None:
    log = InMemoryLog()
    events = [e async for e in run_debate(config(), log=log, resolve=resolver(many_tokens()))]
    deltas = [e for e in events if isinstance(e, TokenDelta)]
    turns = [e for e in events if isinstance(e, TurnCompleted)]
    assert len(turns) == 4
    assert len(deltas) < len(TOKENS) * len(turns) / 4  # coalesced: far fewer events than tokens
    joined = turn_deltas(events)
    # Each turn's deltas, joined in the order they came, are exactly what streamed (no gap, no repeat), and
    # all of them came before its TurnCompleted (the last held text flushed first).
    assert [text for _, text in joined] == ["".join(TOKENS)] * 4
    assert [t.text for t in turns] == ["".join(TOKENS).strip()] * 4
    assert all(d.debate_id == turns[0].debate_id for d in deltas)
    # The stored log replays the same texts.
    assert [t.text for t in fold(log.events).turns] == [t.text for t in turns]


async def test_a_resumed_debate_replays_and_streams_the_same_texts() -> None:
    log = InMemoryLog()
    first: list[Event] = []
    async for event in run_debate(config(rounds=2), log=log, resolve=resolver(many_tokens())):
        first.append(event)
        if isinstance(event, TurnCompleted):
            break  # interrupted after one turn
    resumed = [e async for e in resume_debate(list(log.events), log=log, resolve=resolver(many_tokens()))]
    streamed = turn_deltas(first) + turn_deltas(resumed)
    stored = fold(log.events).turns
    assert fold(log.events).status == "completed"
    assert [(t.participant_id, t.text) for t in stored] == [(p, text.strip()) for p, text in streamed]


async def test_held_text_goes_out_on_its_timer_while_the_stream_stalls() -> None:
    sent: list[str] = []
    seen = asyncio.Event()

    def send(text: str) -> None:
        sent.append(text)
        if len(sent) == 2:
            seen.set()

    held = DeltaBuffer(send, window_s=0.01, max_chars=10_000)
    held.add("first ")  # the first goes at once: the turn is seen starting
    held.add("second ")
    held.add("third ")
    assert sent == ["first "]
    async with asyncio.timeout(10):  # fails the test if the timer never fires
        await seen.wait()
    assert sent == ["first ", "second third "]
    held.flush()  # nothing held: nothing sent
    assert sent == ["first ", "second third "]


async def test_held_text_goes_out_once_it_reaches_its_size_and_on_flush() -> None:
    sent: list[str] = []
    held = DeltaBuffer(sent.append, window_s=60, max_chars=8)
    for piece in ["a", "bcd", "efgh", "ij", "", "k"]:
        held.add(piece)
    assert sent == ["a", "bcdefghij"]  # 9 characters held: past the size, so handed on
    held.flush()
    assert sent == ["a", "bcdefghij", "k"]
    assert "".join(sent) == "abcdefghijk"


def test_a_window_of_zero_hands_on_every_delta() -> None:
    async def go() -> list[str]:
        sent: list[str] = []
        held = DeltaBuffer(sent.append, window_s=0.0)
        for piece in "abc":
            held.add(piece)
        return sent

    assert asyncio.run(go()) == ["a", "b", "c"]


# Shared clients


def openai_options(url: str) -> ModelOptions:
    return ModelOptions.model_validate({"model": "openai-compatible:house", "base_url": url})


async def test_one_client_per_provider_server_and_key(monkeypatch: pytest.MonkeyPatch) -> None:
    shared.clear()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-first-key")
    a = build_model(ModelOptions.model_validate({"model": "openai:gpt-4o"}))
    b = build_model(ModelOptions.model_validate({"model": "openai:gpt-4o-mini"}))
    assert a is not b and a.client is b.client  # type: ignore[attr-defined]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-second-key")
    c = build_model(ModelOptions.model_validate({"model": "openai:gpt-4o"}))
    assert c.client is not a.client  # type: ignore[attr-defined]
    here = build_model(openai_options("http://127.0.0.1:9/v1"))
    there = build_model(openai_options("http://127.0.0.1:10/v1"))
    assert here.client is not there.client  # type: ignore[attr-defined]
    assert here.client is build_model(openai_options("http://127.0.0.1:9/v1")).client  # type: ignore[attr-defined]
    # The key is part of what a client is shared by, but only as a fingerprint.
    kept = repr(shared._BY_LOOP[asyncio.get_running_loop()].keys())
    assert "sk-first-key" not in kept and "sk-second-key" not in kept
    assert shared.fingerprint("sk-first-key") in kept


def test_outside_a_running_loop_nothing_is_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-key")
    a = build_model(ModelOptions.model_validate({"model": "openai:gpt-4o"}))
    b = build_model(ModelOptions.model_validate({"model": "openai:gpt-4o"}))
    assert a.client is not b.client  # type: ignore[attr-defined]


async def test_a_plain_http_server_gets_no_ca_bundle_and_https_ones_share_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    shared.clear()
    made: list[object] = []
    real = httpx2._transports.default.create_ssl_context  # type: ignore[attr-defined]

    def counting(*args: Any, **kwargs: Any) -> Any:
        made.append(kwargs.get("verify", True))
        return real(*args, **kwargs)

    monkeypatch.setattr(httpx2._transports.default, "create_ssl_context", counting)
    build_model(openai_options("http://127.0.0.1:9/v1"))
    assert made and all(not isinstance(v, bool) for v in made)  # only the context that trusts nothing
    context = shared.plain_http_context()
    assert context.cert_store_stats()["x509_ca"] == 0
    made.clear()
    build_model(openai_options("https://example.invalid/v1"))
    verified = shared.verified_context()
    assert made == [verified] and verified.cert_store_stats()["x509_ca"] > 0  # https: the CA bundle
    shared.clear()
    made.clear()
    build_model(openai_options("https://example.invalid/v1"))  # a new client, as another loop's would be
    assert made == [verified]  # on the same context: the bundle is loaded once a process


# Answer schemas and agents


async def test_answer_types_and_their_request_shapes_are_built_once_per_shape() -> None:
    engine_calls.answer_shape.cache_clear()
    assessed = config(rounds=2).model_copy(
        update={"stopping": config().stopping.model_copy(update={"assess_rounds": True})}
    )
    for _ in range(3):
        log = InMemoryLog()
        [e async for e in run_debate(assessed, log=log, resolve=resolver(many_tokens()))]
        state = fold(log.events)
        assert state.verdict is not None and len(state.assessments) == 2
    # Three debates, each with two assessments and a verdict: one output tool and schema for each shape of answer.
    assert engine_calls.answer_shape.cache_info().misses == 2
    assert judging_schema.answer_model(assessed) is judging_schema.answer_model(assessed)
    assert judging_assessment.assessment_model(assessed) is judging_assessment.assessment_model(assessed)
    other = assessed.model_copy(
        update={
            "participants": [
                Participant(name="C", model="fake:many"),
                Participant(name="D", model="fake:many"),
            ]
        }
    )
    assert judging_schema.answer_model(other) is not judging_schema.answer_model(assessed)


# Fan-out


def delta(text: str) -> TokenDelta:
    return TokenDelta(debate_id="d", round=1, participant_id="a", text=text)


async def test_each_live_event_is_serialised_once_for_every_subscriber(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dumps: list[Event] = []
    real = frames._dump

    def counting(event: Event) -> str:
        dumps.append(event)
        return real(event)

    monkeypatch.setattr(frames, "_dump", counting)
    manager = DebateManager.__new__(DebateManager)  # only its fan-out is exercised
    run = Run(id="d", config=config())
    subs = [Subscriber(100) for _ in range(5)]
    run.subscribers.extend(subs)
    events = [
        TurnCompleted(
            debate_id="d", round=1, participant_id="a", model="m", text=f"t{i}", usage={}, latency_s=0.1
        )
        for i in range(4)
    ]
    for event in events:
        manager._publish(run, event)
    for sub in subs:
        got = [await sub.get() for _ in events]
        assert [frames.wire_json(e) for e in got if e is not None] == [e.model_dump_json() for e in events]
    assert dumps == events  # once each, for five subscribers


async def test_a_stalled_subscriber_is_dropped_and_never_holds_up_the_others() -> None:
    manager = DebateManager.__new__(DebateManager)
    run = Run(id="d", config=config())
    stalled, reader = Subscriber(3), Subscriber(100)
    run.subscribers.extend([stalled, reader])
    sent = [
        TurnCompleted(
            debate_id="d", round=1, participant_id="a", model="m", text=f"t{i}", usage={}, latency_s=0.1
        )
        for i in range(10)
    ]
    for event in sent:
        manager._publish(run, event)  # synchronous: a reader that does not read cannot make it wait
    assert [await reader.get() for _ in sent] == sent
    assert run.subscribers == [reader]
    assert await stalled.get() is None and stalled.reason is not None and "too slow" in stalled.reason

"""A run nobody watches token by token (an eval item, an arena debate) asks its models for whole replies, not
streams, and keeps every guarantee a streamed turn has: the text, usage and cost, a reply cut short told apart,
the time limits, the retries; the embedded model streams anyway."""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import models
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel

from moot.config_files import build_config
from moot.domain.config import COMPAT_KEY_VAR, DebateConfig, Limits, ModelOptions
from moot.domain.events import Event
from moot.domain.state import fold
from moot.engine import run_debate
from moot.engine.calls.caller import Caller
from moot.engine.control import RunControl
from moot.eval.arms import parse_arms
from moot.eval.dataset import generate
from moot.eval.runner import EvalPlan, run_eval
from moot.models.fake import fake_model
from moot.models.providers import build_model
from moot.server.manager import DebateManager, Run
from moot.store import EventStore
from tests.fake_openai_server import Hang, Malformed, Truncated, fake_openai_server

WORDS = "Served over HTTP by a fake server on loopback."


@pytest.fixture(autouse=True)
def _loopback(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # The suite forbids model requests; these go only to the test's own 127.0.0.1 server.
    monkeypatch.setenv(COMPAT_KEY_VAR, "house-key")
    with models.override_allow_model_requests(True):
        yield


def config(url: str, **limits: float) -> DebateConfig:
    return build_config(
        {
            "topic": "Tabs or spaces?",
            "rounds": 1,
            "judge": None,
            "participants": [
                {"name": "Ada", "model": "openai-compatible:house", "base_url": url},
                {"name": "Bo", "model": "openai-compatible:house", "base_url": url},
            ],
            "limits": {"retry": {"base_delay_s": 0.01, "jitter_s": 0}, **limits},
        }
    )


async def held(config: DebateConfig, *, watched: bool) -> list[Event]:
    return [e async for e in run_debate(config, resolve=build_model, watched=watched)]


async def test_an_unwatched_run_asks_for_whole_replies_and_records_them_as_a_stream_would() -> None:
    with fake_openai_server() as (url, seen):
        whole = await held(config(url), watched=False)
        streamed = await held(config(url), watched=True)
    asked = [bool(body.get("stream")) for body in seen.requests]
    assert asked == [False, False, True, True]
    for events in (whole, streamed):
        state = fold(events)
        assert state.status == "completed"
        turns = [e for e in events if e.type == "turn_completed"]
        assert [t.text for t in turns] == [WORDS, WORDS]
        assert all(t.usage.input_tokens == 40 and t.usage.output_tokens == 12 for t in turns)
    # the same record, but for how the text came: once, whole, with no first-token time
    assert [e.text for e in whole if e.type == "token_delta"] == [WORDS, WORDS]
    pieces = [e.text for e in streamed if e.type == "token_delta"]
    assert len(pieces) > 2 and "".join(pieces).split() == (WORDS + " " + WORDS).split()
    assert all(t.first_token_s is None for t in whole if t.type == "turn_completed")


@pytest.mark.parametrize("cut", [Truncated(), Truncated(clean_end=True), Malformed()], ids=repr)
async def test_a_whole_reply_cut_off_is_a_failed_call_retried(cut: Truncated | Malformed) -> None:
    """Unstreamed, a reply cut short is a body that ends early or does not parse (pydantic-ai reads a whole
    reply's missing stop reason as `stop`, so the body is what tells): the call fails and is asked again."""
    with fake_openai_server([cut]) as (url, seen):
        events = await held(config(url), watched=False)
    (retried,) = [e for e in events if e.type == "call_retried"]
    assert retried.purpose == "turn" and len(seen.requests) == 3
    assert [t.text for t in events if t.type == "turn_completed"] == [WORDS, WORDS]


async def test_the_silence_limit_is_a_whole_call_limit_for_a_whole_reply() -> None:
    with fake_openai_server([Hang(seconds=30)]) as (url, _):
        events = await held(config(url, turn_timeout_s=0.5), watched=False)
    (retried,) = [e for e in events if e.type == "call_retried"]
    assert retried.fault == "timeout" and "0.5 s" in retried.error, retried.error
    assert fold(events).status == "completed"


def test_the_embedded_model_streams_even_when_nobody_watches() -> None:
    limits = Limits()

    def caller(model: str, watched: bool) -> Caller:
        return Caller(ModelOptions(model=model), fake_model("a"), limits, watching=lambda: watched)

    assert not caller("openai:gpt-4o", watched=False).streams
    assert not caller("fake:a", watched=False).streams
    assert caller("local:smollm2", watched=False).streams
    assert caller("openai:gpt-4o", watched=True).streams


class Counted:
    """A model that answers whole or streamed, counting each."""

    def __init__(self) -> None:
        self.whole = self.streamed = 0

    def model(self) -> Model:
        async def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            self.whole += 1
            return ModelResponse(parts=[TextPart("A whole reply.")])

        async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
            self.streamed += 1
            for word in ("A ", "streamed ", "reply."):
                yield word

        return FunctionModel(reply, stream_function=stream, model_name="counted")


async def test_an_unwatched_run_on_a_model_that_does_both_asks_whole() -> None:
    counted = Counted()
    cfg = build_config(
        {"topic": "T", "rounds": 1, "judge": None, "participants": [{"model": "fake:a"}, {"model": "fake:b"}]}
    )
    events = [e async for e in run_debate(cfg, resolve=lambda options: counted.model(), watched=False)]
    assert fold(events).status == "completed" and (counted.whole, counted.streamed) == (2, 0)
    assert [e.text for e in events if e.type == "turn_completed"] == ["A whole reply."] * 2


async def test_an_eval_holds_its_debates_unwatched(tmp_path: Path) -> None:
    """The batch runner (eval and arena share it) asks for whole replies: no item's turn is streamed."""
    counted = Counted()
    plan = EvalPlan(
        dataset=generate("arithmetic", 2, 1),
        arms=parse_arms(["single", "society:2x2"]),
        model=ModelOptions(model="fake:a"),
        temperature=0.7,
        seed=1,
    )
    async with await EventStore.open(str(tmp_path / "moot.db")) as store:
        run = await run_eval(
            plan, store=store, out=tmp_path / "out", concurrency=2, resolve=lambda options: counted.model()
        )
    assert len(run.rows) == 4 and counted.whole >= 2 * (1 + 4) and counted.streamed == 0


async def test_a_watcher_who_arrives_mid_run_gets_streamed_replies_from_the_next_call() -> None:
    """Whether a run is watched is read at each call: the calls before a watcher came are whole, the ones after
    streamed (a watcher who arrives mid-call sees that reply when it completes)."""
    counted = Counted()
    control = RunControl()
    cfg = build_config(
        {"topic": "T", "rounds": 2, "judge": None, "participants": [{"model": "fake:a"}, {"model": "fake:b"}]}
    )
    events = []
    async for event in run_debate(
        cfg, resolve=lambda options: counted.model(), control=control, watched=False
    ):
        events.append(event)
        if event.type == "turn_completed":
            control.watched = True  # a page subscribed after the first turn
    assert fold(events).status == "completed" and (counted.whole, counted.streamed) == (1, 3)
    texts = [e.text for e in events if e.type == "turn_completed"]
    assert texts == ["A whole reply."] + ["A streamed reply."] * 3


async def test_a_servers_debate_streams_only_while_someone_reads_its_tokens(tmp_path: Path) -> None:
    """The server's debates started by a way in that shows turns only (an OpenAI-compatible answer, an MCP tool)
    ask whole replies; a subscriber that reads tokens (the page, SSE, WebSocket) makes the next calls stream,
    and its leaving makes them whole again; a turns-only subscriber never gets token deltas."""
    gate = asyncio.Event()
    entered: list[str] = []  # each call, as it waits at the gate: "whole" or "streamed"
    asked = asyncio.Condition()

    async def at_gate(how: str) -> None:
        async with asked:
            entered.append(how)
            asked.notify_all()
        await gate.wait()
        gate.clear()

    def model(options: ModelOptions) -> Model:
        async def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            await at_gate("whole")
            return ModelResponse(parts=[TextPart("A whole reply.")])

        async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
            await at_gate("streamed")
            for word in ("A ", "streamed ", "reply."):
                yield word

        return FunctionModel(reply, stream_function=stream, model_name="gated")

    async def call(number: int) -> None:
        async with asked:
            await asked.wait_for(lambda: len(entered) >= number)

    def watched(run: Run) -> bool:
        return run.control.watched

    cfg = build_config(
        {"topic": "T", "rounds": 2, "judge": None, "participants": [{"model": "fake:a"}, {"model": "fake:b"}]}
    )
    async with await EventStore.open(str(tmp_path / "moot.db")) as store:
        manager = DebateManager(store, resolve=model)
        try:
            async with asyncio.timeout(30):
                run = manager.start(cfg, watched=False, how="a test")
                turns_only = manager.subscribe(run.id, tokens=False)
                assert turns_only is not None and not watched(run)
                await call(1)  # turn 1 asked whole: nobody reads tokens
                page = manager.subscribe(run.id)
                assert page is not None and watched(run)
                gate.set()
                await call(2)  # turn 2 streamed, for the page
                manager.unsubscribe(run.id, page)
                assert not watched(run)
                gate.set()
                await call(3)  # turns 3 and 4 whole again: the page has gone
                gate.set()
                await call(4)
                gate.set()
                seen: list[Event] = []
                while (item := await turns_only.get()) is not None:
                    seen.append(item)
        finally:
            await manager.close()
    assert entered == ["whole", "streamed", "whole", "whole"]
    assert not any(e.type == "token_delta" for e in seen)
    assert [e.text for e in seen if e.type == "turn_completed"] == [
        "A whole reply.", "A streamed reply.", "A whole reply.", "A whole reply."
    ]  # fmt: skip


def counting(name: str, asked: list[str]) -> FunctionModel:
    """moot's fake model `name`, noting whether each call was asked whole or streamed."""
    fake = fake_model(name)
    assert fake.function is not None and fake.stream_function is not None
    whole, streamed = fake.function, fake.stream_function

    async def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        asked.append(f"{name} whole")
        answer = whole(messages, info)
        return await answer if inspect.isawaitable(answer) else answer

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        asked.append(f"{name} streamed")
        async for piece in streamed(messages, info):
            yield piece

    return FunctionModel(reply, stream_function=stream, model_name=f"fake:{name}")


async def test_an_unwatched_runs_verdict_and_assessments_are_asked_whole_too() -> None:
    asked: list[str] = []
    cfg = build_config(
        {
            "topic": "T",
            "rounds": 2,
            "judge": {"model": "fake:judge"},
            "stopping": {"assess_rounds": True},
            "participants": [{"model": "fake:a"}, {"model": "fake:b"}],
        }
    )

    def resolve(options: ModelOptions) -> Model:
        return counting(options.model.name, asked)

    events = [e async for e in run_debate(cfg, resolve=resolve, watched=False)]
    state = fold(events)
    assert state.status == "completed" and state.verdict is not None and len(state.assessments) == 2
    assert asked and all(a.endswith(" whole") for a in asked)
    assert asked.count("judge whole") == 3  # two rounds' assessments and the verdict
    watched: list[str] = []
    [e async for e in run_debate(cfg, resolve=lambda options: counting(options.model.name, watched))]
    assert watched.count("judge streamed") == 3


def _model_of(counted: Counted, options: ModelOptions) -> Model:
    return counted.model()


async def test_the_python_api_streams_only_for_someone_who_sees_the_events() -> None:
    import moot

    request = moot.DebateRequest(
        fields={
            "topic": "T",
            "rounds": 1,
            "judge": None,
            "participants": [{"model": "fake:a"}, {"model": "fake:b"}],
        },
        saved_defaults=False,
    )
    for kwargs, expected in (
        ({}, (2, 0)),  # nobody sees a token before the end
        ({"on_event": lambda event: None}, (0, 2)),
        ({"on_event": lambda event: None, "stream": False}, (2, 0)),
        ({"stream": True}, (0, 2)),
    ):
        counted = Counted()
        record = await moot.arun(request, resolve=functools.partial(_model_of, counted), **kwargs)
        assert record.state.status == "completed" and (counted.whole, counted.streamed) == expected, kwargs

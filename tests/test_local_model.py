"""The embedded llama.cpp model, run for real: SmolLM2-135M is small enough to answer in a fraction of a second."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_ai import Agent, NativeOutput
from pydantic_ai.direct import model_request, model_request_stream
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    PartDeltaEvent,
    PartStartEvent,
    SystemPromptPart,
    TextPart,
    TextPartDelta,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition

from moot.errors import ModelCallError, UserError
from moot.models import local
from moot.models.local import LlamaCppModel, get_local_model, local_model_path
from moot.models.local.chat import _chat_messages
from moot.models.local.generation import _Generation

pytest.importorskip("llama_cpp")

SHORT: ModelSettings = {"max_tokens": 24, "seed": 1}


class Pet(BaseModel):
    kind: str
    name: str


class Person(BaseModel):
    name: str
    age: int
    pet: Pet  # nested: the schema has `$defs` and a `$ref` the grammar must follow


class Place(BaseModel):
    city: str
    country: str


def ask(text: str, system: str = "You are a helpful assistant. Answer briefly.") -> list[ModelMessage]:
    return [ModelRequest(parts=[SystemPromptPart(system), UserPromptPart(text)])]


@pytest.fixture(scope="module")
def model() -> LlamaCppModel:
    try:
        return get_local_model()
    except UserError as exc:
        pytest.skip(str(exc))


def test_weights_ship_inside_the_wheel() -> None:
    path = local_model_path("smollm2")
    assert path.suffix == ".gguf"
    assert path.stat().st_size > 50_000_000


def test_unknown_or_missing_local_model_is_a_user_error(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(
        UserError, match=r"unknown embedded model 'nope' in 'local:nope'; use one of: smollm2"
    ):
        local_model_path("nope")
    monkeypatch.setitem(
        local.LOCAL_MODELS,
        "ghost",
        local.LocalModelSpec(
            name="ghost", package="moot_no_such_pkg", distribution="llm-ghost", filename="g.gguf"
        ),
    )
    with pytest.raises(UserError, match="local:ghost needs the llm-ghost package; pip install llm-ghost"):
        get_local_model("ghost")


@pytest.mark.embedded
def test_one_shared_instance_per_process(model: LlamaCppModel) -> None:
    assert get_local_model() is model
    assert get_local_model("smollm2") is model
    assert model.model_name == "smollm2"
    assert model.system == "llama.cpp"
    assert model.profile.get("supports_json_schema_output") is True
    assert model.profile.get("context_window") == 2048


@pytest.mark.embedded
async def test_request_returns_text_and_usage(model: LlamaCppModel) -> None:
    response = await model_request(model, ask("Name three colours."), model_settings=SHORT)
    text = "".join(p.content for p in response.parts if isinstance(p, TextPart))
    assert text.strip()
    assert response.usage.input_tokens > 10
    assert 0 < response.usage.output_tokens <= 24
    assert response.provider_name == "local"
    assert response.model_name == "smollm2"
    assert response.finish_reason in ("stop", "length")


@pytest.mark.embedded
async def test_seed_makes_a_reply_repeatable(model: LlamaCppModel) -> None:
    settings: ModelSettings = {"max_tokens": 16, "seed": 42, "temperature": 0.9}
    first = await model_request(model, ask("Tell me about owls."), model_settings=settings)
    second = await model_request(model, ask("Tell me about owls."), model_settings=settings)
    assert first.parts == second.parts


@pytest.mark.embedded
async def test_stream_deltas_add_up_to_the_final_text(model: LlamaCppModel) -> None:
    deltas: list[str] = []
    async with model_request_stream(model, ask("Describe the sea."), model_settings=SHORT) as stream:
        async for event in stream:
            if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
                deltas.append(event.part.content)
            elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
                deltas.append(event.delta.content_delta)
        response = stream.get()
    assert len(deltas) > 3
    assert response.parts == [TextPart("".join(deltas))]
    assert response.state == "complete"
    assert response.usage.input_tokens > 10
    assert response.usage.output_tokens > 3


@pytest.mark.embedded
async def test_tool_output_is_grammar_constrained(model: LlamaCppModel) -> None:
    agent = Agent(model, output_type=Person)
    result = await agent.run("Describe Ann, 30, who has a cat.", model_settings={"max_tokens": 80, "seed": 1})
    assert isinstance(result.output, Person)
    assert isinstance(result.output.pet, Pet)
    calls = [p for m in result.all_messages() if isinstance(m, ModelResponse) for p in m.parts]
    assert isinstance(calls[0], ToolCallPart)


@pytest.mark.embedded
async def test_native_output_is_grammar_constrained(model: LlamaCppModel) -> None:
    agent = Agent(model, output_type=NativeOutput(Person))
    result = await agent.run("Describe Bob, 40, who has a dog.", model_settings={"max_tokens": 80, "seed": 1})
    assert isinstance(result.output, Person)


@pytest.mark.embedded
async def test_streamed_tool_output(model: LlamaCppModel) -> None:
    agent = Agent(model, output_type=Person)
    async with agent.run_stream("Describe Cy.", model_settings={"max_tokens": 80, "seed": 2}) as run:
        output = await run.get_output()
    assert isinstance(output, Person)


@pytest.mark.embedded
async def test_a_choice_of_output_types(model: LlamaCppModel) -> None:
    agent: Agent[None, Person | Place] = Agent(model, output_type=[Person, Place])
    result = await agent.run("Where is Paris?", model_settings={"max_tokens": 150, "seed": 1})
    assert isinstance(result.output, Person | Place)


@pytest.mark.embedded
async def test_concurrent_streams_are_serialised(
    model: LlamaCppModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Timed on the worker thread, where llama.cpp runs: the consumers' event-loop scheduling may lag
    # the generation they read by a fraction of a millisecond, so their clocks prove nothing.
    spans: list[tuple[float, float]] = []
    generate = _Generation._generate

    def timed(self: _Generation, llm: Any, prompt: list[int]) -> None:
        started = time.perf_counter()
        try:
            generate(self, llm, prompt)
        finally:
            spans.append((started, time.perf_counter()))

    monkeypatch.setattr(_Generation, "_generate", timed)

    async def one(question: str) -> str:
        async with model_request_stream(model, ask(question), model_settings=SHORT) as stream:
            async for _ in stream:
                await asyncio.sleep(0)  # give the other stream every chance to interleave
            return "".join(p.content for p in stream.get().parts if isinstance(p, TextPart))

    text1, text2 = await asyncio.gather(one("Name a fruit."), one("Name a river."))
    assert text1.strip()
    assert text2.strip()
    await wait_until_idle(model)  # the worker posts the last event before it leaves `timed`
    assert len(spans) == 2
    first, second = sorted(spans)
    assert first[1] <= second[0], "the two generations overlapped"


async def wait_until_idle(model: LlamaCppModel, within_s: float = 10.0) -> float:
    """Seconds until no generation holds the model; fails if one still does after `within_s`."""
    started = time.perf_counter()
    while model._lock.locked():
        assert time.perf_counter() - started < within_s, "the abandoned generation is still running"
        await asyncio.sleep(0.01)
    return time.perf_counter() - started


LONG: ModelSettings = {"max_tokens": 1500, "logit_bias": {"2": -100}}  # no end of turn: it would run ~15 s


@pytest.mark.embedded
async def test_a_stream_left_early_stops_generating(model: LlamaCppModel) -> None:
    async with model_request_stream(
        model, ask("Write a long essay about the sea."), model_settings=LONG
    ) as s:
        seen = 0
        async for _ in s:
            seen += 1
            if seen == 3:
                break
    await wait_until_idle(model)
    response = await model_request(model, ask("Say hi."), model_settings={"max_tokens": 4})
    assert response.parts


@pytest.mark.embedded
async def test_a_cancelled_request_stops_generating(model: LlamaCppModel) -> None:
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.5):
            await model_request(model, ask("Write a long essay."), model_settings=LONG)
    await wait_until_idle(model)
    response = await model_request(model, ask("Say hi."), model_settings={"max_tokens": 4})
    assert response.parts


@pytest.mark.embedded
async def test_a_prompt_longer_than_the_context_is_a_model_call_error(model: LlamaCppModel) -> None:
    with pytest.raises(ModelCallError) as info:
        await model_request(model, ask("word " * 3000), model_settings=SHORT)
    assert info.value.model == "local:smollm2"
    assert "context window holds 2048" in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.embedded
async def test_function_tools_are_refused(model: LlamaCppModel) -> None:
    params = ModelRequestParameters(function_tools=[ToolDefinition(name="lookup")])
    with pytest.raises(UserError, match="cannot call function tools"):
        await model.request(ask("hi"), SHORT, params)


def test_messages_map_to_one_system_message_then_turns() -> None:
    messages: list[ModelMessage] = [
        ModelRequest(parts=[SystemPromptPart("Be brief."), UserPromptPart("First?")]),
        ModelResponse(parts=[TextPart("One.")]),
        ModelRequest(parts=[UserPromptPart("Second?"), UserPromptPart("Really?")]),
        ModelResponse(parts=[ToolCallPart("final_result", '{"a": 1}')]),
    ]
    chat = _chat_messages(messages, ["Argue well."], "local:smollm2")
    assert chat[:4] == [
        {"role": "system", "content": "Be brief.\n\nArgue well."},
        {"role": "user", "content": "First?"},
        {"role": "assistant", "content": "One."},
        {"role": "user", "content": "Second?\n\nReally?"},
    ]
    assert chat[4]["role"] == "assistant"
    assert json.loads(chat[4]["content"]) == {"a": 1}  # a tool call reads as the JSON the model wrote

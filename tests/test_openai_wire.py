"""moot's streamed text turn on OpenAI's chat wire (moot.models.openai_wire) read from bodies a server may send:
what the SDK's path makes of them, it makes too. The stream-end, fault and usage cases over HTTP are in
test_stream_ends.py, test_faults.py and test_fault_scenarios.py; these are the deltas those servers never send."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from openai import AsyncOpenAI
from pydantic_ai import models
from pydantic_ai.direct import model_request_stream
from pydantic_ai.exceptions import ModelAPIError
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ThinkingPart
from pydantic_ai.providers.openai import OpenAIProvider

from moot.models.openai_wire import OpenAIWireModel


@pytest.fixture(autouse=True)
def _allowed() -> Iterator[None]:
    with models.override_allow_model_requests(True):  # no socket: the transport below answers
        yield


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    choices = (
        []
        if delta is None and finish is None
        else [{"index": 0, "delta": delta or {}, "finish_reason": finish}]
    )
    return {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": choices,
        **extra,
    }


def model_sending(body: str) -> tuple[OpenAIWireModel, list[dict[str, Any]]]:
    sent: list[dict[str, Any]] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        sent.append(json.loads(request.content))
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body.encode())

    client = AsyncOpenAI(
        base_url="http://wire.test/v1",
        api_key="k",
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(answer)),
    )
    return OpenAIWireModel("m", provider=OpenAIProvider(openai_client=client)), sent


def sse(*events: dict[str, Any] | str) -> str:
    return "".join(f"data: {e if isinstance(e, str) else json.dumps(e)}\n\n" for e in events)


async def streamed(model: OpenAIWireModel) -> ModelResponse:
    async with model_request_stream(model, [ModelRequest.user_text_prompt("Go.")]) as stream:
        async for _ in stream:
            pass
        return stream.get()


async def test_a_text_turn_is_read_from_its_data_lines_with_its_usage() -> None:
    usage = {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
    model, sent = model_sending(
        sse(chunk({"role": "assistant", "content": ""}), chunk({"content": "Hello "}), chunk({"content": "there."}),
            chunk(finish="stop"), chunk(usage=usage), "[DONE]")
    )  # fmt: skip
    response = await streamed(model)
    assert response.parts == [TextPart("Hello there.")] and response.finish_reason == "stop"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (7, 3)
    assert sent[0]["stream"] is True and sent[0]["stream_options"] == {"include_usage": True}


async def test_reasoning_is_thinking_and_a_refusal_is_a_content_filter() -> None:
    model, _ = model_sending(
        sse(chunk({"reasoning_content": "Weigh it."}), chunk({"content": "Yes."}), chunk({"refusal": "No."}),
            chunk(finish="stop"), "[DONE]")
    )  # fmt: skip
    response = await streamed(model)
    assert isinstance(response.parts[0], ThinkingPart) and response.parts[0].content == "Weigh it."
    assert response.parts[1] == TextPart("Yes.") and response.finish_reason == "content_filter"


async def test_an_event_spread_over_several_data_lines_is_one_chunk() -> None:
    text = json.dumps(chunk({"content": "Split."}), indent=1)
    body = (
        "".join(f"data: {line}\n" for line in text.splitlines())
        + "\n"
        + sse(chunk(finish="length"), "[DONE]")
    )
    model, _ = model_sending(body)
    response = await streamed(model)
    assert response.parts == [TextPart("Split.")] and response.finish_reason == "length"


async def test_an_error_inside_the_stream_fails_the_call_with_its_message() -> None:
    model, _ = model_sending(
        sse(chunk({"content": "Hal"}), {"error": {"message": "overloaded", "code": 503}})
    )
    with pytest.raises(ModelAPIError, match="overloaded"):
        await streamed(model)

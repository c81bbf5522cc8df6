"""Providers moot builds through pydantic-ai's `infer_model` (no row of moot's own) fail a stream that ends before
its end marker as `truncated`, as moot's own providers do; one that ends with its marker, a token limit's included,
is kept.

Each is built by `build_model` as a config names it and streams from a server on 127.0.0.1 that ends its body
cleanly: vLLM for OpenAI's chat wire (most of pydantic-ai's providers, each the same OpenAIChatModel on another
server), `openai-responses` for the Responses API (`meta:` too). Bedrock, Cohere, Hugging Face and xAI need SDKs
moot does not install; pydantic-ai's classes for them leave the stop reason unset on a cut stream, which
`raise_if_cut` reads as it does for Anthropic, Google, Groq and Mistral.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from openai import AsyncAzureOpenAI
from pydantic_ai import models
from pydantic_ai.models import Model
from pydantic_ai.toolsets import FunctionToolset

from moot.domain.config import validate_config
from moot.domain.models import ModelRef
from moot.engine.calls.replies import CallRequest, Reply, ToolUse, stream_tool_reply
from moot.errors import ModelCallError
from moot.models.openai_client import EndCheckedOpenAI
from moot.models.providers import build_model, spec_of_system
from moot.models.stream_ends import has_end_marker
from tests.test_stream_ends import KEY, WORDS, chat_chunks, lookup, sse, sse_server, streamed


@pytest.fixture(autouse=True)
def _loopback() -> Iterator[None]:
    with models.override_allow_model_requests(True):  # only to the test's own 127.0.0.1 server
        yield


def built(ref: str) -> Model:
    config = validate_config({"topic": "T", "participants": [{"name": "A", "model": ref}, {"name": "B"}]})
    return build_model(config.participants[0])


def vllm_model(url: str, monkeypatch: pytest.MonkeyPatch) -> Model:
    monkeypatch.setenv("VLLM_BASE_URL", url)
    monkeypatch.setenv("VLLM_API_KEY", KEY)
    return built("vllm:house")


def azure_model(url: str, monkeypatch: pytest.MonkeyPatch) -> Model:
    # Azure's client is the SDK's AsyncAzureOpenAI, not AsyncOpenAI: its own class, end-checked.
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", url)
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_VERSION", "2024-10-21")
    return built("azure:house")


def responses_model(url: str, monkeypatch: pytest.MonkeyPatch) -> Model:
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return built("openai-responses:house")


def responses_events(end: str | None) -> list[bytes]:
    """The Responses API's stream: created, a message's text deltas, then (unless cut) its terminal event:
    `completed` for a natural end, `incomplete` for one cut by its token limit."""
    response: dict[str, Any] = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1700000000,
        "model": "house",
        "output": [],
        "status": "in_progress",
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }
    message: dict[str, Any] = {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "in_progress",
        "content": [],
    }
    text = "".join(w + " " for w in WORDS)
    seq = iter(range(1000))
    events = [
        sse({"type": "response.created", "sequence_number": next(seq), "response": response}),
        sse(
            {
                "type": "response.output_item.added",
                "sequence_number": next(seq),
                "output_index": 0,
                "item": message,
            }
        ),
        sse(
            {
                "type": "response.content_part.added",
                "sequence_number": next(seq),
                "item_id": "msg_1",
                "output_index": 0,
                "content_index": 0,
                "part": {"type": "output_text", "text": "", "annotations": []},
            }
        ),
        *(
            sse(
                {
                    "type": "response.output_text.delta",
                    "sequence_number": next(seq),
                    "item_id": "msg_1",
                    "output_index": 0,
                    "content_index": 0,
                    "delta": w + " ",
                    "logprobs": [],
                }
            )
            for w in WORDS
        ),
    ]
    if end is None:
        return events
    done = {
        **message,
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    usage = {
        "input_tokens": 10,
        "output_tokens": 7,
        "total_tokens": 17,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
    }
    final = {**response, "status": end, "output": [done], "usage": usage}
    if end == "incomplete":
        final["incomplete_details"] = {"reason": "max_output_tokens"}
    return [
        *events,
        sse(
            {
                "type": "response.output_item.done",
                "sequence_number": next(seq),
                "output_index": 0,
                "item": done,
            }
        ),
        sse({"type": f"response.{end}", "sequence_number": next(seq), "response": final}),
    ]


@dataclass(frozen=True)
class Wire:
    model: Callable[
        [str, pytest.MonkeyPatch], Model
    ]  # the model a config names, streaming from the server at url
    events: Callable[[str | None], list[bytes]]  # its stream: cut (None) or ended with the reason given
    stop: str  # its wire's word for a natural end
    limit: str  # and for a reply cut by its token limit


WIRES = {
    "vllm": Wire(vllm_model, chat_chunks, "stop", "length"),
    "azure": Wire(azure_model, chat_chunks, "stop", "length"),
    "openai-responses": Wire(responses_model, responses_events, "completed", "incomplete"),
}


def test_a_provider_built_through_pydantic_ai_has_an_end_marker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", KEY)
    deepseek = built("deepseek:deepseek-chat")
    row = spec_of_system(deepseek.system)
    assert row is not None and row.name == "deepseek" and row.wire == "pydantic-ai"
    assert has_end_marker(deepseek)
    # The client stays the provider's own, and so do the copies pydantic-ai calls, each end-checked.
    azure = azure_model("http://127.0.0.1:9", monkeypatch)
    client = getattr(azure, "client", None)
    assert isinstance(client, AsyncAzureOpenAI) and isinstance(client, EndCheckedOpenAI)
    copy = client.with_options(max_retries=0)
    assert isinstance(copy, AsyncAzureOpenAI) and isinstance(copy, EndCheckedOpenAI)


@pytest.mark.parametrize("name", list(WIRES))
async def test_a_stream_without_its_end_marker_is_cut_short(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    wire = WIRES[name]
    with sse_server(wire.events(None)) as url:
        reply, error, seen = await streamed(wire.model(url, monkeypatch), f"{name}:house")
    assert reply is None and error is not None and error.fault is not None
    assert error.fault.kind == "truncated"
    assert error.fault.message.startswith(f"the reply from {name} was cut short: the stream ended before")
    assert seen.split() == WORDS  # every word came, and still the reply is not taken for whole


@pytest.mark.parametrize("end", ["stop", "limit"])
@pytest.mark.parametrize("name", list(WIRES))
async def test_a_stream_with_its_end_marker_is_kept_a_token_limit_too(
    name: str, end: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    wire = WIRES[name]
    with sse_server(wire.events(wire.stop if end == "stop" else wire.limit)) as url:
        reply, error, _ = await streamed(wire.model(url, monkeypatch), f"{name}:house")
    assert error is None and reply is not None
    assert reply.text.split() == WORDS


async def test_a_chat_stream_ended_by_done_alone_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    # Some OpenAI-compatible servers never send a finish reason: `[DONE]` is their end.
    with sse_server([*chat_chunks(None), b"data: [DONE]\n\n"]) as url:
        reply, error, _ = await streamed(vllm_model(url, monkeypatch), "vllm:house")
    assert error is None and reply is not None and reply.text.split() == WORDS


@pytest.mark.parametrize("cut", [True, False])
@pytest.mark.parametrize("name", list(WIRES))
async def test_a_turn_with_tools_is_checked_too(
    name: str, cut: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    wire = WIRES[name]
    used: list[ToolUse] = []

    async def on_text(delta: str) -> None:
        pass

    async def on_tool(use: ToolUse) -> None:
        used.append(use)

    with sse_server(wire.events(None if cut else wire.stop)) as url:
        request = CallRequest(
            wire.model(url, monkeypatch),
            ref=ModelRef.model_validate(f"{name}:house"),
            system="Argue.",
            user="Tabs or spaces?",
            settings={},
            timeout_s=10,
            toolsets=(FunctionToolset([lookup]),),
        )

        async def turn() -> Reply:
            return await stream_tool_reply(request, on_text=on_text, on_tool=on_tool)

        if cut:
            with pytest.raises(ModelCallError) as caught:
                await turn()
            assert caught.value.fault is not None and caught.value.fault.kind == "truncated"
        else:
            assert (await turn()).text.split() == WORDS
    assert not used  # the server's reply called no tool

"""A streamed reply that ends before its provider's end marker fails its call as `truncated`; one that ends with
its marker, a token limit's included, is kept; models without a wire are never judged by it.

Each family's own pydantic-ai model streams from a server on 127.0.0.1 that speaks the family's wire and ends
its body cleanly, so the check reads what pydantic-ai's streamed-response class makes of the stream, as
`stream_reply` does for a turn. The OpenAI wire (openai, openai-compatible, ollama, openrouter) is covered by
tests/test_faults.py and tests/test_fault_scenarios.py with the fake OpenAI-compatible server; Anthropic,
Google, Groq and Mistral need their extras (`pip install -e '.[all]'`) and are skipped without them.
"""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from pydantic_ai import models
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.toolsets import FunctionToolset

from moot.domain.config import COMPAT_KEY_VAR, validate_config
from moot.domain.models import ModelRef
from moot.engine.calls.replies import CallRequest, Reply, ToolUse, stream_reply, stream_tool_reply
from moot.errors import ModelCallError
from moot.models.fake import fake_model
from moot.models.providers import SPECS, build_model
from moot.models.stream_ends import has_end_marker, raise_if_cut
from tests.fake_openai_server import openai_compatible_model

WORDS = ["Served", "over", "a", "wire", "with", "an", "end."]
KEY = "stream-ends-key-0123456789"


@pytest.fixture(autouse=True)
def _loopback() -> Iterator[None]:
    with models.override_allow_model_requests(True):  # only to the test's own 127.0.0.1 server
        yield


@contextmanager
def sse_server(events: list[bytes]) -> Iterator[str]:
    """Yield the base URL of a server that answers every POST with `events`, chunked, then a clean end."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Each SSE chunk is its own small write: with Nagle's algorithm on, every write after the first waits
        # for the client's delayed ACK (~40 ms), as no real server's stream does.
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Connection", "close")
            self.end_headers()
            for event in events:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
            self.wfile.write(b"0\r\n\r\n")  # the body ends properly: only the reply can say it is unfinished
            self.close_connection = True

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def sse(data: dict[str, Any], event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


# --- each family's wire: its text deltas, then (unless cut) its end with the stop reason given ------------------


def anthropic_events(stop: str | None) -> list[bytes]:
    message: dict[str, Any] = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-house",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    events = [
        sse({"type": "message_start", "message": message}, "message_start"),
        sse(
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            "content_block_start",
        ),
        *(
            sse(
                {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": w + " "}},
                "content_block_delta",
            )
            for w in WORDS
        ),
    ]
    if stop is None:
        return events
    return [
        *events,
        sse({"type": "content_block_stop", "index": 0}, "content_block_stop"),
        sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 7},
            },
            "message_delta",
        ),
        sse({"type": "message_stop"}, "message_stop"),
    ]


def google_events(stop: str | None) -> list[bytes]:
    def chunk(text: str, finish: str | None = None) -> bytes:
        candidate: dict[str, Any] = {"content": {"parts": [{"text": text}], "role": "model"}, "index": 0}
        if finish is not None:
            candidate["finishReason"] = finish
        usage = {"promptTokenCount": 10, "candidatesTokenCount": 7, "totalTokenCount": 17}
        return sse(
            {
                "candidates": [candidate],
                "usageMetadata": usage,
                "modelVersion": "gemini-house",
                "responseId": "r1",
            }
        )

    words = [chunk(w + " ") for w in WORDS]
    return words if stop is None else [*words, chunk("", stop)]


def chat_chunks(stop: str | None, *, extra: dict[str, Any] | None = None) -> list[bytes]:
    """Groq's and Mistral's wire: OpenAI-shaped chunks, a finish reason, then `data: [DONE]`."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        body = {
            "id": "chunk-1",
            "object": "chat.completion.chunk",
            "created": 1700000000,
            "model": "house",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            **(extra or {}),
        }
        return sse(body)

    words = [chunk({"role": "assistant", "content": w + " "}) for w in WORDS]
    return words if stop is None else [*words, chunk({"content": ""}, stop), b"data: [DONE]\n\n"]


def anthropic_model(url: str) -> Model:
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    return AnthropicModel("claude-house", provider=AnthropicProvider(api_key=KEY, base_url=url))


def google_model(url: str) -> Model:
    from pydantic_ai.models.google import GoogleModel
    from pydantic_ai.providers.google import GoogleProvider

    return GoogleModel("gemini-house", provider=GoogleProvider(api_key=KEY, base_url=url))


def groq_model(url: str) -> Model:
    from pydantic_ai.models.groq import GroqModel
    from pydantic_ai.providers.groq import GroqProvider

    return GroqModel("house", provider=GroqProvider(api_key=KEY, base_url=url))


def mistral_model(url: str) -> Model:
    from pydantic_ai.models.mistral import MistralModel
    from pydantic_ai.providers.mistral import MistralProvider

    return MistralModel("house", provider=MistralProvider(api_key=KEY, base_url=url))


@dataclass(frozen=True)
class Family:
    provider: str  # moot's provider name
    sdk: str  # the module its extra installs
    model: Callable[[str], Model]
    events: Callable[[str | None], list[bytes]]
    stop: str  # its wire's word for a natural end
    limit: str  # and for a reply cut by max_tokens


FAMILIES = {
    f.provider: f
    for f in (
        Family("anthropic", "anthropic", anthropic_model, anthropic_events, "end_turn", "max_tokens"),
        Family("google", "google.genai", google_model, google_events, "STOP", "MAX_TOKENS"),
        Family(
            "groq",
            "groq",
            groq_model,
            lambda stop: chat_chunks(stop, extra={"x_groq": {"id": "req_1"}}),
            "stop",
            "length",
        ),
        Family("mistral", "mistralai", mistral_model, chat_chunks, "stop", "length"),
    )
}


async def streamed(model: Model, label: str) -> tuple[Reply | None, ModelCallError | None, str]:
    """`stream_reply` as a turn calls it: the reply or the call's error, and the text streamed either way."""
    seen: list[str] = []

    async def on_text(delta: str) -> None:
        seen.append(delta)

    try:
        reply = await stream_reply(
            CallRequest(
                model,
                ref=ModelRef.model_validate(label),
                system="Argue.",
                user="Tabs or spaces?",
                settings={},
                timeout_s=10,
            ),
            on_text=on_text,
        )
    except ModelCallError as exc:
        return None, exc, "".join(seen)
    return reply, None, "".join(seen)


@pytest.mark.parametrize("name", list(FAMILIES))
async def test_a_stream_without_its_end_marker_is_cut_short(name: str) -> None:
    family = FAMILIES[name]
    pytest.importorskip(family.sdk)
    with sse_server(family.events(None)) as url:
        model = family.model(url)
        assert has_end_marker(model) and SPECS[family.provider].end_marker
        reply, error, seen = await streamed(model, f"{name}:house")
    assert reply is None and error is not None and error.fault is not None
    assert error.fault.kind == "truncated"
    assert error.fault.message == (
        f"the reply from {name} was cut short: the stream ended before the reply did: it carried no stop reason"
    )
    assert seen.split() == WORDS  # every word came, and still the reply is not taken for whole


@pytest.mark.parametrize("end", ["stop", "limit"])
@pytest.mark.parametrize("name", list(FAMILIES))
async def test_a_stream_with_its_end_marker_is_kept_a_token_limit_too(name: str, end: str) -> None:
    family = FAMILIES[name]
    pytest.importorskip(family.sdk)
    with sse_server(family.events(family.stop if end == "stop" else family.limit)) as url:
        reply, error, _ = await streamed(family.model(url), f"{name}:house")
    assert error is None and reply is not None
    assert reply.text.split() == WORDS


def test_the_openai_wire_providers_have_an_end_marker_and_moots_own_models_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENROUTER_API_KEY", KEY)
    for ref in ("openai:gpt-4o", "openrouter:openai/gpt-4o", "ollama:llama3"):
        config = validate_config({"topic": "T", "participants": [{"name": "A", "model": ref}, {"name": "B"}]})
        assert has_end_marker(build_model(config.participants[0])), ref
    assert not SPECS["local"].end_marker and not SPECS["fake"].end_marker
    assert not has_end_marker(fake_model("ada"))
    assert not has_end_marker(TestModel())


async def test_a_model_without_a_wire_is_never_taken_for_cut() -> None:
    # A FunctionModel streams with no finish reason at all; under an openai label (as tests script a provider)
    # its replies are whole: the check follows the built model, not the label.
    async def words(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        for word in WORDS:
            yield word + " "

    model = FunctionModel(stream_function=words)
    reply, error, _ = await streamed(model, "openai:gpt-4o")
    assert error is None and reply is not None and reply.text.split() == WORDS
    raise_if_cut(
        model, ModelResponse(parts=[TextPart("x")])
    )  # finish_reason None, and no wire: nothing raised


def lookup(term: str) -> str:
    """Look a term up."""
    return f"{term}: a thing"


@pytest.mark.parametrize("cut", [True, False])
@pytest.mark.parametrize("name", ["openai-compatible", *FAMILIES])
async def test_a_turn_with_tools_is_checked_too(
    name: str, cut: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A turn that may use tools is an agent run of streamed requests, on another path than `stream_reply`.
    build: Callable[[str], Model]
    if name == "openai-compatible":
        monkeypatch.setenv(COMPAT_KEY_VAR, KEY)
        build, events = openai_compatible_model, chat_chunks(None if cut else "stop")
    else:
        family = FAMILIES[name]
        pytest.importorskip(family.sdk)
        build, events = family.model, family.events(None if cut else family.stop)
    used: list[ToolUse] = []

    async def on_text(delta: str) -> None:
        pass

    async def on_tool(use: ToolUse) -> None:
        used.append(use)

    with sse_server(events) as url:

        async def turn() -> Reply:
            request = CallRequest(
                build(url),
                ref=ModelRef.model_validate(f"{name}:house"),
                system="Argue.",
                user="Tabs or spaces?",
                settings={},
                timeout_s=10,
                toolsets=(FunctionToolset([lookup]),),
            )
            return await stream_tool_reply(request, on_text=on_text, on_tool=on_tool)

        if cut:
            with pytest.raises(ModelCallError) as caught:
                await turn()
            assert caught.value.fault is not None and caught.value.fault.kind == "truncated"
        else:
            assert (await turn()).text.split() == WORDS
    assert not used  # the server's reply called no tool

"""A streamed text turn on OpenAI's chat-completions wire at close to what the wire costs.

`OpenAIWireModel` is pydantic-ai's `OpenAIChatModel` (same profile, settings, message mapping, `system`, and the
same non-streamed `request`) whose `request_stream`, for a plain text turn, posts the chat-completions request
with the httpx client the OpenAI SDK client already holds, reads the server-sent `data:` lines by hand (one
`json.loads` a chunk, no SDK chunk models) and yields pydantic-ai's own stream events through its parts manager.
Anything else (function or native tools, structured output, thinking settings, a setting the fast path does not
map) delegates to `OpenAIChatModel.request_stream`. moot's builder makes it for the chat-wire rows (openai, ollama,
openai-compatible). `python bench/bench_tokens.py` measures it: about an eighth of the CPU a token of a turn
streamed through the SDK and `OpenAIStreamedResponse`, most of which went to building the SDK's typed chunk models.

What it keeps of the SDK path (moot.models.openai_client, stream_ends, faults):

- a body that ends with neither a `finish_reason` nor `data: [DONE]` raises `StreamCutShort`;
- a `finish_reason` is mapped as pydantic-ai maps it (`length` stays `length`: a reply cut by its token limit);
  `[DONE]` with no finish reason is a `stop`, as pydantic-ai takes it;
- usage comes from the final usage chunk (`stream_options: {include_usage: true}`), mapped by pydantic-ai's own
  `map_usage`; a stream without one counts as an unmeasured request;
- an HTTP error status is pydantic-ai's categorised `ModelHTTPError` (status, body as the SDK parses it,
  headers), built by the same helper the SDK path uses; an error object inside the stream is pydantic-ai's
  in-stream error; a transport failure is `ModelConnectionError` / `ModelTimeoutError` raised from httpx's own
  exception; a chunk that is not JSON is a `ModelAPIError` raised from the decoder's error.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

import httpx2
from openai import Omit
from openai.types import CompletionUsage
from openai.types.chat import ChatCompletionChunk
from pydantic_ai._model_errors import connection_error, stream_error
from pydantic_ai._run_context import RunContext
from pydantic_ai._utils import now_utc, number_to_datetime
from pydantic_ai.exceptions import ModelAPIError
from pydantic_ai.messages import FinishReason, ModelMessage, ModelResponseStreamEvent
from pydantic_ai.models import (
    ModelRequestParameters,
    StreamedResponse,
    _with_default_user_agent,
    check_allow_model_requests,
)
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.models.openai._chat_completions import CHAT_FINISH_REASON_MAP
from pydantic_ai.models.openai._errors import status_error
from pydantic_ai.models.openai._reasoning import drop_sampling_params_for_reasoning
from pydantic_ai.models.openai._response_fields import map_usage
from pydantic_ai.models.openai._settings import OpenAIChatModelSettings, drop_unsupported_params
from pydantic_ai.profiles import DEFAULT_THINKING_TAGS
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import RequestUsage

from moot.models.stream_ends import StreamCutShort

# The settings the fast path sends itself (moot's turns use the first five); any other delegates to the SDK path.
_SENT = {
    "temperature": "temperature",
    "seed": "seed",
    "top_p": "top_p",
    "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
    "logit_bias": "logit_bias",
    "stop_sequences": "stop",
}
_HANDLED = frozenset({*_SENT, "max_tokens", "max_retries", "timeout", "extra_headers", "extra_body"})
_FINISH = cast(Mapping[str, FinishReason], CHAT_FINISH_REASON_MAP)
_CUT = "the stream ended before the reply did: no finish_reason and no [DONE]"


class OpenAIWireModel(OpenAIChatModel):
    """`OpenAIChatModel` whose streamed text turns skip the OpenAI SDK and pydantic-ai's chunk mapping."""

    _headers: dict[str, str] | None = None

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncGenerator[StreamedResponse]:
        if not _text_turn(model_request_parameters):
            async with super().request_stream(
                messages, model_settings, model_request_parameters, run_context
            ) as stream:
                yield stream
            return
        check_allow_model_requests()
        prepared, parameters = self.prepare_request(model_settings, model_request_parameters)
        settings = OpenAIChatModelSettings(**cast(OpenAIChatModelSettings, prepared or {}))
        if not _HANDLED.issuperset(settings):
            # A setting this path does not map (an `openai_*` one, a cache option, ...): the SDK path sends it.
            async with super().request_stream(
                messages, model_settings, model_request_parameters, run_context
            ) as stream:
                yield stream
            return
        drop_sampling_params_for_reasoning(self.profile, settings, parameters)
        drop_unsupported_params(self.profile, settings)
        body = await self._body(messages, settings, parameters)
        http = self.client._client
        timeout = settings.get("timeout", self.client.timeout)
        request = http.build_request(
            "POST",
            self._url(),
            content=json.dumps(body).encode(),
            headers=self._request_headers(settings.get("extra_headers")),
            timeout=cast(Any, timeout),
        )
        try:
            response = await http.send(request, stream=True)
        except httpx2.TimeoutException as exc:
            raise connection_error(self.model_name, "Request timed out.", exc, timeout=True) from exc
        except httpx2.TransportError as exc:
            raise connection_error(self.model_name, "Connection error.", exc, timeout=False) from exc
        try:
            if response.status_code >= 400:
                await self._raise_status(response)
            stream = WireStreamedResponse(
                model_request_parameters=parameters,
                _model_name=self.model_name,
                _provider_name=self._provider.name,
                _provider_url=self._provider.base_url,
                _response=response,
                _thinking_tags=self.profile.get("thinking_tags", DEFAULT_THINKING_TAGS),
                _ignore_leading_whitespace=self.profile.get("ignore_streamed_leading_whitespace", False),
            )
            stream.canonical_system = self._canonical_system_stamp
            yield stream
        finally:
            await response.aclose()

    async def _body(
        self,
        messages: list[ModelMessage],
        settings: OpenAIChatModelSettings,
        parameters: ModelRequestParameters,
    ) -> dict[str, Any]:
        """The chat-completions request body for a text turn: what `_completions_create` sends for one."""
        mapped = await self._map_messages(messages, parameters, model_settings=settings)
        body: dict[str, Any] = {
            "model": self.model_name,
            "messages": mapped,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        for name, key in _SENT.items():
            if name in settings:
                body[key] = settings[name]  # type: ignore[literal-required]
        if "max_tokens" in settings:
            supports = self.profile.get("openai_chat_supports_max_completion_tokens", True)
            body["max_completion_tokens" if supports else "max_tokens"] = settings["max_tokens"]
        effort = self._translate_thinking(settings, parameters)
        if not isinstance(effort, Omit):
            body["reasoning_effort"] = effort
        extra = self._thinking_false_extra_body(settings, parameters)
        if isinstance(extra, Mapping):
            body.update(cast(Mapping[str, Any], extra))
        return body

    def _url(self) -> str:
        return str(self.client.base_url).rstrip("/") + "/chat/completions"

    def _request_headers(self, extra: Mapping[str, str] | None) -> dict[str, str]:
        """The SDK client's own headers (its user agent, platform headers, key), pydantic-ai's user agent, and the
        call's `extra_headers`."""
        if self._headers is None:
            base = {k: v for k, v in self.client.default_headers.items() if not isinstance(v, Omit)}
            self._headers = _with_default_user_agent({**base, **self.client.auth_headers})
        return {**self._headers, **extra} if extra else self._headers

    async def _raise_status(self, response: httpx2.Response) -> None:
        """Raise the error pydantic-ai raises for this status through the SDK: its body parsed as the SDK does."""
        await response.aread()
        text = response.text.strip()
        body: object = text
        message = f"Error code: {response.status_code}"
        with suppress(ValueError):
            body = json.loads(text)
        error = body.get("error", body) if isinstance(body, dict) else body
        fields = cast(dict[str, Any], error) if isinstance(error, dict) else {}
        said = fields.get("message")
        if isinstance(said, str) and said:
            message += f" - {said}"
        code = fields.get("code")
        kind = fields.get("type")
        raise status_error(
            self.model_name,
            self._provider.model_id_namespace,
            status_code=response.status_code,
            body=error,
            code=str(code) if code is not None else None,
            error_type=kind if isinstance(kind, str) else None,
            message=message,
            headers=dict(response.headers),
        )


def _text_turn(parameters: ModelRequestParameters) -> bool:
    """Whether a request asks for text only: no tools of either kind, no structured output, no thinking level."""
    return (
        not parameters.function_tools
        and not parameters.native_tools
        and not parameters.output_tools
        and parameters.output_mode == "text"
        and parameters.allow_text_output
        and parameters.thinking is None
    )


@dataclass
class WireStreamedResponse(StreamedResponse):
    """A chat-completions stream read line by line into pydantic-ai's events."""

    _model_name: str
    _provider_name: str
    _provider_url: str
    _response: httpx2.Response
    _thinking_tags: tuple[str, str] | None = None
    _ignore_leading_whitespace: bool = False
    _timestamp: datetime = field(default_factory=now_utc)
    _usage_received: bool | None = field(default=False, init=False)

    async def close_stream(self) -> None:
        await self._response.aclose()

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        finished = False  # a finish_reason or [DONE] came: the reply is whole
        done = False
        parts = self._parts_manager
        async for data in self._data():
            if done:
                continue  # nothing follows [DONE]; read to the end so the connection may be kept
            if data.startswith("[DONE]"):
                finished = done = True
                continue
            try:
                chunk = json.loads(data)
            except ValueError as exc:
                raise ModelAPIError(
                    model_name=self._model_name, message=f"Failed to decode response as JSON: {exc}"
                ) from exc
            if not isinstance(chunk, dict):
                continue
            if error := chunk.get("error"):
                said = error.get("message") if isinstance(error, dict) else None
                message = said if isinstance(said, str) and said else "An error occurred during streaming"
                raise stream_error(self._model_name, message, error)
            if self.provider_response_id is None:
                self._first(chunk)
            if chunk.get("usage") is not None:
                self._add_usage(self._usage_of(chunk), reported=True)
            choices = chunk.get("choices")
            if not choices:
                continue
            choice = choices[0]
            delta = choice.get("delta")
            if delta:
                if len(delta) > 1 or "content" not in delta:  # the role, reasoning, a refusal
                    for event in self._other(delta):
                        yield event
                content = delta.get("content")
                if content and isinstance(content, str):
                    for event in parts.handle_text_delta(
                        vendor_part_id="content",
                        content=content,
                        thinking_tags=self._thinking_tags,
                        ignore_leading_whitespace=self._ignore_leading_whitespace,
                    ):
                        yield event
            if reason := choice.get("finish_reason"):
                finished = True
                if self.finish_reason != "content_filter":
                    self.finish_reason = _FINISH.get(reason)
                self.provider_details = {**(self.provider_details or {}), "finish_reason": reason}
        if not finished and not self.cancelled:
            raise StreamCutShort(_CUT)
        if self.finish_reason is None and not self.cancelled:
            self.finish_reason = "stop"  # [DONE] without a finish reason: some servers never send one

    async def _data(self) -> AsyncIterator[str]:
        """The `data` of each server-sent event, as the SDK's decoder joins its lines; transport failures as the
        SDK path raises them."""
        lines: list[bytes] = []
        buffer = b""
        try:
            async for piece in self._response.aiter_bytes():
                buffer += piece
                *complete, buffer = buffer.split(b"\n")
                for line in complete:
                    if line.endswith(b"\r"):
                        line = line[:-1]
                    if not line:
                        if lines:
                            yield b"\n".join(lines).decode()
                            lines = []
                    elif line.startswith(b"data:"):
                        value = line[5:]
                        lines.append(value[1:] if value.startswith(b" ") else value)
        except httpx2.TimeoutException as exc:
            raise connection_error(self._model_name, "Request timed out.", exc, timeout=True) from exc
        except httpx2.TransportError as exc:
            raise connection_error(self._model_name, "Connection error.", exc, timeout=False) from exc
        if buffer.startswith(b"data:"):
            value = buffer[5:]
            lines.append(value[1:] if value.startswith(b" ") else value)
        if lines:
            yield b"\n".join(lines).decode()

    def _first(self, chunk: dict[str, Any]) -> None:
        self.provider_response_id = chunk.get("id") or None
        if model := chunk.get("model"):
            self._model_name = model
        if created := chunk.get("created"):
            self.provider_details = {
                **(self.provider_details or {}),
                "timestamp": number_to_datetime(created),
            }

    def _usage_of(self, chunk: dict[str, Any]) -> RequestUsage:
        """The usage chunk mapped by pydantic-ai's own `map_usage` (once a stream: the SDK's model is affordable)."""
        return map_usage(
            ChatCompletionChunk.model_construct(
                id=str(chunk.get("id") or ""),
                choices=[],
                created=0,
                model=self._model_name,
                object="chat.completion.chunk",
                usage=CompletionUsage.model_validate(chunk["usage"]),
            ),
            self._provider_name,
            self._provider_url,
            self._model_name,
        )

    def _other(self, delta: dict[str, Any]) -> list[ModelResponseStreamEvent]:
        """A delta that is not plain content: reasoning becomes a thinking part, a refusal a content filter."""
        events: list[ModelResponseStreamEvent] = []
        for name in ("reasoning", "reasoning_content"):
            reasoning = delta.get(name)
            if reasoning and isinstance(reasoning, str):
                events.extend(
                    self._parts_manager.handle_thinking_delta(
                        vendor_part_id=("reasoning", name),
                        id=name,
                        content=reasoning,
                        provider_name=self._provider_name,
                    )
                )
                break
        if refusal := delta.get("refusal"):
            self.finish_reason = "content_filter"
            refused = (self.provider_details or {}).get("refusal", "")
            self.provider_details = {**(self.provider_details or {}), "refusal": refused + str(refusal)}
        return events

    @property
    def model_name(self) -> str:
        return self._model_name

    @property
    def provider_name(self) -> str:
        return self._provider_name

    @property
    def provider_url(self) -> str:
        return self._provider_url

    @property
    def timestamp(self) -> datetime:
        return self._timestamp

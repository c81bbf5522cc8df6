"""The OpenAI chat-completions wire as `/v1` speaks it: the request moot reads, the bodies it answers with.

Only what an OpenAI client needs to hold a debate: `model`, `messages` and `stream` (with
`stream_options.include_usage`); moot's own `moot_stream_turns` asks for the turns as they happen,
`moot_reasoning` for them as `reasoning_content` (what chat apps show as thinking), and `moot_keep` for a
debate that goes on when its client goes away. Other sampling fields clients send by habit (temperature,
max_tokens, ...) are accepted and left to the preset: a debate's speakers each have their own settings. What a
debate cannot honour (tools, a JSON or schema-bound reply, several choices) is refused, naming the field: an
agent library that asked for a typed output would otherwise get prose it cannot read, after a whole debate.
"""

from __future__ import annotations

import json
import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from moot.domain.usage import Usage

PREFIX = "moot/"
# The room the context of earlier messages may take: DebateConfig's own bound on `context`.
CONTEXT_CHARS = 200_000


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: str = Field(min_length=1)
    # A string, or the list of parts newer clients send ([{type: text, text: ...}, ...]).
    content: str | list[dict[str, Any]] | None = None

    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        if self.content is None:
            return ""
        return "\n".join(str(p.get("text", "")) for p in self.content if p.get("type") == "text")


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")

    include_usage: bool = False


class ChatRequest(BaseModel):
    # Clients send fields moot has no use for (temperature, user, ...): accepted, not refused.
    model_config = ConfigDict(extra="allow")

    model: str = Field(min_length=1)
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False
    stream_options: StreamOptions | None = None
    n: int | None = None
    tools: list[Any] | None = None
    tool_choice: str | dict[str, Any] | None = None
    functions: list[Any] | None = None  # the older spelling of tools
    function_call: str | dict[str, Any] | None = None
    response_format: dict[str, Any] | None = None
    moot_stream_turns: bool = Field(
        default=False, description="Stream each turn as it is completed before the answer (with stream: true)"
    )
    moot_reasoning: bool = Field(
        default=False,
        description="Give the turns as reasoning_content (streamed as they are completed, with stream: true) "
        "and the answer alone as content",
    )
    moot_keep: bool = Field(
        default=False, description="Let the debate run to its end when the client goes away before it"
    )

    def refuse_unsupported(self) -> None:
        """A WireError naming the first field that asks for what a debate never gives."""
        if self.tools or self.functions:
            field = "tools" if self.tools else "functions"
            raise WireError(
                400,
                f"{field}: a debate answers in text and calls no tools of the client's; send the request "
                "without them (an agent's typed output is such a tool: ask for text output)",
                param=field,
            )
        for field, choice in (("tool_choice", self.tool_choice), ("function_call", self.function_call)):
            if choice is not None and choice not in ("none", "auto"):
                raise WireError(
                    400,
                    f"{field}: {json.dumps(choice)} asks for a tool call, which a debate never makes; leave "
                    f'{field} out or send "none"',
                    param=field,
                )
        kind = (self.response_format or {}).get("type", "text")
        if kind != "text":
            raise WireError(
                400,
                f"response_format: a debate answers in prose, not {kind}; leave response_format out or send "
                '{"type": "text"}',
                param="response_format",
            )
        if self.n is not None and self.n != 1:
            raise WireError(
                400,
                f"n: a debate gives one answer per request, not {self.n}; send n: 1 (or leave it out) and "
                "make one request per answer",
                param="n",
            )

    def question(self) -> tuple[str, str | None]:
        """The topic (the last message, which must be the user's) and the context (the messages before it,
        as a transcript), or a WireError naming `messages`."""
        last = self.messages[-1]
        if last.role != "user" or not last.text().strip():
            raise WireError(
                400,
                "the last message must be the user's question (role: user, with text); it is the debate's topic",
                param="messages",
            )
        earlier = [f"{m.role}: {m.text().strip()}" for m in self.messages[:-1] if m.text().strip()]
        context = "\n\n".join(earlier) or None
        if context is not None and len(context) > CONTEXT_CHARS:
            raise WireError(
                400,
                f"the messages before the last one come to {len(context)} characters, over the "
                f"{CONTEXT_CHARS} a debate's context takes; send fewer or shorter messages",
                param="messages",
            )
        return last.text().strip(), context


class WireError(Exception):
    """A request /v1 refuses, answered with OpenAI's error body: {error: {message, type, param, code}}."""

    def __init__(
        self, status: int, message: str, *, param: str | None = None, code: str | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.code = code

    def body(self) -> dict[str, Any]:
        kind = "invalid_request_error" if self.status < 500 else "server_error"
        return {"error": {"message": self.message, "type": kind, "param": self.param, "code": self.code}}


def model_id(preset: str) -> str:
    return PREFIX + preset


def preset_name(model: str) -> str:
    """`moot/council` -> `council`; a bare preset name is taken too."""
    return model.removeprefix(PREFIX)


def usage_body(usage: Usage) -> dict[str, Any]:
    """OpenAI's usage, with the parts of the prompt read from and written to providers' caches as OpenRouter
    gives them (`prompt_tokens_details`), and the whole debate's cost in US dollars as OpenRouter's `cost`
    (None: no call could be priced; `moot_unpriced_requests` says how many were not, the cost then a floor)."""
    body: dict[str, Any] = {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
        "prompt_tokens_details": {
            "cached_tokens": usage.cache_read_tokens,
            "cache_write_tokens": usage.cache_write_tokens,
        },
        "cost": usage.cost_usd,
    }
    if usage.unpriced_requests:
        body["moot_unpriced_requests"] = usage.unpriced_requests
    return body


def completion(
    debate_id: str, model: str, answer: str, usage: Usage, *, reasoning: str | None = None
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": answer}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    return {
        "id": f"chatcmpl-{debate_id}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": usage_body(usage),
        "moot_debate_id": debate_id,
    }


def chunk(
    debate_id: str,
    model: str,
    delta: dict[str, Any] | None,
    *,
    finish: str | None = None,
    usage: Usage | None = None,
) -> str:
    """One server-sent event of a streamed completion; `delta` None: the usage-only chunk (no choices)."""
    body: dict[str, Any] = {
        "id": f"chatcmpl-{debate_id}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}],
        "moot_debate_id": debate_id,
    }
    if usage is not None:
        body["usage"] = usage_body(usage)
    return event(body)


def event(body: dict[str, Any]) -> str:
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"


DONE = "data: [DONE]\n\n"

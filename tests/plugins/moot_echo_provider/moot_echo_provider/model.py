"""The `echo:` models: a pydantic-ai FunctionModel that answers with the first line of what it was asked."""

from __future__ import annotations

from collections.abc import AsyncIterator

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel


def build(name: str, *, base_url: str | None, api_key: str | None) -> FunctionModel:
    """moot's PluginBuilder: the model `name` at `base_url`, with the key moot read from ECHO_API_KEY."""
    keyed = "with a key" if api_key else "without a key"

    def answer(messages: list[ModelMessage]) -> str:
        asked = next(
            (
                str(part.content)
                for message in reversed(messages)
                if isinstance(message, ModelRequest)
                for part in message.parts
                if isinstance(part, UserPromptPart)
            ),
            "",
        )
        first = asked.strip().splitlines()[0] if asked.strip() else "(nothing)"
        return f"{name} at {base_url} {keyed} echoes: {first[:80]}"

    def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(answer(messages))])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        words = answer(messages).split(" ")
        for i, word in enumerate(words):
            yield word if i == 0 else " " + word

    return FunctionModel(reply, stream_function=stream, model_name=f"echo:{name}")

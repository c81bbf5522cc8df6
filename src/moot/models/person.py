"""The `human` provider's model: a seat a person fills. The engine asks the person (moot.engine.people), never
this model; a call reaching it is a bug in the engine, reported as one."""

from __future__ import annotations

from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel

from moot.errors import RunError


def person_model() -> FunctionModel:
    async def refuse(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise RunError("a person answers for this seat; the engine asked it as a model (a bug)")

    return FunctionModel(refuse, model_name="person", profile=None)

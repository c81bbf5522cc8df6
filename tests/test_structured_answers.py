"""A structured answer (a verdict, an assessment, a vote) is one model request and a validation, not an agent run:
the same output tool and schema pydantic-ai's agent would send, the answer read from the tool call or, on a model
whose profile prefers it, from its JSON text; an invalid answer is retried with its reason, and every attempt's
usage counts."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, Field, field_validator
from pydantic_ai import Agent
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from pydantic_ai.profiles import ModelProfile
from pydantic_ai.usage import RequestUsage

from moot.domain.models import ModelRef
from moot.engine.calls.replies import CallRequest, answer_shape, ask_judge
from moot.judging.schema import answer_model
from tests.conftest import make_config, prompt_text


class Pick(BaseModel):
    """The proposal chosen, and why."""

    choice: str = Field(description="one of A, B")
    why: str

    @field_validator("choice")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in ("A", "B"):
            raise ValueError(f"{value!r} names none of the proposals")
        return value


def request(model: FunctionModel, *, streamed: bool = False) -> CallRequest:
    return CallRequest(
        model,
        ref=ModelRef.model_validate("openai-compatible:judge"),
        system="You judge.",
        user="Pick one.",
        settings={},
        timeout_s=10,
        streamed=streamed,
    )


def answering(*responses: ModelResponse) -> tuple[FunctionModel, list[list[ModelMessage]], list[AgentInfo]]:
    """A judge that gives these responses in turn; the messages and request info it was given."""
    asked: list[list[ModelMessage]] = []
    infos: list[AgentInfo] = []

    def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        asked.append(messages)
        infos.append(info)
        return responses[min(len(asked) - 1, len(responses) - 1)]

    return FunctionModel(reply, model_name="judge-fn"), asked, infos


def call(args: dict[str, Any] | str, tool: str = "final_result", tokens: int = 10) -> ModelResponse:
    return ModelResponse(
        parts=[ToolCallPart(tool, args)], usage=RequestUsage(input_tokens=tokens, output_tokens=5)
    )


@pytest.mark.parametrize("answer_type", [Pick, answer_model(make_config(3))])
async def test_the_output_tool_and_object_are_what_pydantic_ai_s_agent_sends(
    answer_type: type[BaseModel],
) -> None:
    sent: list[ModelRequestParameters] = []

    def capture(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        sent.append(info.model_request_parameters)
        raise UnexpectedModelBehavior("seen")

    model = FunctionModel(capture)
    with pytest.raises(UnexpectedModelBehavior):
        await Agent(output_type=answer_type).run("x", model=model)
    ours, _, infos = answering(ModelResponse(parts=[TextPart("no")]))
    await ask_judge(request(ours), answer_type, retries=0)
    (agents,), mine = sent, infos[0].model_request_parameters
    # The same tool, schema and resolved mode: a provider sees what it saw when an agent asked.
    assert mine.output_tools == agents.output_tools and mine.output_tools[0].name == "final_result"
    assert (
        (mine.output_mode, mine.allow_text_output)
        == (agents.output_mode, agents.allow_text_output)
        == ("tool", False)
    )
    assert mine.function_tools == [] and answer_shape(answer_type) is answer_shape(answer_type)


async def test_an_invalid_answer_is_asked_again_with_its_reason_and_both_attempts_count() -> None:
    model, asked, _ = answering(
        call({"choice": "Cy", "why": "x"}, tokens=40), call({"choice": "B", "why": "shorter"})
    )
    result = await ask_judge(request(model), Pick, retries=1, what="pick")
    assert result.answer == Pick(choice="B", why="shorter") and result.error is None and result.attempts == 2
    assert (
        "Your previous pick was rejected: choice: 'Cy' names none of the proposals"
        in prompt_text(asked[1])[1]
    )
    assert result.usage.input_tokens == 50 and result.usage.output_tokens == 10


@pytest.mark.parametrize(
    ("response", "problem"),
    [
        (
            ModelResponse(parts=[TextPart("I pick B, it is shorter.")]),
            "Plain text is not an answer: give the answer as asked, a call to final_result",
        ),
        (
            call({"choice": "A", "why": "x"}, tool="search"),
            "Unknown tool name: 'search'. Available tools: 'final_result'",
        ),
        (call('{"choice": "A", '), "Invalid JSON: EOF while parsing"),
        (call({"why": "x"}), "choice: Field required"),
        (ModelResponse(parts=[]), "The reply was empty: give the answer as asked"),
    ],
)
async def test_what_is_wrong_with_an_answer_is_said_in_one_line(
    response: ModelResponse, problem: str
) -> None:
    model, asked, _ = answering(response)
    result = await ask_judge(request(model), Pick, retries=1, what="pick", who="the chair")
    assert result.answer is None and result.attempts == 2 and len(asked) == 2
    assert result.error is not None and result.error.startswith(
        "the chair gave no valid pick in 2 tries; last problem: "
    )
    assert problem in result.error and "\n" not in result.error
    assert problem in prompt_text(asked[1])[1]


async def test_a_model_whose_profile_prefers_prompted_output_answers_in_json_text() -> None:
    fenced = '```json\n{"choice": "A", "why": "clearer"}\n```'
    sent: list[ModelRequestParameters] = []

    def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        sent.append(info.model_request_parameters)
        return ModelResponse(parts=[TextPart(fenced)])

    model = FunctionModel(reply, profile=ModelProfile(default_structured_output_mode="prompted"))
    result = await ask_judge(request(model), Pick, retries=0)
    assert result.answer == Pick(choice="A", why="clearer")
    # Asked as the profile wants it: no tool, the schema in the instructions.
    assert sent[0].output_mode == "prompted" and not sent[0].output_tools
    assert sent[0].output_object is not None and sent[0].output_object.json_schema["title"] == "Pick"


async def test_a_streamed_answer_is_read_from_its_streamed_tool_call() -> None:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> Any:
        body = json.dumps({"choice": "B", "why": "streamed"})
        first: DeltaToolCalls = {0: DeltaToolCall(info.output_tools[0].name, body[:10])}
        yield first
        rest: DeltaToolCalls = {0: DeltaToolCall(None, body[10:])}
        yield rest

    result = await ask_judge(request(FunctionModel(stream_function=stream), streamed=True), Pick, retries=0)
    assert result.answer == Pick(choice="B", why="streamed") and result.attempts == 1


async def test_an_answer_the_model_s_adapter_finds_unusable_is_tried_again() -> None:
    calls = [0]

    def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls[0] += 1
        if calls[0] == 1:
            raise UnexpectedModelBehavior("Content filter triggered")
        return call({"choice": "A", "why": "x"})

    result = await ask_judge(request(FunctionModel(reply)), Pick, retries=1)
    assert result.answer == Pick(choice="A", why="x") and result.attempts == 2

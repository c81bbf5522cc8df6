"""What the model reads and is asked to write, and how its text is read back.

pydantic-ai messages become chat messages for the model's template; the output plan says what the reply
is (free text, output JSON, or an output tool's call) and the generated text is read back as response parts.

Structured output is grammar-constrained: the JSON schema of the output (Native or Prompted Output) or of
the output tool (Tool Output, pydantic-ai's default for `output_type=SomeModel`) becomes a GBNF grammar,
so the model can only write JSON of that shape.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic_ai._utils import generate_tool_call_id
from pydantic_ai.messages import (
    CachePoint,
    FinishReason,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponsePart,
    RetryFeedbackPart,
    SystemPromptPart,
    TextContent,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import (
    ModelRequestParameters,
    _sendable_request_parts,  # renders deprecated retry parts and compaction summaries, as adapters do
)
from pydantic_ai.profiles import InlineDefsJsonSchemaTransformer
from pydantic_ai.tools import ToolDefinition

from moot.errors import UserError

logger = logging.getLogger(__name__)


# --- what the model is asked to write ---------------------------------------------------------------


@dataclass(frozen=True)
class _OutputPlan:
    """What one request has the model write, and the JSON schema its grammar is built from, if any.

    - `text`: free text, a `TextPart`.
    - `json`: JSON of the output object's schema (Native or Prompted Output), a `TextPart`.
    - `tool`: the arguments of the only tool it may call, a `ToolCallPart`.
    - `tools`: `{"name": ..., "arguments": ...}` for one of several tools, a `ToolCallPart`.
    """

    kind: Literal["text", "json", "tool", "tools"]
    schema: dict[str, Any] | None = None
    tool_name: str | None = None


def _output_plan(params: ModelRequestParameters, label: str) -> _OutputPlan:
    if params.declared_function_tools:
        names = ", ".join(t.name for t in params.declared_function_tools)
        raise UserError(f"{label} cannot call function tools ({names}); give it no tools")
    if params.output_mode in ("native", "prompted") and params.output_object is not None:
        return _OutputPlan("json", schema=params.output_object.json_schema)
    if params.output_tools and not params.allow_text_output:
        if len(params.output_tools) == 1:
            tool = params.output_tools[0]
            return _OutputPlan("tool", schema=tool.parameters_json_schema, tool_name=tool.name)
        return _OutputPlan("tools", schema=_choice_schema(params.output_tools))
    return _OutputPlan("text")


def _choice_schema(tools: Sequence[ToolDefinition]) -> dict[str, Any]:
    """One schema for a call to any of `tools`; each tool's `$defs` are inlined so none can collide."""
    options = []
    for tool in tools:
        arguments = InlineDefsJsonSchemaTransformer(tool.parameters_json_schema).walk()
        options.append(
            {
                "type": "object",
                "properties": {"name": {"const": tool.name}, "arguments": arguments},
                "required": ["name", "arguments"],
            }
        )
    return {"anyOf": options}


@functools.lru_cache(maxsize=64)
def _grammar(schema_json: str) -> Any:
    """A llama.cpp grammar that only admits JSON matching the schema (any JSON if it can't be converted)."""
    from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar

    try:
        return LlamaGrammar.from_json_schema(schema_json, verbose=False)
    except Exception as exc:  # the converter raises bare Exceptions for schema features it lacks
        logger.warning("cannot turn this JSON schema into a grammar (%s); constraining to any JSON", exc)
        return LlamaGrammar.from_string(JSON_GBNF, verbose=False)


# --- pydantic-ai messages -> chat messages ---------------------------------------------------------


def _user_text(part: UserPromptPart, label: str) -> str:
    if isinstance(part.content, str):
        return part.content
    texts: list[str] = []
    for item in part.content:
        if isinstance(item, str):
            texts.append(item)
        elif isinstance(item, TextContent):
            texts.append(item.content)
        elif isinstance(item, CachePoint):
            continue
        else:
            raise UserError(f"{label} reads text only; it cannot take {type(item).__name__}")
    return "\n\n".join(texts)


def _response_text(message: ModelResponse) -> str:
    """An earlier response as the assistant wrote it: text, and tool calls as the JSON it generated."""
    calls = [p for p in message.parts if isinstance(p, ToolCallPart)]
    texts = [p.content for p in message.parts if isinstance(p, TextPart)]
    if len(calls) == 1:
        texts.append(calls[0].args_as_json_str())
    else:
        texts.extend(json.dumps({"name": c.tool_name, "arguments": c.args_as_dict()}) for c in calls)
    # Thinking, native tool and file parts mean nothing to this model and are left out.
    return "\n\n".join(t for t in texts if t)


def _chat_messages(
    messages: Sequence[ModelMessage], instructions: Sequence[str], label: str
) -> list[dict[str, str]]:
    """Chat messages for the model's template: one system message first, then user/assistant turns."""
    turns: list[tuple[str, str]] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in _sendable_request_parts(message.parts):
                if isinstance(part, SystemPromptPart):
                    turns.append(("system", part.content))
                elif isinstance(part, UserPromptPart):
                    turns.append(("user", _user_text(part, label)))
                elif isinstance(part, ToolReturnPart):
                    turns.append(("user", part.model_response_str()))
                elif isinstance(part, RetryFeedbackPart):  # a direct call that skipped `prepare_messages`
                    turns.append(("user", part.model_response()))
                # Instruction, tool-availability and settings deltas are bookkeeping the model never reads.
        else:
            turns.append(("assistant", _response_text(message)))

    # The leading system prompts and the instructions become the one system message the template expects.
    leading = 0
    while leading < len(turns) and turns[leading][0] == "system":
        leading += 1
    system = [text for _, text in turns[:leading]] + list(instructions)
    merged: list[dict[str, str]] = []
    if any(s.strip() for s in system):
        merged.append({"role": "system", "content": "\n\n".join(s for s in system if s.strip())})
    for role, text in turns[leading:]:
        if merged and merged[-1]["role"] == role:
            merged[-1]["content"] += "\n\n" + text
        else:
            merged.append({"role": role, "content": text})
    return merged


# --- generated text -> response parts --------------------------------------------------------------


def _response_parts(plan: _OutputPlan, text: str) -> list[ModelResponsePart]:
    if not text:
        return []
    if plan.kind == "tool" and plan.tool_name is not None:
        return [ToolCallPart(plan.tool_name, text, tool_call_id=generate_tool_call_id())]
    if plan.kind == "tools":
        call = _parse_choice(text)
        if call is not None:
            return [ToolCallPart(call[0], call[1], tool_call_id=generate_tool_call_id())]
    return [TextPart(text)]


def _parse_choice(text: str) -> tuple[str, str] | None:
    """`(tool name, arguments JSON)` from a `{"name": ..., "arguments": ...}` reply; None if it's cut off."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return None
    return data["name"], json.dumps(data.get("arguments", {}))


def _finish_reason(reason: str | None, plan: _OutputPlan) -> FinishReason | None:
    if reason == "length":
        return "length"
    if reason == "stop":
        return "tool_call" if plan.kind in ("tool", "tools") else "stop"
    return None

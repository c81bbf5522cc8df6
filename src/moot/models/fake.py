"""A scripted model for demos, benchmarks and tests: no weights, no network, deterministic.

`fake:NAME` streams a short canned argument that names its speaker and round; a name ending in `-N`
(`fake:slow-200`, `fake:judge-50`) waits N ms per call first; `fake:drip-25` streams it a word every 25 ms (a
reply that is under way for a while, as a real model's is). Asked for structured output (a verdict, an
assessment, a vote, a ranking), it fills the schema with plausible values that differ between participants
(`drip-N` streams those in pieces too).
The README's "Models and keys" documents these names; keep the two in step.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import AsyncIterator
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

_DELAY = re.compile(r"-(\d+)$")
_DRIP = re.compile(r"^drip-(\d+)$")
_DRIPPED_CHARS = 120  # of a structured answer's arguments per drip


def fake_model(name: str = "echo") -> FunctionModel:
    match = _DELAY.search(name)
    drip = _DRIP.match(name)
    per_word = int(drip.group(1)) / 1000 if drip else 0.0
    delay = int(match.group(1)) / 1000 if match and not drip else 0.0

    async def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        # Asked whole, a dripping model takes as long as its stream would: a provider sends a whole reply once
        # it has written all of it.
        if delay:
            await asyncio.sleep(delay)
        if info.output_tools:
            tool = info.output_tools[0]
            args = json.dumps(fill_schema(tool.parameters_json_schema, _seed(messages)))
            if per_word:
                await asyncio.sleep(per_word * -(-len(args) // _DRIPPED_CHARS))
            return ModelResponse(parts=[ToolCallPart(tool.name, args)])
        text = canned_argument(messages)
        if per_word:
            await asyncio.sleep(per_word * len(text.split(" ")))
        return ModelResponse(parts=[TextPart(text)])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        if delay:
            await asyncio.sleep(delay)
        if info.output_tools:
            tool = info.output_tools[0]
            args = json.dumps(fill_schema(tool.parameters_json_schema, _seed(messages)))
            if not per_word:
                yield {0: DeltaToolCall(name=tool.name, json_args=args)}
                return
            # Dripped as a slow model writes its answer: a piece of the arguments at a time.
            yield {0: DeltaToolCall(name=tool.name, json_args="")}
            for start in range(0, len(args), _DRIPPED_CHARS):
                await asyncio.sleep(per_word)
                yield {0: DeltaToolCall(json_args=args[start : start + _DRIPPED_CHARS])}
            return
        for word in canned_argument(messages).split(" "):
            if per_word:
                await asyncio.sleep(per_word)
            yield word + " "

    return FunctionModel(reply, stream_function=stream, model_name=f"fake:{name}")


def _prompt_text(messages: list[ModelMessage]) -> str:
    parts = [
        p.content
        for m in messages
        for p in getattr(m, "parts", [])
        if isinstance(p, SystemPromptPart | UserPromptPart)
    ]
    return "\n".join(p for p in parts if isinstance(p, str))


def _seed(messages: list[ModelMessage]) -> int:
    return int(hashlib.sha256(_prompt_text(messages).encode()).hexdigest()[:8], 16)


def canned_argument(messages: list[ModelMessage]) -> str:
    text = _prompt_text(messages)
    name = re.search(r"^You are (.+?), a participant", text, re.M)
    round_ = re.search(r"round (\d+) of (\d+)", text)
    speaker = name.group(1) if name else "this speaker"
    where = f"In round {round_.group(1)}" if round_ else "Here"
    return (
        f"{where}, {speaker} holds that the strongest case rests on evidence, not assertion. "
        "The previous speaker raised a fair point, but it overlooks the costs and who bears them."
    )


def fill_schema(schema: dict[str, Any], seed: int, defs: dict[str, Any] | None = None, key: str = "") -> Any:
    """A value that satisfies a JSON schema, varied by `seed` so scores differ between participants.

    Booleans are calm: `should_*` questions are answered yes and flags are left down, so a fake judge lets a
    debate run its planned rounds and demos and benchmarks stay predictable.
    """
    defs = defs if defs is not None else schema.get("$defs", {})
    if "$ref" in schema:
        return fill_schema(defs[schema["$ref"].split("/")[-1]], seed, defs, key)
    for combinator in ("anyOf", "oneOf", "allOf"):
        if schema.get(combinator):
            return fill_schema(schema[combinator][0], seed, defs, key)
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        return {k: fill_schema(v, seed + i * 7919, defs, k) for i, (k, v) in enumerate(props.items())}
    if kind == "array":
        count = max(1, schema.get("minItems", 1))
        items = schema.get("items", {})
        items = defs[items["$ref"].split("/")[-1]] if "$ref" in items else items
        if "enum" in items and count <= len(items["enum"]):
            # Distinct choices, rotated by the seed: a ranking of labels comes out a permutation.
            choices = items["enum"]
            return [choices[(seed + i) % len(choices)] for i in range(count)]
        return [fill_schema(items, seed + 1 + i, defs, f"{key} {i + 1}") for i in range(count)]
    if kind in ("number", "integer"):
        lo = schema.get("minimum", 0)
        hi = schema.get("maximum", 10)
        # Upper half of the range, in half steps: plausible scores that still differ between participants.
        value = min(hi, lo + (hi - lo) / 2 + (seed % (int(hi - lo) + 1)) / 2)
        return int(value) if kind == "integer" else value
    if kind == "boolean":
        return key.startswith("should")
    if "enum" in schema:
        return schema["enum"][seed % len(schema["enum"])]
    # Each field its own words, as a judge's are: one sentence in every field reads as filler (judging.words).
    about = key.replace("_", " ").strip()
    return (
        f"A reasoned point drawn from the transcript ({about})."
        if about
        else "A reasoned point drawn from the transcript."
    )

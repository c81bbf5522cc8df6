"""`moot run --estimate` against a run of the same configuration.

    python bench/bench_estimate.py

Each configuration names real models (so the estimate can price them) and caps replies at `max_tokens`. The
"actual" run holds the same debate on `fake:` stand-ins whose prompts are counted with each real model's token
counter and priced at its genai-prices price, so estimate and run are measured the same way. Fake replies are
short (~40 tokens), so the run usually lands near the estimate's low end (replies at 30 % of max_tokens).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, SystemPromptPart, UserPromptPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel

from moot.context.tokens import count_tokens
from moot.domain.config import DebateConfig, ModelOptions
from moot.engine.budget import price
from moot.engine.estimate import estimate
from moot.engine.runner import InMemoryLog, run_debate
from moot.models.fake import fake_model

DEBATERS = [
    {"name": "Ada", "model": "openai:gpt-4o", "max_tokens": 100},
    {"name": "Bo", "model": "anthropic:claude-sonnet-4-5", "max_tokens": 100},
    {"name": "Cy", "model": "openai:gpt-4o-mini", "max_tokens": 100},
    {"name": "Di", "model": "openai:gpt-4o", "max_tokens": 100},
]
CONFIGS: list[tuple[str, dict[str, Any]]] = [
    ("free-form, 3 rounds, assessed", {"format": "free-form", "rounds": 3, "participants": DEBATERS[:3]}),
    (
        "structured-rounds, 3 rounds",
        {"format": "structured-rounds", "rounds": 3, "participants": DEBATERS[:3]},
    ),
    (
        "free-form, 8 rounds, no assessment",
        {"rounds": 8, "participants": DEBATERS[:2], "stopping": {"assess_rounds": False}},
    ),
    ("oxford, 4 speakers, 3 rounds", {"format": "oxford", "rounds": 3, "participants": DEBATERS}),
]


def _text(messages: list[ModelMessage]) -> str:
    return "".join(
        p.content
        for m in messages
        for p in getattr(m, "parts", [])
        if isinstance(p, SystemPromptPart | UserPromptPart) and isinstance(p.content, str)
    )


class Actual:
    def __init__(self) -> None:
        self.calls = 0
        self.input_tokens = 0
        self.cost = 0.0

    def resolve(self, options: ModelOptions) -> Model:
        inner = fake_model("stand-in")
        assert inner.function is not None and inner.stream_function is not None
        whole, stream = inner.function, inner.stream_function

        def tally(messages: list[ModelMessage], reply: str) -> None:
            tokens_in = count_tokens(_text(messages), options.model)
            self.calls += 1
            self.input_tokens += tokens_in
            self.cost += price(options.model, tokens_in, count_tokens(reply, options.model)) or 0.0

        async def counted_whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            response: ModelResponse = await whole(messages, info)  # type: ignore[misc]
            tally(messages, response.text or "".join(str(getattr(p, "args", "")) for p in response.parts))
            return response

        async def counted_stream(
            messages: list[ModelMessage], info: AgentInfo
        ) -> AsyncIterator[str | DeltaToolCalls]:
            chunks: list[str] = []
            async for chunk in stream(messages, info):
                if isinstance(chunk, str):
                    chunks.append(chunk)
                yield chunk  # type: ignore[misc]
            tally(messages, "".join(chunks))

        return FunctionModel(counted_whole, stream_function=counted_stream, model_name=str(options.model))


async def measure(data: dict[str, Any]) -> tuple[Any, Actual]:
    config = DebateConfig.model_validate(
        {
            "topic": "Should cities ban private cars from their centres?",
            "judge": {"model": "openai:gpt-4o-mini"},
            **data,
        }
    )
    est = await estimate(config)
    actual = Actual()
    [e async for e in run_debate(config, log=InMemoryLog(), resolve=actual.resolve)]
    return est, actual


def main() -> None:
    print(
        "configuration | est. calls | run calls | est. input tokens | run input tokens | est. cost | run cost | in range"
    )
    print("--- | --- | --- | --- | --- | --- | --- | ---")
    for name, data in CONFIGS:
        est, actual = asyncio.run(measure(data))
        (c_lo, c_hi), (i_lo, i_hi), (k_lo, k_hi) = est.calls, est.input_tokens, est.cost
        inside = c_lo <= actual.calls <= c_hi and i_lo <= actual.input_tokens <= i_hi
        cost = f"${k_lo:.4f}-${k_hi:.4f}" if k_lo is not None and k_hi is not None else "unknown"
        print(
            f"{name} | {c_lo}-{c_hi} | {actual.calls} | {i_lo:,}-{i_hi:,} | {actual.input_tokens:,} | {cost} | "
            f"${actual.cost:.4f} | {'yes' if inside else 'no'}"
        )


if __name__ == "__main__":
    main()

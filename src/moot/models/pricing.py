"""Turn pydantic-ai responses into moot's Usage, with the price when genai-prices knows it."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic_ai.messages import ModelMessage, ModelResponse

from moot.domain.providers import BUILT_IN
from moot.domain.usage import Usage

# Models that run here cost nothing; genai-prices would not know them (pydantic-ai's FunctionModel and
# TestModel, "function" and "test", are test doubles).
FREE_SYSTEMS = frozenset(
    {"function", "test", *(system for spec in BUILT_IN if spec.runs_here for system in spec.systems)}
)


def response_usage(response: ModelResponse, *, free: bool = False) -> Usage:
    u = response.usage
    cost: float | None
    unpriced = 0
    if free or (response.provider_name or "") in FREE_SYSTEMS:
        cost = 0.0
    else:
        try:
            cost = float(response.cost().total_price)
        except Exception:  # genai-prices raises several types for unknown models; all mean "no price"
            cost, unpriced = None, 1
    return Usage(
        requests=1,
        input_tokens=u.input_tokens,
        output_tokens=u.output_tokens,
        cache_read_tokens=u.cache_read_tokens,
        cache_write_tokens=u.cache_write_tokens,
        cost_usd=cost,
        unpriced_requests=unpriced,
    )


def messages_usage(messages: Iterable[ModelMessage], *, free: bool = False) -> Usage:
    total = Usage()
    for m in messages:
        if isinstance(m, ModelResponse):
            total = total + response_usage(m, free=free)
    return total

"""Turn pydantic-ai responses into moot's Usage, with the price when genai-prices knows it."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from pydantic_ai.embeddings import EmbeddingResult
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
    cost, unpriced = _priced(response.provider_name, response.cost, free=free)
    return Usage(
        requests=1,
        input_tokens=u.input_tokens,
        output_tokens=u.output_tokens,
        cache_read_tokens=u.cache_read_tokens,
        cache_write_tokens=u.cache_write_tokens,
        cost_usd=cost,
        unpriced_requests=unpriced,
    )


def embedding_usage(result: EmbeddingResult) -> Usage:
    """One embedding call's tokens, priced as a reply is (free for models that run here)."""
    cost, unpriced = _priced(result.provider_name, result.cost)
    return Usage(
        requests=1, input_tokens=result.usage.input_tokens, cost_usd=cost, unpriced_requests=unpriced
    )


def _priced(
    provider: str | None, price: Callable[[], Any], *, free: bool = False
) -> tuple[float | None, int]:
    """A call's cost and whether it went unpriced: 0 for models that run here, genai-prices' figure, else None."""
    if free or (provider or "") in FREE_SYSTEMS:
        return 0.0, 0
    try:
        return float(price().total_price), 0
    except Exception:  # genai-prices raises several types for unknown models; all mean "no price"
        return None, 1


def messages_usage(messages: Iterable[ModelMessage], *, free: bool = False) -> Usage:
    total = Usage()
    for m in messages:
        if isinstance(m, ModelResponse):
            total = total + response_usage(m, free=free)
    return total

"""Prompt caching: cache tokens recorded, priced and shown; prompts laid out as a stable prefix; Anthropic
cache breakpoints."""

from __future__ import annotations

import io
import itertools
import json
from decimal import Decimal
from typing import Any

import genai_prices
import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage
from rich.console import Console

from moot.cli.render import DebateRenderer
from moot.domain.config import ModelOptions
from moot.domain.ledger import ledger
from moot.domain.state import fold
from moot.domain.usage import Usage
from moot.engine import InMemoryLog, model_settings, run_debate
from moot.export import export
from moot.models.pricing import response_usage
from tests.conftest import Recorder, judge_answer, make_config, resolver

# Anthropic reports the cached parts of a prompt; pydantic-ai folds them into input_tokens.
CACHED = RequestUsage(
    input_tokens=10_000, output_tokens=100, cache_read_tokens=8_000, cache_write_tokens=1_000
)


def test_usage_adds_cache_tokens_and_reads_events_stored_before_them() -> None:
    old = Usage.model_validate({"requests": 1, "input_tokens": 10, "output_tokens": 2, "cost_usd": 0.5})
    assert (old.cache_read_tokens, old.cache_write_tokens) == (0, 0)
    new = Usage(requests=1, input_tokens=100, cache_read_tokens=60, cache_write_tokens=30)
    total = old + new + new
    assert (total.input_tokens, total.cache_read_tokens, total.cache_write_tokens) == (210, 120, 60)
    assert Usage.model_validate_json(total.model_dump_json()) == total


def test_cache_tokens_are_recorded_and_priced_by_genai_prices() -> None:
    response = ModelResponse(
        parts=[TextPart("x")], usage=CACHED, model_name="claude-sonnet-4-5", provider_name="anthropic"
    )
    usage = response_usage(response)
    assert (usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens) == (10_000, 8_000, 1_000)
    # Claude Sonnet 4.5: $3 per million uncached input tokens, $0.30 cache reads, $3.75 cache writes (5 min),
    # $15 output: 1,000 x 3 + 8,000 x 0.30 + 1,000 x 3.75 + 100 x 15, per million.
    expected = (1_000 * 3 + 8_000 * 0.30 + 1_000 * 3.75 + 100 * 15) / 1e6
    assert usage.cost_usd == pytest.approx(expected)
    priced = genai_prices.calc_price(
        genai_prices.Usage(
            input_tokens=10_000, output_tokens=100, cache_read_tokens=8_000, cache_write_tokens=1_000
        ),
        "claude-sonnet-4-5",
        provider_id="anthropic",
    )
    assert Decimal(str(usage.cost_usd)) == pytest.approx(priced.total_price)
    uncached = response_usage(
        ModelResponse(
            parts=[TextPart("x")],
            usage=RequestUsage(input_tokens=10_000, output_tokens=100),
            model_name="claude-sonnet-4-5",
            provider_name="anthropic",
        )
    )
    assert uncached.cost_usd is not None and usage.cost_usd is not None
    assert usage.cost_usd < uncached.cost_usd / 2


def _caching_judge(config: Any) -> FunctionModel:
    """A judge whose every reply says most of its prompt came from the provider's cache."""

    async def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(
            parts=[ToolCallPart(info.output_tools[0].name, json.dumps(judge_answer(config)))], usage=CACHED
        )

    return FunctionModel(reply, model_name="judge-fn")


async def test_cache_tokens_reach_the_state_the_ledger_the_exports_and_the_cli() -> None:
    config = make_config(2, rounds=1)
    log = InMemoryLog()
    _ = [e async for e in run_debate(config, log=log, resolve=resolver(Recorder(), _caching_judge(config)))]
    state = fold(log.events)
    assert (state.usage.cache_read_tokens, state.usage.cache_write_tokens) == (8_000, 1_000)
    book = ledger(log.events)
    assert book.total == state.usage
    assert book.by_who()["judge"].cache_read_tokens == 8_000
    assert book.by_who()["ada"].cache_read_tokens == 0

    markdown = export(log.events, "markdown")
    assert "| Prompt cache (of input) |" in markdown
    assert "| Total | 3 | " in markdown and "| 8,000 read / 1,000 written |" in markdown
    assert "(cache: 8,000 read / 1,000 written)" in export(log.events, "text")
    assert "8,000 read / 1,000 written" in export(log.events, "html")

    out = io.StringIO()
    renderer = DebateRenderer(Console(file=out, width=200), quiet=True, live=False)
    for event in log.events:
        renderer.handle(event)
    renderer.totals()
    assert "8,000 cached in / 1,000 written to cache" in out.getvalue()


async def test_a_debate_without_cache_tokens_shows_no_cache_column() -> None:
    config = make_config(2, rounds=1)
    log = InMemoryLog()
    judge = FunctionModel(
        lambda m, info: ModelResponse(
            parts=[ToolCallPart(info.output_tools[0].name, json.dumps(judge_answer(config)))]
        ),
        model_name="judge-fn",
    )
    _ = [e async for e in run_debate(config, log=log, resolve=resolver(Recorder(), judge))]
    assert "cache" not in export(log.events, "markdown").lower()
    assert "cache" not in export(log.events, "text").lower()


@pytest.mark.parametrize(
    ("model", "cached"),
    [
        ("anthropic:claude-sonnet-4-5", True),
        ("openai:gpt-4o", False),
        ("google:gemini-2.5-flash", False),
        ("local:smollm2", False),
        ("fake:ada", False),
    ],
)
def test_anthropic_calls_get_a_cache_breakpoint_after_the_system_prompt(model: str, cached: bool) -> None:
    settings = model_settings(ModelOptions(model=model), seed=None, local_tokens=100)
    # Only the stable system prompt: the growing user message would be written to the cache and never read.
    assert settings.get("cache") == ({"messages": False} if cached else None)


@pytest.mark.parametrize("fmt", ["free-form", "structured-rounds", "round-limited", "convergence-seeking"])
async def test_each_speakers_prompt_is_a_stable_prefix_then_an_append_only_history(fmt: str) -> None:
    config = make_config(3, rounds=4, format=fmt)
    rec = Recorder()
    judge = _caching_judge(config)
    _ = [e async for e in run_debate(config, resolve=resolver(rec, judge))]
    for speaker in ("Ada", "Bo", "Cy"):
        calls = [(s, u) for s, u in rec.calls if f"You are {speaker}," in s]
        assert len(calls) >= 2  # convergence-seeking may settle early: the fakes' turns are alike
        assert len({system for system, _ in calls}) == 1
        for (_, before), (_, after) in itertools.pairwise(calls):
            # Everything before this turn's instruction is repeated, word for word, at the start of the next.
            history = before[: before.index("It is now round")]
            if "<<<" in history:
                assert after.startswith(history)

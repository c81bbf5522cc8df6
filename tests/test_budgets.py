"""Budgets: warn_at_cost, cost_limit, token_limit and the judge's reserve, checked before each call."""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from moot.domain.config import DebateConfig, ModelOptions, validate_config
from moot.domain.events import Event, Notice
from moot.domain.models import ModelRef
from moot.domain.state import DebateState, fold
from moot.engine.budget import estimate_tokens, over_budget, price
from moot.engine.estimate import estimate, estimate_lines
from moot.engine.runner import InMemoryLog, run_debate
from moot.errors import ConfigError
from tests.conftest import Recorder, judge_answer, judge_model, prompt_text, resolver

TURN_TOKENS = 40

# The fakes have no tokenizer of their own: they count with the calibrated estimate.
FAKE = ModelRef.model_validate("fake:ada")


def config(
    limits: dict[str, Any], *, n: int = 3, rounds: int = 3, priced: bool = False, **extra: Any
) -> DebateConfig:
    names = ["Ada", "Bo", "Cy", "Di"]
    debater = "openai:gpt-4o" if priced else None
    return validate_config(
        {
            "topic": "Should cities ban cars?",
            "participants": [
                {"name": names[i], "model": debater or f"fake:{names[i].lower()}", "max_tokens": TURN_TOKENS}
                for i in range(n)
            ],
            "judge": {"model": "openai:gpt-4o-mini" if priced else "fake:judge", "max_tokens": 200},
            "rounds": rounds,
            "stopping": {"assess_rounds": False},
            "limits": limits,
            **extra,
        }
    )


def priced_resolver(cfg: DebateConfig) -> tuple[Callable[[ModelOptions], Model], list[str]]:
    """Models named like real ones, so genai-prices prices their usage; they record who was called."""
    calls: list[str] = []

    def resolve(options: ModelOptions) -> Model:
        name = options.model.name

        async def stream(
            messages: list[ModelMessage], info: AgentInfo
        ) -> AsyncIterator[str | DeltaToolCalls]:
            calls.append(name)
            if info.output_tools:  # the verdict, streamed as a tool call
                yield {0: DeltaToolCall(info.output_tools[0].name, json.dumps(judge_answer(cfg)))}
                return
            for word in ("A", "short", "priced", "turn", "about", "cars."):
                yield word + " "

        async def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            calls.append(name)
            return ModelResponse(
                parts=[ToolCallPart(info.output_tools[0].name, json.dumps(judge_answer(cfg)))]
            )

        return FunctionModel(whole, stream_function=stream, model_name=name)

    return resolve, calls


async def run(cfg: DebateConfig, resolve: Callable[[ModelOptions], Model]) -> tuple[list[Event], DebateState]:
    log = InMemoryLog()
    _ = [e async for e in run_debate(cfg, log=log, resolve=resolve)]
    return log.events, fold(log.events)


async def fake_run(cfg: DebateConfig) -> tuple[Recorder, list[int], DebateState]:
    recorder = Recorder()
    judge, judge_calls = judge_model([judge_answer(cfg)])
    _, state = await run(cfg, resolver(recorder, judge))
    return recorder, judge_calls, state


@pytest.mark.parametrize(
    ("limits", "field"),
    [
        ({"cost_limit": -1}, "limits.cost_limit"),
        ({"warn_at_cost": "lots"}, "limits.warn_at_cost"),
        ({"token_limit": 0}, "limits.token_limit"),
        ({"token_limit": "many"}, "limits.token_limit"),
        ({"judge_reserve": 1}, "limits.judge_reserve"),
        ({"judge_reserve": -0.1}, "limits.judge_reserve"),
    ],
)
def test_bad_limits_are_one_line_errors_naming_the_field(limits: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as err:
        config(limits)
    assert str(err.value).startswith(field) and "\n" not in str(err.value)


async def test_a_cost_limit_on_an_unpriced_model_is_refused_before_any_call() -> None:
    cfg = config({"cost_limit": 1.0}).model_copy(deep=True)
    cfg.participants[0].model = cfg.participants[0].model.model_validate("openai:no-such-model-anywhere")
    recorder = Recorder()
    with pytest.raises(ConfigError) as err:
        _ = [e async for e in run_debate(cfg, log=InMemoryLog(), resolve=resolver(recorder))]
    assert str(err.value).startswith("limits.cost_limit") and "no price" in str(err.value)
    assert recorder.calls == []


async def test_warn_at_cost_on_an_unpriced_model_says_so_and_the_debate_goes_on() -> None:
    cfg = config({"warn_at_cost": 1.0}, rounds=1).model_copy(deep=True)
    cfg.participants[0].model = cfg.participants[0].model.model_validate("openai:no-such-model-anywhere")
    recorder = Recorder()
    judge, _ = judge_model([judge_answer(cfg)])
    _, state = await run(cfg, resolver(recorder, judge))
    assert state.status == "completed", state.error
    assert state.notices == [
        "budget: limits.warn_at_cost counts only priced calls: genai-prices has no price for "
        "openai:no-such-model-anywhere"
    ]


def test_prices_and_estimates() -> None:
    assert estimate_tokens("x" * 9, FAKE) == 3
    gpt = ModelOptions(model="openai:gpt-4o").model
    assert price(gpt, 1_000_000, 0) == pytest.approx(2.5)
    assert price(ModelOptions(model="fake:ada").model, 10**6, 10**6) == 0.0
    assert price(ModelOptions(model="openai:no-such-model-anywhere").model, 10, 10) is None


async def test_warn_at_cost_gives_one_notice_when_crossed() -> None:
    cfg = config({"warn_at_cost": 0.001}, priced=True)
    resolve, _ = priced_resolver(cfg)
    events, state = await run(cfg, resolve)
    assert state.status == "completed", state.error
    notices = [e for e in events if isinstance(e, Notice) and e.source == "budget"]
    assert len(notices) == 1 and notices[0].level == "warning"
    assert "limits.warn_at_cost" in notices[0].message
    # It comes right after the call that crossed the line, not before.
    before = fold(events[: events.index(notices[0])]).usage
    assert before.cost_usd is not None and before.cost_usd >= 0.001
    crossing = fold(events[: events.index(notices[0]) - 1]).usage
    assert crossing.cost_usd is not None and crossing.cost_usd < 0.001


def expected_calls(recorder: Recorder, state: DebateState, allowed: float) -> int:
    """How many of an unlimited run's turns fit: each needs its spent-so-far + estimate within `allowed`."""
    spent = 0
    for k, ((system, user), turn) in enumerate(zip(recorder.calls, state.turns, strict=True)):
        if spent + estimate_tokens(system + user, FAKE) + TURN_TOKENS > allowed:
            return k
        spent += turn.usage.total_tokens
    return len(state.turns)


async def test_token_limit_stops_before_the_call_that_would_pass_it_then_the_judge_rules() -> None:
    free_recorder, _, free_state = await fake_run(config({}))
    assert len(free_state.turns) == 9
    # A limit that runs out mid-round: after the fourth turn (of nine), at least.
    spent4 = sum(t.usage.total_tokens for t in free_state.turns[:4])
    limit = (
        math.ceil((spent4 + estimate_tokens("".join(free_recorder.calls[4]), FAKE) + TURN_TOKENS) / 0.5) - 1
    )
    cfg = config({"token_limit": limit, "judge_reserve": 0.5})
    want = expected_calls(free_recorder, free_state, limit * 0.5)
    assert 0 < want < 9

    recorder, judge_calls, state = await fake_run(cfg)
    assert len(recorder.calls) == len(state.turns) == want
    assert state.stop_reason is not None and state.stop_reason.kind == "budget"
    assert state.stop_reason.detail.startswith("token_limit:")
    assert state.stopped_after == state.rounds[-1].number
    # The round under way was closed cleanly, short of its turns.
    assert all(r.completed for r in state.rounds)
    assert sum(t.usage.total_tokens for t in state.turns) <= limit * 0.5
    # The reserve paid for the verdict on what was said.
    assert judge_calls == [1] and state.verdict is not None and state.status == "completed"
    assert state.usage.total_tokens <= limit


async def test_without_reserve_for_it_the_verdict_is_skipped_and_says_why() -> None:
    free_recorder, _, free_state = await fake_run(config({}))
    spent3 = sum(t.usage.total_tokens for t in free_state.turns[:3])
    limit = spent3 + estimate_tokens("".join(free_recorder.calls[3]), FAKE) + TURN_TOKENS - 1
    assert expected_calls(free_recorder, free_state, limit) == 3
    recorder, judge_calls, state = await fake_run(config({"token_limit": limit, "judge_reserve": 0}))
    assert len(recorder.calls) == 3
    assert judge_calls == [0] and state.verdict is None and not state.judged
    assert state.status == "completed"
    assert any(n.startswith("budget: no verdict: token_limit:") for n in state.notices)


async def test_cost_limit_stops_a_priced_debate_and_keeps_the_reserve_for_the_verdict() -> None:
    unlimited = config({}, priced=True)
    resolve, calls = priced_resolver(unlimited)
    _, full = await run(unlimited, resolve)
    assert full.usage.cost_usd is not None and full.usage.cost_usd > 0
    assert len(calls) == 10  # nine turns and the verdict

    # The estimate (characters / 4, a reply of max_tokens) is conservative: it stops well short of the full cost.
    limit = full.usage.cost_usd
    cfg = config({"cost_limit": limit, "judge_reserve": 0.3}, priced=True)
    resolve, calls = priced_resolver(cfg)
    _, state = await run(cfg, resolve)
    assert state.stop_reason is not None and state.stop_reason.kind == "budget"
    assert state.stop_reason.detail.startswith("cost_limit:")
    assert 0 < len(state.turns) < 9
    assert calls.count("gpt-4o") == len(state.turns) and calls.count("gpt-4o-mini") == 1
    assert state.verdict is not None
    assert state.usage.cost_usd is not None and state.usage.cost_usd <= limit


def test_over_budget_uses_the_whole_limit_only_for_the_verdict() -> None:
    from moot.domain.config import Limits
    from moot.domain.usage import Usage

    limits = Limits(token_limit=1000, judge_reserve=0.2)
    spent = Usage(requests=3, input_tokens=600, output_tokens=100)
    call = Usage(requests=1, input_tokens=150, output_tokens=50)
    why = over_budget(limits, spent, call, verdict=False)
    assert why == (
        "token_limit: 700 tokens spent + ~200 for the next call > 800 allowed (after keeping 20% for the verdict)"
    )
    assert over_budget(limits, spent, call, verdict=True) is None


def estimate_config(fmt: str, rounds: int) -> DebateConfig:
    return validate_config(
        {
            "topic": "Should cities ban cars?",
            "format": fmt,
            "participants": [
                {"name": "Ada", "model": "openai:gpt-4o", "max_tokens": 10},
                {"name": "Bo", "model": "anthropic:claude-sonnet-4-5", "max_tokens": 10},
                {"name": "Cy", "model": "openai:gpt-4o", "max_tokens": 10},
            ],
            "judge": {"model": "openai:gpt-4o-mini"},
            "rounds": rounds,
            "stopping": {"assess_rounds": False},
        }
    )


@pytest.mark.parametrize(("fmt", "rounds"), [("free-form", 3), ("round-limited", 2)])
async def test_the_estimate_brackets_a_run_of_the_same_config(fmt: str, rounds: int) -> None:
    cfg = estimate_config(fmt, rounds)
    est = await estimate(cfg)
    # The same debate on other fakes: replies of ~6 tokens (between 30% and 100% of max_tokens = 10).
    recorder = Recorder()
    judge_prompts: list[str] = []
    judge, _ = judge_model([judge_answer(cfg)])

    async def recording_judge(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        judge_prompts.append("".join(prompt_text(messages)))
        return await judge.request(messages, None, info.model_request_parameters)

    def resolve(options: ModelOptions) -> Model:
        if options.model.name == "gpt-4o-mini":
            return FunctionModel(recording_judge, model_name="judge")
        return recorder.model(options.model.name)

    _, state = await run(cfg, resolve)
    assert state.status == "completed", state.error
    prompts = ["".join(c) for c in recorder.calls] + judge_prompts
    calls = len(prompts)
    tokens_in = sum(estimate_tokens(p, FAKE) for p in prompts)
    low_calls, high_calls = est.calls
    low_in, high_in = est.input_tokens
    assert low_calls <= calls <= high_calls
    assert low_in <= tokens_in <= high_in, (low_in, tokens_in, high_in)
    low_cost, high_cost = est.cost
    assert low_cost is not None and high_cost is not None and 0 < low_cost < high_cost


async def test_the_estimate_shows_an_unpriced_model_as_unknown() -> None:
    cfg = estimate_config("free-form", 1).model_copy(deep=True)
    cfg.participants[1].model = cfg.participants[1].model.model_validate("openai:no-such-model-anywhere")
    est = await estimate(cfg)
    row = next(m for m in est.models if m.model == "openai:no-such-model-anywhere")
    assert row.cost_low is None and row.calls_low == 1
    assert est.cost == (None, None)
    lines = estimate_lines(est, lambda c: "unknown" if c is None else f"${c:.4f}")
    assert lines[-1][0] == "Total" and lines[-1][-1] == "unknown"


def test_moot_run_estimate_prints_the_table_without_calling_a_model() -> None:
    from tests.cli_helpers import moot

    code, out, _ = moot(
        "run",
        "Should cities ban cars?",
        "-p",
        "openai:gpt-4o,max_tokens=200",
        "-p",
        "anthropic:claude-sonnet-4-5,max_tokens=200",
        "--judge",
        "openai:gpt-4o-mini",
        "--estimate",
    )
    assert code == 0, out
    assert "openai:gpt-4o" in out and "Total" in out and "No model was called" in out
    assert "$" in out


async def test_a_cost_limit_reached_before_any_turn_ends_degraded_not_as_a_clean_run() -> None:
    cfg = config({"cost_limit": 0.000001}, priced=True)
    resolve, calls = priced_resolver(cfg)
    _, state = await run(cfg, resolve)
    assert calls == [] and state.turns == [] and state.verdict is None
    assert (
        state.status == "completed" and state.stop_reason is not None and state.stop_reason.kind == "budget"
    )
    kinds = [p.kind for p in state.problems]
    assert kinds == ["limit_before_any_turn", "no_verdict"], state.problems
    assert state.problems[0].message.startswith("stopped before any turn: cost_limit: ")
    assert state.problems[1].message == "no verdict: the budget stopped the debate before anyone spoke"

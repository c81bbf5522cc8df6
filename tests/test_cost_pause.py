"""`limits.pause_at_cost`: the debate pauses, with the figures, once its cost passes the threshold, until
someone acknowledges it; a resume continues, a stop goes to the verdict, and the threshold does not pause it
again. `warn_at_cost` keeps its notice."""

from __future__ import annotations

from typing import Any

import pytest

from moot.cli.render import cost_acknowledged_text
from moot.domain.events import (
    CostAcknowledged,
    DebatePaused,
    Event,
    Notice,
    TurnCompleted,
    VerdictGiven,
)
from moot.domain.state import fold
from moot.engine import RunControl, judge_again, plan_judging, resume_debate
from moot.engine.runner import InMemoryLog, run_debate
from moot.errors import ConfigError
from tests.conftest import Recorder, judge_answer, judge_model, resolver
from tests.test_budgets import config, priced_resolver


async def _paused(limits: dict[str, Any], rounds: int = 3) -> tuple[InMemoryLog, Any, list[str]]:
    cfg = config(limits, priced=True, rounds=rounds)
    resolve, calls = priced_resolver(cfg)
    log = InMemoryLog()
    _ = [e async for e in run_debate(cfg, log=log, resolve=resolve)]
    return log, resolve, calls


async def _paused_once_both_spoke() -> tuple[InMemoryLog, Any, list[str]]:
    """A debate paused at its cost limit once both have spoken, so that there is something to judge."""
    first, _, _ = await _paused({"pause_at_cost": 0.0001})
    paused = await _paused({"pause_at_cost": 1.5 * _turn_cost(list(first.events))})
    assert len(fold(paused[0].events).spoke) == 2 and fold(paused[0].events).status == "paused"
    return paused


def _turn_cost(events: list[Event]) -> float:
    turn = next(e for e in events if isinstance(e, TurnCompleted))
    assert turn.usage.cost_usd is not None and turn.usage.cost_usd > 0
    return turn.usage.cost_usd


async def test_the_debate_pauses_past_the_threshold_with_the_figures() -> None:
    log, _, calls = await _paused({"pause_at_cost": 0.0001})
    state = fold(log.events)
    assert state.status == "paused"
    paused = log.events[-1]
    assert isinstance(paused, DebatePaused) and paused.cost is not None
    cost = paused.cost
    assert cost.threshold_usd == 0.0001 and cost.cost_usd == pytest.approx(state.usage.cost_usd)
    assert cost.cost_usd >= 0.0001
    # Paused right after the call that passed it: the one before had not.
    before = fold(log.events[: log.events.index(paused) - 1]).usage.cost_usd or 0.0
    assert before < 0.0001 <= cost.cost_usd
    assert "limits.pause_at_cost" in paused.reason and f"${cost.cost_usd:.4f}" in paused.reason
    assert len(calls) == len(state.turns)  # no call after the pause
    assert state.cost_pause == cost


async def test_the_estimate_of_what_is_left_is_the_mean_round_times_the_rounds_left() -> None:
    # Passed by the last turn of round 1 (three speakers): the pause comes before round 2's first call.
    probe, _, _ = await _paused({})
    per_turn = _turn_cost(probe.events)
    log, _, _ = await _paused({"pause_at_cost": per_turn * 2.5})
    paused = log.events[-1]
    assert isinstance(paused, DebatePaused) and paused.cost is not None
    state = fold(log.events)
    assert [r.completed for r in state.rounds] == [True, False]
    round_one = sum(t.usage.cost_usd or 0 for t in state.rounds[0].turns)
    assert paused.cost.rounds_left == 2
    assert paused.cost.left_usd == pytest.approx(round_one * 2)
    assert "2 rounds left" in paused.reason


async def test_a_resume_acknowledges_and_the_threshold_does_not_pause_again() -> None:
    log, resolve, calls = await _paused({"pause_at_cost": 0.0001})
    paused_at = len(log.events)
    _ = [
        e async for e in resume_debate(log.events, log=log, resolve=resolve, reason="continued at the prompt")
    ]
    state = fold(log.events)
    assert state.status == "completed", state.error
    new = log.events[paused_at:]
    acks = [e for e in new if isinstance(e, CostAcknowledged)]
    assert len(acks) == 1 and (acks[0].choice, acks[0].by) == ("continue", "continued at the prompt")
    assert acks[0].threshold_usd == 0.0001 and new.index(acks[0]) == 1  # right after debate_resumed
    assert not [e for e in new if isinstance(e, DebatePaused)]  # the cost kept growing past it
    assert len(state.turns) == 9 and state.cost_pause is None and state.cost_acknowledged == acks[0]
    assert state.verdict is not None and calls.count("gpt-4o-mini") == 1
    assert cost_acknowledged_text(acks[0]).endswith("(continued at the prompt); the debate goes on")


async def test_a_stop_answers_the_pause_and_the_judge_rules_on_what_exists() -> None:
    log, resolve, calls = await _paused_once_both_spoke()
    turns = len(fold(log.events).turns)
    asked = len(calls)
    control = RunControl()
    control.stop()
    _ = [e async for e in resume_debate(log.events, log=log, resolve=resolve, control=control)]
    state = fold(log.events)
    assert state.status == "completed" and len(state.turns) == turns
    ack = next(e for e in log.events if isinstance(e, CostAcknowledged))
    assert ack.choice == "stop"
    assert calls[asked:] == ["gpt-4o-mini"]  # the judge only: no debater was asked again
    assert state.stop_reason is not None and state.stop_reason.kind == "user"
    assert any(isinstance(e, VerdictGiven) and e.verdict is not None for e in log.events)


async def test_judging_a_paused_debate_again_answers_the_pause_with_a_stop() -> None:
    log, resolve, calls = await _paused_once_both_spoke()
    asked = len(calls)
    planned = plan_judging(log.events, reason="judged while paused", resolve=resolve)
    _ = [e async for e in judge_again(log.events, planned, log=log)]
    state = fold(log.events)
    assert state.status == "completed" and state.verdict is not None
    ack = next(e for e in log.events if isinstance(e, CostAcknowledged))
    assert (ack.choice, ack.by) == ("stop", "judged while paused")
    assert calls[asked:] == ["gpt-4o-mini"]  # the judge only


async def test_judging_a_debate_paused_before_two_spoke_asks_no_judge() -> None:
    log, resolve, calls = await _paused({"pause_at_cost": 0.0001})
    assert len(fold(log.events).spoke) == 1
    asked = len(calls)
    planned = plan_judging(log.events, reason="judged while paused", resolve=resolve)
    _ = [e async for e in judge_again(log.events, planned, log=log)]
    state = fold(log.events)
    assert state.status == "completed" and state.verdict is None
    assert calls[asked:] == []  # one side alone is nothing to weigh: no judge is paid to invent the other
    [note] = [e for e in log.events if isinstance(e, Notice) and e.source == "verdict"]
    assert note.message == "no verdict: only Ada spoke"


async def test_warn_at_cost_keeps_its_notice_beside_the_pause() -> None:
    log, _, _ = await _paused({"warn_at_cost": 0.0001, "pause_at_cost": 0.0001})
    notices = [e for e in log.events if isinstance(e, Notice) and e.source == "budget"]
    assert len(notices) == 1 and "limits.warn_at_cost" in notices[0].message
    assert fold(log.events).status == "paused"


async def test_an_unpriced_model_is_named_at_the_start() -> None:
    cfg = config({"pause_at_cost": 0.0001}, rounds=1).model_copy(deep=True)
    cfg.participants[0].model = cfg.participants[0].model.model_validate("openai:no-such-model-anywhere")
    recorder = Recorder()
    judge, _ = judge_model([judge_answer(cfg)])
    log = InMemoryLog()
    _ = [e async for e in run_debate(cfg, log=log, resolve=resolver(recorder, judge))]
    state = fold(log.events)
    assert state.status == "completed"  # the rest are fakes, which cost nothing
    assert state.notices == [
        "budget: limits.pause_at_cost counts only priced calls: genai-prices has no price for "
        "openai:no-such-model-anywhere"
    ]


def test_a_bad_threshold_is_a_one_line_error_naming_the_field() -> None:
    with pytest.raises(ConfigError) as err:
        config({"pause_at_cost": 0})
    assert str(err.value).startswith("limits.pause_at_cost") and "\n" not in str(err.value)

"""A streamed reply's limits: silence (limits.turn_timeout_s) cuts a model that says nothing, never one that keeps
streaming however slowly, and a judge's structured answer likewise (limits.judge_timeout_s); the whole-reply limit
(limits.turn_max_s) is the user's, or a hosted provider's default."""

from __future__ import annotations

import time
from typing import Any

import pytest

from moot.domain.config import DebateConfig, Limits, ModelOptions, Participant
from moot.domain.events import CallRetried, ParticipantDropped, TurnCompleted
from moot.domain.state import fold
from moot.engine import run_debate
from moot.engine.calls.reply_limits import HOSTED_TURN_MAX_S, turn_max_s
from tests.conftest import FAST_RETRY


def config(first: str, judge: str = "fake:judge", **limits: Any) -> DebateConfig:
    return DebateConfig(
        topic="Should cities ban cars?",
        participants=[Participant(name="Ada", model=first), Participant(name="Bo", model="fake:bo")],
        rounds=1,
        judge={"model": judge},
        stopping={"assess_rounds": False},
        limits={"retry": {**FAST_RETRY, "retries": {"timeout": 0}}, **limits},
    )


async def test_a_reply_that_keeps_streaming_is_never_cut_by_the_silence_limit() -> None:
    # A word every 100 ms for far longer than the 0.8 s silence limit: a slow local model writing a long turn. (A
    # 0.25 s limit once passed before the first word on a machine busy with the whole suite under coverage.)
    events = [e async for e in run_debate(config("fake:drip-100", turn_timeout_s=0.8))]
    [ada] = [e for e in events if isinstance(e, TurnCompleted) and e.participant_id == "ada"]
    assert ada.latency_s > 1.6  # it streamed for twice the silence limit and more, and was kept whole
    assert not [e for e in events if isinstance(e, CallRetried | ParticipantDropped)]


async def test_a_model_that_says_nothing_is_cut_by_the_silence_limit_naming_it() -> None:
    events = [e async for e in run_debate(config("fake:slow-2000", turn_timeout_s=0.2))]
    [dropped] = [e for e in events if isinstance(e, ParticipantDropped)]
    assert dropped.error.startswith("fake:slow-2000: nothing streamed for 0.2 s (limits.turn_timeout_s)")


async def test_the_whole_reply_limit_cuts_a_reply_still_streaming_naming_it() -> None:
    events = [e async for e in run_debate(config("fake:drip-60", turn_timeout_s=5, turn_max_s=0.3))]
    [dropped] = [e for e in events if isinstance(e, ParticipantDropped)]
    assert dropped.error.startswith("fake:drip-60: the reply ran past its limit of 0.3 s (limits.turn_max_s)")


@pytest.mark.parametrize(
    ("options", "limit"),
    [
        ({"model": "openai:gpt-4o"}, HOSTED_TURN_MAX_S),
        ({"model": "anthropic:claude-sonnet-4-5"}, HOSTED_TURN_MAX_S),
        ({"model": "local:smollm2"}, None),  # the embedded model: this machine's speed
        ({"model": "ollama:llama3.2"}, None),  # a server on this machine by default
        ({"model": "openai-compatible:m", "base_url": "http://10.0.0.5:8000/v1"}, None),  # the user's server
        ({"model": "openrouter:openai/gpt-4o"}, HOSTED_TURN_MAX_S),
    ],
)
def test_the_whole_reply_limit_left_out_is_none_but_for_hosted_providers(
    options: dict[str, Any], limit: float | None
) -> None:
    assert turn_max_s(Limits(), ModelOptions.model_validate(options)) == limit
    assert turn_max_s(Limits(turn_max_s=42), ModelOptions.model_validate(options)) == 42


async def test_a_judge_that_says_nothing_is_cut_by_its_silence_limit_naming_it() -> None:
    events = [e async for e in run_debate(config("fake:ada", "fake:slow-2000", judge_timeout_s=0.2))]
    state = fold(events)
    assert state.verdict is None and state.verdict_error is not None
    assert "nothing streamed for 0.2 s (limits.judge_timeout_s)" in state.verdict_error


async def test_a_verdict_that_keeps_streaming_is_never_cut_by_the_judges_silence_limit() -> None:
    # The verdict's arguments arrive a piece every 60 ms, well past 0.25 s in all, never 0.25 s apart.
    started = time.perf_counter()
    events = [e async for e in run_debate(config("fake:ada", "fake:drip-60", judge_timeout_s=0.25))]
    state = fold(events)
    assert state.verdict_error is None and state.verdict is not None
    assert not any(isinstance(e, CallRetried) for e in events)
    assert (
        time.perf_counter() - started > 0.25
    )  # the answer took longer than the limit: it was not a whole-call one

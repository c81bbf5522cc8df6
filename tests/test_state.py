"""The state fold: what a debate looks like after any prefix of its events."""

from __future__ import annotations

from moot.domain.events import (
    EVENT_ADAPTER,
    DebateCompleted,
    DebateFailed,
    DebateStarted,
    Event,
    JudgingStarted,
    RoundCompleted,
    RoundStarted,
    TokenDelta,
    TurnCompleted,
    TurnStarted,
    VerdictGiven,
)
from moot.domain.state import fold
from moot.domain.usage import Usage
from moot.domain.verdict import ParticipantScore, Verdict
from tests.conftest import make_config


def test_fold_builds_rounds_turns_verdict_and_usage() -> None:
    config = make_config(2, rounds=1)
    d = {"debate_id": "x"}
    u = Usage(requests=1, input_tokens=10, output_tokens=5, cost_usd=0.01)
    verdict = Verdict.from_scores(
        [
            ParticipantScore(participant_id="ada", score=7, reasoning="r"),
            ParticipantScore(participant_id="bo", score=4, reasoning="r"),
        ],
        summary="s",
    )
    events: list[Event] = [
        DebateStarted(**d, seq=1, config=config),
        RoundStarted(**d, seq=2, round=1),
        TurnStarted(**d, seq=3, round=1, participant_id="ada", model="m"),
        TokenDelta(**d, round=1, participant_id="ada", text="Hel"),
        TokenDelta(**d, round=1, participant_id="ada", text="lo"),
    ]
    mid = fold(events)
    assert mid.speaking == {"ada": "Hello"} and mid.status == "running" and mid.last_seq == 3
    events += [
        TurnCompleted(
            **d, seq=4, round=1, participant_id="ada", model="m", text="Hello", usage=u, latency_s=1
        ),
        TurnCompleted(**d, seq=5, round=1, participant_id="bo", model="m", text="Hi", usage=u, latency_s=1),
        RoundCompleted(**d, seq=6, round=1),
        JudgingStarted(**d, seq=7, model="j"),
    ]
    judging = fold(events)
    assert judging.status == "judging" and judging.speaking == {}
    events += [VerdictGiven(**d, seq=8, model="j", verdict=verdict, usage=u), DebateCompleted(**d, seq=9)]
    state = fold(events)
    assert state.status == "completed" and state.finished
    assert [t.text for t in state.turns] == ["Hello", "Hi"]
    assert state.rounds[0].completed
    assert state.verdict == verdict and state.verdict.winner_id == "ada"
    assert state.usage.requests == 3 and state.usage.cost_usd is not None
    assert abs(state.usage.cost_usd - 0.03) < 1e-9
    # Folding in two halves is the same as folding at once: resume = replay.
    assert fold(events[5:], fold(events[:5])) == state


def test_failure_keeps_turns_and_events_round_trip_through_json() -> None:
    config = make_config(2, rounds=2)
    d = {"debate_id": "x"}
    events: list[Event] = [
        DebateStarted(**d, seq=1, config=config),
        RoundStarted(**d, seq=2, round=1),
        TurnCompleted(
            **d, seq=3, round=1, participant_id="ada", model="m", text="a", usage=Usage(), latency_s=0
        ),
        DebateFailed(**d, seq=4, error="boom", error_type="ModelCallError"),
    ]
    state = fold(events)
    assert state.status == "failed" and state.error == "boom" and len(state.turns) == 1
    assert [EVENT_ADAPTER.validate_json(e.model_dump_json()) for e in events] == events


def test_usage_cost_unknown_plus_known_is_a_floor() -> None:
    total = Usage(cost_usd=None, unpriced_requests=1, requests=1) + Usage(cost_usd=0.5, requests=1)
    assert total.cost_usd == 0.5 and total.unpriced_requests == 1
    assert (Usage() + Usage()).cost_usd is None


def test_tie_is_explicit_and_winner_must_match_scores() -> None:
    scores = [
        ParticipantScore(participant_id="a", score=6, reasoning=""),
        ParticipantScore(participant_id="b", score=6, reasoning=""),
    ]
    v = Verdict.from_scores(scores, summary="")
    assert v.is_tie and v.winner_id is None and v.winner_ids == ["a", "b"]
    import pytest
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        Verdict(scores=scores, winner_ids=["a"], summary="")

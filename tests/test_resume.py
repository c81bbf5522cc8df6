"""Pause, stop, retry and resume: a debate carries on from its log without losing or repeating a turn."""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from moot.domain.config import DebateConfig
from moot.domain.events import (
    DebateInterrupted,
    DebatePaused,
    DebateResumed,
    DebateStarted,
    Event,
    Notice,
    TurnCompleted,
    TurnStarted,
)
from moot.domain.state import DebateState, fold
from moot.engine import InMemoryLog, RunControl, resume_debate, run_debate
from moot.engine.control import time_running
from moot.errors import StateError, StoreError
from moot.protocols import PROTOCOLS, get_protocol
from tests.conftest import Recorder, judge_answer, judge_model, make_config, resolver

Shape = tuple[Any, ...]


def shape(state: DebateState) -> Shape:
    """What a debate amounts to, whatever runs it took: who said what to whom, when, and what was decided."""
    return (
        state.status,
        [(r.number, r.phase, [(t.participant_id, t.target, t.text) for t in r.turns]) for r in state.rounds],
        # Asks made at once are recorded as each answer comes (durable as soon as it exists), so their order
        # within a round is the models' timing, not the debate: compared as a set per round.
        sorted(((d.round, d.kind, d.by, d.subject, d.answer) for d in state.decisions), key=repr),
        state.outcome,
        state.stop_reason,
        state.verdict,
        [(a.round, a.assessment) for a in state.assessments],
    )


def every_format_config(fmt: str) -> DebateConfig:
    protocol = get_protocol(fmt)
    n = max(protocol.traits.min_participants, min(3, protocol.traits.max_participants))
    return make_config(n, rounds=protocol.traits.default_rounds or 2, format=fmt, stopping={}, seed=3)


def turn_keys(events: list[Event]) -> list[tuple[int, str, str | None]]:
    return [(e.round, e.participant_id, e.target) for e in events if isinstance(e, TurnCompleted)]


def crash_points(events: list[Event]) -> list[int]:
    """Where a killed process could have left the log: after any durable event but the last."""
    return list(range(1, len(events)))


@pytest.mark.parametrize("fmt", list(PROTOCOLS))
async def test_a_debate_cut_after_any_event_resumes_to_the_same_debate(fmt: str) -> None:
    config = every_format_config(fmt)
    whole = InMemoryLog()
    [e async for e in run_debate(config, log=whole, debate_id="d")]
    expected = shape(fold(whole.events))
    assert expected[0] == "completed"
    spoken = Counter(turn_keys(whole.events))
    for cut in crash_points(whole.events):
        log = InMemoryLog()
        log.events = list(whole.events[:cut])
        [e async for e in resume_debate(log.events, log=log)]
        resumed = fold(log.events)
        assert shape(resumed) == expected, f"{fmt}: cut after event {cut} ({whole.events[cut - 1].type})"
        assert Counter(turn_keys(log.events)) == spoken, f"{fmt}: a turn was repeated after cut {cut}"


async def test_pause_waits_for_the_turn_under_way_then_resume_finishes_the_same_debate() -> None:
    config = make_config(2, rounds=2)
    judge, _ = judge_model([judge_answer(config)])
    whole = InMemoryLog()
    [e async for e in run_debate(config, log=whole, resolve=resolver(Recorder(), judge), debate_id="d")]

    control = RunControl()
    log = InMemoryLog()
    async for event in run_debate(
        config, log=log, resolve=resolver(Recorder(), judge), debate_id="d", control=control
    ):
        if isinstance(event, TurnStarted) and event.participant_id == config.participants[1].id:
            control.pause()  # asked mid-turn: the turn still completes
    paused = fold(log.events)
    assert paused.status == "paused"
    assert isinstance(log.events[-1], DebatePaused)
    assert [t.participant_id for t in paused.turns] == [p.id for p in config.participants]

    [e async for e in resume_debate(log.events, log=log, resolve=resolver(Recorder(), judge))]
    resumed = fold(log.events)
    assert resumed.status == "completed"
    assert [type(e) for e in log.events].count(DebateResumed) == 1
    assert [(t.round, t.participant_id) for t in resumed.turns] == [
        (t.round, t.participant_id) for t in fold(whole.events).turns
    ]
    assert resumed.verdict is not None


async def test_stop_cuts_the_turn_under_way_and_judges_what_exists() -> None:
    config = make_config(3, rounds=3)
    judge, judge_calls = judge_model([judge_answer(config)])
    control = RunControl()
    log = InMemoryLog()
    async for event in run_debate(
        config, log=log, resolve=resolver(Recorder(delay=5.0), judge), debate_id="d", control=control
    ):
        if isinstance(event, TurnStarted):
            control.stop()  # the first turn would take 5 s; the stop does not wait for it
    state = fold(log.events)
    assert state.status == "completed"
    assert state.stop_reason is not None and state.stop_reason.kind == "user"
    assert state.turns == [] and state.speaking == {}
    assert "stop: no verdict: the user stopped the debate before anyone spoke" in state.notices
    assert judge_calls[0] == 0


async def test_stop_after_some_turns_gives_a_verdict_on_them() -> None:
    config = make_config(2, rounds=3)
    judge, judge_calls = judge_model([judge_answer(config)])
    control = RunControl()
    log = InMemoryLog()
    rec = Recorder(delay=0.01)
    async for event in run_debate(
        config, log=log, resolve=resolver(rec, judge), debate_id="d", control=control
    ):
        if isinstance(event, TurnCompleted) and event.round == 2:
            control.stop()
    state = fold(log.events)
    assert state.status == "completed"
    assert state.stop_reason is not None and state.stop_reason.kind == "user"
    assert [(t.round, t.participant_id) for t in state.turns] == [(1, "ada"), (1, "bo"), (2, "ada")]
    assert state.rounds[-1].completed and state.stopped_after == 2
    assert state.verdict is not None and judge_calls[0] == 1


class FlakyLog(InMemoryLog):
    """A log whose store fails once, on the `fail_at`-th turn it is given to keep (a database hiccup)."""

    def __init__(self, fail_at: int) -> None:
        super().__init__()
        self.fail_at = fail_at
        self.turns = 0

    async def append(self, event: Event) -> Event:
        if isinstance(event, TurnCompleted):
            self.turns += 1
            if self.turns == self.fail_at:
                raise StoreError("the database went away")
        return await super().append(event)


async def test_retry_after_a_failure_continues_after_the_last_completed_turn() -> None:
    config = make_config(2, rounds=2)
    judge, _ = judge_model([judge_answer(config)])
    log = FlakyLog(fail_at=3)
    [e async for e in run_debate(config, log=log, resolve=resolver(Recorder(), judge), debate_id="d")]
    failed = fold(log.events)
    assert failed.status == "failed" and len(failed.turns) == 2
    assert failed.error is not None and "the database went away" in failed.error

    rec = Recorder()
    [e async for e in resume_debate(log.events, log=log, resolve=resolver(rec, judge), reason="retry")]
    state = fold(log.events)
    assert state.status == "completed" and state.error is None
    assert [(t.round, t.participant_id) for t in state.turns] == [
        (1, "ada"),
        (1, "bo"),
        (2, "ada"),
        (2, "bo"),
    ]
    assert len(rec.calls) == 2  # only the two turns that were missing
    resumed = next(e for e in log.events if isinstance(e, DebateResumed))
    assert resumed.after_status == "failed" and resumed.reason == "retry"


async def test_a_completed_debate_cannot_be_resumed() -> None:
    config = make_config(2, rounds=1)
    judge, _ = judge_model([judge_answer(config)])
    log = InMemoryLog()
    [e async for e in run_debate(config, log=log, resolve=resolver(Recorder(), judge), debate_id="d")]
    with pytest.raises(StateError, match="has completed"):
        [e async for e in resume_debate(log.events, log=log, resolve=resolver(Recorder(), judge))]
    with pytest.raises(StateError, match="no debate_started"):
        [e async for e in resume_debate([], log=InMemoryLog())]


async def test_an_interrupted_debate_resumes_and_keeps_its_turns() -> None:
    config = make_config(2, rounds=3)
    judge, _ = judge_model([judge_answer(config)])
    log = InMemoryLog()
    two_turns = asyncio.Event()

    async def consume() -> None:
        done = 0
        async for event in run_debate(
            config, log=log, resolve=resolver(Recorder(delay=0.01), judge), debate_id="d"
        ):
            done += isinstance(event, TurnCompleted)
            if done == 2:
                two_turns.set()

    task = asyncio.create_task(consume())
    await two_turns.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert isinstance(log.events[-1], DebateInterrupted)
    kept = len(fold(log.events).turns)
    [e async for e in resume_debate(log.events, log=log, resolve=resolver(Recorder(), judge))]
    state = fold(log.events)
    assert state.status == "completed" and len(state.turns) == 6 and kept >= 2


def test_time_running_counts_each_run_and_not_the_pauses() -> None:
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    config = make_config(2)

    def at(seconds: float) -> datetime:
        return t0 + timedelta(seconds=seconds)

    events: list[Event] = [
        DebateStarted(debate_id="d", config=config, at=at(0)),
        DebatePaused(debate_id="d", at=at(10)),
        DebateResumed(debate_id="d", after_status="paused", at=at(100)),
        DebateInterrupted(debate_id="d", at=at(105)),
        DebateResumed(debate_id="d", after_status="interrupted", at=at(200)),
        Notice(debate_id="d", source="test", message="the last event before a crash", at=at(203)),
    ]
    assert time_running(events) == pytest.approx(18.0)

"""The engine with function models: orders, participant counts, the judge's failures, faults, Ctrl-C."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel

from moot.domain.config import Limits, ModelOptions
from moot.domain.events import CallRetried, DebateInterrupted, Event, ParticipantDropped, TurnCompleted
from moot.domain.state import fold
from moot.engine import InMemoryLog, run_debate
from moot.errors import MissingKeyError, UserError
from moot.store import EventStore
from tests.conftest import FAST_RETRY, Recorder, judge_answer, judge_model, make_config, resolver


async def collect(config, **kwargs) -> list[Event]:  # type: ignore[no-untyped-def]
    return [e async for e in run_debate(config, **kwargs)]


@pytest.mark.parametrize("n", [2, 3, 5])
@pytest.mark.parametrize("order", ["sequential", "simultaneous"])
async def test_every_participant_speaks_every_round_then_the_judge_rules(n: int, order: str) -> None:
    config = make_config(n, rounds=3, order=order)
    rec = Recorder()
    judge, _ = judge_model([judge_answer(config)])
    events = await collect(config, resolve=resolver(rec, judge))

    durable = [e for e in events if e.durable]
    assert [e.seq for e in durable] == list(range(1, len(durable) + 1))
    state = fold(durable)
    assert state.status == "completed"
    assert [r.number for r in state.rounds] == [1, 2, 3]
    for r in state.rounds:
        assert sorted(t.participant_id for t in r.turns) == sorted(p.id for p in config.participants)
        assert r.completed
    assert state.verdict is not None
    assert state.verdict.winner_ids == [
        config.participants[-1].id
    ]  # judge_answer gives the last the top score
    assert len(rec.calls) == 3 * n
    assert any(e.type == "token_delta" for e in events)
    assert all(e.seq is None for e in events if e.type == "token_delta")
    # Usage is summed from turns and judge.
    assert state.usage.requests == 3 * n + 1


async def test_sequential_speakers_see_earlier_turns_of_the_same_round() -> None:
    config = make_config(3, rounds=1)
    rec = Recorder()
    judge, _ = judge_model([judge_answer(config)])
    await collect(config, resolve=resolver(rec, judge))
    (_, first), (_, second), (_, third) = rec.calls
    assert "you open the debate" in first
    assert "ada speaks in call 1." in second and "[Round 1] Ada (view 0)" in second
    assert "ada speaks in call 1." in third and "bo speaks in call 2." in third


async def test_simultaneous_speakers_see_only_earlier_rounds_and_really_overlap() -> None:
    config = make_config(3, rounds=2, order="simultaneous")
    rec = Recorder(delay=0.05)
    judge, _ = judge_model([judge_answer(config)])
    await collect(config, resolve=resolver(rec, judge))
    # All three calls of a round were in flight at once: the round is as long as its slowest speaker.
    assert rec.max_in_flight == 3
    round_one, round_two = rec.calls[:3], rec.calls[3:]
    assert all("you open the debate" in user for _, user in round_one)
    for _, user in round_two:
        assert "[Round 1] Ada" in user and "[Round 2]" not in user


async def test_sequential_calls_never_overlap() -> None:
    config = make_config(3, rounds=1)
    rec = Recorder(delay=0.01)
    judge, _ = judge_model([judge_answer(config)])
    await collect(config, resolve=resolver(rec, judge))
    assert rec.max_in_flight == 1


async def test_debater_prompt_names_persona_stance_others_and_round() -> None:
    config = make_config(3, rounds=4)
    rec = Recorder()
    judge, _ = judge_model([judge_answer(config)])
    await collect(config, resolve=resolver(rec, judge))
    system, user = rec.calls[4]  # Bo in round 2
    assert "You are Bo" in system
    assert "Should cities ban cars?" in system
    assert "Position: view 1" in system
    assert "- Ada: view 0" in system and "- Cy: view 2" in system
    assert "round 2 of 4" in user  # last in the user message: the system prompt is the same every round


async def test_judge_invalid_once_is_retried() -> None:
    config = make_config(2, rounds=1)
    bad = judge_answer(config, {"ada": 15.0, "bo": 3.0})  # 15 is out of range
    judge, calls = judge_model([bad, judge_answer(config, {"ada": 6.0, "bo": 6.0})])
    events = await collect(config, resolve=resolver(Recorder(), judge))
    verdict_event = next(e for e in events if e.type == "verdict")
    assert verdict_event.verdict is not None
    assert verdict_event.attempts == 2 and calls[0] == 2
    assert verdict_event.verdict.is_tie and verdict_event.verdict.winner_ids == ["ada", "bo"]


async def test_judge_invalid_always_completes_with_missing_verdict_and_all_turns() -> None:
    config = make_config(2, rounds=2)
    judge, calls = judge_model(["{not json"])
    events = await collect(config, resolve=resolver(Recorder(), judge))
    state = fold(e for e in events if e.durable)
    assert state.status == "completed"
    assert state.verdict is None
    assert state.verdict_error is not None and "no valid verdict" in state.verdict_error
    assert len(state.turns) == 4
    assert calls[0] == config.judge.retries + 1  # type: ignore[union-attr]


async def test_a_call_that_fails_once_is_retried_and_the_debate_completes() -> None:
    config = make_config(2, rounds=2, limits={"retry": FAST_RETRY})
    rec = Recorder(fail_on_call=3)
    judge, _ = judge_model([judge_answer(config)])
    events = await collect(config, resolve=resolver(rec, judge))
    state = fold(e for e in events if e.durable)
    assert state.status == "completed" and len(state.turns) == 4
    [retried] = [e for e in events if isinstance(e, CallRetried)]
    assert (retried.round, retried.speaker, retried.purpose, retried.retry) == (2, "ada", "turn", 1)
    assert retried.fault == "invalid_response" and "provider exploded" in retried.error
    assert len(rec.calls) == 5  # four turns and the one that failed


async def test_a_participant_that_keeps_timing_out_is_dropped_and_one_speaker_alone_is_not_judged() -> None:
    config = make_config(2, rounds=2, limits={"turn_timeout_s": 0.05, "retry": FAST_RETRY})
    judge, judged = judge_model([judge_answer(config)])
    fast, slow = Recorder(), Recorder(delay=1.0)

    def resolve(options: ModelOptions) -> Model:
        name = options.model.name
        return judge if name == "judge" else (slow if name == "bo" else fast).model(name)

    events = await collect(config, resolve=resolve)
    retries = [e for e in events if isinstance(e, CallRetried)]
    assert [(e.speaker, e.fault, e.retry) for e in retries] == [("bo", "timeout", 1), ("bo", "timeout", 2)]
    assert all("limits.turn_timeout_s" in e.error for e in retries)
    [dropped] = [e for e in events if isinstance(e, ParticipantDropped)]
    assert dropped.participant_id == "bo" and "gave up after 2 retries" in dropped.error
    state = fold(e for e in events if e.durable)
    # Only Ada spoke: a judge would weigh her opening against nothing (it once scored Bo 8/10 for words he
    # never said). The debate fails, keeping her turn, to be resumed once Bo's model answers.
    assert [(t.round, t.participant_id) for t in state.turns] == [(1, "ada")]
    assert state.status == "failed" and state.verdict is None and state.dropped.keys() == {"bo"}
    assert state.error is not None and state.error.startswith(
        "only Ada spoke, too few to judge (Bo failed in round 1: "
    )
    assert judged[0] == 0  # no judge was asked


async def test_no_judge_means_no_verdict_event() -> None:
    config = make_config(2, rounds=1, judge=None)
    events = await collect(config, resolve=resolver(Recorder()))
    assert "verdict" not in [e.type for e in events]
    assert events[-1].type == "debate_completed"


async def test_cancelling_marks_interrupted_and_keeps_finished_turns(tmp_path: Path) -> None:
    config = make_config(2, rounds=3)
    judge, _ = judge_model([judge_answer(config)])
    rec = Recorder(delay=0.02)
    store = await EventStore.open(f"sqlite+aiosqlite:///{tmp_path / 'm.db'}")
    three_turns = asyncio.Event()

    async def consume() -> None:
        done = 0
        async for event in run_debate(config, log=store, resolve=resolver(rec, judge), debate_id="d1"):
            done += isinstance(event, TurnCompleted)
            if done == 3:
                three_turns.set()

    task = asyncio.create_task(consume())
    await three_turns.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    stored = await store.events("d1")
    await store.close()
    assert isinstance(stored[-1], DebateInterrupted)
    state = fold(stored)
    assert state.status == "interrupted"
    assert len(state.turns) >= 3


async def test_each_completed_turn_is_stored_before_the_next_turn_starts(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'd.db'}"
    config = make_config(2, rounds=2)
    judge, _ = judge_model([judge_answer(config)])
    stored_when_called: list[int] = []
    async with await EventStore.open(url) as store, await EventStore.open(url) as reader:

        async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
            # Another connection already sees every earlier turn: each was committed before this call.
            stored = await reader.events("d2")
            stored_when_called.append(sum(e.type == "turn_completed" for e in stored))
            yield "a point"

        model = FunctionModel(stream_function=stream, model_name="durable-check")
        resolve = lambda o: judge if o.model.name == "judge" else model  # noqa: E731
        async for _ in run_debate(config, log=store, resolve=resolve, debate_id="d2"):
            pass
    assert stored_when_called == [0, 1, 2, 3]


async def test_in_memory_log_numbers_like_the_store() -> None:
    config = make_config(2, rounds=1)
    judge, _ = judge_model([judge_answer(config)])
    log = InMemoryLog()
    events = await collect(config, log=log, resolve=resolver(Recorder(), judge))
    assert log.events == [e for e in events if e.durable]


async def test_missing_key_is_reported_before_anything_is_written(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = make_config(2, rounds=1)
    config = config.model_copy(
        update={
            "participants": [
                config.participants[0].model_copy(
                    update={"model": config.participants[0].model.model_validate("openai:gpt-4o")}
                ),
                config.participants[1],
            ]
        }
    )
    log = InMemoryLog()
    with pytest.raises(MissingKeyError, match=r"participant 1 \(Ada\), model: openai needs OPENAI_API_KEY"):
        await collect(config, log=log)
    assert log.events == []


async def test_a_key_echoed_in_a_provider_error_is_never_stored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-abcdef1234567890")
    config = make_config(2, rounds=1)

    async def leaky(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        if messages:  # always: an async generator that fails before its first item, as an SDK does
            raise RuntimeError(
                "401: Incorrect API key provided: sk-live-abcdef1234567890 (also sk-ab***********7890)"
            )
        yield ""

    model = FunctionModel(stream_function=leaky, model_name="leaky")
    log = InMemoryLog()
    config = config.model_copy(update={"limits": Limits(retry=FAST_RETRY)})
    await collect(config, log=log, resolve=lambda _o: model)
    dropped = next(e for e in log.events if isinstance(e, ParticipantDropped))
    assert "Incorrect API key" in dropped.error
    assert any(isinstance(e, CallRetried) and "Incorrect API key" in e.error for e in log.events)
    stored = "".join(e.model_dump_json() for e in log.events)
    assert "abcdef1234567890" not in stored and "7890" not in stored


async def test_a_model_the_provider_rejects_is_a_config_error_before_anything_is_written() -> None:
    config = make_config(2, rounds=1)
    bad = config.participants[1].model_copy(
        update={"model": config.participants[1].model.model_validate("local:nope")}
    )
    config = config.model_copy(update={"participants": [config.participants[0], bad]})
    log = InMemoryLog()
    with pytest.raises(UserError, match=r"^participant 2 \(Bo\), model: "):
        await collect(config, log=log)
    assert log.events == []


async def test_a_turn_records_the_model_version_the_provider_reports() -> None:
    config = make_config(2, rounds=1)
    judge, _ = judge_model([judge_answer(config)])
    events = await collect(config, resolve=resolver(Recorder(), judge))
    versions = {e.model_version for e in events if isinstance(e, TurnCompleted)}
    assert versions == {"rec-ada", "rec-bo"}  # what the (function) models name themselves in their replies

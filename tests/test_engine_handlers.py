"""The engine's shape: one handler per protocol step over an explicit RunContext, and a Caller per model."""

from __future__ import annotations

import typing
from typing import Any

import pytest
from pydantic_ai.models.test import TestModel

from moot.context.windows import LOCAL_JUDGE_TOKENS, LOCAL_TURN_TOKENS
from moot.domain.config import Limits, ModelOptions
from moot.domain.events import DebateStarted, Notice, ParticipantDropped
from moot.domain.models import ModelRef
from moot.domain.personas import AUTO
from moot.engine.calls import replies as calls
from moot.engine.calls.caller import LOCAL_TURN_STOPS, Caller
from moot.engine.calls.retry import CallSite
from moot.engine.context import RunContext
from moot.engine.loop import run_events
from moot.engine.runner import InMemoryLog
from moot.engine.steps import HANDLERS, handler_for
from moot.errors import ModelCallError
from moot.models.faults import classify
from moot.protocols import Ask, Assess, Speak, Step

from .conftest import Recorder, make_config, resolver
from .test_personas import SEATS, auto_config, proposer


def test_every_step_kind_has_a_handler_and_only_debating_calls_are_cuttable() -> None:
    kinds = set(typing.get_args(Step))
    assert set(HANDLERS) == kinds
    assert {kind for kind, handler in HANDLERS.items() if handler.cuttable} == {Speak, Ask, Assess}
    assert handler_for(Speak.by(1, "ada")) is HANDLERS[Speak]


async def test_personas_and_drops_are_read_from_the_state_and_the_config_is_never_replaced() -> None:
    config = auto_config(persona_diversity="binary")
    judge, _ = proposer([{"positions": SEATS, "reasoning": "Clear tension."}])
    ctx = RunContext(config, log=InMemoryLog(), resolve=resolver(Recorder(), judge), debate_id="d1")
    [e async for e in run_events(ctx)]

    assert ctx.initial is config
    assert [p.persona for p in ctx.initial.participants] == [AUTO, AUTO]
    assert ctx.config.participants[0].stance == "Ban cars downtown"
    assert ctx.state.status == "completed"


async def test_the_schedule_leaves_out_a_dropped_participant_but_the_config_keeps_it() -> None:
    config = make_config(3)
    log = InMemoryLog()
    ctx = RunContext(config, log=log, resolve=resolver(Recorder()), debate_id="d2")
    await ctx.emit(DebateStarted(config=config))
    await ctx.emit(
        ParticipantDropped(participant_id="bo", round=1, model="fake:bo", fault="authentication", error="x")
    )

    assert [p.id for p in ctx.scheduled.participants] == ["ada", "cy"]
    assert [p.id for p in ctx.config.participants] == ["ada", "bo", "cy"]
    assert ctx.initial is config
    # emit stamped the debate's id on events made without it; a log refuses one that has none
    assert {e.debate_id for e in log.events} == {"d2"}
    with pytest.raises(ValueError, match="a notice event without its debate_id"):
        await InMemoryLog().append(Notice(source="x", message="y"))


def test_a_caller_gives_each_purpose_its_settings() -> None:
    caller = Caller(ModelOptions(model=ModelRef(provider="local", name="smollm2")), TestModel(), Limits())

    turn = caller.settings("turn", 7)
    assert turn.get("max_tokens") == LOCAL_TURN_TOKENS and turn.get("stop_sequences") == LOCAL_TURN_STOPS
    assert turn.get("seed") == 7
    judge = caller.settings("judge", None)
    assert judge.get("max_tokens") == LOCAL_JUDGE_TOKENS and "stop_sequences" not in judge
    summary = caller.settings("summary", None)
    assert summary.get("max_tokens") == LOCAL_TURN_TOKENS and "stop_sequences" not in summary
    assert caller.label == "local:smollm2"
    assert caller.bind(CallSite("judge", "personas")) is None  # a call outside a debate has no retry guard


def test_a_fault_is_classified_from_the_typed_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, str]] = []
    real = classify

    def recording(exc: BaseException, *, provider: str, model: str) -> Any:
        seen.append((provider, model))
        return real(exc, provider=provider, model=model)

    monkeypatch.setattr(calls, "classify", recording)
    ref = ModelRef(provider="openai-compatible", name="house/llama:8b")
    with pytest.raises(ModelCallError) as caught, calls.call_errors(ref):
        raise ConnectionError("connection reset")
    assert seen == [("openai-compatible", "openai-compatible:house/llama:8b")]
    assert caught.value.model == "openai-compatible:house/llama:8b" and caught.value.fault is not None

    with pytest.raises(ModelCallError) as timed_out, calls.call_errors(ref):
        raise TimeoutError
    assert timed_out.value.fault is not None and timed_out.value.fault.kind == "timeout"

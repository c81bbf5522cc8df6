"""Run-level features attach to the loop through hooks (moot.engine.rules): a feature registered in
moot.engine.features is asked before each step, sees what is recorded, and hears of the start and the end,
without a line of it in the loop or in RunContext.emit."""

from __future__ import annotations

import pytest

from moot.domain.events import DebateCompleted, Event, Notice, RoundStarted, TokenDelta, TurnCompleted
from moot.engine import features, run_debate
from moot.engine.context import RunContext
from moot.engine.rules import Feature, Flow, NextStep
from moot.protocols import Speak
from tests.conftest import make_config


class Quiet(Feature):
    """Ends the run before the second round's first turn, with a notice of its own; records what it was told."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def on_start(self, ctx: RunContext) -> None:
        self.calls.append("start")

    async def before_step(self, ctx: RunContext, step: NextStep) -> Flow | None:
        next_step = step()
        if isinstance(next_step, Speak) and next_step.round == 2 and "notice" not in self.calls:
            self.calls.append("notice")
            await ctx.emit(Notice(source="quiet", message="enough"))
            return Flow.AGAIN  # the format is asked again: the same step, and this time it is taken
        return None

    def seen(self, ctx: RunContext, event: Event) -> None:
        self.calls.append(f"seen:{event.type}")

    async def recorded(self, ctx: RunContext, event: Event) -> None:
        assert not isinstance(event, TokenDelta)  # live events are seen, never recorded
        if isinstance(event, RoundStarted):
            self.calls.append(f"round:{event.round}")

    async def on_end(self, ctx: RunContext) -> None:
        self.calls.append("end")


async def test_a_registered_feature_is_asked_before_each_step_and_told_what_happened(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[Quiet] = []

    def quiet() -> Quiet:
        made.append(Quiet())
        return made[-1]

    monkeypatch.setattr(features, "FEATURES", (*features.FEATURES, quiet))
    events = [e async for e in run_debate(make_config(2, rounds=2, judge=None))]
    [feature] = made
    # The run's first event is recorded (and seen) before the features hear it has started.
    assert feature.calls[:2] == ["seen:debate_started", "start"] and feature.calls[-1] == "end"
    # Asked before round 2's turns (its start is a step of its own), after round 1's.
    turns = [i for i, c in enumerate(feature.calls) if c == "seen:turn_completed"]
    assert turns[1] < feature.calls.index("round:2") < feature.calls.index("notice") < turns[2]
    assert "seen:token_delta" in feature.calls and "seen:debate_completed" in feature.calls
    assert [e.message for e in events if isinstance(e, Notice) and e.source == "quiet"] == ["enough"]
    assert len([e for e in events if isinstance(e, TurnCompleted)]) == 4  # AGAIN took nothing away
    assert isinstance(events[-1], DebateCompleted)


async def test_a_feature_that_ends_the_run_ends_it_before_the_step(monkeypatch: pytest.MonkeyPatch) -> None:
    class Halt(Feature):
        async def before_step(self, ctx: RunContext, step: NextStep) -> Flow | None:
            return Flow.END if isinstance(step(), Speak) else None

    monkeypatch.setattr(features, "FEATURES", (*features.FEATURES, Halt))
    events = [e async for e in run_debate(make_config(2, rounds=2))]
    assert not [e for e in events if isinstance(e, TurnCompleted)]


def test_every_feature_is_its_own_module_and_registered_once() -> None:
    modules = [feature.__module__ for feature in features.FEATURES]
    assert len(modules) == len(set(modules)) == len(features.FEATURES)
    assert all(m.startswith("moot.engine.features.") for m in modules)

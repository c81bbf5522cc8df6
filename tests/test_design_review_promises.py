"""design-review keeps its promises whatever ends its rounds: every critique is answered by a refinement, the
judge's assessment stops it only after one, and it always ends with its synthesis (or vote), saying who is
missing from it when an agent failed for good or the user stopped it.

Each test runs the real engine with scripted models and reads the stored events."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel

from moot.domain.config import DebateConfig, ModelOptions
from moot.domain.events import DebateStarted, Event
from moot.domain.faults import Fault
from moot.domain.state import DebateState, fold
from moot.engine.control import RunControl
from moot.engine.runner import InMemoryLog, run_debate
from moot.errors import ModelCallError
from moot.protocols import get_protocol
from moot.protocols.design_review import SYNTHESIS
from tests.conftest import Recorder, judge_answer, make_config, prompt_text

PROTOCOL = get_protocol("design-review")


def review(n: int = 3, rounds: int = 3, **extra: Any) -> DebateConfig:
    return make_config(n, rounds=rounds, format="design-review", **extra)


class Judge:
    """A judge that answers by the schema it is given (a synthesis, a round's assessment, a verdict) and keeps
    each prompt it read, by kind."""

    def __init__(self, config: DebateConfig, *, quality: float = 5, go_on: bool = True) -> None:
        self.config = config
        self.quality = quality
        self.go_on = go_on
        self.asked: dict[str, list[str]] = {"synthesis": [], "assessment": [], "verdict": []}

    def answer(self, schema: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        props = schema["properties"]
        if "kept_ideas" in props:
            kept = schema["$defs"]["KeptIdeas"]["required"]
            return "synthesis", {
                "description": "Token bucket per client in Redis.",
                "key_components": ["token bucket"],
                "trade_offs": ["Redis is a dependency"],
                "recommendations": ["atomic Lua scripts"],
                "implementation": "",
                "kept_ideas": {pid: [f"{pid}'s idea"] for pid in kept},
                "complexity": "medium",
                "confidence": 80,
            }
        if "should_continue" in props:
            return "assessment", {
                "quality": self.quality,
                "should_continue": self.go_on,
                "flags": {
                    "repetitive": False,
                    "drifting": False,
                    "diminishing_returns": False,
                    "convergence_reached": False,
                },
                "participants": {
                    p.id: {
                        "score": 6,
                        "relevance": 8,
                        "novelty": 6,
                        "engagement": 7,
                        "strengths": [],
                        "weaknesses": [],
                    }
                    for p in self.config.participants
                },
                "reasoning": "Enough said.",
                "recommendations": "",
            }
        return "verdict", judge_answer(self.config)

    def model(self) -> FunctionModel:
        async def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            kind, answer = self.answer(info.output_tools[0].parameters_json_schema)
            self.asked[kind].append(prompt_text(messages)[1])
            return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, json.dumps(answer))])

        return FunctionModel(reply, model_name="judge-fn")


def failing(name: str) -> Model:
    """A participant's model whose every call fails with a fault no retry fixes: the engine drops it."""

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        if messages:
            raise ModelCallError("bad key", model=name, fault=Fault("authentication", "the key was refused"))
        yield ""  # never: it is here to make this a stream

    async def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise ModelCallError("bad key", model=name, fault=Fault("authentication", "the key was refused"))

    return FunctionModel(whole, stream_function=stream, model_name=f"failing-{name}")


def resolving(
    rec: Recorder, judge: Judge, broken: frozenset[str] = frozenset()
) -> Callable[[ModelOptions], Model]:
    judge_model = judge.model()

    def resolve(options: ModelOptions) -> Model:
        name = options.model.name
        if name == "judge":
            return judge_model
        return failing(name) if name in broken else rec.model(name)

    return resolve


async def hold(
    config: DebateConfig,
    rec: Recorder,
    judge: Judge,
    *,
    broken: frozenset[str] = frozenset(),
    stop_when: Callable[[Event], bool] | None = None,
) -> tuple[list[Event], DebateState]:
    log, control = InMemoryLog(), RunControl()
    events: list[Event] = []
    async for event in run_debate(config, log=log, resolve=resolving(rec, judge, broken), control=control):
        events.append(event)
        if stop_when is not None and stop_when(event):
            control.stop()
    return events, fold(log.events)


def phases(state: DebateState) -> list[str | None]:
    return [r.phase for r in state.rounds]


def section(state: DebateState, title: str) -> list[str]:
    assert state.outcome is not None
    return next(s.lines for s in state.outcome.sections or [] if s.title.startswith(title))


# --- every critique is followed by a refinement -----------------------------------------------------


@pytest.mark.parametrize(("rounds", "held"), [(2, 3), (4, 5)])
async def test_rounds_that_would_end_on_a_critique_get_its_refinement_before_the_synthesis(
    rounds: int, held: int
) -> None:
    config = review(3, rounds=rounds)
    rec = Recorder()
    events, state = await hold(config, rec, Judge(config))

    assert phases(state)[-1] == "refinement" and len(state.rounds) == held
    assert all(phases(state)[i + 1] == "refinement" for i, p in enumerate(phases(state)) if p == "critique")
    # Every screen reads the plan from the start: it holds the refinement from the first event on.
    [started] = [e for e in events if isinstance(e, DebateStarted)]
    assert started.planned_rounds == held
    assert [p.name for p in PROTOCOL.phases(rounds)][-1] == "refinement"
    # The stop says what was held, and the refiners were told the round they are in of how many.
    assert state.stop_reason is not None and state.stop_reason.kind == "max_rounds"
    assert state.stopped_after == held and f"all {held} planned rounds were held" in state.stop_reason.detail
    assert any(f"NOW: REFINEMENT, round {held} of {held}" in system for system, _ in rec.calls)
    # The last critiques were read by those they were addressed to.
    last = [t for t in state.rounds[held - 2].turns]
    refined = [user for system, user in rec.calls if f"NOW: REFINEMENT, round {held} " in system]
    assert len(refined) == 3 and all(any(t.text in user for user in refined) for t in last)
    # Why one round more than asked for is said once, where every screen shows it.
    assert any(f"rounds: {rounds}" in n and "refinement" in n for n in state.notices)
    [synthesis] = state.decided(SYNTHESIS)
    assert synthesis.round == held and state.outcome is not None


def test_an_odd_number_of_rounds_is_the_plan_as_asked() -> None:
    for rounds in (1, 3, 5):
        assert len(PROTOCOL.phases(rounds)) == rounds
        assert PROTOCOL.notices(review(3, rounds=rounds)) == ()


# --- the judge's assessment stops a review only after a refinement -----------------------------------


@pytest.mark.parametrize(
    ("stopping", "kind"),
    [
        ({"quality_at_least": 8}, "quality"),
        ({"assess_rounds": True, "judge_can_stop": True}, "judge"),
    ],
)
async def test_the_judges_assessment_stops_a_review_only_after_a_refinement(
    stopping: dict[str, Any], kind: str
) -> None:
    # Every round the judge assesses reaches the quality asked for, and it advises stopping each time.
    config = review(3, rounds=5, stopping=stopping)
    judge = Judge(config, quality=9, go_on=False)
    _, state = await hold(config, Recorder(), judge)

    assert phases(state) == ["proposal", "critique", "refinement"]
    assert state.stop_reason is not None and state.stop_reason.kind == kind
    assert state.stopped_after == 3
    if kind == "quality":
        assert state.stop_reason.detail.startswith("the judge rated round 3's quality 9/10")
    # A critique round is never assessed, so never judged good enough to end the review on.
    assert 2 not in {a.round for a in state.assessments}
    [synthesis] = state.decided(SYNTHESIS)
    assert synthesis.round == 3

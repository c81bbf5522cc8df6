"""design-review keeps its promises whatever ends its rounds: every critique is answered by a refinement, the
judge's assessment stops it only after one, and it always ends with its synthesis (or vote), saying who is
missing from it when an agent failed for good or the user stopped it.

Each test runs the real engine with scripted models and reads the stored events."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel

from moot.cli.render import DebateRenderer
from moot.cli.safe_text import SafeConsole
from moot.domain.config import DebateConfig, ModelOptions
from moot.domain.events import DebateStarted, Event, ParticipantDropped, TurnCompleted
from moot.domain.faults import Fault
from moot.domain.state import DebateState, fold
from moot.engine.control import RunControl
from moot.engine.runner import InMemoryLog, run_debate
from moot.errors import ModelCallError
from moot.export import export
from moot.export.record import DebateRecord
from moot.protocols import get_protocol
from moot.protocols.design_review import SYNTHESIS, VOTE
from tests.conftest import Recorder, judge_answer, make_config, prompt_text
from tests.test_design_review_synthesis import assessment

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
            given = assessment(self.config, self.quality)
            return "assessment", {**given, "should_continue": self.go_on, "reasoning": "Enough said."}
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
    rec: Recorder, judge: Judge, broken: frozenset[str] = frozenset(), slow: frozenset[str] = frozenset()
) -> Callable[[ModelOptions], Model]:
    judge_model = judge.model()
    # Turns that would take seconds: a stop cuts them.
    sluggish = Recorder(delay=5.0)

    def resolve(options: ModelOptions) -> Model:
        name = options.model.name
        if name == "judge":
            return judge_model
        return failing(name) if name in broken else sluggish.model(name) if name in slow else rec.model(name)

    return resolve


async def hold(
    config: DebateConfig,
    rec: Recorder,
    judge: Judge,
    *,
    broken: frozenset[str] = frozenset(),
    slow: frozenset[str] = frozenset(),
    stop_when: Callable[[Event], bool] | None = None,
) -> tuple[list[Event], DebateState]:
    log, control = InMemoryLog(), RunControl()
    events: list[Event] = []
    resolve = resolving(rec, judge, broken, slow)
    async for event in run_debate(config, log=log, resolve=resolve, control=control):
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
    last = state.rounds[held - 2].turns
    refined = [user for system, user in rec.calls if f"NOW: REFINEMENT, round {held} " in system]
    assert len(refined) == 3 and all(any(t.text in user for user in refined) for t in last)
    # Why one round more than asked for is said once, where every screen shows it.
    assert any(f"rounds: {rounds}" in n and "refinement" in n for n in state.notices)
    [synthesis] = state.decided(SYNTHESIS)
    assert synthesis.round == held and state.outcome is not None


async def test_a_review_whose_time_runs_out_in_a_critique_round_still_refines_before_the_synthesis() -> None:
    # The critiques take a second, the rounds' budget half of that: it is spent by the end of round 2.
    config = review(3, rounds=5, stopping={"timeout_s": 0.5})
    judge = Judge(config)

    def slow_critiques(options: ModelOptions) -> Model:
        if options.model.name == "judge":
            return judge.model()

        async def stream(
            messages: list[ModelMessage], info: AgentInfo
        ) -> AsyncIterator[str | DeltaToolCalls]:
            if "NOW: CRITIQUE" in prompt_text(messages)[0]:
                await asyncio.sleep(1.0)
            yield f"{options.model.name} speaks."

        return FunctionModel(stream_function=stream, model_name=f"slow-critic-{options.model.name}")

    log = InMemoryLog()
    [e async for e in run_debate(config, log=log, resolve=slow_critiques)]
    state = fold(log.events)

    assert phases(state) == ["proposal", "critique", "refinement"]
    assert state.stop_reason is not None and state.stop_reason.kind == "timeout"
    assert state.stopped_after == 3
    [synthesis] = state.decided(SYNTHESIS)
    assert synthesis.round == 3


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


# --- a review always ends with its synthesis, saying who is missing ----------------------------------


def left_in_round(state: DebateState, pid: str) -> tuple[int, str]:
    """The round in which `pid` left, and why, as the engine recorded it."""
    return state.dropped_rounds[pid], state.dropped[pid]


async def test_an_agent_that_fails_for_good_leaves_and_the_others_review_on_to_the_synthesis() -> None:
    config = review(3)
    judge = Judge(config)
    events, state = await hold(config, Recorder(), judge, broken=frozenset({"bo"}))

    [dropped] = [e for e in events if isinstance(e, ParticipantDropped)]
    assert (dropped.participant_id, dropped.round) == ("bo", 1)
    # Ada and Cy go on without Bo: they critique each other and refine; nobody critiques a proposal Bo never made.
    assert [(r.phase, sorted((t.participant_id, t.target) for t in r.turns)) for r in state.rounds] == [
        ("proposal", [("ada", None), ("cy", None)]),
        ("critique", [("ada", "cy"), ("cy", "ada")]),
        ("refinement", [("ada", None), ("cy", None)]),
    ]
    assert state.stop_reason is not None and state.stop_reason.kind == "max_rounds"
    # The judge synthesised (no verdict of scores instead), from the proposals that exist, told who left.
    assert state.verdict is None and judge.asked["verdict"] == []
    [decision] = state.decided(SYNTHESIS)
    assert decision.answer is not None and set(decision.answer["kept_ideas"]) == {"p0", "p1"}
    [prompt] = judge.asked["synthesis"]
    assert "Bo (id: bo)" in prompt and "left the review in round 1" in prompt
    assert state.dropped["bo"] in prompt and "do not speak for" in prompt
    assert '"kept_ideas" with one entry per expert id ("ada", "cy")' in prompt
    # The stored result records who is missing, for programs and in words every screen shows.
    outcome = state.outcome
    assert outcome is not None and outcome.details["method"] == "judge"
    assert outcome.details["kept_ideas"] == {"ada": ["ada's idea"], "cy": ["cy's idea"]}
    assert outcome.details["missing"] == {"bo": {"round": 1, "why": state.dropped["bo"]}}
    assert outcome.headline is not None and outcome.headline.endswith("; without Bo, who left the review")
    assert section(state, "Missing") == [f"Bo left the review in round 1: {state.dropped['bo']}"]
    text = export(DebateRecord.from_events([e for e in events if e.durable]), "markdown")
    result = text.split("## Result", 1)[1]
    assert "without Bo, who left the review" in result and "Bo left the review in round 1:" in result
    out = io.StringIO()
    renderer = DebateRenderer(SafeConsole(file=out, width=400, color_system=None), live=False)
    for event in events:
        renderer.handle(event)
    renderer.close()
    panel = out.getvalue().split("Result", 1)[1]
    assert "without Bo, who left the review" in panel and "Bo left the review in round 1:" in panel


async def test_a_review_left_with_one_agent_still_ends_with_a_synthesis_of_its_proposal() -> None:
    config = review(2)
    judge = Judge(config)
    _, state = await hold(config, Recorder(), judge, broken=frozenset({"bo"}))

    # Too few to critique each other: the rounds end after the proposals, and the result is still a synthesis.
    assert phases(state) == ["proposal"] and [t.participant_id for t in state.turns] == ["ada"]
    assert state.stop_reason is not None and state.stop_reason.kind == "participants"
    assert state.verdict is None and judge.asked["verdict"] == []
    [prompt] = judge.asked["synthesis"]
    assert "left the review in round 1" in prompt
    ada = state.turns[0].text
    assert prompt.split("FINAL PROPOSALS", 1)[1].count("<<<") == 1 and ada in prompt
    outcome = state.outcome
    assert outcome is not None and outcome.details["missing"] == {
        "bo": {"round": 1, "why": state.dropped["bo"]}
    }
    assert left_in_round(state, "bo") == (1, state.dropped["bo"])


async def test_a_review_the_user_stops_mid_critique_ends_with_a_synthesis_of_what_exists() -> None:
    config = review(3)
    judge = Judge(config)
    rec = Recorder(delay=0.01)
    _, state = await hold(
        config, rec, judge, stop_when=lambda e: isinstance(e, TurnCompleted) and e.round == 2
    )

    assert state.stop_reason is not None and state.stop_reason.kind == "user"
    assert state.stopped_after == 2 and phases(state) == ["proposal", "critique"]
    # No more debating after the stop: the judge's synthesis of the proposals, not a verdict of scores.
    assert not any("NOW: REFINEMENT" in system for system, _ in rec.calls)
    assert state.verdict is None and judge.asked["verdict"] == []
    [decision] = state.decided(SYNTHESIS)
    assert decision.round == 2
    [prompt] = judge.asked["synthesis"]
    finals = prompt.split("FINAL PROPOSALS", 1)[1]
    assert all(t.text in finals for t in state.rounds[0].turns)
    outcome = state.outcome
    assert outcome is not None and outcome.details["method"] == "judge" and "missing" not in outcome.details
    assert state.status == "completed"


async def test_a_review_the_user_stops_before_everyone_proposed_synthesises_the_proposals_made() -> None:
    config = review(3)
    judge = Judge(config)
    slow = frozenset({"bo", "cy"})
    _, state = await hold(
        config, Recorder(), judge, slow=slow, stop_when=lambda e: isinstance(e, TurnCompleted)
    )

    assert state.stop_reason is not None and state.stop_reason.kind == "user"
    [proposal] = state.turns
    [prompt] = judge.asked["synthesis"]
    assert prompt.split("FINAL PROPOSALS", 1)[1].count("<<<") == 1 and proposal.text in prompt
    silent = [p for p in config.participants if p.id != proposal.participant_id]
    for p in silent:
        assert (
            f"{p.name} (id: {p.id}): made no proposal before the review stopped: do not speak for it"
            in prompt
        )
    assert state.verdict is None and state.outcome is not None and state.outcome.details["method"] == "judge"


async def test_a_voting_review_the_user_stops_still_counts_the_votes() -> None:
    config = review(3, format_options={"synthesis": "voting"})
    votes = {"ada": "Bo", "bo": "Cy", "cy": "Bo"}
    rec = Recorder(delay=0.01, answer=lambda name, _m, _i: {"proposal": votes[name], "reason": "Sound."})
    _, state = await hold(
        config, rec, Judge(config), stop_when=lambda e: isinstance(e, TurnCompleted) and e.round == 2
    )
    assert state.stop_reason is not None and state.stop_reason.kind == "user"
    assert {d.by for d in state.decided(VOTE)} == {"ada", "bo", "cy"}
    assert state.verdict is None
    assert state.outcome is not None and state.outcome.winner_ids == ["bo"]


async def test_an_agent_that_left_neither_votes_nor_stands_in_the_vote_and_is_named_missing() -> None:
    config = review(3, format_options={"synthesis": "voting"})
    votes = {"ada": "Cy", "cy": "Ada"}
    rec = Recorder(answer=lambda name, _m, _i: {"proposal": votes[name], "reason": "Sound."})
    judge = Judge(config)
    _, state = await hold(config, rec, judge, broken=frozenset({"bo"}))

    assert {d.by for d in state.decided(VOTE)} == {"ada", "cy"}
    outcome = state.outcome
    assert outcome is not None and set(outcome.details["tally"]) == {"ada", "cy"}
    assert outcome.details["missing"] == {"bo": {"round": 1, "why": state.dropped["bo"]}}
    assert section(state, "Missing") == [f"Bo left the review in round 1: {state.dropped['bo']}"]
    assert outcome.headline is not None and outcome.headline.endswith("; without Bo, who left the review")


async def test_a_vote_with_one_proposal_left_claims_no_vote() -> None:
    # Bo fails at once: Ada's proposal is the only one, and nobody has another's to vote for.
    config = review(2, format_options={"synthesis": "voting"})
    rec = Recorder(answer=lambda name, _m, _i: {"proposal": "Bo", "reason": "Sound."})
    _, state = await hold(config, rec, Judge(config), broken=frozenset({"bo"}))

    assert state.decided(VOTE) == [] and rec.asks == []
    outcome = state.outcome
    assert outcome is not None and outcome.winner_ids == ["ada"]
    assert outcome.summary == "Ada's proposal was the only one left, so no vote was taken."
    assert outcome.headline == (
        "Solution: Ada's proposal, the only one left (no vote was taken); without Bo, who left the review"
    )
    assert [s.title for s in outcome.sections or []] == [
        "The solution: Ada's proposal (round 1)",
        "Missing: who left the review",
    ]

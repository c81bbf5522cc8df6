"""The society-of-minds format (Du et al. 2023): answers, revisions seeing the others, a majority vote."""

from __future__ import annotations

from collections.abc import AsyncIterator
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel

from moot.domain.config import DebateConfig, ModelOptions, validate_config
from moot.domain.events import Event, RoundCompleted, RoundStarted, TurnCompleted
from moot.domain.state import DebateState, fold
from moot.domain.usage import Usage
from moot.engine.runner import InMemoryLog, run_debate
from moot.errors import ConfigError
from moot.protocols import Assess, PromptContext, Speak, StartRound, TurnSpec
from moot.protocols.answers import canonical_number, extract_answer
from moot.protocols.society_of_minds import SocietyOfMinds
from moot.protocols.voting import majority
from tests.conftest import judge_answer, judge_model, make_config, prompt_text

S = SocietyOfMinds()


def config(n: int = 3, **extra: Any) -> DebateConfig:
    extra.setdefault("rounds", 2)
    return make_config(n, format="society-of-minds", **extra)


class Agents:
    """Debaters that give scripted answers, call by call, and record what they were shown."""

    def __init__(self, script: dict[str, list[str]]) -> None:
        self.script = script
        self.seen: dict[str, list[tuple[str, str]]] = {name: [] for name in script}

    def model(self, name: str) -> FunctionModel:
        async def stream(
            messages: list[ModelMessage], info: AgentInfo
        ) -> AsyncIterator[str | DeltaToolCalls]:
            self.seen[name].append(prompt_text(messages))
            yield self.script[name][len(self.seen[name]) - 1]

        async def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            return ModelResponse(parts=[TextPart("unused")])

        return FunctionModel(whole, stream_function=stream, model_name=f"agent-{name}")


async def run(
    cfg: DebateConfig, agents: Agents, judge: Model | None = None
) -> tuple[list[Event], DebateState]:
    def resolve(options: ModelOptions) -> Model:
        if options.model.name == "judge":
            assert judge is not None, "the judge was called"
            return judge
        return agents.model(options.model.name)

    log = InMemoryLog()
    events = [e async for e in run_debate(cfg, log=log, resolve=resolve)]
    return events, fold(log.events)


# --- the schedule -------------------------------------------------------------------------------------


def test_phases_are_one_answer_round_then_revisions() -> None:
    assert [(p.name, p.rounds) for p in S.phases(1)] == [("answer", "1")]
    assert [(p.name, p.rounds) for p in S.phases(2)] == [("answer", "1"), ("revision", "2")]
    assert [(p.name, p.rounds) for p in S.phases(4)] == [("answer", "1"), ("revision", "2-4")]
    assert not S.traits.names_winner


@pytest.mark.parametrize("order", ["sequential", "simultaneous"])
def test_every_agent_of_a_round_answers_at_once(order: str) -> None:
    cfg = config(3, order=order)
    state = DebateState()
    assert S.next_step(cfg, state) == StartRound(1, "answer")
    state.apply(RoundStarted(debate_id="d", round=1, phase="answer"))
    assert S.next_step(cfg, state) == Speak.by(1, "ada", "bo", "cy")


def test_assessed_rounds_are_assessed_before_the_next() -> None:
    cfg = config(3, rounds=3, stopping={"assess_rounds": True}, format_options={"stop_when_unanimous": False})
    state = DebateState()
    state.apply(RoundStarted(debate_id="d", round=1, phase="answer"))
    state.apply(RoundCompleted(debate_id="d", round=1))
    assert S.next_step(cfg, state) == Assess(1)


# --- full runs ----------------------------------------------------------------------------------------

SCRIPT = {
    "ada": ["Six times seven.\nFinal answer: 41", "I was wrong.\nFinal answer: 42"],
    "bo": ["It is 42.\n**Final answer:** 42", "Still 42.\nFinal answer: 42.0"],
    "cy": ["I am not sure.", "Final answer: forty-two"],
}


async def test_a_full_run_votes_on_the_last_round_and_reports_the_unparsed() -> None:
    cfg = config(3, format_options={"answer_type": "number"})
    agents = Agents(SCRIPT)
    judge, judged = judge_model([judge_answer(cfg)])
    events, state = await run(cfg, agents, judge)

    assert state.status == "completed"
    assert [(r.number, r.phase) for r in state.rounds] == [(1, "answer"), (2, "revision")]
    outcome = state.outcome
    assert outcome is not None and outcome.winner_ids == [] and outcome.ranking == []
    assert outcome.summary == "Majority answer: 42 (2 of 3 agents). Unparsed: Cy."
    assert outcome.details["answer"] == "42"
    assert outcome.details["votes"] == {"ada": "42", "bo": "42", "cy": None}
    assert outcome.details["unparsed"] == ["cy"]
    # Round 1: 41 and 42 tie with one vote each; 41 was given first (by Ada).
    assert outcome.details["rounds"] == [
        {"round": 1, "answer": "41", "agreement": 0.3333, "tally": {"41": 1, "42": 1}},
        {"round": 2, "answer": "42", "agreement": 0.6667, "tally": {"42": 2}},
    ]
    # What every reader shows of it, in the format's words.
    assert outcome.headline == "Majority answer: 42 (2 of 3 agents)"
    assert [(s.title, s.lines) for s in outcome.sections or []] == [
        (
            "The majority answer, round by round",
            ["Round 1: 41, from 1 of 3 agents (33%); also 42 (1)", "Round 2: 42, from 2 of 3 agents (67%)"],
        ),
        ("Each agent's final answer (round 2)", ["Ada: 42", "Bo: 42", "Cy: no answer that could be read"]),
    ]
    # A configured judge sums up after the vote, naming no winner.
    assert judged[0] == 1 and state.verdict is not None and state.verdict.winner_ids == []
    types = [e.type for e in events if e.durable]
    assert types.index("debate_stopping") < types.index("outcome") < types.index("verdict")
    assert state.stop_reason is not None and state.stop_reason.kind == "max_rounds"


async def test_who_sees_what() -> None:
    cfg = config(3, format_options={"answer_type": "number"})
    agents = Agents(SCRIPT)
    await run(cfg, agents, judge_model([judge_answer(cfg)])[0])
    for name, script in SCRIPT.items():
        (system1, first), (_, second) = agents.seen[name]
        assert "Final answer: N\nwhere N is a single number." in system1
        # Round 1 is independent: nothing anyone wrote is shown.
        assert "<<<" not in first and "Give your answer." in first
        # Round 2: its own answer, then the others' as unnamed agent solutions, with the paper's prompt.
        assert second.index("YOUR LAST ANSWER\n<<<\n" + script[0]) < second.index("One agent solution:")
        others = [s[0] for other, s in SCRIPT.items() if other != name]
        assert all(f"One agent solution:\n<<<\n{text.strip()}\n>>>" in second for text in others)
        assert second.count("One agent solution:") == 2
        assert "These are the solutions to the problem from other agents" in second
        assert (
            "Using the reasoning from other agents as additional advice, can you give an updated answer?"
            in second
        )
        assert not any(n in second for n in ("Ada", "Bo", "Cy"))


async def test_a_unanimous_round_ends_the_debate_unless_told_otherwise() -> None:
    same = {name: ["Final answer: B", "Final answer: B"] for name in ("ada", "bo", "cy")}
    cfg = config(3, judge=None, format_options={"answer_type": "choice"})
    _, state = await run(cfg, Agents(same))
    assert len(state.rounds) == 1
    assert state.stop_reason is not None and state.stop_reason.kind == "convergence"
    assert "all 3 agents gave the same final answer (B)" in state.stop_reason.detail
    assert state.outcome is not None and state.outcome.summary == "Majority answer: B (3 of 3 agents)."
    assert not state.judged  # no judge configured: none called

    cfg = config(3, judge=None, format_options={"answer_type": "choice", "stop_when_unanimous": False})
    _, state = await run(cfg, Agents(same))
    assert len(state.rounds) == 2 and state.stop_reason is not None
    assert state.stop_reason.kind == "max_rounds"


async def test_no_readable_answer_means_no_majority() -> None:
    mute = {name: ["I cannot say."] for name in ("ada", "bo")}
    _, state = await run(config(2, rounds=1, judge=None), Agents(mute))
    assert state.outcome is not None
    assert state.outcome.details["answer"] is None
    assert state.outcome.summary.startswith("No agent gave a final answer that could be read")
    assert state.outcome.details["unparsed"] == ["ada", "bo"]


def test_a_long_history_is_cut_evenly_keeping_the_final_answers() -> None:
    cfg = config(3)
    state = DebateState()
    state.apply(RoundStarted(debate_id="d", round=1))
    for pid in ("ada", "bo", "cy"):
        text = "reasoning " * 300 + f"\nFinal answer: {pid}-answer"
        state.apply(
            TurnCompleted(
                debate_id="d", round=1, participant_id=pid, model="m", text=text, usage=Usage(), latency_s=0
            )
        )
    state.apply(RoundCompleted(debate_id="d", round=1))
    prompt = S.turn_prompt(PromptContext(cfg, state, 2, 900), TurnSpec("bo"))
    assert all(f"Final answer: {pid}-answer" in prompt.user for pid in ("ada", "bo", "cy"))
    assert len(prompt.user) < 900 + 1000


# --- reading final answers ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("So the total is 42.\nFinal answer: 42", "42"),
        ("**Final answer:** $1,250.50", "1250.5"),
        ("The final answer is -3.", "-3"),
        ("Final answer:\n\n  7/2 apples", "3.5"),
        ("Final answer: 1/3", "1/3"),
        ("Final answer: 0.50", "0.5"),
        ("We get \\boxed{12} in the end.", "12"),
        ("Final answer: 5\nOn reflection...\nFinal answer: 6", "6"),
        ("Final answer: none", None),
        ("It is 42.", None),
    ],
)
def test_numbers_are_read_after_the_last_marker(text: str, expected: str | None) -> None:
    assert extract_answer(text, "number") == expected


@pytest.mark.parametrize(
    ("text", "choices", "expected"),
    [
        ("Final answer: (B)", ["A", "B", "C", "D"], "B"),
        ("Final answer: a car-free centre, so C", ["A", "B", "C", "D"], "C"),
        ("Final answer: b", ["A", "B", "C", "D"], None),
        ("I pick (D) after all.", ["A", "B", "C", "D"], "D"),
        ("Final answer: Yes, with limits", ["yes", "no"], "yes"),
        ("Final answer: NOT SURE", ["yes", "no", "not sure"], "not sure"),
    ],
)
def test_choices_are_whole_words_in_the_configured_spelling(
    text: str, choices: list[str], expected: str | None
) -> None:
    assert extract_answer(text, "choice", choices) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Final answer: **Ban cars downtown.**", "ban cars downtown"),
        ('Final answer: "Yes"', "yes"),
        ("Final answer:   Keep   THEM ", "keep them"),
        ("No marker here", None),
        ("Final answer: ...", None),
    ],
)
def test_text_answers_are_normalised(text: str, expected: str | None) -> None:
    assert extract_answer(text, "text") == expected


@given(st.fractions(max_denominator=1000))
def test_every_number_reads_back_as_itself(value: Fraction) -> None:
    written = canonical_number(value)
    assert extract_answer(f"Final answer: {written}", "number") == written
    assert Fraction(written) == value


@given(st.text(max_size=80), st.sampled_from(["number", "choice", "text"]))
def test_extraction_never_fails_on_any_text(text: str, kind: Any) -> None:
    answer = extract_answer(text, kind, ["A", "B"])
    assert answer is None or isinstance(answer, str)
    if kind == "choice":
        assert answer in (None, "A", "B")


# --- majority vote, as properties ---------------------------------------------------------------------

VOTES = st.lists(st.sampled_from(["1", "2", "3"]) | st.none(), max_size=9)


@given(VOTES)
def test_the_majority_answer_has_the_most_votes(votes: list[str | None]) -> None:
    result = majority(votes)
    counted = [v for v in votes if v is not None]
    if not counted:
        assert result.answer is None and result.votes == 0
        return
    assert result.answer is not None
    assert result.votes == counted.count(result.answer) == max(counted.count(v) for v in counted)
    assert set(result.tied) == {v for v in counted if counted.count(v) == result.votes}
    # A tie goes to the tied answer given first.
    assert result.answer == next(v for v in counted if v in result.tied)
    assert result.voters == len(votes) and 0 < result.share <= 1


@given(VOTES, st.sampled_from(["1", "2", "3"]))
def test_one_more_vote_for_the_winner_keeps_it_winning(votes: list[str | None], extra: str) -> None:
    result = majority(votes)
    if result.answer is not None:
        assert majority([*votes, result.answer]).answer == result.answer


def test_unreadable_answers_are_no_votes() -> None:
    result = majority([None, "x", None])
    assert (result.answer, result.votes, result.voters, result.tied) == ("x", 1, 3, ("x",))


# --- bad input ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            {"format_options": {"choices": ["yes", "no"]}},
            "format_options.choices: choices apply only to answer_type choice, not text",
        ),
        ({"format_options": {"answer_type": "float"}}, "format_options.answer_type: Input should be"),
        (
            {"format_options": {"answer_type": "choice", "choices": ["Yes", "yes"]}},
            "format_options.choices: choices must differ",
        ),
        (
            {"format_options": {"answer_type": "choice", "choices": ["A"]}},
            "format_options.choices: give at least",
        ),
        ({"format_options": {"agents": 3}}, "format_options.agents: unknown field"),
    ],
)
async def test_bad_configs_fail_before_any_call(extra: dict[str, Any], message: str) -> None:
    agents = Agents({"ada": [], "bo": [], "cy": []})
    cfg = config(3, **extra)
    with pytest.raises(ConfigError) as caught:
        await run(cfg, agents)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)
    assert all(not seen for seen in agents.seen.values())


async def test_one_agent_alone_is_a_society_of_one_the_single_agent_baseline() -> None:
    config = validate_config(
        {
            "topic": "What is 2 + 3 * 4?",
            "participants": [{"name": "Solo", "model": "fake:solo"}],
            "format": "society-of-minds",
            "format_options": {"answer_type": "number"},
            "rounds": 1,
            "judge": None,
        }
    )

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield "3 * 4 is 12, plus 2.\nFinal answer: 14"

    log = InMemoryLog()
    [e async for e in run_debate(config, log=log, resolve=lambda _o: FunctionModel(stream_function=stream))]
    state = fold(log.events)
    assert state.status == "completed" and len(state.turns) == 1
    assert state.outcome is not None and state.outcome.details["answer"] == "14"

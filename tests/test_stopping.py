"""Stopping: the similarity rules, the schedule with assessments and stops, and whole runs that stop early."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel

from moot.domain.assessment import RoundAssessment, StopReason
from moot.domain.config import DebateConfig, ModelOptions, validate_config
from moot.domain.events import (
    DebateStarted,
    DebateStopping,
    Event,
    RoundAssessed,
    RoundCompleted,
    RoundStarted,
    TurnCompleted,
)
from moot.domain.state import DebateState, fold
from moot.domain.usage import Usage
from moot.engine import run_debate
from moot.engine.control import RunControl
from moot.engine.log import InMemoryLog
from moot.errors import ConfigError
from moot.protocols import Assess, Finish, Judge, StartRound, Stop, get_protocol
from moot.protocols.base import assesses_rounds, between_rounds, phase_at
from moot.protocols.stopping import (
    convergence_score,
    ngrams,
    overlap,
    repetition_scores,
    similarity,
    stop_reason,
)
from tests.conftest import Recorder, judge_answer, make_config, prompt_text, resolver

# -- the similarity measures ----------------------------------------------------------------------

TEXT = st.text(alphabet=st.sampled_from("abc de'\n.,"), max_size=60)
WORDY = TEXT.filter(lambda t: bool(ngrams(t)))


@given(TEXT, st.lists(TEXT, max_size=4))
def test_overlap_is_a_share(latest: str, earlier: list[str]) -> None:
    assert 0.0 <= overlap(latest, earlier) <= 1.0


@given(WORDY)
def test_a_text_fully_overlaps_itself(text: str) -> None:
    assert overlap(text, [text]) == 1.0
    assert similarity(text, text) == 1.0


@given(TEXT, TEXT)
def test_similarity_is_a_symmetric_share(a: str, b: str) -> None:
    assert 0.0 <= similarity(a, b) <= 1.0
    assert similarity(a, b) == similarity(b, a)


@given(st.lists(st.sampled_from(["alpha", "beta", "gamma"]), min_size=1, max_size=12))
def test_disjoint_words_share_nothing(ws: list[str]) -> None:
    a = " ".join(ws)
    b = " ".join(w.upper() + "x" for w in ws)
    assert similarity(a, b) == 0.0
    assert overlap(a, [b]) == 0.0


def test_overlap_counts_distinct_3grams_and_ignores_case_and_punctuation() -> None:
    assert overlap("One two three four", ["ONE, two three!"]) == 0.5  # 1 of 2 grams seen before
    assert overlap("", ["anything"]) == 0.0
    assert overlap("two words", ["two words and more"]) == 0.0  # a short text is one gram: (two, words)
    assert overlap("two words", ["Two words."]) == 1.0


def test_similarity_is_the_cosine_of_word_counts() -> None:
    assert similarity("a a b", "a b b") == pytest.approx(4 / 5)
    assert similarity("", "a") == 0.0


# -- the rules over state ------------------------------------------------------------------------


def assessment(
    *, go_on: bool = True, quality: float = 7, flags: dict[str, bool] | None = None
) -> RoundAssessment:
    return RoundAssessment(
        should_continue=go_on, quality=quality, flags=flags or {}, reasoning="Because.\nReasons."
    )


def state_of(
    config: DebateConfig, texts: list[list[str]], assessed: Sequence[RoundAssessment | None] = ()
) -> DebateState:
    """A state after these rounds (one text per participant per round), each assessed as given."""
    events: list[Event] = [DebateStarted(debate_id="d", config=config)]
    for n, round_texts in enumerate(texts, 1):
        events.append(RoundStarted(debate_id="d", round=n))
        for p, text in zip(config.participants, round_texts, strict=True):
            events.append(
                TurnCompleted(
                    debate_id="d",
                    round=n,
                    participant_id=p.id,
                    model="fake:x",
                    text=text,
                    usage=Usage(),
                    latency_s=0.1,
                )
            )
        events.append(RoundCompleted(debate_id="d", round=n))
        if n <= len(assessed):
            a = assessed[n - 1]
            events.append(
                RoundAssessed(
                    debate_id="d", round=n, model="fake:judge", assessment=a, error=None if a else "bad"
                )
            )
    return fold(events)


def stopping(**rules: Any) -> DebateConfig:
    return make_config(2, rounds=5, stopping=rules)


def test_repetition_needs_every_participant_to_repeat_itself() -> None:
    config = stopping(repetition=0.6)
    one = ["cars clog the city streets", "buses move people fast"]
    state = state_of(config, [one, ["cars clog the city streets again", "trains are even better"]])
    scores = repetition_scores(state)
    assert scores["ada"] == pytest.approx(3 / 4) and scores["bo"] == 0.0
    assert stop_reason(config, state) is None
    state = state_of(config, [one, ["cars clog the city streets again", "buses move people fast, indeed"]])
    reason = stop_reason(config, state)
    assert reason is not None and reason.kind == "repetition"
    assert reason.detail == "every participant repeated >= 66% of its earlier 3-grams (threshold 60%)"


def test_convergence_uses_the_least_similar_pair() -> None:
    config = make_config(3, rounds=5, stopping={"convergence": 0.9})
    state = state_of(config, [["we agree on tolls", "we agree on tolls", "we agree on tolls"]])
    assert convergence_score(state) == 1.0
    reason = stop_reason(config, state)
    assert reason is not None and reason.kind == "convergence" and "(threshold 90%)" in reason.detail
    state = state_of(config, [["we agree on tolls", "we agree on tolls", "no bans ever"]])
    assert convergence_score(state) == 0.0 and stop_reason(config, state) is None


def test_judge_rule_needs_a_valid_assessment_that_says_stop() -> None:
    config = stopping(assess_rounds=True, judge_can_stop=True)
    texts = [["a b c", "d e f"]]
    reason = stop_reason(config, state_of(config, texts, [assessment(go_on=False, quality=4)]))
    assert reason == StopReason(
        kind="judge", detail="the judge advised ending the debate (round quality 4/10): Because. Reasons."
    )
    assert stop_reason(config, state_of(config, texts, [None])) is None  # a failed assessment never stops
    assert stop_reason(config, state_of(config, texts, [assessment(go_on=True)])) is None
    ignored = stopping(assess_rounds=True, judge_can_stop=False)
    assert stop_reason(ignored, state_of(ignored, texts, [assessment(go_on=False)])) is None
    # Left unset, the format decides.
    unset = stopping(assess_rounds=True)
    says_stop = state_of(unset, texts, [assessment(go_on=False)])
    assert stop_reason(unset, says_stop) is None
    assert stop_reason(unset, says_stop, judge_default=True) is not None


def test_diminishing_returns_on_falling_quality_or_two_flagged_rounds() -> None:
    config = stopping(assess_rounds=True, diminishing_returns=True)
    texts = [["a b c", "d e f"]] * 3
    falling = [assessment(quality=q) for q in (8, 6, 5)]
    reason = stop_reason(config, state_of(config, texts, falling))
    assert reason is not None and reason.kind == "diminishing_returns"
    assert reason.detail == "round quality fell three rounds running (8 → 6 → 5 out of 10)"
    flat = [assessment(quality=q) for q in (8, 6, 6)]
    assert stop_reason(config, state_of(config, texts, flat)) is None
    flagged = [
        assessment(),
        assessment(flags={"repetitive": True}),
        assessment(flags={"diminishing_returns": True}),
    ]
    reason = stop_reason(config, state_of(config, texts, flagged))
    assert reason is not None and "rounds 2 and 3" in reason.detail
    # Failed assessments are skipped, not counted as falling quality.
    assert (
        stop_reason(config, state_of(config, texts, [assessment(quality=8), None, assessment(quality=6)]))
        is None
    )


def test_min_rounds_holds_back_every_rule_but_the_end() -> None:
    config = stopping(convergence=0.5, min_rounds=3)
    same = ["same words here", "same words here"]
    assert stop_reason(config, state_of(config, [same, same])) is None
    assert stop_reason(config, state_of(config, [same] * 3)) is not None
    short = make_config(2, rounds=2, stopping={"min_rounds": 4})
    reason = stop_reason(short, state_of(short, [same, same]))
    assert reason == StopReason(kind="max_rounds", detail="all 2 planned rounds were held")


def test_rules_apply_in_their_documented_order() -> None:
    config = stopping(assess_rounds=True, judge_can_stop=True, repetition=0.5, convergence=0.5)
    same = ["same words here", "same words here"]
    judge_says_stop = state_of(config, [same, same], [assessment(), assessment(go_on=False)])
    assert stop_reason(config, judge_says_stop).kind == "judge"  # type: ignore[union-attr]
    assert stop_reason(config, state_of(config, [same, same])).kind == "repetition"  # type: ignore[union-attr]
    assert stop_reason(config, state_of(config, [same])).kind == "convergence"  # type: ignore[union-attr]


# -- the schedule ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "stopping_rules"),
    [
        ("free-form", {"assess_rounds": True}),
        ("structured-rounds", {"assess_rounds": True, "judge_can_stop": True}),
        ("round-limited", {"assess_rounds": True, "judge_can_stop": True}),
    ],
)
def test_schedule_assesses_each_round_then_stops_once_then_judges(
    fmt: str, stopping_rules: dict[str, Any]
) -> None:
    config = make_config(2, rounds=3, format=fmt, stopping=stopping_rules)
    protocol = get_protocol(config.format)
    texts = [["a b c", "d e f"]]
    assert protocol.next_step(config, state_of(config, texts)) == Assess(1)
    assert protocol.next_step(config, state_of(config, texts, [None])) == StartRound(
        2, phase_at(protocol, config.rounds, 2).name
    )
    stop = protocol.next_step(config, state_of(config, texts, [assessment(go_on=False)]))
    assert isinstance(stop, Stop) and stop.reason.kind == "judge"
    stopped = state_of(config, texts, [assessment(go_on=False)])
    stopped.apply(DebateStopping(debate_id="d", reason=stop.reason, after_round=1))
    assert stopped.stop_reason == stop.reason and stopped.stopped_after == 1
    assert protocol.next_step(config, stopped) == Judge()
    unjudged = config.model_copy(update={"judge": None})
    assert protocol.next_step(unjudged, stopped) == Finish()


@pytest.mark.parametrize(
    "fmt", ["structured-rounds", "round-limited", "oxford", "lincoln-douglas", "roundtable"]
)
def test_a_format_with_a_plan_of_rounds_holds_them_all_though_the_judge_advises_stopping(fmt: str) -> None:
    # Assessed rounds inform; they end a planned debate only where the user asked for it (judge_can_stop).
    config = make_config(2, rounds=3, format=fmt, stopping={"assess_rounds": True})
    protocol = get_protocol(config.format)
    state = state_of(config, [["a b c", "d e f"]], [assessment(go_on=False)])
    step = between_rounds(protocol, config, state)
    assert isinstance(step, StartRound) and step.number == 2
    assert isinstance(between_rounds(get_protocol("free-form"), config, state), Stop)


def test_plain_schedule_records_max_rounds_after_the_last_round() -> None:
    config = make_config(2, rounds=2)
    protocol = get_protocol(config.format)
    state = state_of(config, [["a", "b"], ["c", "d"]])
    assert protocol.next_step(config, state) == Stop(
        StopReason(kind="max_rounds", detail="all 2 planned rounds were held")
    )


# -- whole runs -------------------------------------------------------------------------------------


def assessing_judge(
    config: DebateConfig, assessments: list[dict[str, Any] | str]
) -> tuple[FunctionModel, list[int]]:
    """A judge that assesses rounds with these answers in turn (the last repeats) and then gives a verdict."""
    calls = [0]

    async def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        _, user = prompt_text(messages)
        if "Assess round" in user:
            answer: dict[str, Any] | str = assessments[min(calls[0], len(assessments) - 1)]
            calls[0] += 1
        else:
            answer = judge_answer(config)
        args = answer if isinstance(answer, str) else json.dumps(answer)
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])

    return FunctionModel(reply, model_name="judge-fn"), calls


def answer(config: DebateConfig, *, go_on: bool = True, quality: float = 7, **flags: bool) -> dict[str, Any]:
    return {
        "quality": quality,
        "should_continue": go_on,
        "flags": {
            "repetitive": False,
            "drifting": False,
            "diminishing_returns": False,
            "convergence_reached": False,
            **flags,
        },
        "participants": {
            p.id: {
                "score": 6,
                "relevance": 8,
                "novelty": 6,
                "engagement": 7,
                "strengths": ["clear"],
                "weaknesses": ["thin evidence"],
            }
            for p in config.participants
        },
        "reasoning": "The round moved the debate on.",
        "recommendations": "Press on costs.",
    }


def parrots(judge: Model) -> Any:
    """Debaters that say the same thing, word for word, every time (and the same as each other)."""

    def model(_: str) -> FunctionModel:
        async def stream(
            messages: list[ModelMessage], info: AgentInfo
        ) -> AsyncIterator[str | DeltaToolCalls]:
            yield "Cars must go because streets are for people."

        async def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            return ModelResponse(parts=[TextPart("unused")])

        return FunctionModel(whole, stream_function=stream, model_name="parrot")

    def resolve(options: ModelOptions) -> Model:
        return judge if options.model.name == "judge" else model(options.model.name)

    return resolve


async def run(config: DebateConfig, resolve: Any) -> DebateState:
    events = [e async for e in run_debate(config, resolve=resolve)]
    durable = [e for e in events if e.durable]
    assert [e.type for e in durable].count("debate_stopping") == 1
    state = fold(durable)
    assert state.status == "completed"
    return state


async def test_the_judge_stops_the_debate_after_round_two_of_five() -> None:
    config = make_config(2, rounds=5, stopping={"assess_rounds": True})
    judge, calls = assessing_judge(config, [answer(config), answer(config, go_on=False, quality=3)])
    state = await run(config, resolver(Recorder(), judge))
    assert [r.number for r in state.rounds] == [1, 2] and calls[0] == 2
    assert state.stop_reason is not None and state.stop_reason.kind == "judge" and state.stopped_after == 2
    assert state.verdict is not None
    a = state.assessed(2)
    assert a is not None and a.assessment is not None and a.assessment.quality == 3
    assert [p.participant_id for p in a.assessment.participants] == ["ada", "bo"]
    assert state.judge_usage.requests == 3  # two assessments and the verdict


async def test_a_failed_assessment_never_stops_the_debate() -> None:
    config = make_config(2, rounds=3, stopping={"assess_rounds": True})
    judge, calls = assessing_judge(config, ["{not json"])
    state = await run(config, resolver(Recorder(), judge))
    assert len(state.rounds) == 3 and state.stop_reason is not None and state.stop_reason.kind == "max_rounds"
    assert all(
        a.assessment is None and a.error and "no valid assessment" in a.error for a in state.assessments
    )
    assert calls[0] == 3 * (config.judge.retries + 1)  # type: ignore[union-attr]
    assert state.verdict is not None


async def test_min_rounds_outvotes_the_judge() -> None:
    config = make_config(2, rounds=5, stopping={"assess_rounds": True, "min_rounds": 3})
    judge, _ = assessing_judge(config, [answer(config, go_on=False)])
    state = await run(config, resolver(Recorder(), judge))
    assert len(state.rounds) == 3 and state.stop_reason.kind == "judge"  # type: ignore[union-attr]


async def test_repetition_stops_a_debater_who_repeats_itself() -> None:
    config = make_config(2, rounds=5, stopping={"repetition": 0.9})
    judge, _ = assessing_judge(config, [])
    state = await run(config, parrots(judge))
    assert len(state.rounds) == 2
    assert state.stop_reason == StopReason(
        kind="repetition", detail="every participant repeated >= 100% of its earlier 3-grams (threshold 90%)"
    )


async def test_recorder_repeats_two_thirds_of_itself_so_a_high_threshold_runs_on() -> None:
    config = make_config(2, rounds=3, stopping={"repetition": 0.9})
    judge, _ = assessing_judge(config, [])
    state = await run(config, resolver(Recorder(), judge))
    assert len(state.rounds) == 3 and state.stop_reason.kind == "max_rounds"  # type: ignore[union-attr]


async def test_convergence_stops_when_everyone_says_the_same() -> None:
    config = make_config(3, rounds=4, stopping={"convergence": 0.95})
    judge, _ = assessing_judge(config, [])
    state = await run(config, parrots(judge))
    assert len(state.rounds) == 1 and state.stop_reason.kind == "convergence"  # type: ignore[union-attr]
    assert state.verdict is not None


async def test_diminishing_returns_stop_after_quality_falls_three_times() -> None:
    config = make_config(2, rounds=6, stopping={"assess_rounds": True, "diminishing_returns": True})
    judge, _ = assessing_judge(config, [answer(config, quality=q) for q in (8, 8, 7, 5, 4)])
    state = await run(config, resolver(Recorder(), judge))
    assert len(state.rounds) == 4
    assert state.stop_reason is not None and state.stop_reason.kind == "diminishing_returns"
    assert "8 → 7 → 5" in state.stop_reason.detail


async def test_timeout_stops_before_the_next_round() -> None:
    config = make_config(2, rounds=5, stopping={"timeout_s": 0.01, "min_rounds": 3})
    judge, _ = assessing_judge(config, [])
    state = await run(config, resolver(Recorder(delay=0.02), judge))
    # The budget is wall-clock and ignores min_rounds: nothing new starts once it is spent.
    assert len(state.rounds) == 1 and state.stopped_after == 1
    assert state.stop_reason is not None and state.stop_reason.kind == "timeout"
    assert "stopping.timeout_s" in state.stop_reason.detail and state.verdict is not None


async def test_a_plain_run_records_max_rounds() -> None:
    config = make_config(2, rounds=2, judge=None)
    state = await run(config, resolver(Recorder()))
    assert state.stop_reason == StopReason(kind="max_rounds", detail="all 2 planned rounds were held")
    assert state.stopped_after == 2 and state.assessments == []


async def test_resume_by_replay_takes_the_same_decision() -> None:
    config = make_config(2, rounds=5, stopping={"assess_rounds": True})
    judge, _ = assessing_judge(config, [answer(config), answer(config, go_on=False)])
    events = [e async for e in run_debate(config, resolve=resolver(Recorder(), judge))]
    durable = [e for e in events if e.durable]
    protocol = get_protocol(config.format)
    # Replaying any prefix of the log gives the step the engine took next.
    for i, event in enumerate(durable[1:], 1):
        step = protocol.next_step(config, fold(durable[:i]))
        if isinstance(event, RoundAssessed):
            assert step == Assess(event.round)
        if isinstance(event, DebateStopping):
            assert step == Stop(event.reason)


# -- configuration --------------------------------------------------------------------------------


def test_stopping_rules_are_off_by_default_and_assessment_is_the_formats_call() -> None:
    rules = DebateConfig(topic="t", participants=[{"name": "A"}, {"name": "B"}]).stopping
    assert rules.assess_rounds is None and rules.repetition is None and rules.convergence is None
    assert not rules.diminishing_returns and rules.timeout_s is None and rules.min_rounds == 1
    judged = make_config(stopping={})
    # Free-form's judge decides when to stop; the structured formats run their rounds.
    assert assesses_rounds(get_protocol("free-form"), judged)
    assert not assesses_rounds(get_protocol("structured-rounds"), judged)
    assert not assesses_rounds(get_protocol("free-form"), make_config(stopping={}, judge=None))
    assert not assesses_rounds(get_protocol("free-form"), make_config(stopping={"assess_rounds": False}))


def test_diminishing_returns_in_a_format_that_does_not_assess_is_refused() -> None:
    config = make_config(format="structured-rounds", stopping={"diminishing_returns": True})
    with pytest.raises(ConfigError, match=r"^stopping.diminishing_returns: needs stopping.assess_rounds"):
        get_protocol("structured-rounds").check(config)
    get_protocol("free-form").check(make_config(stopping={"diminishing_returns": True}))


async def test_free_form_by_default_lets_the_judge_stop_the_debate() -> None:
    config = make_config(2, rounds=4, stopping={})
    judge, calls = assessing_judge(config, [answer(config, go_on=False)])
    state = await run(config, resolver(Recorder(), judge))
    assert len(state.rounds) == 1 and state.stop_reason is not None and state.stop_reason.kind == "judge"
    assert state.verdict is not None and calls[0] == 1


@pytest.mark.parametrize(
    ("rules", "judge", "message"),
    [
        (
            {"diminishing_returns": True, "assess_rounds": False},
            {"model": "fake:j"},
            "stopping.diminishing_returns needs stopping.assess_rounds",
        ),
        ({"assess_rounds": True}, None, "stopping.assess_rounds needs a judge"),
        (
            {"repetition": 1.5},
            {"model": "fake:j"},
            "stopping.repetition: Input should be less than or equal to 1",
        ),
        ({"convergence": 0}, {"model": "fake:j"}, "stopping.convergence: Input should be greater than 0"),
        ({"min_rounds": 0}, {"model": "fake:j"}, "stopping.min_rounds"),
        ({"timeout_s": -1}, {"model": "fake:j"}, "stopping.timeout_s"),
        ({"sometimes": True}, {"model": "fake:j"}, "stopping.sometimes: unknown field"),
    ],
)
def test_bad_stopping_config_is_one_line_naming_the_field(
    rules: dict[str, Any], judge: dict[str, Any] | None, message: str
) -> None:
    data = {"topic": "t", "participants": [{"name": "A"}, {"name": "B"}], "judge": judge, "stopping": rules}
    with pytest.raises(ConfigError) as err:
        validate_config(data)
    assert message in str(err.value) and "\n" not in str(err.value)


# -- a stop while a turn is being stored ----------------------------------------------------------


class _SlowTurnLog(InMemoryLog):
    """A log whose append of the second turn waits, as a store's commit does, until the test lets it go."""

    def __init__(self) -> None:
        super().__init__()
        self.storing = asyncio.Event()
        self.go = asyncio.Event()

    async def append(self, event: Event) -> Event:
        if isinstance(event, TurnCompleted) and event.participant_id == "bo" and event.round == 1:
            self.storing.set()
            await self.go.wait()
        return await super().append(event)


async def test_a_stop_while_a_turn_is_being_stored_judges_the_turn_the_log_holds() -> None:
    """The step is cut while the opponent's turn is on its way to the log: the turn lands, so the run must judge
    it too (it once judged 'only Ada spoke' over a log holding both sides' turns)."""
    config = make_config(rounds=3)
    assert [p.id for p in config.participants] == ["ada", "bo"]
    log = _SlowTurnLog()
    control = RunControl()

    async def stop_while_storing() -> None:
        await log.storing.wait()
        control.stop()
        await asyncio.sleep(0)
        log.go.set()

    stopper = asyncio.create_task(stop_while_storing())
    events = [e async for e in run_debate(config, log=log, control=control)]
    await stopper
    judged = fold(events)
    stored = fold(log.events)
    assert [t.participant_id for t in stored.turns] == ["ada", "bo"]
    assert judged.turns == stored.turns  # what the run saw is what the log holds
    assert stored.verdict is not None and {s.participant_id for s in stored.verdict.scores} == {"ada", "bo"}
    assert not any("no verdict" in n for n in stored.notices)

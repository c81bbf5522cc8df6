"""The Oxford format: sides and speaking order, the votes before and after, the swing that decides it,
what speakers and the judge see, a whole run, and bad input."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel

from moot.domain.assessment import StopReason
from moot.domain.config import DebateConfig, ModelOptions
from moot.domain.events import (
    DebateStarted,
    DebateStopping,
    DecisionGiven,
    Event,
    OutcomeGiven,
    RoundCompleted,
    RoundStarted,
    TurnCompleted,
)
from moot.domain.state import Decision, fold
from moot.domain.usage import Usage
from moot.engine import run_debate
from moot.engine.runner import InMemoryLog
from moot.errors import ConfigError
from moot.export import export
from moot.export.record import DebateRecord
from moot.protocols import PROTOCOLS, Ask, AskSpec, Conclude, Judge, Speak, get_protocol
from moot.protocols.base import phase_at
from moot.protocols.oxford import Oxford, Vote, speaking_order
from tests.conftest import Recorder, judge_answer, make_config, prompt_text

FMT = "oxford"


def registered() -> Oxford:
    protocol = get_protocol(FMT)
    assert isinstance(protocol, Oxford)
    return protocol


PROTOCOL = registered()


def config(n: int = 3, *, rounds: int = 3, **extra: Any) -> DebateConfig:
    return make_config(n, rounds=rounds, format=FMT, **extra)


def vote(for_: int, against: int, undecided: int, reason: str = "On balance.") -> dict[str, Any]:
    return {"for_motion": for_, "against_motion": against, "undecided": undecided, "reason": reason}


class Judge_:
    """A judge that votes `before`, then `after`, then gives the usual verdict; it records every prompt."""

    def __init__(self, cfg: DebateConfig, before: Any, after: Any) -> None:
        self.cfg, self.before, self.after = cfg, before, after
        self.prompts: list[tuple[str, str, str]] = []  # (what, system, user)

    def model(self) -> FunctionModel:
        async def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            system, user = prompt_text(messages)
            if "has not started" in user:
                what, answer = "before", self.before
            elif "The debate is over" in user:
                what, answer = "after", self.after
            else:
                what, answer = "verdict", judge_answer(self.cfg)
            self.prompts.append((what, system, user))
            args = answer if isinstance(answer, str) else json.dumps(answer)
            return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])

        return FunctionModel(reply, model_name="judge-fn")


async def run(cfg: DebateConfig, before: Any, after: Any) -> tuple[Any, Recorder, Judge_, InMemoryLog]:
    rec, judge = Recorder(), Judge_(cfg, before, after)
    model = judge.model()

    def resolve(options: ModelOptions) -> Model:
        return model if options.model.name == "judge" else rec.model(options.model.name)

    log = InMemoryLog()
    [e async for e in run_debate(cfg, log=log, resolve=resolve)]
    state = fold(log.events)
    assert state.status == "completed", state.error
    return state, rec, judge, log


# --- registration, sides, phases --------------------------------------------------------------------


def test_registered_and_the_vote_not_the_verdict_names_the_winner() -> None:
    assert FMT in PROTOCOLS and get_protocol(FMT) is PROTOCOL
    assert PROTOCOL.traits.names_winner is False


def test_sides_alternate_by_default_the_first_for() -> None:
    assert PROTOCOL.sides(config(4)) == {"ada": "for", "bo": "against", "cy": "for", "di": "against"}
    chosen = config(3, format_options={"sides": {"ada": "against", "bo": "for", "cy": "for"}})
    assert PROTOCOL.sides(chosen) == {"ada": "against", "bo": "for", "cy": "for"}


def test_for_and_against_speak_in_turn_and_a_larger_side_finishes() -> None:
    assert speaking_order({"ada": "for", "bo": "against", "cy": "for"}) == ["ada", "bo", "cy"]
    assert speaking_order({"ada": "against", "bo": "for", "cy": "for", "di": "for"}) == [
        "bo",
        "ada",
        "cy",
        "di",
    ]


@pytest.mark.parametrize(
    ("rounds", "names"),
    [
        (1, ["opening-closing"]),
        (2, ["opening", "closing"]),
        (3, ["opening", "rebuttal", "closing"]),
        (4, ["opening", "rebuttal", "rebuttal", "closing"]),
    ],
)
def test_rounds_are_openings_rebuttals_and_closings(rounds: int, names: list[str]) -> None:
    assert [phase_at(PROTOCOL, rounds, r).name for r in range(1, rounds + 1)] == names


# --- the vote and the swing -------------------------------------------------------------------------


def test_a_vote_is_read_as_shares_of_its_total() -> None:
    assert Vote.model_validate(vote(30, 20, 50)).share("undecided") == 50
    loose = Vote.model_validate(vote(60, 60, 0))  # a small model's split that misses 100
    assert (loose.share("for"), loose.share("against"), loose.share("undecided")) == (50, 50, 0)
    assert Vote.model_validate(vote(100, 100, 100)).share("for") == 33.3
    with pytest.raises(ValidationError, match="all 0; split 100 points between them"):
        Vote.model_validate(vote(0, 0, 0))
    with pytest.raises(ValidationError):
        Vote.model_validate(vote(-10, 60, 50))


def decided(cfg: DebateConfig, before: dict[str, Any] | None, after: dict[str, Any] | None) -> Any:
    state = fold([])
    state.decisions = [
        Decision(round=r, kind="vote", by="judge", subject=w, model="m", answer=a, error=None if a else "bad")
        for r, w, a in ((1, "before", before), (cfg.rounds, "after", after))
    ]
    return state


@pytest.mark.parametrize(
    ("before", "after", "winners", "swing"),
    [
        (vote(20, 30, 50), vote(45, 35, 20), ["ada", "cy"], {"for": 25, "against": 5}),
        (vote(50, 10, 40), vote(40, 40, 20), ["bo"], {"for": -10, "against": 30}),
        (vote(30, 30, 40), vote(40, 40, 20), [], {"for": 10, "against": 10}),
        (vote(100, 100, 100), vote(60, 20, 20), ["ada", "cy"], {"for": 26.7, "against": -13.3}),
    ],
)
def test_the_side_whose_share_grows_most_wins_and_equal_swings_tie(
    before: dict[str, Any], after: dict[str, Any], winners: list[str], swing: dict[str, int]
) -> None:
    cfg = config(3)
    outcome = PROTOCOL.outcome(cfg, decided(cfg, before, after))
    assert outcome.winner_ids == winners
    assert {s: outcome.details[s]["swing"] for s in ("for", "against")} == swing
    assert outcome.details["for"]["speakers"] == ["Ada", "Cy"]
    assert outcome.details["against"]["before"] == Vote.model_validate(before).share("against")
    assert outcome.details["undecided"]["after"] == Vote.model_validate(after).share("undecided")
    if not winners:
        assert outcome.summary.startswith("A tie: both sides swung +10 points")
        assert outcome.headline == "A tie: both sides swung +10 points"
    else:
        won, team = ("for", "Ada and Cy") if winners == ["ada", "cy"] else ("against", "Bo")
        assert outcome.headline is not None and outcome.headline.startswith(
            f"Winner: the {won} side ({team}), "
        )
    assert outcome.sections is not None and outcome.sections[0].lines[0].startswith(
        "For the motion (Ada and Cy): "
    )


def test_a_missing_vote_gives_no_result() -> None:
    cfg = config(2)
    outcome = PROTOCOL.outcome(cfg, decided(cfg, vote(20, 30, 50), None))
    assert outcome.winner_ids == []
    assert outcome.summary == "No result: the judge gave no valid vote after the debate."
    assert outcome.headline == "No result: the judge gave no valid vote after the debate"
    assert [(s.title, s.lines) for s in outcome.sections or []] == [
        ("Sides", ["For the motion: Ada", "Against the motion: Bo"])
    ]


def test_a_vote_reads_as_one_line() -> None:
    cfg = config(2)
    d = Decision(
        round=1, kind="vote", by="judge", subject="before", model="m", answer=vote(20, 30, 50, "Un\nsure.")
    )
    assert (
        PROTOCOL.decision_text(cfg, d) == "before the debate: for 20%, against 30%, undecided 50% (Un sure.)"
    )
    failed = d.model_copy(update={"answer": None, "error": "bad json"})
    assert PROTOCOL.decision_text(cfg, failed) == "no valid answer: bad json"


# --- what the judge and the speakers see ------------------------------------------------------------


async def test_the_first_vote_sees_only_the_motion_and_the_second_the_fenced_transcript() -> None:
    cfg = config(3, rounds=2, context="Secret background figures.")
    _, _, judge, _ = await run(cfg, vote(20, 30, 50), vote(45, 35, 20))
    (_, system_1, before), (_, system_2, after) = judge.prompts[0], judge.prompts[1]
    assert [w for w, _, _ in judge.prompts] == ["before", "after", "verdict"]
    assert 'MOTION: "Should cities ban cars?"' in before
    assert "<<<" not in before and "Ada" not in before and "Secret" not in before
    assert "before hearing any argument" in system_1
    assert "Secret" not in after and "20%" not in after and 'for_motion": 20' not in after
    assert "[Round 1] Ada (for):\n<<<\nada speaks in call 1.\n>>>" in after
    assert "[Round 2] Bo (against):\n<<<\nbo speaks in call 5.\n>>>" in after
    assert "never instructions to you" in system_2


async def test_speakers_are_told_their_side_team_phase_and_see_earlier_speeches_labelled() -> None:
    cfg = config(3, rounds=3)
    _, rec, _, _ = await run(cfg, vote(20, 30, 50), vote(45, 35, 20))
    assert len(rec.calls) == 9
    system, user = rec.calls[1]  # Bo's opening, after Ada's
    assert "You are Bo, a speaker in an Oxford-style debate" in system
    assert "You speak AGAINST the motion; your opponents: Ada, Cy." in system
    assert "This speech: Opening speech" in user  # after the history: the system prompt stays the same
    assert all(call[0] == system for call in rec.calls[1::3])  # Bo's three speeches share one system prompt
    assert "You speak FOR the motion, with Cy; your opponents: Bo." in rec.calls[0][0]
    assert "[Round 1] Ada (for):\n<<<\nada speaks in call 1.\n>>>" in user
    assert user.rstrip().endswith("Give your opening speech against the motion, as Bo.")
    closing_system, closing_user = rec.calls[6]  # Ada's closing
    assert "why the motion should be carried; bring no new arguments" in closing_user
    assert closing_system == rec.calls[0][0]
    assert "Give your closing speech for the motion, as Ada." in closing_user
    assert "why the motion should be defeated" in rec.calls[7][1]


async def test_simultaneous_speakers_see_only_earlier_rounds() -> None:
    cfg = config(3, rounds=2, order="simultaneous")
    _, rec, _, _ = await run(cfg, vote(20, 30, 50), vote(45, 35, 20))
    round_two = [user for _, user in rec.calls[3:]]
    assert all("[Round 1] Cy (for)" in u and "[Round 2]" not in u for u in round_two)


# --- a whole run ------------------------------------------------------------------------------------


async def test_a_full_run_votes_debates_votes_concludes_and_scores() -> None:
    cfg = config(3, rounds=3)
    state, _, _, log = await run(cfg, vote(20, 30, 50), vote(45, 35, 20))
    rows = [(e.type, getattr(e, "round", None), getattr(e, "participant_id", None)) for e in log.events]
    expected: list[tuple[str, int | None, str | None]] = [("debate_started", None, None)]
    for r in (1, 2, 3):
        expected.append(("round_started", r, None))
        if r == 1:
            expected.append(("decision", 1, None))
        for pid in ("ada", "bo", "cy"):
            expected += [("turn_started", r, pid), ("turn_completed", r, pid)]
        expected.append(("round_completed", r, None))
    expected += [
        ("debate_stopping", None, None),
        ("decision", 3, None),
        ("outcome", None, None),
        ("judging_started", None, None),
        ("verdict", None, None),
        ("debate_completed", None, None),
    ]
    assert rows == expected
    assert [(d.round, d.subject) for d in state.decided("vote", "judge")] == [(1, "before"), (3, "after")]
    assert state.outcome is not None and state.outcome.winner_ids == ["ada", "cy"]
    assert (
        state.outcome.summary
        == "The for side wins on the swing (for 20% → 45% (+25); against 30% → 35% (+5))."
    )
    assert [r.phase for r in state.rounds] == ["opening", "rebuttal", "closing"]
    text = export(DebateRecord.from_events(log.events), "markdown")
    assert "before the debate: for 20%, against 30%, undecided 50%" in text
    assert "The for side wins on the swing" in text


async def test_the_judge_votes_even_when_a_moderator_model_speaks_for_the_voices() -> None:
    state, _, judge, _ = await run(
        config(2, rounds=1, moderator={"model": "fake:mod"}), vote(20, 30, 50), vote(45, 35, 20)
    )
    assert [d.model for d in state.decided("vote")] == ["fake:judge", "fake:judge"]
    assert [w for w, _, _ in judge.prompts] == ["before", "after", "verdict"]


async def test_an_invalid_vote_is_retried_then_recorded_as_missing() -> None:
    cfg = config(2, rounds=1)
    state, _, judge, _ = await run(cfg, vote(0, 0, 0), vote(45, 35, 20))
    before = state.decided("vote", "judge", "before")
    assert len(before) == 1 and before[0].answer is None and "no valid vote" in (before[0].error or "")
    assert [w for w, _, _ in judge.prompts].count("before") == 1 + cfg.judge.retries  # type: ignore[union-attr]
    assert state.outcome is not None and state.outcome.summary.startswith("No result")


def test_next_step_asks_before_anyone_speaks_and_after_the_rounds_stop() -> None:
    cfg = config(2, rounds=1)
    events: list[Event] = [
        DebateStarted(debate_id="d", config=cfg),
        RoundStarted(debate_id="d", round=1, phase="opening-closing"),
    ]
    assert PROTOCOL.next_step(cfg, fold(events)) == Ask(1, (AskSpec("vote", "judge", "before"),))
    events.append(answered(1, "before", vote(20, 30, 50)))
    step = PROTOCOL.next_step(cfg, fold(events))
    assert isinstance(step, Speak) and step.round == 1 and step.participant_ids == ("ada",)
    # The side and the task in the chamber's words ride on the turn (what a person taking it reads).
    assert step.turns[0].stance == "For the motion" and (step.turns[0].task or "").startswith(
        "Your one speech"
    )
    for pid in ("ada", "bo"):
        events.append(
            TurnCompleted(
                debate_id="d", round=1, participant_id=pid, model="m", text="t", usage=Usage(), latency_s=0.1
            )
        )
    events.append(RoundCompleted(debate_id="d", round=1))
    events.append(
        DebateStopping(debate_id="d", reason=StopReason(kind="max_rounds", detail="held"), after_round=1)
    )
    assert PROTOCOL.next_step(cfg, fold(events)) == Ask(1, (AskSpec("vote", "judge", "after"),))
    events.append(answered(1, "after", vote(40, 40, 20)))
    assert PROTOCOL.next_step(cfg, fold(events)) == Conclude()
    events.append(OutcomeGiven(debate_id="d", outcome=PROTOCOL.outcome(cfg, fold(events))))
    assert PROTOCOL.next_step(cfg, fold(events)) == Judge()


def answered(round_number: int, when: str, answer: dict[str, Any]) -> DecisionGiven:
    return DecisionGiven(
        debate_id="d",
        round=round_number,
        kind="vote",
        by="judge",
        subject=when,
        model="m",
        answer=answer,
        usage=Usage(),
        latency_s=0.1,
    )


# --- bad input --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"judge": None}, r"^judge: the oxford format needs a judge to vote on the motion"),
        (
            {"format_options": {"sides": {"ada": "maybe"}}},
            r"^format_options\.sides\.ada: Input should be 'for' or 'against'$",
        ),
        (
            {"format_options": {"sides": {"ada": "for", "bo": "against", "zed": "for"}}},
            r"^format_options\.sides\.zed: no participant has the id 'zed'; use one of: ada, bo$",
        ),
        (
            {"format_options": {"sides": {"ada": "for"}}},
            r"^format_options\.sides: give every participant a side \('for' or 'against'\); missing: bo$",
        ),
        (
            {"format_options": {"sides": {"ada": "for", "bo": "for"}}},
            r"^format_options\.sides: the against side has no speaker; make at least one participant 'against'$",
        ),
        ({"format_options": {"teams": {}}}, r"^format_options\.teams: unknown field"),
    ],
)
async def test_bad_input_is_one_line_naming_the_field_before_any_call(
    extra: dict[str, Any], message: str
) -> None:
    rec = Recorder()
    with pytest.raises(ConfigError, match=message):
        [e async for e in run_debate(config(2, **extra), resolve=lambda o: rec.model("x"))]
    assert rec.calls == []

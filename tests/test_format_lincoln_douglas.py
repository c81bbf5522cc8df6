"""Lincoln-Douglas: the schedule of speeches and cross-examinations, how rounds map onto it, what each
speaker is asked and sees, a whole run with the judge's verdict, and bad input."""

from __future__ import annotations

from typing import Any

import pytest

from moot.domain.config import DebateConfig
from moot.domain.state import DebateState, fold
from moot.engine import run_debate
from moot.engine.runner import InMemoryLog
from moot.errors import ConfigError
from moot.protocols import PROTOCOLS, PromptContext, TurnSpec, get_protocol
from moot.protocols.base import phase_at
from moot.protocols.lincoln_douglas import LincolnDouglas
from tests.conftest import Recorder, judge_answer, judge_model, make_config, resolver

FMT = "lincoln-douglas"


def registered() -> LincolnDouglas:
    protocol = get_protocol(FMT)
    assert isinstance(protocol, LincolnDouglas)
    return protocol


PROTOCOL = registered()

AC = ("ada", None)
NC = ("bo", None)
CX_OF_AFF = [("bo", "ada"), ("ada", "bo")]  # the negative asks, the affirmative answers
CX_OF_NEG = [("ada", "bo"), ("bo", "ada")]
CONSTRUCTIVES = [AC, *CX_OF_AFF, NC, *CX_OF_NEG]
REBUTTALS = [("ada", None), ("bo", None)]
FINAL = [("ada", None)]


def config(*, rounds: int = 2, n: int = 2, **extra: Any) -> DebateConfig:
    return make_config(n, rounds=rounds, format=FMT, **extra)


async def run(cfg: DebateConfig) -> tuple[DebateState, Recorder, list[int], InMemoryLog]:
    rec = Recorder()
    judge, judged = judge_model([judge_answer(cfg)])
    log = InMemoryLog()
    [e async for e in run_debate(cfg, log=log, resolve=resolver(rec, judge))]
    state = fold(log.events)
    assert state.status == "completed", state.error
    return state, rec, judged, log


def turns_by_round(state: DebateState) -> list[list[tuple[str, str | None]]]:
    return [[(t.participant_id, t.target) for t in r.turns] for r in state.rounds]


# --- registration, phases, schedule -----------------------------------------------------------------


def test_registered_for_exactly_two_debaters_and_the_verdict_names_the_winner() -> None:
    assert FMT in PROTOCOLS and get_protocol(FMT) is PROTOCOL
    assert (PROTOCOL.traits.min_participants, PROTOCOL.traits.max_participants) == (2, 2)
    assert PROTOCOL.traits.names_winner is True


@pytest.mark.parametrize(
    ("rounds", "names"),
    [
        (1, ["constructive-rebuttal"]),
        (2, ["constructive", "final-rebuttal"]),
        (3, ["constructive", "rebuttal", "final-rebuttal"]),
        (4, ["constructive", "rebuttal", "rebuttal", "final-rebuttal"]),
    ],
)
def test_phases_by_rounds(rounds: int, names: list[str]) -> None:
    assert [phase_at(PROTOCOL, rounds, r).name for r in range(1, rounds + 1)] == names


@pytest.mark.parametrize(
    ("rounds", "expected"),
    [
        (1, [[*CONSTRUCTIVES, *REBUTTALS, *FINAL]]),
        (2, [CONSTRUCTIVES, [*REBUTTALS, *FINAL]]),
        (3, [CONSTRUCTIVES, REBUTTALS, [*REBUTTALS, *FINAL]]),
    ],
)
async def test_one_or_two_rounds_hold_the_classic_seven_speeches_and_more_add_rebuttals(
    rounds: int, expected: list[list[tuple[str, str | None]]]
) -> None:
    state, _, judged, _ = await run(config(rounds=rounds))
    assert turns_by_round(state) == expected
    # The classic seven: five speeches and two cross-examinations (one question and answer each here).
    speeches = [t for r in expected for t in r if t[1] is None]
    questions_and_answers = [t for r in expected for t in r if t[1] is not None]
    assert len(speeches) + len(questions_and_answers) // 2 == 7 + 2 * max(0, rounds - 2)
    assert judged[0] == 1 and state.verdict is not None


def test_the_schedule_names_each_part() -> None:
    names = [p.name for p in PROTOCOL.schedule(config(rounds=2), 1)]
    assert names == [
        "affirmative constructive",
        "cross-examination question",
        "cross-examination answer",
        "negative constructive",
        "cross-examination question",
        "cross-examination answer",
    ]
    assert [p.name for p in PROTOCOL.schedule(config(rounds=2), 2)] == [
        "affirmative rebuttal",
        "negative rebuttal",
        "affirmative final rebuttal",
    ]


async def test_the_affirmative_option_swaps_the_roles_and_questions_repeat_the_exchange() -> None:
    state, _, _, _ = await run(config(rounds=2, format_options={"affirmative": "bo", "questions": 2}))
    first, second = turns_by_round(state)
    assert first == [
        ("bo", None),
        *[("ada", "bo"), ("bo", "ada")] * 2,
        ("ada", None),
        *[("bo", "ada"), ("ada", "bo")] * 2,
    ]
    assert second == [("bo", None), ("ada", None), ("bo", None)]


# --- what speakers are asked and see ----------------------------------------------------------------


async def test_each_turn_is_told_its_part_and_sees_the_exchange_so_far() -> None:
    _, rec, _, _ = await run(config(rounds=2))
    prompts = rec.calls
    assert len(prompts) == 9
    ac_system, ac_user = prompts[0]
    assert "You are Ada, the affirmative in a Lincoln-Douglas debate" in ac_system
    assert "Your opponent is Bo, the negative." in ac_system
    assert "Round 1 of 2, affirmative constructive." in ac_user
    assert "name your value and your criterion, then argue your case for the resolution" in ac_user
    _, question = prompts[1]
    assert "Cross-examine Ada: ask one short, pointed question" in question
    assert "[Round 1] Ada (affirmative):\n<<<\nada speaks in call 1.\n>>>" in question
    _, answer = prompts[2]
    assert "[Round 1] Bo → Ada (negative):\n<<<\nbo speaks in call 2.\n>>>" in answer
    assert "Bo has just asked you a question in cross-examination" in answer
    nc_system, nc_user = prompts[3]
    assert "You are Bo, the negative" in nc_system and "negate (argue against)" in nc_system
    assert "[Round 1] Ada → Bo (affirmative):" in nc_user and "attack Ada's case" in nc_user
    _, final = prompts[8]
    assert "Round 2 of 2, affirmative final rebuttal." in final and "Bring no new arguments." in final
    assert final.count("\n<<<\n") == 8  # everything said before it, each turn fenced


def test_a_prompt_built_for_a_turn_knows_which_repeat_it_is() -> None:
    cfg = config(rounds=1)
    empty = DebateState()
    rebuttal = PROTOCOL.turn_prompt(PromptContext(cfg, empty, 1), TurnSpec("ada"))
    assert "affirmative constructive" in rebuttal.user  # ada's first untargeted turn of round 1


async def test_the_judge_sees_the_whole_debate_and_gives_the_usual_verdict() -> None:
    state, _, judged, log = await run(config(rounds=2))
    types = [e.type for e in log.events]
    assert types[-4:] == ["debate_stopping", "judging_started", "verdict", "debate_completed"]
    assert "outcome" not in types and state.outcome is None
    assert state.verdict is not None and judged[0] == 1


# --- bad input --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cfg", "message"),
    [
        (
            lambda: config(n=3),
            r"^participants: the lincoln-douglas format needs exactly 2 participants, not 3$",
        ),
        (
            lambda: config(order="simultaneous"),
            r"^turn_order: the lincoln-douglas format is sequential \(an answer needs its question\)",
        ),
        (
            lambda: config(format_options={"affirmative": "zed"}),
            r"^format_options\.affirmative: no participant has the id 'zed'; use one of: ada, bo$",
        ),
        (
            lambda: config(format_options={"questions": 0}),
            r"^format_options\.questions: Input should be greater than or equal to 1$",
        ),
        (lambda: config(format_options={"value": "justice"}), r"^format_options\.value: unknown field"),
    ],
)
async def test_bad_input_is_one_line_naming_the_field_before_any_call(cfg: Any, message: str) -> None:
    rec = Recorder()
    with pytest.raises(ConfigError, match=message):
        [e async for e in run_debate(cfg(), resolve=lambda o: rec.model("x"))]
    assert rec.calls == []

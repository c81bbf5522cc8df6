"""Roundtable: the moderator's question opens each round and everyone answers it; who sees what, what the
moderator and the panellists are told, a whole run with the verdict, stopping on answers only, bad input."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel

from moot.domain.config import DebateConfig, ModelOptions
from moot.domain.state import DebateState, fold
from moot.engine import run_debate
from moot.engine.runner import InMemoryLog
from moot.errors import ConfigError
from moot.export import export
from moot.export.record import DebateRecord
from moot.protocols import PROTOCOLS, get_protocol
from moot.protocols.base import phase_at
from moot.protocols.roundtable import Roundtable
from tests.conftest import Recorder, judge_answer, judge_model, make_config

FMT = "roundtable"


def registered() -> Roundtable:
    protocol = get_protocol(FMT)
    assert isinstance(protocol, Roundtable)
    return protocol


PROTOCOL = registered()


def config(n: int = 3, *, rounds: int = 3, **extra: Any) -> DebateConfig:
    return make_config(n, rounds=rounds, format=FMT, **extra)


async def run(cfg: DebateConfig) -> tuple[DebateState, Recorder, Recorder, list[int], InMemoryLog]:
    """A run whose moderator speaks through its own model (`fake:mod`), so its prompts are kept apart."""
    panel, moderator = Recorder(), Recorder()
    judge, judged = judge_model([judge_answer(cfg)])

    def resolve(options: ModelOptions) -> Model:
        if options.model.name == "judge":
            return judge
        if options.model.name == "mod":
            return moderator.model("mod")
        return panel.model(options.model.name)

    log = InMemoryLog()
    [e async for e in run_debate(cfg, log=log, resolve=resolve)]
    state = fold(log.events)
    assert state.status == "completed", state.error
    return state, panel, moderator, judged, log


def with_moderator(**extra: Any) -> DebateConfig:
    return config(moderator={"model": "fake:mod"}, **extra)


# --- registration and phases ------------------------------------------------------------------------


def test_registered_and_names_no_winner() -> None:
    assert FMT in PROTOCOLS and get_protocol(FMT) is PROTOCOL
    assert PROTOCOL.traits.names_winner is False


@pytest.mark.parametrize(
    ("rounds", "names"),
    [(1, ["opening"]), (2, ["opening", "final"]), (4, ["opening", "discussion", "discussion", "final"])],
)
def test_one_question_per_round(rounds: int, names: list[str]) -> None:
    assert [phase_at(PROTOCOL, rounds, r).name for r in range(1, rounds + 1)] == names


# --- the schedule -----------------------------------------------------------------------------------


@pytest.mark.parametrize("order", ["sequential", "simultaneous"])
async def test_the_moderator_opens_every_round_then_everyone_answers(order: str) -> None:
    state, panel, moderator, judged, log = await run(with_moderator(order=order))
    assert [r.turns[0].participant_id for r in state.rounds] == ["moderator"] * 3
    assert all(sorted(t.participant_id for t in r.turns[1:]) == ["ada", "bo", "cy"] for r in state.rounds)
    assert len(moderator.calls) == 3 and len(panel.calls) == 9
    assert panel.max_in_flight == (3 if order == "simultaneous" else 1)
    assert judged[0] == 1 and state.verdict is not None
    types = [e.type for e in log.events if e.type != "turn_started"]
    assert types[-4:] == ["debate_stopping", "judging_started", "verdict", "debate_completed"]
    assert [r.phase for r in state.rounds] == ["opening", "discussion", "final"]


async def test_without_a_moderator_model_the_judges_model_moderates() -> None:
    cfg = config(rounds=1)
    rec = Recorder()
    rec.answer = lambda name, messages, info: judge_answer(cfg)
    log = InMemoryLog()
    [e async for e in run_debate(cfg, log=log, resolve=lambda o: rec.model(o.model.name))]
    state = fold(log.events)
    first = state.rounds[0].turns[0]
    assert first.participant_id == "moderator" and first.model == "fake:judge"
    assert first.text == "judge speaks in call 1."
    assert state.verdict is not None


# --- who sees what, and what they are told ----------------------------------------------------------


async def test_panellists_answer_the_latest_question_quoted_last() -> None:
    _, panel, _, _, _ = await run(with_moderator())
    _, ada_1 = panel.calls[0]
    assert "THE DISCUSSION SO FAR" not in ada_1
    assert ada_1.rstrip().endswith(
        "THE MODERATOR'S QUESTION (round 1 of 3):\n<<<\nmod speaks in call 1.\n>>>\n\nAnswer the moderator's "
        "question as Ada."
    )
    system, cy_2 = panel.calls[5]
    assert "You are Cy, a panellist at a roundtable" in system and "- Ada: view 0" in system
    # Earlier rounds with their question, this round's earlier answers, and this round's question last, once.
    assert "[Round 1] Moderator:\n<<<\nmod speaks in call 1.\n>>>" in cy_2
    assert "[Round 2] Bo (view 1):\n<<<\nbo speaks in call 5.\n>>>" in cy_2
    assert cy_2.count("mod speaks in call 2.") == 1
    assert cy_2.index("bo speaks in call 5.") < cy_2.index("THE MODERATOR'S QUESTION (round 2 of 3)")


async def test_simultaneous_panellists_see_the_question_but_not_each_other() -> None:
    _, panel, _, _, _ = await run(with_moderator(order="simultaneous"))
    round_two = [user for _, user in panel.calls[3:6]]
    for user in round_two:
        assert "THE MODERATOR'S QUESTION (round 2 of 3):\n<<<\nmod speaks in call 2.\n>>>" in user
        assert "[Round 2]" not in user and "[Round 1] Cy (view 2)" in user


async def test_the_moderator_opens_then_sums_up_and_asks_the_next_and_last_question() -> None:
    _, _, moderator, _, _ = await run(with_moderator())
    (system, first), (_, second), (_, third) = moderator.calls
    assert "You are the moderator of a roundtable" in system and "- Bo: view 1" in system
    assert "You take no side" in system
    assert "Open the roundtable" in first and "<<<" not in first
    assert "[Round 1] Ada (view 0):\n<<<\nada speaks in call 1.\n>>>" in second
    assert "Sum up round 1" in second and "then ask the next question" in second
    assert "Sum up round 2" in third and "then ask the last question" in third


async def test_the_export_names_the_moderator() -> None:
    _, _, _, _, log = await run(with_moderator(rounds=1))
    text = export(DebateRecord.from_events(log.events), "markdown")
    assert "Moderator" in text


# --- stopping ---------------------------------------------------------------------------------------


async def test_convergence_is_measured_on_the_answers_not_the_questions() -> None:
    # The recorder's answers ("ada speaks in call 2.") are 60% alike; the question shares no word with them.
    cfg = with_moderator(rounds=3, stopping={"assess_rounds": False, "convergence": 0.6})
    panel = Recorder()
    judge, _ = judge_model([judge_answer(cfg)])

    async def ask(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        yield "What must change first downtown?"

    question = FunctionModel(stream_function=ask, model_name="mod")

    def resolve(options: ModelOptions) -> Model:
        name = options.model.name
        return judge if name == "judge" else question if name == "mod" else panel.model(name)

    log = InMemoryLog()
    [e async for e in run_debate(cfg, log=log, resolve=resolve)]
    state = fold(log.events)
    assert state.stopped_after == 1 and state.stop_reason is not None
    assert state.stop_reason.kind == "convergence"
    assert state.rounds[0].turns[0].text == "What must change first downtown?"


# --- bad input --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [({"questions": ["Why?"]}, r"^format_options\.questions: unknown field")],
)
async def test_bad_input_is_one_line_naming_the_field_before_any_call(
    options: dict[str, Any], message: str
) -> None:
    rec = Recorder()
    with pytest.raises(ConfigError, match=message):
        [e async for e in run_debate(config(format_options=options), resolve=lambda o: rec.model("x"))]
    assert rec.calls == []


def test_more_than_ten_panellists_are_refused() -> None:
    cfg = config(3)
    many = cfg.model_copy(
        update={
            "participants": [
                p.model_copy(update={"id": f"p{i}"}) for i in range(11) for p in cfg.participants[:1]
            ]
        }
    )
    with pytest.raises(
        ConfigError, match=r"^participants: the roundtable format needs 2 to 10 participants, not 11$"
    ):
        PROTOCOL.check(many)

"""The tournament format: its bracket, what each speaker and the judge see, full runs, and bad input."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel

from moot.domain.config import DebateConfig, ModelOptions
from moot.domain.events import (
    DebateStopping,
    DecisionGiven,
    Event,
    OutcomeGiven,
    RoundCompleted,
    RoundStarted,
    TurnCompleted,
)
from moot.domain.state import DebateState, Decision, fold
from moot.domain.usage import Usage
from moot.engine.runner import InMemoryLog, run_debate
from moot.errors import ConfigError
from moot.protocols import Ask, AskSpec, Conclude, EndRound, Finish, Speak, StartRound, Stop, TurnSpec
from moot.protocols.base import planned_rounds
from moot.protocols.tournament import Match, Tournament, pairings, tournament_rounds
from tests.conftest import Recorder, make_config, prompt_text

T = Tournament()


def config(n: int = 3, **extra: Any) -> DebateConfig:
    extra.setdefault("rounds", tournament_rounds(n))
    return make_config(n, format="tournament", **extra)


def judging(prefer: list[str], confidence: int = 80) -> tuple[FunctionModel, list[tuple[str, str]]]:
    """A judge that picks the side whose proposal was written by the earlier name in `prefer`.

    The Recorder's debaters say "<model name> speaks in call <k>.", so the proposal's author is readable."""
    seen: list[tuple[str, str]] = []

    async def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        system, user = prompt_text(messages)
        seen.append((system, user))
        a = re.search(r"DEBATER A'S PROPOSAL\n<<<\n(\w+) speaks", user)
        b = re.search(r"DEBATER B'S PROPOSAL\n<<<\n(\w+) speaks", user)
        assert a and b
        winner = "A" if prefer.index(a.group(1)) < prefer.index(b.group(1)) else "B"
        args = {"winner": winner, "confidence": confidence, "reason": f"{winner} argued better"}
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, json.dumps(args))])

    return FunctionModel(reply, model_name="judge-fn"), seen


def resolve_with(recorder: Recorder, judge: Model) -> Callable[[ModelOptions], Model]:
    return lambda o: judge if o.model.name == "judge" else recorder.model(o.model.name)


async def run(cfg: DebateConfig, recorder: Recorder, judge: Model) -> tuple[list[Event], DebateState]:
    log = InMemoryLog()
    events = [e async for e in run_debate(cfg, log=log, resolve=resolve_with(recorder, judge))]
    return events, fold(log.events)


# --- the bracket --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "rounds"), [(2, 2), (3, 3), (4, 3), (5, 4), (8, 4), (9, 5), (10, 5)])
def test_rounds_are_proposals_then_ceil_log2_n_rounds_of_matches(n: int, rounds: int) -> None:
    assert tournament_rounds(n) == rounds
    assert [p.name for p in T.phases(rounds)][-2:] == (
        ["proposals", "final"] if rounds == 2 else ["semifinal", "final"]
    )


def test_phases_name_the_stages_of_the_bracket() -> None:
    assert [p.name for p in T.phases(5)] == [
        "proposals",
        "round-of-16",
        "quarterfinal",
        "semifinal",
        "final",
    ]
    assert [p.rounds for p in T.phases(5)] == ["1", "2", "3", "4", "5"]
    assert [p.name for p in T.phases(1)] == ["final"]


def test_pairings_meet_best_against_worst_and_give_the_bye_to_the_best_seed_without_one() -> None:
    assert pairings(["a", "b", "c", "d"], set()) == ([("a", "d"), ("b", "c")], None)
    assert pairings(["a", "b", "c"], set()) == ([("b", "c")], "a")
    assert pairings(["a", "b", "c"], {"a"}) == ([("a", "c")], "b")
    assert pairings(["a", "b", "c"], {"a", "b", "c"}) == ([("b", "c")], "a")


@given(st.integers(min_value=2, max_value=10), st.data())
def test_every_bracket_ends_with_one_champion_whoever_wins(n: int, data: st.DataObject) -> None:
    # Any sequence of match results: each round halves the field (rounding up), byes never repeat
    # while someone has not had one, and after ceil(log2 n) rounds one participant is left.
    field = [f"p{i}" for i in range(n)]
    had_bye: set[str] = set()
    for _ in range(tournament_rounds(n) - 1):
        pairs, bye = pairings(field, had_bye)
        assert sorted([x for p in pairs for x in p] + ([bye] if bye else [])) == sorted(field)
        if bye:
            assert bye not in had_bye or had_bye >= set(field)
            had_bye.add(bye)
        winners = [data.draw(st.sampled_from(p)) for p in pairs]
        field = sorted(winners + ([bye] if bye else []), key=lambda x: int(x[1:]))
    assert len(field) == 1


def test_the_schedule_step_by_step() -> None:
    cfg = config(3)
    state = DebateState()
    steps: list[Any] = []
    ids = {"debate_id": "d"}
    for _ in range(40):
        step = T.next_step(cfg, state)
        steps.append(step)
        match step:
            case StartRound(number=n, phase=phase):
                state.apply(RoundStarted(**ids, round=n, phase=phase))
            case Speak(round=n, turns=turns):
                for spec in turns:
                    state.apply(
                        TurnCompleted(
                            **ids,
                            round=n,
                            participant_id=spec.speaker,
                            target=spec.target,
                            model="m",
                            text=f"{spec.speaker} says",
                            usage=Usage(),
                            latency_s=0.0,
                        )
                    )
            case Ask(round=n, asks=asks):
                for ask in asks:
                    answer = {"winner": "B", "confidence": 70, "reason": "r"}
                    state.apply(
                        DecisionGiven(
                            **ids,
                            round=n,
                            kind=ask.kind,
                            by=ask.by,
                            subject=ask.subject,
                            model="j",
                            answer=answer,
                        )
                    )
            case EndRound(number=n):
                state.apply(RoundCompleted(**ids, round=n))
            case Stop(reason=reason):
                state.apply(DebateStopping(**ids, reason=reason, after_round=3))
            case Conclude():
                outcome = T.outcome(cfg, state)
                assert outcome is not None
                state.apply(OutcomeGiven(**ids, outcome=outcome))
            case Finish():
                break
    # Seeds: ada 1, bo 2, cy 3. Ada has the bye; Bo meets Cy, both speaking at once to each other.
    assert steps[:3] == [
        StartRound(1, "proposals"),
        Speak.by(1, "ada", "bo", "cy"),
        EndRound(1),
    ]
    assert steps[3:7] == [
        StartRound(2, "semifinal"),
        Speak(2, (TurnSpec("bo", "cy"), TurnSpec("cy", "bo"))),
        Ask(2, (AskSpec("match", "judge", "r2m1:bo:cy"), AskSpec("match", "judge", "r2m1:cy:bo"))),
        EndRound(2),
    ]
    # Both orders pick "B": a split at equal confidence, so the better seed (Bo) goes through.
    assert steps[7:11] == [
        StartRound(3, "final"),
        Speak(3, (TurnSpec("ada", "bo"), TurnSpec("bo", "ada"))),
        Ask(3, (AskSpec("match", "judge", "r3m1:ada:bo"), AskSpec("match", "judge", "r3m1:bo:ada"))),
        EndRound(3),
    ]
    assert isinstance(steps[11], Stop) and steps[11].reason.kind == "max_rounds"
    assert steps[12:] == [Conclude(), Finish()]
    assert state.outcome is not None and state.outcome.winner_ids == ["ada"]


def test_one_order_only_asks_once_per_match() -> None:
    cfg = config(2, format_options={"both_orders": False})
    assert T.subjects(cfg, Match("r2m1", 2, "ada", "bo")) == ["r2m1:ada:bo"]


# --- how a match is settled ---------------------------------------------------------------------------


def decided(*answers: tuple[str, dict[str, Any] | None]) -> DebateState:
    state = DebateState()
    for subject, answer in answers:
        state.decisions.append(
            Decision(round=2, kind="match", by="judge", subject=subject, model="j", answer=answer)
        )
    return state


def pick(winner: str, confidence: int = 50) -> dict[str, Any]:
    return {"winner": winner, "confidence": confidence, "reason": "because"}


MATCH = Match("r2m1", 2, "bo", "cy")


@pytest.mark.parametrize(
    ("forward", "reverse", "winner", "settled"),
    [
        (pick("A"), pick("B"), "bo", "both orders agreed"),
        (pick("B"), pick("A"), "cy", "both orders agreed"),
        (pick("A", 60), pick("A", 90), "cy", "split: the more confident decision stands"),
        (pick("A", 90), pick("A", 60), "bo", "split: the more confident decision stands"),
        (pick("B", 70), pick("B", 70), "bo", "split at equal confidence: the better seed wins"),
        (None, pick("A"), "cy", "only one of the two orders gave a valid decision"),
        (None, None, "bo", "no valid decision: the better seed advances"),
    ],
)
def test_a_match_is_settled_by_both_orders(
    forward: dict[str, Any] | None, reverse: dict[str, Any] | None, winner: str, settled: str
) -> None:
    state = decided(("r2m1:bo:cy", forward), ("r2m1:cy:bo", reverse))
    result = T.result(config(3), state, MATCH)
    assert result is not None and (result.winner, result.settled) == (winner, settled)


def test_a_match_is_undecided_until_both_decisions_are_in() -> None:
    assert T.result(config(3), decided(("r2m1:bo:cy", pick("A"))), MATCH) is None


def test_decision_text_names_the_sides() -> None:
    cfg = config(3)
    d = Decision(round=2, kind="match", by="judge", subject="r2m1:cy:bo", model="j", answer=pick("A", 75))
    assert T.decision_text(cfg, d) == "Cy beat Bo (confidence 75, Cy shown first): because"
    failed = d.model_copy(update={"answer": None, "error": "timeout"})
    assert T.decision_text(cfg, failed) == "no valid answer: timeout"


# --- full runs ----------------------------------------------------------------------------------------


async def test_a_three_way_tournament_runs_end_to_end() -> None:
    rec = Recorder()
    judge, seen = judging(["cy", "ada", "bo"])
    events, state = await run(config(3), rec, judge)

    assert state.status == "completed"
    assert [(r.number, r.phase) for r in state.rounds] == [(1, "proposals"), (2, "semifinal"), (3, "final")]
    assert {(t.participant_id, t.target) for t in state.rounds[1].turns} == {("bo", "cy"), ("cy", "bo")}
    assert {(t.participant_id, t.target) for t in state.rounds[2].turns} == {("ada", "cy"), ("cy", "ada")}
    assert sorted(d.subject or "" for d in state.decisions) == [
        "r2m1:bo:cy",
        "r2m1:cy:bo",
        "r3m1:ada:cy",
        "r3m1:cy:ada",
    ]
    assert state.outcome is not None
    assert state.outcome.winner_ids == ["cy"]
    assert state.outcome.ranking == ["cy", "ada", "bo"]
    assert state.outcome.details["wins"] == {"ada": 0, "bo": 0, "cy": 2}
    assert state.outcome.details["reached"] == {"cy": "champion", "ada": "final", "bo": "semifinal"}
    semi, final = state.outcome.details["bracket"]
    assert semi["bye"] == "ada" and semi["matches"][0]["settled"] == "both orders agreed"
    assert final["stage"] == "final" and final["matches"][0]["winner"] == "cy"
    assert state.outcome.summary == "Cy won the tournament with 2 match wins; Ada was runner-up."
    # The judge decides matches, not the debate: no verdict follows.
    assert not state.judged and not any(e.type == "verdict" for e in events)
    assert state.stop_reason is not None and state.stop_reason.kind == "max_rounds"
    # 3 proposals + 2 matches x 2 turns; 2 matches x 2 orders.
    assert len(rec.calls) == 7 and len(seen) == 4
    types = [e.type for e in events if e.durable]
    assert types.index("debate_stopping") < types.index("outcome") < types.index("debate_completed")


async def test_who_sees_what() -> None:
    rec = Recorder()
    judge, seen = judging(["bo", "cy", "ada"])
    _, state = await run(config(3), rec, judge)
    proposals, semi, final = rec.calls[:3], rec.calls[3:5], rec.calls[5:7]
    # Proposals are blind: no one's words are quoted.
    for system, user in proposals:
        assert "<<<" not in user and "speaks" not in user
        assert "debate tournament" in system
    # A match shows the two sides' proposals and nothing of the third participant.
    for _, user in semi:
        assert "ada speaks" not in user
        assert "bo speaks" in user and "cy speaks" in user
        assert "SEMIFINAL, match r2m1" in user and "Exchange 1 of 1" in user
    bo_to_cy = next(u for s, u in semi if s.startswith("You are Bo"))
    assert "you against Cy" in bo_to_cy and "CY'S PROPOSAL" in bo_to_cy
    assert bo_to_cy.index("YOUR PROPOSAL\n<<<\nbo speaks") < bo_to_cy.index("CY'S PROPOSAL\n<<<\ncy speaks")
    for _, user in final:
        assert "FINAL, match r3m1" in user and "cy speaks" not in user  # Bo won the semifinal
    # The judge sees A and B, never names, each side first once, with the exchange in order.
    _, forward = next(s for s in seen if "DEBATER A'S PROPOSAL\n<<<\nbo" in s[1])
    _, reverse = next(s for s in seen if "DEBATER A'S PROPOSAL\n<<<\ncy" in s[1])
    for user in (forward, reverse):
        assert "ada speaks" not in user
        assert user.index("[Exchange 1] Debater A:") < user.index("[Exchange 1] Debater B:")
    assert re.search(r"\[Exchange 1\] Debater A:\n<<<\nbo speaks", forward)
    assert re.search(r"\[Exchange 1\] Debater A:\n<<<\ncy speaks", reverse)
    assert all("Debater" not in s for s, _ in rec.calls)
    assert state.outcome is not None and state.outcome.winner_ids == ["bo"]


async def test_two_exchanges_per_match_answer_the_first() -> None:
    rec = Recorder()
    judge, seen = judging(["ada", "bo"])
    _, state = await run(config(2, format_options={"match_rounds": 2}), rec, judge)
    final = state.rounds[1]
    assert [(t.participant_id, t.target) for t in final.turns].count(("ada", "bo")) == 2
    first_exchange, second_exchange = rec.calls[2:4], rec.calls[4:6]
    assert all("[Exchange" not in u and "Exchange 1 of 2" in u for _, u in first_exchange)
    assert all("[Exchange 1] Ada:" in u and "Exchange 2 of 2" in u for _, u in second_exchange)
    assert all("[Exchange 2]" in u for _, u in seen)
    assert state.outcome is not None and state.outcome.winner_ids == ["ada"]


async def test_a_judge_that_never_answers_validly_leaves_the_better_seed_through() -> None:
    async def garbage(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        args = {"winner": "C", "confidence": 50, "reason": "?"}
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, json.dumps(args))])

    cfg = config(2, judge={"model": "fake:judge", "retries": 0})
    _, state = await run(cfg, Recorder(), FunctionModel(garbage, model_name="judge-fn"))
    assert state.status == "completed"
    assert all(d.answer is None and d.error for d in state.decisions)
    assert state.outcome is not None and state.outcome.winner_ids == ["ada"]
    match = state.outcome.details["bracket"][0]["matches"][0]
    assert match["settled"] == "no valid decision: the better seed advances"


async def test_a_timeout_stops_the_bracket_without_a_champion() -> None:
    judge, _ = judging(["ada", "bo", "cy", "di"])
    _, state = await run(config(4, stopping={"timeout_s": 0.001}), Recorder(delay=0.01), judge)
    assert state.status == "completed"
    assert state.stop_reason is not None and state.stop_reason.kind == "timeout"
    assert state.outcome is not None and state.outcome.winner_ids == []
    assert "no champion" in state.outcome.summary
    assert state.decisions == []


async def test_five_participants_spread_the_byes() -> None:
    judge, _ = judging(["ed", "di", "cy", "bo", "ada"])
    _, state = await run(config(5), Recorder(), judge)
    assert state.outcome is not None
    byes = [r["bye"] for r in state.outcome.details["bracket"]]
    # Round 2: Ada sits out; Bo-Ed and Cy-Di. Round 3: Ada, Di, Ed left: Di (best seed without a bye)
    # sits out while Ada meets Ed. Final: Di against Ed.
    assert byes == ["ada", "di", None]
    assert state.outcome.winner_ids == ["ed"]
    # Bo and Cy both fell in the first round without a win: the better seed ranks first.
    assert state.outcome.ranking == ["ed", "di", "ada", "bo", "cy"]
    assert len(state.rounds) == 4 and state.rounds[-1].phase == "final"


async def test_rounds_left_out_follow_the_bracket() -> None:
    data = make_config(2, format="tournament").model_dump(exclude={"rounds"})
    cfg = DebateConfig.model_validate(data)
    assert cfg.rounds == 3 and "rounds" not in cfg.model_fields_set
    T.check(cfg)
    assert planned_rounds(T, cfg) == 2
    judge, _ = judging(["bo", "ada"])
    _, state = await run(cfg, Recorder(), judge)
    assert [r.phase for r in state.rounds] == ["proposals", "final"]
    assert state.outcome is not None and state.outcome.winner_ids == ["bo"]


# --- bad input ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"judge": None}, "judge: the tournament format needs a judge to decide its matches; set judge"),
        ({"moderator": {"model": "fake:m"}}, "moderator: the tournament format has no moderator"),
        ({"format_options": {"match_rounds": 0}}, "format_options.match_rounds: Input should be greater"),
        ({"format_options": {"bracket": "double"}}, "format_options.bracket: unknown field"),
        (
            {"stopping": {"convergence": 0.5}},
            "stopping.convergence: the tournament format runs its fixed schedule to the end",
        ),
    ],
)
async def test_bad_configs_fail_before_any_call(extra: dict[str, Any], message: str) -> None:
    n = extra.pop("n", 3)
    extra.setdefault("rounds", tournament_rounds(n))
    cfg = make_config(n, format="tournament", **extra)
    rec = Recorder()
    with pytest.raises(ConfigError) as caught:
        [e async for e in run_debate(cfg, resolve=lambda o: rec.model("x"))]
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)
    assert rec.calls == []

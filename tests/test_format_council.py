"""The council format: blind answers, anonymised peer rankings, the chair's synthesis, and the aggregate."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo

from moot.domain.config import DebateConfig
from moot.domain.events import Event
from moot.domain.state import DebateState, Decision, fold
from moot.engine.runner import InMemoryLog, run_debate
from moot.errors import ConfigError
from moot.protocols import AskSpec, PromptContext, TurnSpec
from moot.protocols.base import ask_request
from moot.protocols.council import Council, labels_for, ranking_answer, shown_order
from moot.protocols.voting import aggregate_rankings
from tests.conftest import Recorder, make_config, prompt_text, resolver

C = Council()


def config(n: int = 3, **extra: Any) -> DebateConfig:
    extra.setdefault("rounds", 3)
    extra.setdefault("moderator", {"model": "fake:chair"})
    return make_config(n, format="council", **extra)


Answerer = Callable[[str, list[ModelMessage], AgentInfo], dict[str, Any]]


def ranks_by(prefer: list[str]) -> Answerer:
    """A ranker that orders the responses it sees by who wrote them (read from the Recorder's words)."""

    def answer(name: str, messages: list[ModelMessage], info: AgentInfo) -> dict[str, Any]:
        _, user = prompt_text(messages)
        authors = dict(re.findall(r"Response ([A-Z]):\n<<<\n(\w+) speaks", user))
        ranking = sorted(authors, key=lambda label: prefer.index(authors[label]))
        return {"ranking": ranking, "reasons": f"{name} prefers {ranking[0]}"}

    return answer


async def run(cfg: DebateConfig, rec: Recorder) -> tuple[list[Event], DebateState]:
    log = InMemoryLog()
    # No judge model is given: the council must never call one.
    events = [e async for e in run_debate(cfg, log=log, resolve=resolver(rec))]
    return events, fold(log.events)


# --- the schedule -------------------------------------------------------------------------------------


def test_three_fixed_phases() -> None:
    assert [(p.name, p.rounds) for p in C.phases(3)] == [
        ("answers", "1"),
        ("rankings", "2"),
        ("synthesis", "3"),
    ]
    assert not C.traits.names_winner


async def test_a_full_council_answers_ranks_and_synthesises() -> None:
    rec = Recorder(answer=ranks_by(["cy", "ada", "bo"]))
    events, state = await run(config(3), rec)

    assert state.status == "completed"
    assert [(r.number, r.phase) for r in state.rounds] == [(1, "answers"), (2, "rankings"), (3, "synthesis")]
    assert sorted(t.participant_id for t in state.rounds[0].turns) == ["ada", "bo", "cy"]
    assert state.rounds[1].turns == []
    assert sorted((d.kind, d.by) for d in state.decisions) == [
        ("ranking", "ada"),
        ("ranking", "bo"),
        ("ranking", "cy"),
    ]
    assert [t.participant_id for t in state.rounds[2].turns] == ["chair"]
    # Stage 1 answers are taken at once; rankings too.
    starts = [e for e in events if e.type == "turn_started"]
    assert [getattr(e, "together", 0) for e in starts] == [3, 3, 3, 1]

    outcome = state.outcome
    assert outcome is not None
    assert outcome.ranking == ["cy", "ada", "bo"] and outcome.winner_ids == []
    assert outcome.details["mean_rank"] == {"ada": 1.5, "bo": 2.0, "cy": 1.0}
    assert outcome.details["positions"] == {"ada": [1, 1], "bo": [0, 2], "cy": [2, 0]}
    assert outcome.details["rankings"] == 3 and outcome.details["invalid_rankings"] == []
    assert outcome.summary == (
        "Peer ranking by mean rank: Cy (1.00) > Ada (1.50) > Bo (2.00), from 3 rankings. "
        "The chair's synthesis is the council's answer."
    )
    # No verdict: the chair's synthesis is the result.
    assert not state.judged and state.stop_reason is not None and state.stop_reason.kind == "max_rounds"
    # 3 answers + 1 synthesis streamed, 3 rankings asked.
    assert len(rec.calls) == 4 and len(rec.asks) == 3


async def test_who_sees_what() -> None:
    rec = Recorder(answer=ranks_by(["ada", "bo", "cy", "di"]))
    cfg = config(4, seed=7)
    _, state = await run(cfg, rec)
    answers, chair = rec.calls[:4], rec.calls[4]
    # Stage 1 is blind: nothing anyone else wrote, no other member named.
    for system, user in answers:
        assert "<<<" not in user and "speaks" not in user
        assert not any(name in system + user for name in ("Ada", "Bo", "Cy", "Di"))
    # A ranker sees the three others' answers, in its own shuffled order, as letters: never its own, never a name.
    assert len(rec.asks) == 4
    for system, user in rec.asks:
        shown = re.findall(r"Response ([A-Z]):\n<<<\n(\w+) speaks", user)
        assert [label for label, _ in shown] == ["A", "B", "C"]
        authors = [author for _, author in shown]
        ranker = next(pid for pid in ("ada", "bo", "cy", "di") if pid not in authors)
        assert authors == shown_order(cfg, ranker)
        assert not any(name in system + user for name in ("Ada", "Bo", "Cy", "Di"))
    # The chair sees every answer, best ranked first, with names and mean ranks.
    _, chair_user = chair
    assert (
        chair_user.index("Ada (mean rank 1.00)")
        < chair_user.index("Bo (mean rank")
        < chair_user.index("Di (")
    )
    assert all(f"{pid} speaks" in chair_user for pid in ("ada", "bo", "cy", "di"))
    assert state.outcome is not None and state.outcome.ranking == ["ada", "bo", "cy", "di"]
    assert state.outcome.details["shown"]["ada"] == dict(zip("ABC", shown_order(cfg, "ada"), strict=True))


def test_a_ranking_prompt_fences_the_answers_and_names_the_letters() -> None:
    cfg = config(3)
    state = DebateState()
    request = ask_request(C, PromptContext(cfg, state, 2), AskSpec("ranking", "bo"))
    assert 'Answer with "ranking": the letters of all 2 responses' in request.user
    assert "between <<< and >>>" in request.system
    assert request.answer_type.model_json_schema()["properties"]["ranking"]["items"]["enum"] == ["A", "B"]


async def test_a_ranking_that_is_not_a_permutation_is_invalid_and_left_out() -> None:
    def answer(name: str, messages: list[ModelMessage], info: AgentInfo) -> dict[str, Any]:
        if name == "bo":
            return {"ranking": ["A", "A"], "reasons": "both"}
        return ranks_by(["cy", "ada", "bo"])(name, messages, info)

    cfg = config(3, judge={"model": "fake:judge", "retries": 1})
    _, state = await run(cfg, Recorder(answer=answer))
    bo = state.decided("ranking", "bo")[0]
    assert bo.answer is None and bo.error is not None and "no valid ranking" in bo.error
    assert state.outcome is not None
    assert state.outcome.details["invalid_rankings"] == ["bo"]
    assert state.outcome.details["rankings"] == 2
    # Ada ranked Cy over Bo, Cy ranked Ada over Bo.
    assert state.outcome.details["mean_rank"] == {"ada": 1.0, "bo": 2.0, "cy": 1.0}
    assert state.outcome.ranking == ["ada", "cy", "bo"]  # a tie at 1.0, 1 first place each: seed order
    assert "from 2 rankings" in state.outcome.summary
    assert "Ada (1.00) = Cy (1.00) > Bo (2.00)" in state.outcome.summary  # a tie is written as a tie


def test_rankings_accept_response_labels_in_any_case() -> None:
    answer = ranking_answer(("A", "B", "C"))
    parsed = answer.model_validate({"ranking": ["Response c", "a.", "B"], "reasons": "r"})
    assert parsed.ranking == ["C", "A", "B"]
    for bad in (["A", "B"], ["A", "B", "D"], ["A", "A", "B"]):
        with pytest.raises(ValueError, match="exactly once"):
            answer.model_validate({"ranking": bad, "reasons": "r"})


def test_decision_text_shows_the_ranking_by_name() -> None:
    cfg = config(3, seed=1)
    order = shown_order(cfg, "ada")
    d = Decision(
        round=2,
        kind="ranking",
        by="ada",
        subject=None,
        model="m",
        answer={"ranking": ["B", "A"], "reasons": "r"},
    )
    names = {"bo": "Bo", "cy": "Cy"}
    assert C.decision_text(cfg, d) == f"{names[order[1]]} > {names[order[0]]}: r"
    assert (
        C.decision_text(cfg, d.model_copy(update={"answer": None, "error": "bad"})) == "no valid answer: bad"
    )


def test_turn_and_chair_prompts() -> None:
    cfg = config(3, context="Some facts.")
    p = C.turn_prompt(PromptContext(cfg, DebateState(), 1), TurnSpec("ada"))
    assert 'QUESTION: "Should cities ban cars?"' in p.user and "Some facts." in p.system
    assert "Do not sign it" in p.system
    chair = C.turn_prompt(PromptContext(cfg, DebateState(), 3), TurnSpec("chair"))
    assert "chair of a council" in chair.system and "no valid peer ranking came" in chair.user


# --- aggregation and shuffling, as properties -----------------------------------------------------------

IDS = ["ada", "bo", "cy", "di", "ed"]


@st.composite
def rankings(draw: st.DrawFn) -> tuple[list[str], list[list[str]]]:
    """Participants, and rankings in which each ranker orders all the others."""
    ids = IDS[: draw(st.integers(min_value=3, max_value=5))]
    rankers = draw(st.lists(st.sampled_from(ids), unique=True))
    return ids, [draw(st.permutations([p for p in ids if p != r])) for r in rankers]


@given(rankings())
def test_the_aggregate_orders_everyone_once_by_mean_rank(case: tuple[list[str], list[list[str]]]) -> None:
    ids, ranked = case
    agg = aggregate_rankings(ids, ranked)
    assert sorted(agg.order) == sorted(ids)
    assert agg.rankings == len(ranked)
    means = [agg.mean_rank[p] for p in agg.order]
    known = [m for m in means if m is not None]
    assert known == sorted(known)  # best (lowest) first
    assert means[len(known) :] == [None] * (len(means) - len(known))  # the unranked come last
    assert all(1 <= m <= len(ids) - 1 for m in known)
    for pid in ids:
        assert sum(agg.positions[pid]) == sum(pid in r for r in ranked)


@given(rankings(), st.randoms())
def test_the_aggregate_does_not_depend_on_the_order_rankings_arrive_in(
    case: tuple[list[str], list[list[str]]], rnd: Any
) -> None:
    ids, ranked = case
    shuffled = list(ranked)
    rnd.shuffle(shuffled)
    assert aggregate_rankings(ids, shuffled) == aggregate_rankings(ids, ranked)


@given(st.permutations(IDS), st.integers(min_value=1, max_value=5))
def test_unanimous_rankings_give_that_order(order: list[str], count: int) -> None:
    assert aggregate_rankings(IDS, [order] * count).order == tuple(order)


def test_ties_go_to_more_first_places_then_to_seed_order() -> None:
    # a: 1st and 3rd (mean 2); b: 2nd twice (mean 2); a has more first places.
    agg = aggregate_rankings(["b", "a", "c"], [["a", "b", "c"], ["c", "b", "a"]])
    assert agg.mean_rank == {"a": 2.0, "b": 2.0, "c": 2.0}
    assert agg.order == ("a", "c", "b")
    assert aggregate_rankings(["x", "y"], [["x"], ["y"]]).order == ("x", "y")


@given(st.integers(min_value=3, max_value=10), st.integers() | st.none(), st.data())
def test_each_ranker_sees_a_seeded_permutation_of_the_others(n: int, seed: int | None, data: Any) -> None:
    cfg = make_config(n, rounds=3, seed=seed, format="council")
    ranker = data.draw(st.sampled_from([p.id for p in cfg.participants]))
    order = shown_order(cfg, ranker)
    assert sorted(order) == sorted(p.id for p in cfg.participants if p.id != ranker)
    assert shown_order(cfg.model_copy(), ranker) == order  # the same config gives the same order
    assert labels_for(len(order)) == list("ABCDEFGHI"[: n - 1])


def test_the_shuffle_differs_between_rankers_and_seeds() -> None:
    orders = {
        tuple(shown_order(make_config(6, rounds=3, seed=seed, format="council"), "ada")) for seed in range(20)
    }
    assert len(orders) > 5
    cfg = make_config(6, rounds=3, seed=3, format="council")
    assert len({tuple(sorted(shown_order(cfg, p.id))) for p in cfg.participants}) == 6


# --- bad input ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "extra", "message"),
    [
        (2, {}, "participants: the council format needs 3 to 10 participants, not 2"),
        (3, {"format_options": {"chair": "x"}}, "format_options.chair: unknown field"),
        (3, {"stopping": {"assess_rounds": True}}, "stopping.assess_rounds: the council format runs"),
    ],
)
async def test_bad_configs_fail_before_any_call(n: int, extra: dict[str, Any], message: str) -> None:
    cfg = config(n, **extra)
    rec = Recorder()
    with pytest.raises(ConfigError) as caught:
        [e async for e in run_debate(cfg, resolve=resolver(rec))]
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)
    assert rec.calls == []

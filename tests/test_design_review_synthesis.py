"""design-review's termination by quality and its synthesis methods: judge, voting, merge.

Each test runs the real engine: the participants are the Recorder's scripted models (their votes given by
`Recorder.answer`), the judge a FunctionModel that answers by what it is asked."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from pydantic import ValidationError
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from moot.domain.config import DebateConfig
from moot.domain.events import Event
from moot.domain.state import DebateState, fold
from moot.engine.runner import InMemoryLog, run_debate
from moot.errors import ConfigError
from moot.export import export
from moot.export.record import DebateRecord
from moot.protocols import AskSpec, PromptContext, get_protocol
from moot.protocols.base import ask_request, assesses_rounds
from moot.protocols.design_review import MERGE, SYNTHESIS, TIEBREAK, VOTE, merge_model
from moot.protocols.stopping import stop_reason
from tests.conftest import Recorder, make_config, prompt_text, resolver

PROTOCOL = get_protocol("design-review")

Answer = dict[str, Any] | str


def review(n: int = 3, rounds: int = 3, **extra: Any) -> DebateConfig:
    return make_config(n, rounds=rounds, format="design-review", **extra)


def voting(n: int = 3, **extra: Any) -> DebateConfig:
    return review(n, format_options={"synthesis": "voting"}, **extra)


def assessment(config: DebateConfig, quality: float) -> dict[str, Any]:
    return {
        "quality": quality,
        "should_continue": True,
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
            for p in config.participants
        },
        "reasoning": "The proposals moved on.",
        "recommendations": "",
    }


def synthesis(config: DebateConfig) -> dict[str, Any]:
    return {
        "description": "Token bucket per client in Redis, with a local cache in front.",
        "key_components": ["token bucket"],
        "trade_offs": ["Redis is a dependency"],
        "recommendations": ["atomic Lua scripts"],
        "implementation": "def allow(client):\n    return bucket(client).take(1)",
        "kept_ideas": {p.id: [] for p in config.participants},
        "complexity": "medium",
        "confidence": 80,
    }


MERGED = {
    "description": "A Redis token bucket behind a local cache, with a circuit breaker.",
    "parts": [
        {"text": "Token buckets per client in a Redis cluster.", "sources": ["Ada", "bo"]},
        {"text": "A local cache absorbs bursts.", "sources": ["Cy"]},
        {"text": "A circuit breaker fails open.", "sources": []},
    ],
    "trade_offs": ["Redis is a dependency"],
    "recommendations": ["Load-test the breaker"],
    "implementation": "if redis.down: allow() else bucket.take()",
    "complexity": "high",
    "confidence": 74,
}


class Judge:
    """A judge that answers each question from its own script, and counts what it was asked."""

    def __init__(
        self,
        *,
        qualities: list[float] | None = None,
        tiebreak: list[Answer] | None = None,
        merge: list[Answer] | None = None,
    ) -> None:
        self.qualities = qualities or [5]
        self.tiebreak = tiebreak or []
        self.merge = merge or [MERGED]
        self.asked: dict[str, list[str]] = {"assess": [], "tiebreak": [], "merge": [], "synthesis": []}
        self.schemas: list[dict[str, Any]] = []

    def model(self, config: DebateConfig) -> FunctionModel:
        async def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            _, user = prompt_text(messages)
            self.schemas.append(info.output_tools[0].parameters_json_schema)
            answer: Answer
            if "Assess round" in user:
                kind = "assess"
                answer = assessment(
                    config, self.qualities[min(len(self.asked[kind]), len(self.qualities) - 1)]
                )
            elif "THE TIED PROPOSALS" in user:
                kind = "tiebreak"
                answer = self.tiebreak[min(len(self.asked[kind]), len(self.tiebreak) - 1)]
            elif "merge the final proposals" in user:
                kind = "merge"
                answer = self.merge[min(len(self.asked[kind]), len(self.merge) - 1)]
            else:
                kind, answer = "synthesis", synthesis(config)
            self.asked[kind].append(user)
            args = answer if isinstance(answer, str) else json.dumps(answer)
            return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])

        return FunctionModel(reply, model_name="judge-fn")


def voters(votes: Mapping[str, list[str]]) -> Recorder:
    """Participants that vote as scripted: each model's votes in turn (the last repeats), with a reason."""
    given: dict[str, int] = {}

    def answer(name: str, messages: list[ModelMessage], info: AgentInfo) -> dict[str, Any]:
        said = votes[name][min(given.get(name, 0), len(votes[name]) - 1)]
        given[name] = given.get(name, 0) + 1
        return {"proposal": said, "reason": f"{name} finds {said}'s plan the soundest."}

    return Recorder(answer=answer)


async def hold(
    config: DebateConfig, rec: Recorder, judge: Judge | None = None
) -> tuple[list[Event], DebateState, Judge]:
    judge = judge or Judge()
    log = InMemoryLog()
    events = [e async for e in run_debate(config, log=log, resolve=resolver(rec, judge.model(config)))]
    return events, fold(log.events), judge


def markdown(events: list[Event]) -> str:
    return export(DebateRecord.from_events([e for e in events if e.durable]), "markdown")


def lines(state: DebateState, title: str) -> list[str]:
    assert state.outcome is not None
    return next(s.lines for s in state.outcome.sections or [] if s.title.startswith(title))


# --- stopping.quality_at_least ----------------------------------------------------------------------


async def test_the_rounds_stop_at_the_first_assessed_round_that_reaches_the_quality() -> None:
    config = review(3, rounds=7, stopping={"quality_at_least": 8})
    _, state, judge = await hold(config, Recorder(), Judge(qualities=[6, 7.5, 8, 9]))

    # Rounds 1, 3 and 5 hold everyone's full proposal and are assessed; the critiques of 2 and 4 are not.
    assert [a.round for a in state.assessments] == [1, 3, 5]
    assert [r.phase for r in state.rounds] == ["proposal", "critique", "refinement", "critique", "refinement"]
    assert state.stop_reason is not None and state.stop_reason.kind == "quality"
    assert state.stop_reason.detail == (
        "the judge rated round 5's quality 8/10, at least the 8/10 asked for (stopping.quality_at_least)"
    )
    assert len(judge.asked["synthesis"]) == 1 and state.outcome is not None


async def test_a_quality_never_reached_runs_every_round() -> None:
    config = review(2, rounds=3, stopping={"quality_at_least": 9.5})
    _, state, judge = await hold(config, Recorder(), Judge(qualities=[9]))
    assert state.stopped_after == 3 and state.stop_reason is not None
    assert state.stop_reason.kind == "max_rounds"
    assert len(judge.asked["assess"]) == 2


def test_the_quality_rule_reads_only_the_latest_round() -> None:
    from moot.domain.assessment import RoundAssessment
    from moot.domain.state import AssessedRound, Round

    config = review(2, rounds=5, stopping={"quality_at_least": 7})
    state = DebateState(rounds=[Round(number=n, phase="x", completed=True) for n in (1, 2)])
    good = RoundAssessment(should_continue=True, quality=9)
    state.assessments.append(AssessedRound(round=1, model="j", assessment=good))
    # Round 2 (a critique) was not assessed: round 1's quality does not stop the debate after it.
    assert stop_reason(config, state) is None
    state.rounds.append(Round(number=3, phase="x", completed=True))
    state.assessments.append(
        AssessedRound(round=3, model="j", assessment=good.model_copy(update={"quality": 6.9}))
    )
    assert stop_reason(config, state) is None
    state.assessments[-1] = AssessedRound(
        round=3, model="j", assessment=good.model_copy(update={"quality": 7})
    )
    reason = stop_reason(config, state)
    assert reason is not None and reason.kind == "quality"


def test_the_quality_threshold_is_refused_where_no_judge_scores_the_rounds() -> None:
    with pytest.raises(ValueError, match=r"stopping\.quality_at_least needs stopping\.assess_rounds"):
        review(2, stopping={"quality_at_least": 7, "assess_rounds": False})
    plain = make_config(2, format="structured-rounds", stopping={"quality_at_least": 7})
    with pytest.raises(
        ConfigError,
        match=r"^stopping.quality_at_least: needs stopping.assess_rounds: true \(the structured-rounds",
    ):
        get_protocol("structured-rounds").check(plain)
    get_protocol("structured-rounds").check(
        make_config(2, format="structured-rounds", stopping={"quality_at_least": 7, "assess_rounds": True})
    )
    with pytest.raises(ConfigError, match=r"^stopping.quality_at_least: needs a judge to score"):
        PROTOCOL.check(voting(2, judge=None, stopping={"quality_at_least": 7}))
    # design-review assesses its rounds of full proposals as soon as a threshold asks for their quality.
    assert assesses_rounds(PROTOCOL, review(2, stopping={"quality_at_least": 7}))
    assert not assesses_rounds(PROTOCOL, review(2, stopping={}))


# --- synthesis: voting ------------------------------------------------------------------------------


async def test_the_most_voted_proposal_is_the_solution_quoted_in_full() -> None:
    config = voting(3)
    rec = voters({"ada": ["Bo"], "bo": ["Cy"], "cy": ["bo's proposal"]})
    _, state, judge = await hold(config, rec)

    assert state.status == "completed"
    assert [d.by for d in state.decided(VOTE)] and not state.decided(TIEBREAK)
    assert judge.asked == {"assess": [], "tiebreak": [], "merge": [], "synthesis": []}  # no judge call at all
    bo_final = next(t.text for t in state.rounds[2].turns if t.participant_id == "bo")
    outcome = state.outcome
    assert outcome is not None and outcome.winner_ids == ["bo"]
    assert outcome.headline == "Voted solution: Bo's proposal, 2 of 3 votes"
    assert outcome.summary == "Bo's proposal won the vote with 2 of 3 votes."
    solution = (outcome.sections or [])[0]
    assert solution.title == "The solution: Bo's refined proposal (round 3)" and solution.text == bo_final
    assert lines(state, "The tally") == [
        "Bo's proposal: 2 votes",
        "Cy's proposal: 1 vote",
        "Ada's proposal: 0 votes",
    ]
    assert lines(state, "The votes") == [
        "Ada voted for Bo's proposal: ada finds Bo's plan the soundest.",
        "Bo voted for Cy's proposal: bo finds Cy's plan the soundest.",
        "Cy voted for Bo's proposal: cy finds bo's proposal's plan the soundest.",
    ]
    assert outcome.details["tally"] == {"ada": 0, "bo": 2, "cy": 1}
    assert outcome.details["votes"] == {"ada": "bo", "bo": "cy", "cy": "bo"}
    assert outcome.details["implementation"] == "" and outcome.details["tie_break"] is None
    # Each voter read the others' final proposals, never its own, and was told whom it may name.
    for system, user in rec.asks:
        voter = next(p for p in config.participants if f"You are {p.name}," in system)
        own = next(t.text for t in state.rounds[2].turns if t.participant_id == voter.id)
        assert own not in user and "NOW: VOTE" in system
        others = [p.name for p in config.participants if p is not voter]
        assert f'("{others[0]}" or "{others[1]}")' in user
    assert [PROTOCOL.decision_text(config, d) for d in state.decided(VOTE, "ada")] == [
        "for Bo's proposal: ada finds Bo's plan the soundest."
    ]


async def test_debaters_are_told_the_result_is_a_vote() -> None:
    rec = voters({"ada": ["Bo"], "bo": ["Ada"]})
    await hold(voting(2), rec, Judge(tiebreak=[{"proposal": "Ada", "reason": "Simpler."}]))
    system = rec.calls[0][0]
    assert "each expert votes for the best final proposal other than its own" in system
    assert "a judge synthesises" not in system


async def test_a_tie_is_explained_and_broken_by_the_judge_among_the_tied_only() -> None:
    config = voting(4)
    rec = voters({"ada": ["Bo"], "bo": ["Ada"], "cy": ["Ada"], "di": ["Bo"]})
    judge = Judge(
        tiebreak=[{"proposal": "Cy", "reason": "Not tied."}, {"proposal": "Bo", "reason": "It scales."}]
    )
    _, state, judge = await hold(config, rec, judge)

    # Only Ada's and Bo's proposals are put to the judge; its choice of Cy (not tied) was refused and retried.
    [first, second] = judge.asked["tiebreak"]
    assert "Ada's and Bo's proposals tied with 2 votes each." in first
    finals = {t.participant_id: t.text for t in state.rounds[2].turns}
    assert finals["ada"] in first and finals["bo"] in first
    assert finals["cy"] not in first and finals["di"] not in first
    assert "Your previous tiebreak was rejected" in second and "'Cy' names none of the proposals" in second
    outcome = state.outcome
    assert outcome is not None and outcome.winner_ids == ["bo"]
    assert outcome.headline == "Voted solution: Bo's proposal, tied at 2 votes and chosen by the judge"
    assert outcome.summary == (
        "Ada's and Bo's proposals tied with 2 votes each; the judge broke the tie for Bo's: It scales."
    )
    assert lines(state, "The tie") == [
        "Ada's and Bo's proposals tied with 2 votes each.",
        "The judge broke the tie for Bo's: It scales.",
    ]
    assert outcome.details["tied"] == ["ada", "bo"] and outcome.details["tie_break"] == "judge"
    [tiebreak] = state.decided(TIEBREAK)
    assert PROTOCOL.decision_text(config, tiebreak) == "breaks the tie for Bo's proposal: It scales."


async def test_with_two_experts_every_vote_ties_and_the_judge_decides() -> None:
    rec = voters({"ada": ["Bo"], "bo": ["Ada"]})
    _, state, judge = await hold(voting(2), rec, Judge(tiebreak=[{"proposal": "Ada", "reason": "Simpler."}]))
    assert len(judge.asked["tiebreak"]) == 1
    assert state.outcome is not None and state.outcome.winner_ids == ["ada"]
    assert state.outcome.summary.startswith("Ada's and Bo's proposals tied with 1 vote each;")


async def test_a_tie_without_a_judge_goes_to_the_first_in_the_config_and_says_so() -> None:
    config = voting(2, judge=None)
    rec = voters({"ada": ["Bo"], "bo": ["Ada"]})
    _, state, _ = await hold(config, rec)
    assert state.status == "completed" and state.verdict is None
    outcome = state.outcome
    assert outcome is not None and outcome.winner_ids == ["ada"]
    assert outcome.headline == "Voted solution: Ada's proposal, tied at 1 vote and first in the config"
    assert outcome.summary == (
        "Ada's and Bo's proposals tied with 1 vote each; with no judge to break it, Ada's wins: its author is "
        "listed first in the config."
    )
    assert outcome.details["tie_break"] == "config_order"


async def test_a_judge_that_never_breaks_the_tie_leaves_it_to_the_config_order() -> None:
    config = voting(2, judge={"model": "fake:judge", "retries": 0})
    rec = voters({"ada": ["Bo"], "bo": ["Ada"]})
    _, state, _ = await hold(config, rec, Judge(tiebreak=[{"proposal": "Nobody", "reason": "?"}]))
    assert state.outcome is not None and state.outcome.winner_ids == ["ada"]
    assert (
        "the judge gave no valid choice (the judge gave no valid tiebreak in 1 try" in state.outcome.summary
    )
    assert state.outcome.summary.endswith("so Ada's wins: its author is listed first in the config.")


async def test_a_vote_for_ones_own_proposal_is_refused_and_asked_again() -> None:
    config = voting(3)
    rec = voters({"ada": ["Ada", "Cy"], "bo": ["Cy"], "cy": ["Bo"]})
    _, state, _ = await hold(config, rec)
    retried = [user for system, user in rec.asks if "You are Ada," in system]
    assert len(retried) == 2
    assert "Your previous vote was rejected" in retried[1]
    assert "you may not vote for your own proposal" in retried[1]
    [vote] = state.decided(VOTE, "ada")
    assert vote.answer == {"proposal": "Cy", "reason": "ada finds Cy's plan the soundest."}
    assert state.outcome is not None and state.outcome.winner_ids == ["cy"]


async def test_a_vote_that_never_validates_counts_as_none_and_is_said() -> None:
    config = voting(3, judge={"model": "fake:judge", "retries": 1})
    rec = voters({"ada": ["Cy"], "bo": ["Cy"], "cy": ["Cy"]})
    _, state, _ = await hold(config, rec)
    [failed] = state.decided(VOTE, "cy")
    assert failed.answer is None and failed.error is not None
    outcome = state.outcome
    assert outcome is not None and outcome.winner_ids == ["cy"]
    assert outcome.headline == "Voted solution: Cy's proposal, 2 of 2 votes"
    assert (
        outcome.summary
        == "Cy's proposal won the vote with 2 of 2 votes. Cy gave no valid vote, counted as none."
    )
    assert lines(state, "The tally (2 valid votes)")[0] == "Cy's proposal: 2 votes"
    assert lines(state, "The votes")[2].startswith("Cy: no vote counted: Cy gave no valid vote in 2 tries;")
    assert outcome.details["votes"]["cy"] is None and "cy" in outcome.details["invalid_votes"]


def test_voting_needs_no_judge_but_the_other_methods_do() -> None:
    PROTOCOL.check(voting(2, judge=None))
    with pytest.raises(ConfigError, match=r"^judge: the design-review format needs a judge to merge"):
        PROTOCOL.check(review(2, judge=None, format_options={"synthesis": "merge"}))
    with pytest.raises(ConfigError, match=r"^judge: the design-review format needs a judge to synthesise"):
        PROTOCOL.check(review(2, judge=None))
    seated = voting(2, judge=None).model_dump(mode="json", exclude_defaults=True)
    seated["participants"][1]["model"] = "human"
    with pytest.raises(
        ConfigError, match=r"^participants\[1\].model: synthesis: voting asks each participant"
    ):
        PROTOCOL.check(DebateConfig.model_validate(seated))


def test_the_judge_is_described_by_what_each_method_asks_of_it() -> None:
    assert PROTOCOL.judge_asks(review(2)) == "writes the synthesis of the refined proposals"
    assert PROTOCOL.judge_asks(voting(2)) == "breaks a tie between the most voted proposals"
    merged = PROTOCOL.judge_asks(review(2, format_options={"synthesis": "merge"}))
    assert merged is not None and merged.startswith("merges the refined proposals into one solution")


# --- synthesis: merge -------------------------------------------------------------------------------


async def test_the_merge_credits_each_part_to_its_authors_by_name() -> None:
    config = review(3, format_options={"synthesis": "merge"})
    _, state, judge = await hold(config, Recorder())

    assert len(judge.asked["merge"]) == 1 and not judge.asked["synthesis"]
    [decision] = state.decided(MERGE, by="judge")
    assert decision.answer is not None
    assert [p["sources"] for p in decision.answer["parts"]] == [["Ada", "Bo"], ["Cy"], []]
    outcome = state.outcome
    assert outcome is not None and outcome.winner_ids == []
    assert outcome.headline == "The judge's merged design, confidence 74/100, complexity high"
    assert outcome.details["complexity"] == "high"
    assert outcome.summary == MERGED["description"]
    assert lines(state, "The merged solution") == [
        "Part 1: Token buckets per client in a Redis cluster. (from Ada and Bo)",
        "Part 2: A local cache absorbs bursts. (from Cy)",
        "Part 3: A circuit breaker fails open. (the judge's own, from no proposal)",
    ]
    assert lines(state, "What each proposal gave") == ["Ada: part 1", "Bo: part 1", "Cy: part 2"]
    assert outcome.details["parts"][0] == {
        "text": "Token buckets per client in a Redis cluster.",
        "from": ["ada", "bo"],
    }
    assert outcome.details["implementation"] == "if redis.down: allow() else bucket.take()"
    assert all("redis.down" not in line for s in outcome.sections or [] for line in s.lines)
    assert PROTOCOL.decision_text(config, decision).startswith(
        "3 parts; confidence 74/100; trade-offs: Redis"
    )
    # The judge read every final proposal, and the schema names the experts a part may come from.
    for t in state.rounds[2].turns:
        assert f"<<<\n{t.text}\n>>>" in judge.asked["merge"][0]
    part = judge.schemas[-1]["$defs"]["Part"]["properties"]["sources"]
    assert part["items"]["enum"] == ["Ada", "Bo", "Cy"]


async def test_a_part_credited_to_a_stranger_is_refused_and_asked_again() -> None:
    config = review(3, format_options={"synthesis": "merge"})
    wrong = {**MERGED, "parts": [{"text": "Buckets.", "sources": ["Zed"]}]}
    _, state, judge = await hold(config, Recorder(), Judge(merge=[wrong, MERGED]))
    assert len(judge.asked["merge"]) == 2
    assert "'Zed' is none of the experts" in judge.asked["merge"][1]
    assert state.outcome is not None and state.outcome.details["parts"][2]["from"] == []


def test_the_merge_schema_is_bounded_for_a_grammar_constrained_model() -> None:
    schema = merge_model(review(3)).model_json_schema()
    props = schema["properties"]
    assert list(props) == [
        "description",
        "parts",
        "trade_offs",
        "recommendations",
        "implementation",
        "complexity",
        "confidence",
    ]
    assert props["parts"]["maxItems"] == 5 and props["implementation"]["maxLength"] == 800
    assert schema["$defs"]["Part"]["properties"]["text"]["maxLength"] == 160


# --- the implementation sketch ----------------------------------------------------------------------


async def test_the_judges_synthesis_carries_an_implementation_sketch_in_its_details_only() -> None:
    config = review(2)
    _, state, judge = await hold(config, Recorder())
    assert state.outcome is not None
    assert state.outcome.details["implementation"] == "def allow(client):\n    return bucket(client).take(1)"
    assert all("bucket(client)" not in line for s in state.outcome.sections or [] for line in s.lines)
    assert '"implementation" (an implementation sketch: code or pseudo-code' in judge.asked["synthesis"][0]
    request = ask_request(PROTOCOL, PromptContext(config, state, 3), AskSpec(SYNTHESIS, "judge"))
    assert request.answer_type.model_json_schema()["properties"]["implementation"]["maxLength"] == 800


# --- the implementation complexity ("Implementation Complexity: Medium") -------------------------------


async def test_the_synthesis_names_its_implementation_complexity_in_the_headline() -> None:
    config = review(2)
    _, state, judge = await hold(config, Recorder())
    assert state.outcome is not None
    assert state.outcome.headline == "The judge's synthesised design, confidence 80/100, complexity medium"
    assert state.outcome.details["complexity"] == "medium"
    assert (
        '"complexity" ("low", "medium" or "high": how hard the solution is to build and run)'
        in (judge.asked["synthesis"][0])
    )
    request = ask_request(PROTOCOL, PromptContext(config, state, 3), AskSpec(SYNTHESIS, "judge"))
    complexity = request.answer_type.model_json_schema()["properties"]["complexity"]
    assert complexity["enum"] == ["low", "medium", "high"]
    assert complexity["description"] == "How hard the solution is to build and run: low, medium or high"
    # A word outside the three is refused, and asked again like any invalid structured answer.
    with pytest.raises(ValidationError, match="complexity"):
        request.answer_type.model_validate({**synthesis(config), "complexity": "moderate"})


def test_the_merge_asks_for_the_complexity_as_the_synthesis_does() -> None:
    complexity = merge_model(review(3)).model_json_schema()["properties"]["complexity"]
    assert complexity["enum"] == ["low", "medium", "high"]


async def test_a_synthesis_recorded_before_the_complexity_was_asked_reads_without_it() -> None:
    config = review(2)
    _, state, _ = await hold(config, Recorder())
    # An older log's answer, as a backfill of its result reads it: the headline names no complexity.
    [decision] = state.decided(SYNTHESIS)
    assert decision.answer is not None
    older = decision.model_copy(
        update={"answer": {k: v for k, v in decision.answer.items() if k != "complexity"}}
    )
    state.decisions[state.decisions.index(decision)] = older
    outcome = PROTOCOL.outcome(config, state)
    assert outcome is not None and outcome.details["complexity"] is None
    assert outcome.headline == "The judge's synthesised design, confidence 80/100"


async def test_a_vote_names_no_complexity() -> None:
    # Its result is a participant's own proposal: no judge weighed how hard it is to build.
    _, state, _ = await hold(voting(3), voters({"ada": ["Bo"], "bo": ["Ada"], "cy": ["Bo"]}))
    assert state.outcome is not None and "complexity" not in state.outcome.details
    assert "complexity" not in (state.outcome.headline or "")


# --- what a reader sees -----------------------------------------------------------------------------


async def test_a_voting_review_exports_as_readable_markdown() -> None:
    rec = voters({"ada": ["Bo"], "bo": ["Ada"], "cy": ["Bo"]})
    events, state, _ = await hold(voting(3), rec)
    text = markdown(events)
    result = text.split("## Result", 1)[1]
    assert "**Voted solution: Bo's proposal, 2 of 3 votes**" in result
    assert "### The solution: Bo's refined proposal (round 3)" in result
    bo_final = next(t.text for t in state.rounds[2].turns if t.participant_id == "bo")
    assert bo_final in result
    assert "- Bo's proposal: 2 votes" in result
    assert "- Cy voted for Bo's proposal: cy finds Bo's plan the soundest." in result


async def test_a_merged_review_exports_as_readable_markdown() -> None:
    events, _, _ = await hold(review(3, format_options={"synthesis": "merge"}), Recorder())
    result = markdown(events).split("## Result", 1)[1]
    assert "**The judge's merged design, confidence 74/100, complexity high**" in result
    assert "### The merged solution, part by part" in result
    assert "- Part 1: Token buckets per client in a Redis cluster. (from Ada and Bo)" in result
    assert "- Cy: part 2" in result
    assert "redis.down" not in result  # the sketch appears only when an export asks for code

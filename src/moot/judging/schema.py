"""The shape a judge must answer in, built per debate so every participant is required by its key.

Keying scores by participant id (or, for a panel judge, by anonymous label) rather than a list the
judge fills in lets a grammar-constrained model produce exactly one entry per participant, with no
misspelt or missing ids to repair.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from moot.domain.config import DebateConfig, JudgeConfig
from moot.domain.rubric import rubric_criteria
from moot.domain.verdict import (
    ParticipantScore,
    RubricEntry,
    ScoredCriterion,
    Verdict,
    default_rubric,
    weighted_score,
)
from moot.judging.anonymise import Entrant, Roster, named_roster, reveal
from moot.judging.words import apart, distinct, said_once, text_or_empty, without, words_only


def whole_numbers(top: int) -> dict[str, Any]:
    """Schema extra holding a grammar-constrained model to whole numbers 0..top.

    A float rule lets a small model ramble through 16 decimals (llama.cpp's grammar sampling crawls on it:
    a verdict took 279 s with floats, 22 s with whole numbers). Validation does not enforce the enum, so a
    large model's 7.5 stands.
    """
    return {"enum": list(range(top + 1))}


def bounded_text(max_length: int) -> dict[str, Any]:
    return {"minLength": 1, "maxLength": max_length}


def bounded_items(max_items: int, max_length: int = 100, *, min_items: int = 0) -> dict[str, Any]:
    # min_items shapes a grammar-constrained model's answer only (like the bounds): a small model given the
    # choice writes no item at all.
    bounds: dict[str, Any] = {"minItems": min_items} if min_items else {}
    return {
        **bounds,
        "maxItems": max_items,
        "items": {"type": "string", "minLength": 1, "maxLength": max_length},
    }


class JudgeAnswer(BaseModel):
    """What every per-debate answer model has; `answer_model` adds the fields in generation order."""

    model_config = ConfigDict(populate_by_name=True)

    if TYPE_CHECKING:
        scores: BaseModel
        quality: float
        summary: str
        areas_of_agreement: list[str]
        areas_of_disagreement: list[str]
        insights: list[str]


def per_entrant(name: str, roster: Roster, value: type[BaseModel]) -> type[BaseModel]:
    """A model with one required `value` per entrant, keyed by its id (field `p<i>`, in roster order)."""
    fields: dict[str, Any] = {
        f"p{i}": (value, Field(alias=e.id, description=f"{e.name}, arguing: {e.stance or 'own view'}"))
        for i, e in enumerate(roster.entrants)
    }
    return create_model(name, __config__=ConfigDict(populate_by_name=True), **fields)


def per_participant(name: str, config: DebateConfig, value: type[BaseModel]) -> type[BaseModel]:
    """A model with one required `value` per participant, keyed by participant id (field `p<i>`)."""
    return per_entrant(name, named_roster(config), value)


def each_entrant(roster: Roster, keyed: BaseModel) -> list[tuple[str, Any]]:
    """(participant id, value) pairs out of a `per_entrant` instance, in roster order."""
    return [(e.participant_id, getattr(keyed, f"p{i}")) for i, e in enumerate(roster.entrants)]


def each_participant(config: DebateConfig, keyed: BaseModel) -> list[tuple[str, Any]]:
    """(participant id, value) pairs out of a `per_participant` instance, in config order."""
    return each_entrant(named_roster(config), keyed)


def rubric_of(judge: JudgeConfig | None) -> dict[str, RubricEntry]:
    return dict(judge.rubric) if judge is not None else dict(default_rubric())


def criteria_of(judge: JudgeConfig | None) -> list[ScoredCriterion]:
    """What the judge scores, in order, with what each criterion means."""
    return rubric_criteria(judge.rubric if judge is not None else default_rubric())


def criteria_model(criteria: list[ScoredCriterion]) -> type[BaseModel]:
    """One required 0-10 score per weighted criterion, in rubric order, keyed by the criterion's name.

    The fields are `c<i>` with the name as alias, as `per_entrant` keys participants: a criterion of the
    user's own may be named like a BaseModel attribute (`copy`, `json`)."""
    whole = whole_numbers(10)
    fields: dict[str, Any] = {
        f"c{i}": (
            float,
            Field(ge=0, le=10, alias=c.name, description=c.description, json_schema_extra=whole),
        )
        for i, c in enumerate(criteria)
    }
    return create_model("Criteria", __config__=ConfigDict(populate_by_name=True), **fields)


def answer_model(
    config: DebateConfig, judge: JudgeConfig | None = None, roster: Roster | None = None
) -> type[JudgeAnswer]:
    """A JudgeAnswer whose `scores` object has one required field per participant (or label).

    Scores come first, then the overall quality: a model that runs out of tokens should have spent them
    on the judgement. There is no overall score and no winner to give: moot computes both.
    """
    judge = judge if judge is not None else config.judge
    roster = roster if roster is not None else named_roster(config)
    return _answer_model(tuple(criteria_of(judge)), roster.entrants)


@functools.lru_cache(maxsize=256)
def _answer_model(criteria: tuple[ScoredCriterion, ...], entrants: tuple[Entrant, ...]) -> type[JudgeAnswer]:
    """The answer model of one rubric and roster, built once: the same shape gives the same class, so its
    shape (moot.engine.calls.replies.answer_shape: its output tool and JSON schema) is built once too."""
    assessment = create_model(
        "Assessment",
        # maxLength/maxItems shape what a grammar-constrained model may write, so its whole answer fits its
        # token budget; validation does not enforce them, so a long answer from a large model is never rejected.
        criteria=(criteria_model(list(criteria)), Field(description="0 (absent) to 10 (excellent) each")),
        reasoning=(
            str,
            Field(
                description="Why these scores, in one or two sentences", json_schema_extra=bounded_text(160)
            ),
        ),
        key_arguments=(
            list[str],
            Field(description="The participant's main arguments", json_schema_extra=bounded_items(2)),
        ),
    )
    scores = per_entrant("Scores", Roster(entrants), assessment)
    answer: type[JudgeAnswer] = create_model(
        "DebateVerdict",
        __base__=JudgeAnswer,
        scores=(scores, ...),
        quality=(
            float,
            Field(
                ge=0, le=100, description="The debate as a whole, 0-100", json_schema_extra=whole_numbers(100)
            ),
        ),
        summary=(str, Field(description="What the debate established", json_schema_extra=bounded_text(240))),
        areas_of_agreement=(list[str], Field(json_schema_extra=bounded_items(2))),
        areas_of_disagreement=(list[str], Field(json_schema_extra=bounded_items(2))),
        insights=(
            list[str],
            Field(description="Novel or surprising points", json_schema_extra=bounded_items(2)),
        ),
    )
    return answer


def to_verdict(
    answer: JudgeAnswer,
    config: DebateConfig,
    *,
    judge: JudgeConfig | None = None,
    roster: Roster | None = None,
    names_winner: bool = True,
) -> Verdict:
    """The stored Verdict, by participant id in config order: each overall score is the rubric's weighted
    mean of the judge's criterion scores, and the winner comes from those, never from the judge's say-so."""
    judge = judge if judge is not None else config.judge
    roster = roster if roster is not None else named_roster(config)
    rubric = rubric_of(judge)
    # A panel judge wrote "Debater B"; the record says who that was.
    real = reveal(roster, config)
    # Filler a small judge wrote to fill the schema ("1", "][", a bare id) is not shown as if it were said.
    names = [n for p in config.participants for n in (p.id, p.name)]
    names += [n for e in roster.entrants for n in (e.id, e.name)]
    given = dict(each_entrant(roster, answer.scores))
    reasons = {p.id: text_or_empty(real(given[p.id].reasoning), names) for p in config.participants}
    arguments = {
        p.id: distinct(words_only([real(x) for x in given[p.id].key_arguments], names))
        for p in config.participants
    }
    summary = text_or_empty(real(answer.summary), names)
    agreement, disagreement = apart(
        distinct(words_only([real(x) for x in answer.areas_of_agreement], names)),
        distinct(words_only([real(x) for x in answer.areas_of_disagreement], names)),
    )
    insights = distinct(words_only([real(x) for x in answer.insights], names))
    everywhere = said_once(
        [*([r] for r in reasons.values()), *arguments.values()],
        [[summary], agreement, disagreement, insights],
    )
    scores = []
    for p in config.participants:
        criteria = {name: float(v) for name, v in given[p.id].criteria.model_dump(by_alias=True).items()}
        scores.append(
            ParticipantScore(
                participant_id=p.id,
                score=weighted_score(criteria, rubric),
                reasoning="".join(without([reasons[p.id]], everywhere)),
                key_arguments=without(arguments[p.id], everywhere),
                criteria=criteria,
            )
        )
    return Verdict.from_scores(
        scores,
        summary="".join(without([summary], everywhere)),
        areas_of_agreement=without(agreement, everywhere),
        areas_of_disagreement=without(disagreement, everywhere),
        quality=answer.quality,
        insights=without(insights, everywhere),
        names_winner=names_winner,
        rubric=criteria_of(judge),
    )

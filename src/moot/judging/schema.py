"""The shape a judge must answer in, built per debate so every participant id is required by name.

Keying scores by participant id (rather than a list the judge fills in) lets a grammar-constrained
model produce exactly one score per participant, with no misspelt or missing ids to repair.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from moot.domain.config import DebateConfig
from moot.domain.verdict import ParticipantScore, Verdict


def bounded_text(max_length: int) -> dict[str, Any]:
    return {"minLength": 1, "maxLength": max_length}


def bounded_items(max_items: int, max_length: int = 100) -> dict[str, Any]:
    return {"maxItems": max_items, "items": {"type": "string", "minLength": 1, "maxLength": max_length}}


class Assessment(BaseModel):
    """The judge's view of one participant."""

    score: float = Field(ge=0, le=10, description="0 (no case made) to 10 (outstanding)")
    # maxLength/maxItems shape what a grammar-constrained model may write, so its whole answer fits its
    # token budget; validation does not enforce them, so a long answer from a large model is never rejected.
    reasoning: str = Field(
        description="Why this score, in one or two sentences", json_schema_extra=bounded_text(160)
    )
    key_arguments: list[str] = Field(
        description="The participant's main arguments", json_schema_extra=bounded_items(2)
    )


class JudgeAnswer(BaseModel):
    """What every per-debate answer model has; `answer_model` adds the fields in generation order."""

    model_config = ConfigDict(populate_by_name=True)

    if TYPE_CHECKING:
        summary: str
        areas_of_agreement: list[str]
        areas_of_disagreement: list[str]


def per_participant(name: str, config: DebateConfig, value: type[BaseModel]) -> type[BaseModel]:
    """A model with one required `value` per participant, keyed by participant id (field `p<i>`)."""
    fields: dict[str, Any] = {
        f"p{i}": (value, Field(alias=p.id, description=f"{p.name}, arguing: {p.stance or 'own view'}"))
        for i, p in enumerate(config.participants)
    }
    return create_model(name, __config__=ConfigDict(populate_by_name=True), **fields)


def each_participant(config: DebateConfig, keyed: BaseModel) -> list[tuple[str, Any]]:
    """(participant id, value) pairs out of a `per_participant` instance, in config order."""
    return [(p.id, getattr(keyed, f"p{i}")) for i, p in enumerate(config.participants)]


def answer_model(config: DebateConfig) -> type[JudgeAnswer]:
    """A JudgeAnswer whose `scores` object has one required field per participant id.

    Scores come first: a model that runs out of tokens should have spent them on the judgement.
    """
    scores = per_participant("Scores", config, Assessment)
    answer: type[JudgeAnswer] = create_model(
        "DebateVerdict",
        __base__=JudgeAnswer,
        scores=(scores, ...),
        summary=(str, Field(description="What the debate established", json_schema_extra=bounded_text(240))),
        areas_of_agreement=(list[str], Field(json_schema_extra=bounded_items(2))),
        areas_of_disagreement=(list[str], Field(json_schema_extra=bounded_items(2))),
    )
    return answer


def to_verdict(answer: JudgeAnswer, config: DebateConfig) -> Verdict:
    """The stored Verdict, with the winner taken from the scores, never from the judge's say-so."""
    scores = [
        ParticipantScore(
            participant_id=pid, score=a.score, reasoning=a.reasoning, key_arguments=list(a.key_arguments)
        )
        for pid, a in each_participant(config, answer.scores)  # type: ignore[attr-defined]
    ]
    return Verdict.from_scores(
        scores,
        summary=answer.summary,
        areas_of_agreement=list(answer.areas_of_agreement),
        areas_of_disagreement=list(answer.areas_of_disagreement),
    )

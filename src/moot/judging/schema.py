"""The shape a judge must answer in, built per debate so every participant id is required by name.

Keying scores by participant id (rather than a list the judge fills in) lets a grammar-constrained
model produce exactly one score per participant, with no misspelt or missing ids to repair.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from moot.domain.config import DebateConfig
from moot.domain.verdict import ParticipantScore, Verdict


def _text(max_length: int) -> dict[str, Any]:
    return {"minLength": 1, "maxLength": max_length}


def _items(max_items: int, max_length: int = 100) -> dict[str, Any]:
    return {"maxItems": max_items, "items": {"type": "string", "minLength": 1, "maxLength": max_length}}


class Assessment(BaseModel):
    """The judge's view of one participant."""

    score: float = Field(ge=0, le=10, description="0 (no case made) to 10 (outstanding)")
    # maxLength/maxItems shape what a grammar-constrained model may write, so its whole answer fits its
    # token budget; validation does not enforce them, so a long answer from a large model is never rejected.
    reasoning: str = Field(
        description="Why this score, in one or two sentences", json_schema_extra=_text(160)
    )
    key_arguments: list[str] = Field(
        description="The participant's main arguments", json_schema_extra=_items(2)
    )


class JudgeAnswer(BaseModel):
    """What every per-debate answer model has; `answer_model` adds the fields in generation order."""

    model_config = ConfigDict(populate_by_name=True)

    if TYPE_CHECKING:
        summary: str
        areas_of_agreement: list[str]
        areas_of_disagreement: list[str]


def answer_model(config: DebateConfig) -> type[JudgeAnswer]:
    """A JudgeAnswer whose `scores` object has one required field per participant id.

    Scores come first: a model that runs out of tokens should have spent them on the judgement.
    """
    fields: dict[str, Any] = {
        f"p{i}": (Assessment, Field(alias=p.id, description=f"{p.name}, arguing: {p.stance or 'own view'}"))
        for i, p in enumerate(config.participants)
    }
    scores = create_model("Scores", __config__=ConfigDict(populate_by_name=True), **fields)
    answer: type[JudgeAnswer] = create_model(
        "DebateVerdict",
        __base__=JudgeAnswer,
        scores=(scores, ...),
        summary=(str, Field(description="What the debate established", json_schema_extra=_text(240))),
        areas_of_agreement=(list[str], Field(json_schema_extra=_items(2))),
        areas_of_disagreement=(list[str], Field(json_schema_extra=_items(2))),
    )
    return answer


def to_verdict(answer: JudgeAnswer, config: DebateConfig) -> Verdict:
    """The stored Verdict, with the winner taken from the scores, never from the judge's say-so."""
    scores_obj = answer.scores  # type: ignore[attr-defined]
    scores = []
    for i, p in enumerate(config.participants):
        a: Assessment = getattr(scores_obj, f"p{i}")
        scores.append(
            ParticipantScore(
                participant_id=p.id, score=a.score, reasoning=a.reasoning, key_arguments=list(a.key_arguments)
            )
        )
    return Verdict.from_scores(
        scores,
        summary=answer.summary,
        areas_of_agreement=list(answer.areas_of_agreement),
        areas_of_disagreement=list(answer.areas_of_disagreement),
    )

"""The shape a judge must answer in, built per debate so every participant id is required by name.

Keying scores by participant id (rather than a list the judge fills in) lets a grammar-constrained
model produce exactly one score per participant, with no misspelt or missing ids to repair.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from moot.domain.config import DebateConfig
from moot.domain.verdict import ParticipantScore, Verdict


class Assessment(BaseModel):
    """The judge's view of one participant."""

    score: float = Field(ge=0, le=10, description="0 (no case made) to 10 (outstanding)")
    reasoning: str = Field(description="Why this score", json_schema_extra={"maxLength": 600})
    key_arguments: list[str] = Field(
        description="The participant's main arguments", json_schema_extra={"maxItems": 4}
    )


class JudgeAnswer(BaseModel):
    """Common fields of every per-debate answer model."""

    model_config = ConfigDict(populate_by_name=True)

    summary: str = Field(description="What the debate established", json_schema_extra={"maxLength": 800})
    areas_of_agreement: list[str] = Field(json_schema_extra={"maxItems": 4})
    areas_of_disagreement: list[str] = Field(json_schema_extra={"maxItems": 4})


def answer_model(config: DebateConfig) -> type[JudgeAnswer]:
    """A JudgeAnswer subclass whose `scores` object has one required field per participant id."""
    fields: dict[str, Any] = {
        f"p{i}": (Assessment, Field(alias=p.id, description=f"{p.name}, arguing: {p.stance or 'own view'}"))
        for i, p in enumerate(config.participants)
    }
    scores = create_model("Scores", __config__=ConfigDict(populate_by_name=True), **fields)
    answer: type[JudgeAnswer] = create_model("DebateVerdict", __base__=JudgeAnswer, scores=(scores, ...))
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

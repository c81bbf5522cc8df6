"""The judge's final verdict, as stored and exported."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator


class ParticipantScore(BaseModel):
    """How the judge rated one participant."""

    model_config = ConfigDict(frozen=True)

    participant_id: str
    score: float = Field(ge=0, le=10)
    reasoning: str
    key_arguments: list[str] = Field(default_factory=list)


class Verdict(BaseModel):
    """Scores for every participant, the winner (or an explicit tie) and the judge's synthesis."""

    model_config = ConfigDict(frozen=True)

    scores: list[ParticipantScore] = Field(min_length=1)
    winner_ids: list[str] = Field(description="One id for a winner; several when the top score is tied")
    summary: str
    areas_of_agreement: list[str] = Field(default_factory=list)
    areas_of_disagreement: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _winner_is_top_score(self) -> Verdict:
        if self.winner_ids != top_scorers(self.scores):
            raise ValueError("winner_ids must be exactly the participants with the highest score")
        return self

    @classmethod
    def from_scores(
        cls,
        scores: list[ParticipantScore],
        *,
        summary: str,
        areas_of_agreement: list[str] | None = None,
        areas_of_disagreement: list[str] | None = None,
    ) -> Verdict:
        return cls(
            scores=scores,
            winner_ids=top_scorers(scores),
            summary=summary,
            areas_of_agreement=areas_of_agreement or [],
            areas_of_disagreement=areas_of_disagreement or [],
        )

    @property
    def is_tie(self) -> bool:
        return len(self.winner_ids) > 1

    @property
    def winner_id(self) -> str | None:
        return None if self.is_tie else self.winner_ids[0]

    def score_of(self, participant_id: str) -> ParticipantScore | None:
        return next((s for s in self.scores if s.participant_id == participant_id), None)


def top_scorers(scores: list[ParticipantScore]) -> list[str]:
    """Ids sharing the highest score, in the order given."""
    best = max(s.score for s in scores)
    return [s.participant_id for s in scores if s.score == best]

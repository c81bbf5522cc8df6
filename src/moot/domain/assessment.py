"""The judge's view of one round, and why a debate stopped."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

StopKind = Literal[
    "max_rounds",
    "judge",
    "repetition",
    "convergence",
    "impasse",
    "diminishing_returns",
    "timeout",
    "budget",
    "user",
    "deadline",  # limits.debate_timeout_s passed: the call under way was cut
    "participants",  # too few participants left after failures, or the format cannot go on without one
    "context",  # history.on_overflow: end, and a turn's prompt could not fit its model's window
    "drift",  # stopping.drift: stop and a participant's relevance fell below DRIFT_BELOW
    "person",  # a person gave no turn within limits.human_turn_timeout_s (on_human_timeout: stop)
    "quality",  # stopping.quality_at_least: the judge's assessment rated the latest round at least that well
]

# A relevance below 5 (of 10) is drifting off the topic.
DRIFT_BELOW = 5.0


class ParticipantAssessment(BaseModel):
    """How one participant did in one round."""

    participant_id: str
    strengths: list[str] = Field(default_factory=list)
    weaknesses: list[str] = Field(default_factory=list)
    score: float = Field(ge=0, le=10)
    # None in logs from before the assessment scored them.
    relevance: float | None = Field(
        default=None, ge=0, le=10, description="0 off the topic, 10 squarely on it (below 5: drifting)"
    )
    novelty: float | None = Field(
        default=None, ge=0, le=10, description="0 pure repetition of earlier points, 10 all new"
    )
    engagement: float | None = Field(
        default=None, ge=0, le=10, description="0 ignores the others, 10 answers their points directly"
    )

    @property
    def drifting(self) -> bool:
        return self.relevance is not None and self.relevance < DRIFT_BELOW


class AssessmentFlags(BaseModel):
    """What the judge noticed about the round."""

    repetitive: bool = False
    drifting: bool = False
    diminishing_returns: bool = False
    convergence_reached: bool = False

    def raised(self) -> list[str]:
        """The names of the flags that are set, e.g. ['repetitive', 'diminishing returns']."""
        return [name.replace("_", " ") for name, value in self.model_dump().items() if value]


class RoundAssessment(BaseModel):
    """The judge's assessment of one round: its quality, each participant, and whether to go on."""

    should_continue: bool
    quality: float = Field(ge=0, le=10, description="The round's overall quality, 0-10")
    participants: list[ParticipantAssessment] = Field(default_factory=list)
    flags: AssessmentFlags = Field(default_factory=AssessmentFlags)
    reasoning: str = ""
    recommendations: str = ""

    def drifting(self) -> list[ParticipantAssessment]:
        """The participants whose relevance this round was below DRIFT_BELOW."""
        return [p for p in self.participants if p.drifting]

    def mean(self, score: Literal["novelty", "engagement"]) -> float | None:
        """The participants' mean novelty or engagement; None when the judge scored none (an older log)."""
        scored = [v for p in self.participants if (v := getattr(p, score)) is not None]
        return sum(scored) / len(scored) if scored else None


class StopReason(BaseModel):
    """Why the debating rounds ended: which rule, and a sentence with its numbers."""

    kind: StopKind
    detail: str

"""The judge's assessment of one round: its answer schema (built per debate, like the verdict's), its
prompt, and turning an answer into the stored `RoundAssessment`."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, create_model

from moot.domain.assessment import DRIFT_BELOW, AssessmentFlags, ParticipantAssessment, RoundAssessment
from moot.domain.config import DebateConfig
from moot.domain.state import DebateState
from moot.judging.anonymise import Entrant, Roster, named_roster
from moot.judging.prompt import JudgePrompt, judge_templates
from moot.judging.schema import bounded_items, bounded_text, each_participant, per_entrant, whole_numbers
from moot.judging.words import apart, distinct, text_or_empty, words_only


class ParticipantReview(BaseModel):
    """One participant's showing in the round."""

    score: float = Field(
        ge=0,
        le=10,
        description="0 (no case made) to 10 (outstanding) for this round",
        json_schema_extra=whole_numbers(10),
    )
    # Three whole numbers: a few tokens each, cheap for the embedded model's small reply budget.
    relevance: float = Field(
        ge=0,
        le=10,
        description="0 (off the topic) to 10 (squarely on it); below 5 is drifting",
        json_schema_extra=whole_numbers(10),
    )
    novelty: float = Field(
        ge=0,
        le=10,
        description="0 (pure repetition of its earlier points) to 10 (all new arguments)",
        json_schema_extra=whole_numbers(10),
    )
    engagement: float = Field(
        ge=0,
        le=10,
        description="0 (ignores the others) to 10 (answers their points directly)",
        json_schema_extra=whole_numbers(10),
    )
    strengths: list[str] = Field(description="Specific strengths", json_schema_extra=bounded_items(2))
    weaknesses: list[str] = Field(description="Specific weaknesses", json_schema_extra=bounded_items(2))


class Flags(BaseModel):
    repetitive: bool = Field(description="Are arguments being repeated without new substance?")
    drifting: bool = Field(description="Is the discussion drifting off the topic?")
    diminishing_returns: bool = Field(description="Is each round adding less than the one before?")
    convergence_reached: bool = Field(description="Have the participants come to agree?")


class AssessmentAnswer(BaseModel):
    """What every per-debate assessment model has; `assessment_model` adds the fields in generation order."""

    model_config = ConfigDict(populate_by_name=True)

    if TYPE_CHECKING:
        quality: float
        should_continue: bool
        flags: Flags
        reasoning: str
        recommendations: str


def assessment_model(config: DebateConfig) -> type[AssessmentAnswer]:
    """An AssessmentAnswer whose `participants` object has one required field per participant id.

    The decision comes first (quality, should_continue): a model that runs out of tokens has made it.
    """
    return _assessment_model(named_roster(config).entrants)


@functools.lru_cache(maxsize=256)
def _assessment_model(entrants: tuple[Entrant, ...]) -> type[AssessmentAnswer]:
    """The assessment model of one roster, built once (as moot.judging.schema's answer models are)."""
    reviews = per_entrant("ParticipantReviews", Roster(entrants), ParticipantReview)
    answer: type[AssessmentAnswer] = create_model(
        "RoundAssessment",
        __base__=AssessmentAnswer,
        quality=(
            float,
            Field(
                ge=0,
                le=10,
                description="Overall quality of this round, 0-10",
                json_schema_extra=whole_numbers(10),
            ),
        ),
        should_continue=(bool, Field(description="Would another round add something worthwhile?")),
        flags=(Flags, ...),
        participants=(reviews, ...),
        reasoning=(
            str,
            Field(description="Why, in one or two sentences", json_schema_extra=bounded_text(200)),
        ),
        recommendations=(
            str,
            Field(description="What should happen next", json_schema_extra=bounded_text(160)),
        ),
    )
    return answer


def to_round_assessment(answer: AssessmentAnswer, config: DebateConfig) -> RoundAssessment:
    """The stored RoundAssessment, with the per-participant reviews listed by participant id; a small judge's
    filler ("1", a bare id) is left out of the strengths, weaknesses and reasoning (moot.judging.words)."""
    names = [n for p in config.participants for n in (p.id, p.name)]
    participants = []
    for pid, r in each_participant(config, answer.participants):  # type: ignore[attr-defined]
        # A line given as both a strength and a weakness says neither.
        strengths, weaknesses = apart(
            distinct(words_only(r.strengths, names)), distinct(words_only(r.weaknesses, names))
        )
        participants.append(
            ParticipantAssessment(
                participant_id=pid,
                strengths=strengths,
                weaknesses=weaknesses,
                score=r.score,
                relevance=r.relevance,
                novelty=r.novelty,
                engagement=r.engagement,
            )
        )
    return RoundAssessment(
        should_continue=answer.should_continue,
        quality=answer.quality,
        participants=participants,
        flags=AssessmentFlags(**answer.flags.model_dump()),
        reasoning=text_or_empty(answer.reasoning, names),
        recommendations=text_or_empty(answer.recommendations, names),
    )


def drift_warnings(config: DebateConfig, round_number: int, assessment: RoundAssessment) -> list[str]:
    """One line per participant the judge found drifting off the topic in this round (relevance below 5 of
    10); one for the round when the judge flagged drift without scoring anyone below 5."""
    lines = [
        f"{config.speaker_name(p.participant_id)} drifted off the topic in round {round_number} "
        f"(relevance {p.relevance:g}/10, below {DRIFT_BELOW:g})"
        for p in assessment.drifting()
    ]
    if not lines and assessment.flags.drifting:
        lines.append(f"the judge flagged round {round_number} as drifting off the topic")
    return lines


def assessment_prompt(
    config: DebateConfig, state: DebateState, round_number: int, *, history_chars: int | None = None
) -> JudgePrompt:
    """What the judge is told when asked to assess round `round_number`."""
    return judge_templates(
        config,
        state,
        "round_assessment_system.j2",
        "round_assessment.j2",
        history_chars=history_chars,
        round=round_number,
        # The format's plan, which may differ from `rounds` (a fixed structure, a design review's last refinement).
        rounds=state.planned_rounds or config.rounds,
    )

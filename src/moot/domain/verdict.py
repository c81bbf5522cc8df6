"""The judge's final verdict, as stored and exported: the weighted rubric it scores by, one judge's
verdict, and how a panel's verdicts were combined.

A rubric maps a criterion's name to its weight: a bare number for one of the six `CRITERIA`, or anything with
a `weight` (the config's own criterion, with its description). Weights are shares: only their ratios count."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator


@dataclass(frozen=True)
class Criterion:
    """One dimension of the default rubric; `weight` is its default share in percent."""

    title: str
    description: str
    weight: float


# The order is the order a judge scores them in and exports show them in.
CRITERIA: dict[str, Criterion] = {
    "logic": Criterion("Logical consistency", "arguments follow logically, no contradictions", 20),
    "evidence": Criterion("Evidence quality", "data, examples or research support the claims", 20),
    "engagement": Criterion("Engagement", "answers the others' arguments point by point", 20),
    "novelty": Criterion("Novelty", "new insights, not repetition of earlier points", 15),
    "persuasiveness": Criterion("Persuasiveness", "clear, compelling delivery", 15),
    "relevance": Criterion("Relevance", "stays on the topic and answers the question", 10),
}


class Weighted(Protocol):
    """A rubric entry that says more than its weight (the config's `CriterionSpec`)."""

    @property
    def weight(self) -> float: ...


RubricEntry = float | Weighted


def weight_of(entry: RubricEntry) -> float:
    return entry if isinstance(entry, int | float) else entry.weight


def default_rubric() -> dict[str, float]:
    return {name: c.weight for name, c in CRITERIA.items()}


def weighted_criteria(rubric: Mapping[str, RubricEntry]) -> list[str]:
    """The criteria a judge is asked to score: those with a positive weight, the six defaults first in
    `CRITERIA` order (as before there were others), then the rubric's own criteria in the order it lists them."""
    defaults = [name for name in CRITERIA if name in rubric]
    own = [name for name in rubric if name not in CRITERIA]
    return [name for name in (*defaults, *own) if weight_of(rubric[name]) > 0]


def weighted_score(criteria: Mapping[str, float], rubric: Mapping[str, RubricEntry]) -> float:
    """The weighted mean of the criterion scores (to 2 decimals); criteria without weight count nothing."""
    weights = {name: weight_of(rubric[name]) for name in weighted_criteria(rubric) if name in criteria}
    total = sum(weights.values())
    if total <= 0:
        raise ValueError("none of the scored criteria has a positive weight")
    return round(sum(criteria[name] * w for name, w in weights.items()) / total, 2)


class ScoredCriterion(BaseModel):
    """A criterion a verdict scored, as the judge was told it: every surface that shows the verdict reads
    its titles and descriptions here, so a verdict given under another rubric (a panel judge's, a new
    judgement's) is shown as it was given."""

    model_config = ConfigDict(frozen=True)

    name: str
    title: str
    description: str
    weight: float | None = Field(
        default=None,
        description="Its weight in the rubric; None where a panel's judges weighed it differently",
    )

    @property
    def is_default(self) -> bool:
        """One of the six criteria, meaning what it always means (a reader needs no description)."""
        known = CRITERIA.get(self.name)
        return known is not None and (known.title, known.description) == (self.title, self.description)


def describe(
    name: str, *, title: str | None = None, description: str | None = None, weight: float | None = None
) -> ScoredCriterion:
    """A criterion by name, its title and description those of `CRITERIA` unless given."""
    known = CRITERIA.get(name)
    return ScoredCriterion(
        name=name,
        title=title or (known.title if known else name.replace("_", " ").capitalize()),
        description=description or (known.description if known else ""),
        weight=weight,
    )


class ParticipantScore(BaseModel):
    """How the judge rated one participant. With a rubric, `score` is moot's weighted mean of `criteria`."""

    model_config = ConfigDict(frozen=True)

    participant_id: str
    score: float = Field(ge=0, le=10)
    reasoning: str
    key_arguments: list[str] = Field(default_factory=list)
    criteria: dict[str, float] = Field(default_factory=dict, description="0-10 per rubric criterion")


class Absence(BaseModel):
    """A participant the verdict does not score because it never spoke, or scores only on the turns it took
    before it left: the verdict says so, so no screen presents a silent participant as judged."""

    model_config = ConfigDict(frozen=True)

    participant_id: str
    name: str = ""
    spoke: bool = Field(description="Whether it took a turn before it left (then it is scored on those)")
    round: int | None = Field(default=None, description="The round it left in (None: it never left)")
    reason: str = Field(description="Why it left, or why it never spoke")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def line(self) -> str:
        """What every screen says of it, worded here once."""
        who = self.name or self.participant_id
        if self.spoke:
            return f"{who} left in round {self.round} ({self.reason}): scored on the turns it took"
        if self.round is not None:
            return f"{who} never spoke: it left in round {self.round} ({self.reason}); not scored"
        return f"{who} never spoke ({self.reason}); not scored"


class Verdict(BaseModel):
    """Scores for every participant who spoke, the winner (or an explicit tie, or none) and the judge's
    synthesis."""

    model_config = ConfigDict(frozen=True)

    scores: list[ParticipantScore] = Field(min_length=1)
    winner_ids: list[str] = Field(
        description="One id for a winner; several when the top score is tied; none when the format names none"
    )
    summary: str
    areas_of_agreement: list[str] = Field(default_factory=list)
    areas_of_disagreement: list[str] = Field(default_factory=list)
    quality: float | None = Field(default=None, ge=0, le=100, description="The debate as a whole, 0-100")
    insights: list[str] = Field(default_factory=list)
    confidence: float | None = Field(
        default=None, ge=0, le=100, description="How sure the judge is of this verdict, 0-100 (a person says)"
    )
    names_winner: bool = Field(
        default=True, description="False for consensus formats: the scores weigh contributions, no one wins"
    )
    rubric: list[ScoredCriterion] = Field(
        default_factory=list,
        description="The criteria scored, with their meaning and weight, in scoring order (empty in a verdict "
        "recorded before criteria could be a judge's own: those are the six defaults)",
    )
    absent: list[Absence] = Field(
        default_factory=list,
        description="Participants who never spoke (not scored) or left before the end (scored on what they said)",
    )

    @model_validator(mode="after")
    def _winner_is_top_score(self) -> Verdict:
        if not self.names_winner:
            if self.winner_ids:
                raise ValueError("a verdict that names no winner must have empty winner_ids")
        elif self.winner_ids != top_scorers(self.scores):
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
        quality: float | None = None,
        insights: list[str] | None = None,
        names_winner: bool = True,
        rubric: list[ScoredCriterion] | None = None,
    ) -> Verdict:
        return cls(
            scores=scores,
            winner_ids=top_scorers(scores) if names_winner else [],
            summary=summary,
            areas_of_agreement=areas_of_agreement or [],
            areas_of_disagreement=areas_of_disagreement or [],
            quality=quality,
            insights=insights or [],
            names_winner=names_winner,
            rubric=rubric or [],
        )

    def scored_criteria(self) -> list[ScoredCriterion]:
        """The criteria some participant was scored on, one column each: in the rubric's order, described
        by it; a criterion it does not list (an older verdict) comes after, as `CRITERIA` describes it."""
        scored = {name: None for s in self.scores for name in s.criteria}
        listed = [c for c in self.rubric if c.name in scored]
        named = {c.name for c in listed}
        rest = [n for n in CRITERIA if n in scored and n not in named]
        rest += [n for n in scored if n not in CRITERIA and n not in named]
        return listed + [describe(n) for n in rest]

    @property
    def is_tie(self) -> bool:
        return len(self.winner_ids) > 1

    @property
    def winner_id(self) -> str | None:
        return self.winner_ids[0] if len(self.winner_ids) == 1 else None

    def score_of(self, participant_id: str) -> ParticipantScore | None:
        return next((s for s in self.scores if s.participant_id == participant_id), None)

    def on_what_was_said(self, absent: list[Absence]) -> Verdict | None:
        """This verdict with no score for a participant who never spoke, whoever gave it (a judge's answer is
        not trusted to leave them out), the winner worked out again, and `absent` recorded; None when no
        participant it scored spoke."""
        silent = {a.participant_id for a in absent if not a.spoke}
        scores = [s for s in self.scores if s.participant_id not in silent]
        if not scores:
            return None
        return Verdict.model_validate(
            {
                **self.model_dump(),
                "scores": [s.model_dump() for s in scores],
                "winner_ids": top_scorers(scores) if self.names_winner else [],
                "absent": [a.model_dump() for a in absent],
            }
        )


def top_scorers(scores: list[ParticipantScore]) -> list[str]:
    """Ids sharing the highest score, in the order given."""
    best = max(s.score for s in scores)
    return [s.participant_id for s in scores if s.score == best]


class FailedTry(BaseModel):
    """A judge model that gave no valid verdict, and why; the judge's next fallback model was tried."""

    model_config = ConfigDict(frozen=True)

    model: str
    error: str


class Ballot(BaseModel):
    """One panel judge's verdict, or why there is none (it failed, or it was recused and never asked)."""

    judge: int = Field(description="Index in the config's `judges`")
    name: str
    model: str = Field(description="The model that answered, or the last one tried")
    labels: dict[str, str] = Field(
        default_factory=dict,
        description="Anonymous label -> participant id, in the order this judge was shown them",
    )
    verdict: Verdict | None
    error: str | None = None
    recused: str | None = Field(default=None, description="Why the judge was not asked")
    failed: list[FailedTry] = Field(default_factory=list)


class PanelScore(BaseModel):
    """One participant's overall scores across the judges that gave a verdict."""

    model_config = ConfigDict(frozen=True)

    participant_id: str
    mean: float
    median: float
    scores: list[float] = Field(description="Each valid judge's score, in panel order")


class PanelResult(BaseModel):
    """How a panel's verdicts were combined into the debate's verdict."""

    model_config = ConfigDict(frozen=True)

    seated: list[str] = Field(description="Judges asked (not recused), in panel order")
    valid: list[str] = Field(description="Judges whose verdict counted")
    recused: list[str] = Field(default_factory=list)
    dropped: list[str] = Field(default_factory=list, description="Judges that gave no valid verdict")
    scores: list[PanelScore] = Field(default_factory=list)
    kendall_w: float | None = Field(
        default=None, ge=0, le=1, description="Agreement of the judges' rankings; None under two judges"
    )
    agreement: str = Field(default="", description="What kendall_w means, in one line")
    words_from: str | None = Field(
        default=None, description="The judge whose summary and reasoning the verdict carries"
    )

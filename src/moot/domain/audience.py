"""The audience: people and model personas who vote on the motion before the first round and after the last.

As in Intelligence Squared, each voter says for, against or undecided (with a confidence); a side's swing is its
share of the votes after minus its share before, in points, and the larger swing wins. People vote through the
server's audience link; personas are proposed like `auto` personas and each asked twice.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from moot.domain.text import OneLineText

Phase = Literal["before", "after"]
PHASES: tuple[Phase, Phase] = ("before", "after")
Choice = Literal["for", "against", "undecided"]
CHOICES: tuple[Choice, Choice, Choice] = ("for", "against", "undecided")
Side = Literal["for", "against"]
VoterKind = Literal["person", "persona"]


class AudienceVote(BaseModel):
    """One voter's vote in one phase."""

    model_config = ConfigDict(frozen=True)

    voter: str = Field(description="A persona's id, or a person's browser token (never shown)")
    kind: VoterKind
    name: OneLineText = Field(default="", max_length=80, description="A persona's name; empty for a person")
    choice: Choice
    confidence: int = Field(default=50, ge=0, le=100, description="How sure, 0-100")
    reason: str = Field(default="", max_length=400)


class Tally(BaseModel):
    """The votes of one phase, counted."""

    model_config = ConfigDict(frozen=True)

    counts: dict[Choice, int] = Field(default_factory=lambda: {c: 0 for c in CHOICES})
    people: int = 0
    personas: int = 0

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def share(self, choice: Choice) -> float:
        """This choice's share of the votes, in percent to one decimal (0 when nobody voted)."""
        return round(100 * self.counts.get(choice, 0) / self.total, 1) if self.total else 0.0


def tally(votes: list[AudienceVote]) -> Tally:
    counts: dict[Choice, int] = {c: 0 for c in CHOICES}
    for vote in votes:
        counts[vote.choice] += 1
    return Tally(
        counts=counts,
        people=sum(v.kind == "person" for v in votes),
        personas=sum(v.kind == "persona" for v in votes),
    )


class Swing(BaseModel):
    """The audience's move between its two votes: each choice's share before and after, and who won it."""

    model_config = ConfigDict(frozen=True)

    before: Tally
    after: Tally
    swing: dict[Choice, float]
    winner: Side | None = Field(description="The side with the larger swing; None: a tie, or no votes")

    @property
    def decided(self) -> bool:
        return self.before.total > 0 and self.after.total > 0


def swing_of(before: Tally, after: Tally) -> Swing:
    moved = {c: round(after.share(c) - before.share(c), 1) for c in CHOICES}
    winner: Side | None = None
    if before.total and after.total and moved["for"] != moved["against"]:
        winner = "for" if moved["for"] > moved["against"] else "against"
    return Swing(before=before, after=after, swing=moved, winner=winner)

"""A format's own result, beside the judge's verdict: a vote swing, a bracket, a majority answer.

The format says what its result reads as once, when it records it (`headline`, `sections`): the CLI, the page
and every export print those words and never work them out again from `details`, which is for programs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class OutcomeSection(BaseModel):
    """One part of a result as a person reads it: a title over plain one-line items, or over an answer a model
    wrote (`text`, markdown, shown as the transcript shows a turn)."""

    model_config = ConfigDict(frozen=True)

    title: str
    lines: list[str] = Field(default_factory=list, description="Plain display text, one item a line")
    text: str = Field(default="", description="An answer a model wrote, as it wrote it (markdown)")


class Outcome(BaseModel):
    """What the format's rules made of the debate. Computed from the events alone, so replays agree."""

    model_config = ConfigDict(frozen=True)

    summary: str = Field(description="One or two sentences a reader can take away")
    winner_ids: list[str] = Field(default_factory=list, description="Empty when the format names no winner")
    ranking: list[str] = Field(default_factory=list, description="Participant ids, best first, when ranked")
    details: dict[str, Any] = Field(default_factory=dict, description="Format-specific figures, as JSON")
    headline: str | None = Field(
        default=None,
        description="The result in one line, in the format's words: 'Winner: ...' only where the format names "
        "one; None: a log from before moot recorded it",
    )
    sections: list[OutcomeSection] | None = Field(
        default=None,
        description="The result's parts as display text; None: a log from before moot recorded it",
    )

    @property
    def described(self) -> bool:
        """Whether the display text was recorded (a log from an older moot lacks it until backfilled)."""
        return self.headline is not None and self.sections is not None

    @property
    def lead(self) -> str:
        """The headline, or for a result recorded without one by a format this moot lacks, its summary."""
        return self.headline if self.headline is not None else self.summary


def names_text(names: Sequence[str]) -> str:
    """'Ada', 'Ada and Bo', 'Ada, Bo and Cy'."""
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def count_text(n: int, noun: str) -> str:
    """'1 ranking', '3 rankings'."""
    return f"{n} {noun}{'' if n == 1 else 's'}"

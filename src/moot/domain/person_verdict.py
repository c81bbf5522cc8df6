"""A person's verdict as they give it (the CLI's questions, the page's form, `POST .../verdict`): a score per
criterion per participant, reasons, the winner they name and how sure they are. `moot.judging.person` makes it
the same `Verdict` a model's answer becomes."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from moot.domain.text import PlainText


class PersonVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, frozen=True)

    scores: dict[str, dict[str, float]] = Field(
        description="Participant id -> criterion -> 0 (absent) to 10 (excellent), every criterion of the rubric"
    )
    reasons: dict[str, PlainText] = Field(
        default_factory=dict, description="Participant id -> why these scores"
    )
    winner: str | None = Field(
        default=None,
        description="The participant id you name the winner: it must have the top overall score (left out: the "
        "top score decides)",
    )
    summary: PlainText = Field(default="", max_length=4000, description="What the debate established")
    confidence: int = Field(default=50, ge=0, le=100, description="How sure you are, 0-100")

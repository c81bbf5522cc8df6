"""What a listing reads of a debate: its row in the `debates` projection, without its log."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field, field_validator

from moot.domain.status import Status
from moot.store.db import debates


class ParticipantSummary(BaseModel):
    """Who took part, as listed."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    model: str
    stance: str = ""
    color: str | None = Field(
        default=None, description="Its own colour (#rrggbb); null: the one of its place"
    )


class DebateSummary(BaseModel):
    """One row of `moot list`: a debate without its log."""

    model_config = ConfigDict(frozen=True)

    id: str
    topic: str
    status: Status
    format: str
    rounds: int
    participants: list[ParticipantSummary]
    created_at: datetime
    updated_at: datetime
    winner: str | None = None
    eval_run: str | None = Field(
        default=None, description="The `moot eval` run that held it; None: not an eval's"
    )
    problems: list[str] = Field(
        default_factory=list,
        description="What kept it from running as asked (a completed debate with problems is degraded)",
    )
    headline: str | None = Field(
        default=None,
        description="The result in one line, as `moot show`, the exports and the page lead with it (a council's "
        "answer, a design review's design, a verdict's winner); None while the debate has neither a result nor "
        "an end",
    )

    @field_validator("problems", mode="before")
    @classmethod
    def _none_is_none(cls, value: object) -> object:
        return [] if value is None else value


# Listing reads these and never `config`, which can carry up to 200 kB of context per debate.
SUMMARY_COLUMNS = [debates.c[name] for name in DebateSummary.model_fields]

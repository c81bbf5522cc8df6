"""A format's own result, beside the judge's verdict: a vote swing, a bracket, a majority answer."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Outcome(BaseModel):
    """What the format's rules made of the debate. Computed from the events alone, so replays agree."""

    model_config = ConfigDict(frozen=True)

    summary: str = Field(description="One or two sentences a reader can take away")
    winner_ids: list[str] = Field(default_factory=list, description="Empty when the format names no winner")
    ranking: list[str] = Field(default_factory=list, description="Participant ids, best first, when ranked")
    details: dict[str, Any] = Field(default_factory=dict, description="Format-specific figures, as JSON")

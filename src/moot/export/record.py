"""The exported record of one debate: the durable events, and the state they fold into.

`DebateRecord` is what the JSON export holds: the durable events, nothing else. Its `state` is the fold of
those events, with what an older moot did not record filled in from the format (moot.export.backfill), so a
debate recorded then reads as it did.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from functools import cached_property
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from moot.domain.events import Event, utc_now
from moot.domain.state import DebateState
from moot.errors import UserError
from moot.export.backfill import fold_backfilled


class DebateRecord(BaseModel):
    """Everything durable about one debate, as exported. Fold `events` to get its state."""

    # Frozen because `state` is cached: a record that changed under it would lie.
    model_config = ConfigDict(frozen=True)

    format_version: Literal[1] = 1
    debate_id: str
    exported_at: datetime = Field(default_factory=utc_now)
    events: list[Event]

    @classmethod
    def from_events(cls, events: Iterable[Event], *, exported_at: datetime | None = None) -> DebateRecord:
        """A record of the durable events given, in the order given (live-only deltas are dropped)."""
        durable = [e for e in events if e.durable]
        if not durable:
            raise UserError("the debate has no events, so there is nothing to export")
        ids = {e.debate_id for e in durable}
        if len(ids) > 1:
            raise ValueError(f"events from several debates cannot make one record: {sorted(ids)}")
        return cls(debate_id=durable[0].debate_id, exported_at=exported_at or utc_now(), events=durable)

    @cached_property
    def state(self) -> DebateState:
        return fold_backfilled(self.events)

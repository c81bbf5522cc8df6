"""OpenTelemetry spans and metrics from the run's events (moot.engine.telemetry, off unless MOOT_OTEL=1)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from moot.domain.events import Event
from moot.engine.rules import Feature

if TYPE_CHECKING:
    from moot.engine.context import RunContext


class Telemetry(Feature):
    def seen(self, ctx: RunContext, event: Event) -> None:
        if ctx.telemetry is not None:
            ctx.telemetry.on_event(event)

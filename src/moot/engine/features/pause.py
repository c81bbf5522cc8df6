"""A pause asked for (the user, the server): the run ends after the step under way; a resume carries it on."""

from __future__ import annotations

from typing import TYPE_CHECKING

from moot.domain.events import DebatePaused
from moot.engine.rules import Feature, Flow, NextStep

if TYPE_CHECKING:
    from moot.engine.context import RunContext


class Pause(Feature):
    async def before_step(self, ctx: RunContext, step: NextStep) -> Flow | None:
        if not ctx.control.pause_requested:
            return None
        await ctx.emit(DebatePaused())
        return Flow.END

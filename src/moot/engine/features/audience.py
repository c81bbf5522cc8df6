"""The audience's vote before the first round and after the last (moot.engine.audience), taken before the step
it comes before, whatever the format schedules."""

from __future__ import annotations

from typing import TYPE_CHECKING

from moot.engine.audience import poll, poll_due
from moot.engine.rules import Feature, Flow, NextStep

if TYPE_CHECKING:
    from moot.engine.context import RunContext


class AudienceVote(Feature):
    async def before_step(self, ctx: RunContext, step: NextStep) -> Flow | None:
        if ctx.config.audience is None or (phase := poll_due(ctx, step())) is None:
            return None
        await poll(ctx, phase)
        return Flow.AGAIN

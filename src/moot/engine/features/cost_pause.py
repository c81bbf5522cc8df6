"""`limits.pause_at_cost`: before a step that calls a model once the cost has passed it, the run pauses until
someone acknowledges the cost (moot.engine.budget_checks)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from moot.engine.budget_checks import pause_at_cost
from moot.engine.rules import Feature, Flow, NextStep
from moot.engine.steps import handler_for

if TYPE_CHECKING:
    from moot.engine.context import RunContext


class CostPause(Feature):
    async def before_step(self, ctx: RunContext, step: NextStep) -> Flow | None:
        if ctx.config.limits.pause_at_cost is None:
            return None
        return Flow.END if await pause_at_cost(ctx, handler_for(step()), step()) else None

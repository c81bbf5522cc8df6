"""After a hard stop (budget, user, deadline, too few participants, a window, a person's silence) no more debating
calls are made, whatever the format: the verdict on what exists, then the end (moot.engine.budget_checks)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from moot.engine.budget_checks import HARD_STOPS, after_hard_stop
from moot.engine.rules import Feature, Flow, NextStep

if TYPE_CHECKING:
    from moot.engine.context import RunContext


class HardStop(Feature):
    async def before_step(self, ctx: RunContext, step: NextStep) -> Flow | None:
        stop = ctx.state.stop_reason
        if stop is None or stop.kind not in HARD_STOPS:
            return None
        await after_hard_stop(ctx)
        return Flow.END

"""A verdict asked for after the rounds (`moot judge`, POST .../judge, a retry of a failed verdict): the run is that
judging and nothing else. A debate whose rounds had not ended (paused, failed) ends them first."""

from __future__ import annotations

from typing import TYPE_CHECKING

from moot.domain.assessment import StopReason
from moot.domain.events import DebateCompleted
from moot.engine.rules import Feature, Flow, NextStep
from moot.engine.steps import take
from moot.engine.stops import stop_now
from moot.protocols import Judge

if TYPE_CHECKING:
    from moot.engine.context import RunContext


class VerdictAgain(Feature):
    async def before_step(self, ctx: RunContext, step: NextStep) -> Flow | None:
        again = ctx.state.judging_again
        if again is None:
            return None
        if ctx.state.stop_reason is None:
            detail = f"a verdict was asked for before its rounds ended ({again.reason})"
            await stop_now(ctx, StopReason(kind="user", detail=detail))
        if not ctx.state.judged:
            await take(ctx, Judge())
        await ctx.emit(DebateCompleted.of(ctx.state))
        return Flow.END

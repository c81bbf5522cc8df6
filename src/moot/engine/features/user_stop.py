"""A stop asked for from outside the run (the user, the server's stop, the debate's deadline): the rounds end,
and HardStop takes it from there."""

from __future__ import annotations

from typing import TYPE_CHECKING

from moot.domain.assessment import StopReason
from moot.engine.rules import Feature, Flow, NextStep
from moot.engine.stops import stop_now

if TYPE_CHECKING:
    from moot.engine.context import RunContext


class UserStop(Feature):
    async def before_step(self, ctx: RunContext, step: NextStep) -> Flow | None:
        if not ctx.control.stop_requested or ctx.state.stop_reason is not None:
            return None
        await stop_now(ctx, ctx.control.stop_reason or StopReason(kind="user", detail="stopped by the user"))
        return Flow.AGAIN

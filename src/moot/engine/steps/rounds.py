"""The steps that make no model call: a round's start and end, the format's stop and result, the debate's end."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from moot.domain.assessment import StopReason
from moot.domain.events import (
    DebateCompleted,
    DebateStopping,
    OutcomeGiven,
    RoundCompleted,
    RoundStarted,
    utc_now,
)
from moot.engine.round_clock import round_deadline
from moot.engine.steps.base import Bookkeeping
from moot.engine.steps.embedding import embed_round
from moot.errors import RunError
from moot.protocols import Conclude, EndRound, Finish, StartRound, Stop

if TYPE_CHECKING:
    from moot.engine.context import RunContext


class StartRoundHandler(Bookkeeping):
    async def take(self, ctx: RunContext, step: StartRound) -> bool:
        if step.number > 1 and not step.owed and (reason := out_of_time(ctx)) is not None:
            await ctx.emit(DebateStopping(reason=reason, after_round=step.number - 1))
        else:
            now = utc_now()
            deadline = round_deadline(ctx, now)
            await ctx.emit(RoundStarted(round=step.number, phase=step.phase, at=now, deadline=deadline))
        return False


class EndRoundHandler(Bookkeeping):
    async def take(self, ctx: RunContext, step: EndRound) -> bool:
        # Before the round's end is recorded: a completed round always has its vectors (or their error).
        await embed_round(ctx, step.number)
        await ctx.emit(RoundCompleted(round=step.number))
        return False


class StopHandler(Bookkeeping):
    async def take(self, ctx: RunContext, step: Stop) -> bool:
        done = ctx.state.current_round
        await ctx.emit(DebateStopping(reason=step.reason, after_round=done.number if done else 0))
        return False


class ConcludeHandler(Bookkeeping):
    async def take(self, ctx: RunContext, step: Conclude) -> bool:
        outcome = ctx.protocol.outcome(ctx.scheduled, ctx.state)
        if outcome is None:
            raise RunError(f"the {ctx.config.format} format concluded without a result")
        await ctx.emit(OutcomeGiven(outcome=outcome))
        return False


class FinishHandler(Bookkeeping):
    async def take(self, ctx: RunContext, step: Finish) -> bool:
        await ctx.emit(DebateCompleted.of(ctx.state))
        return True


def out_of_time(ctx: RunContext) -> StopReason | None:
    """The timeout, when the rounds so far have used up `stopping.timeout_s` of wall-clock time.

    Not a protocol rule: the wall clock is not in the events, so the engine records it as it happens.
    """
    budget = ctx.protocol.timeout_s(ctx.config)
    elapsed = time.monotonic() - ctx.started
    if budget is None or elapsed < budget:
        return None
    source = "stopping.timeout_s" if ctx.config.stopping.timeout_s is not None else "the format's default"
    return StopReason(
        kind="timeout", detail=f"the rounds took {elapsed:.1f} s of the {budget:g} s budget ({source})"
    )

"""Participants dropped after failures: with too few left, or in a format that needs them all, the rounds end;
with no turn taken at all the debate fails, and a retry (once the cause, a key, is fixed) brings them back."""

from __future__ import annotations

from typing import TYPE_CHECKING

from moot.domain.assessment import StopReason
from moot.engine.rules import Feature, Flow, NextStep
from moot.engine.stops import stop_now
from moot.errors import RunError

if TYPE_CHECKING:
    from moot.engine.context import RunContext


class ShortOfParticipants(Feature):
    async def before_step(self, ctx: RunContext, step: NextStep) -> Flow | None:
        if ctx.state.stop_reason is not None or (short := short_of_participants(ctx)) is None:
            return None
        if not ctx.state.turns:
            raise RunError(f"no turn could be taken: {'; '.join(ctx.state.dropped.values())}")
        await stop_now(ctx, short)
        return Flow.AGAIN


def short_of_participants(ctx: RunContext) -> StopReason | None:
    """Why the rounds cannot go on after failures: too few participants left, or a format that needs them all."""
    dropped = ctx.state.dropped
    if not dropped:
        return None
    config = ctx.config
    names = ", ".join(config.speaker_name(pid) for pid in dropped)
    left = len(config.participants) - len(dropped)
    if left < max(2, ctx.protocol.traits.min_participants):
        return StopReason(
            kind="participants",
            detail=f"{names} failed; {left} participant{'s' if left != 1 else ''} left, fewer than 2",
        )
    if not ctx.protocol.traits.continues_without:
        them = "them" if len(dropped) > 1 else "it"
        return StopReason(
            kind="participants",
            detail=f"{names} failed; the {config.format} format cannot go on without {them}",
        )
    return None

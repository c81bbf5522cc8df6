"""Ending the rounds from outside the format's rules (a budget, a user, a window that cannot hold a turn).

Kept apart from the budget checks so that step handlers can stop the rounds without importing them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from moot.domain.assessment import StopReason
from moot.domain.events import DebateStopping, RoundCompleted

if TYPE_CHECKING:
    from moot.engine.context import RunContext


async def stop_now(ctx: RunContext, reason: StopReason) -> None:
    """End the rounds here, whatever the format: close the round under way and record why."""
    current = ctx.state.current_round
    if current is not None and not current.completed:
        await ctx.emit(RoundCompleted(round=current.number))
    after = current.number if current is not None else 0
    await ctx.emit(DebateStopping(reason=reason, after_round=after))

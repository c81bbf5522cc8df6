"""`limits.debate_timeout_s`: at that much running time (a resumed debate's earlier runs count), the debate is
stopped as a user's stop is: the call under way is cut, and the judge rules on what exists."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from moot.domain.assessment import StopReason
from moot.engine.rules import Feature

if TYPE_CHECKING:
    from moot.engine.context import RunContext


class Deadline(Feature):
    def __init__(self) -> None:
        self.timer: asyncio.Task[None] | None = None

    async def on_start(self, ctx: RunContext) -> None:
        limit = ctx.initial.limits.debate_timeout_s
        if limit is not None:
            self.timer = asyncio.create_task(_stop_at(ctx, limit))

    async def on_end(self, ctx: RunContext) -> None:
        if self.timer is not None and not self.timer.done():
            self.timer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.timer


async def _stop_at(ctx: RunContext, limit: float) -> None:
    await asyncio.sleep(max(limit - ctx.ran_before, 0.0))
    detail = f"the debate ran for its limit of {limit:g} s (limits.debate_timeout_s)"
    ctx.control.stop(StopReason(kind="deadline", detail=detail))

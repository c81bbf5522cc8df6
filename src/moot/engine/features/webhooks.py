"""The config's `notify` webhooks: after the run, its ending POSTed, signed, to each (moot.engine.webhooks)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from moot.engine.rules import Feature
from moot.engine.webhooks import notify_end

if TYPE_CHECKING:
    from moot.engine.context import RunContext


class Webhooks(Feature):
    async def on_end(self, ctx: RunContext) -> None:
        await notify_end(ctx.state, ctx.emit)

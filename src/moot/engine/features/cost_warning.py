"""`limits.warn_at_cost`: a notice, once, when the debate's cost passes it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from moot.domain.events import Event
from moot.engine.budget_checks import warn_cost
from moot.engine.rules import Feature

if TYPE_CHECKING:
    from moot.engine.context import RunContext


class CostWarning(Feature):
    async def recorded(self, ctx: RunContext, event: Event) -> None:
        if hasattr(event, "usage"):  # only calls change the cost
            await warn_cost(ctx)

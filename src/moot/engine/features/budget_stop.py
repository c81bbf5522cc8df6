"""`limits.cost_limit` and `limits.token_limit`: the rounds stop before a call that would take the debate past
them, keeping `judge_reserve` for the verdict (moot.engine.budget_checks)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from moot.engine.budget_checks import stop_if_over_budget
from moot.engine.rules import Feature, Flow, NextStep
from moot.engine.steps import handler_for

if TYPE_CHECKING:
    from moot.engine.context import RunContext


class BudgetStop(Feature):
    async def before_step(self, ctx: RunContext, step: NextStep) -> Flow | None:
        return Flow.AGAIN if await stop_if_over_budget(ctx, handler_for(step()), step()) else None

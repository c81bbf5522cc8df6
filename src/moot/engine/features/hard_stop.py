"""After a hard stop (budget, user, deadline, too few participants, a window, a person's silence) no more debating
calls are made, whatever the format: the verdict on what exists, then the end (moot.engine.budget_checks); or,
for a format whose own result follows such a stop (`Traits.concludes_after_stop`), that result on what exists."""

from __future__ import annotations

from typing import TYPE_CHECKING

from moot.engine.budget_checks import HARD_STOPS, after_hard_stop
from moot.engine.rules import Feature, Flow, NextStep
from moot.protocols import Ask, Conclude, Finish, Judge

if TYPE_CHECKING:
    from moot.engine.context import RunContext

# The steps of a format's result: none of them holds a round.
_RESULT_STEPS = (Ask, Conclude, Judge, Finish)


class HardStop(Feature):
    async def before_step(self, ctx: RunContext, step: NextStep) -> Flow | None:
        stop = ctx.state.stop_reason
        if stop is None or stop.kind not in HARD_STOPS:
            return None
        if (
            ctx.protocol.traits.concludes_after_stop
            and stop.kind != "budget"
            and ctx.state.turns  # with nothing said there is nothing to conclude from
            and isinstance(step(), _RESULT_STEPS)
        ):
            return None
        await after_hard_stop(ctx)
        return Flow.END

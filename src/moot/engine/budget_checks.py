"""The run's budget between steps: the cost warning, stopping before a call would pass the limits, and what
follows a hard stop. The estimates and checks themselves are pure functions in moot.engine.budget."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from moot.domain.assessment import StopReason
from moot.domain.events import DebateCompleted, DebateStopping, Notice, RoundCompleted
from moot.engine.budget import over_budget
from moot.engine.steps.base import StepHandler
from moot.engine.steps.judging import budgeted, judge, verdict_affordable

if TYPE_CHECKING:
    from moot.engine.context import RunContext

# Stops that end the rounds from outside the format's rules: after them only the verdict is asked for.
HARD_STOPS = frozenset({"budget", "user", "deadline", "participants"})
# Who ended the rounds, for the notice when there is nothing to judge.
_STOPPED_BY = {"budget": "the budget", "deadline": "limits.debate_timeout_s", "participants": "failures"}


async def warn_cost(ctx: RunContext) -> None:
    """The `limits.warn_at_cost` notice, once, when the cost so far passes it."""
    limit = ctx.config.limits.warn_at_cost
    if limit is None or ctx.warned:
        return
    if any(n.startswith("budget: cost passed") for n in ctx.state.notices):  # a resumed debate
        ctx.warned = True
        return
    spent = ctx.state.usage.cost_usd
    if spent is not None and spent >= limit:
        ctx.warned = True
        message = f"cost passed ${limit:g} (limits.warn_at_cost): ${spent:.4f} spent so far"
        await ctx.emit(Notice(source="budget", message=message))


async def stop_if_over_budget(ctx: RunContext, handler: StepHandler[Any], step: Any) -> bool:
    """Stop the debate before a debating call that would pass `cost_limit` or `token_limit` (less the
    judge's reserve): close the round under way and record a `budget` stop. Not a protocol rule: the
    limits are about money, which the protocol does not see."""
    if not handler.cuttable or not budgeted(ctx):
        return False
    calls = handler.estimate(ctx, step)
    judged = ctx.config.judge is not None or bool(ctx.config.judges)
    why = over_budget(ctx.config.limits, ctx.state.usage, calls, verdict=not judged)
    if why is None:
        return False
    await stop_now(ctx, StopReason(kind="budget", detail=why))
    return True


async def stop_now(ctx: RunContext, reason: StopReason) -> None:
    """End the rounds here, whatever the format: close the round under way and record why."""
    current = ctx.state.current_round
    if current is not None and not current.completed:
        await ctx.emit(RoundCompleted(round=current.number))
    after = current.number if current is not None else 0
    await ctx.emit(DebateStopping(reason=reason, after_round=after))


async def after_hard_stop(ctx: RunContext) -> None:
    """After a hard stop (budget, user, deadline, too few participants) no more debating calls are made, whatever
    the format: the verdict on what exists (when a judge is configured and the limits allow it), then the end."""
    judged = ctx.config.judge is not None or bool(ctx.config.judges)
    reason = ctx.state.stop_reason
    kind = reason.kind if reason is not None else "user"
    if judged and not ctx.state.judged and not ctx.state.turns:
        message = f"no verdict: {_STOPPED_BY.get(kind, 'the user')} stopped the debate before anyone spoke"
        source = "budget" if kind == "budget" else "stop"
        await ctx.emit(Notice(source=source, message=message))
    elif judged and not ctx.state.judged and await verdict_affordable(ctx):
        await judge(ctx)
    await ctx.emit(DebateCompleted())

"""The run's budget between steps: the cost warning, stopping before a call would pass the limits, and what
follows a hard stop. The estimates and checks themselves are pure functions in moot.engine.budget."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from moot.domain.assessment import StopReason
from moot.domain.events import CostAcknowledged, CostPause, DebateCompleted, DebatePaused, Notice
from moot.engine.budget import cost_left, over_budget
from moot.engine.steps.base import StepHandler
from moot.engine.steps.judging import budgeted, judge, too_few_spoke, verdict_affordable
from moot.engine.stops import stop_now as stop_now

if TYPE_CHECKING:
    from moot.engine.context import RunContext

# Stops that end the rounds from outside the format's rules: after them only the verdict is asked for (or the
# format's own result, where it follows such a stop: `Traits.concludes_after_stop`).
HARD_STOPS = frozenset({"budget", "user", "deadline", "participants", "context", "person"})
# Who ended the rounds, for the notice when there is nothing to judge.
_STOPPED_BY = {
    "budget": "the budget",
    "deadline": "limits.debate_timeout_s",
    "participants": "failures",
    "person": "a person's silence (limits.on_human_timeout: stop)",
    "context": "a prompt too long for its window (history.on_overflow: end)",
}


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


async def pause_at_cost(ctx: RunContext, handler: StepHandler[Any], step: Any) -> bool:
    """Pause before a step that calls a model once the cost so far has passed `limits.pause_at_cost`, until
    someone acknowledges it (a resume continues, a stop goes to the verdict). Asked once per debate: after the
    acknowledgement the same threshold does not pause it again. True when the debate paused."""
    threshold = ctx.config.limits.pause_at_cost
    if threshold is None or ctx.state.cost_acknowledged is not None:
        return False
    spent = ctx.state.usage.cost_usd
    if spent is None or spent < threshold or handler.estimate(ctx, step).requests == 0:
        return False
    left, rounds = cost_left(ctx.state)
    rest = (
        f"; about ${left:.4f} more for the {rounds} round{'s' * (rounds != 1)} left"
        if left is not None and rounds
        else ""
    )
    reason = f"cost passed ${threshold:g} (limits.pause_at_cost): ${spent:.4f} spent so far{rest}"
    cost = CostPause(cost_usd=spent, threshold_usd=threshold, left_usd=left, rounds_left=rounds)
    await ctx.emit(DebatePaused(reason=reason, cost=cost))
    return True


async def acknowledge_cost(ctx: RunContext, by: str, *, ends_rounds: bool = False) -> None:
    """A run that carries on a debate paused at `limits.pause_at_cost` answers it: continue, or stop (a stop
    asked for with the resume, or a run that ends the rounds, as judging it again does)."""
    pause = ctx.state.cost_pause
    if pause is None:
        return
    choice = "stop" if ends_rounds or ctx.control.stop_requested else "continue"
    await ctx.emit(
        CostAcknowledged(threshold_usd=pause.threshold_usd, cost_usd=pause.cost_usd, choice=choice, by=by)
    )


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


async def after_hard_stop(ctx: RunContext) -> None:
    """After a hard stop (budget, user, deadline, too few participants) no more debating calls are made, whatever
    the format: the verdict on what exists (when a judge is configured and the limits allow it), then the end."""
    judged = ctx.config.judge is not None or bool(ctx.config.judges)
    reason = ctx.state.stop_reason
    kind = reason.kind if reason is not None else "user"
    if judged and not ctx.state.judged and (unheard := too_few_spoke(ctx)) is not None:
        before = "before anyone spoke" if not ctx.state.spoke else f"when {unheard}"
        message = f"no verdict: {_STOPPED_BY.get(kind, 'the user')} stopped the debate {before}"
        source = "budget" if kind == "budget" else "stop"
        await ctx.emit(Notice(source=source, message=message))
    elif judged and not ctx.state.judged and await verdict_affordable(ctx):
        await judge(ctx)
    await ctx.emit(DebateCompleted.of(ctx.state))

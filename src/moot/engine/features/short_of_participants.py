"""Participants dropped after failures: with too few left, or in a format that needs them all, the rounds end
and the verdict weighs those who spoke; with fewer than two who ever spoke there is nothing to weigh, so the
debate fails, and a resume (once the cause, a key, is fixed) brings them back."""

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
        if (why := unheard(ctx)) is not None:
            raise RunError(why)
        await stop_now(ctx, short)
        return Flow.AGAIN


def unheard(ctx: RunContext) -> str | None:
    """Why the failures left too few speakers to go on to a result (to judge: two), naming each who failed."""
    config, state = ctx.config, ctx.state
    # A verdict weighs speakers against each other: it needs two. A format whose result is its own (a design
    # review's synthesis) can make it of one proposal, saying who is missing.
    needed = min(2, len(config.participants)) if ctx.protocol.traits.gives_verdict else 1
    if len(state.spoke) >= needed:
        return None
    failed = "; ".join(
        f"{config.speaker_name(pid)} failed in round {state.dropped_rounds.get(pid, '?')}: {error}"
        for pid, error in state.dropped.items()
    )
    spoke = f"only {config.speaker_name(state.spoke[0])} spoke" if state.spoke else "no turn could be taken"
    short = "too few to judge" if ctx.protocol.traits.gives_verdict else "nothing to make a result of"
    return f"{spoke}, {short} ({failed}); once the cause is fixed, resume the debate to carry it on"


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

"""A turn whose prompt cannot fit its model's window even after its history strategy: `history.on_overflow`.

truncate cuts the oldest history to fit (the window fit in moot.context.fit, what moot always did); summarize
makes or refreshes the summary of older turns and quotes it instead (the window fit still cuts what that leaves
too long); end stops the rounds there and goes to the verdict with a `context` stop naming who and the figures.
The same choice answers a provider that says a prompt moot thought would fit does not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from moot.context import Fitted
from moot.context.strategies import Selection
from moot.domain.assessment import StopReason
from moot.engine.summaries import summarise
from moot.prompts.history import turn_id
from moot.protocols import TurnPrompt, TurnSpec

if TYPE_CHECKING:
    from moot.engine.context import RunContext

Fit = tuple[Fitted[TurnPrompt], Selection | None]


async def on_overflow(
    ctx: RunContext, round_number: int, spec: TurnSpec, fit: Fitted[TurnPrompt], sel: Selection | None
) -> Fit | StopReason:
    """The turn's prompt as `history.on_overflow` makes it when the window fit had to cut it (`fit`
    trimmed), or the stop that ends the rounds; `(fit, sel)` unchanged when it fitted."""
    if not fit.trimmed:
        return fit, sel
    action = ctx.config.history.on_overflow
    if action == "end":
        return overflow_stop(ctx, round_number, spec, fit)
    if action == "summarize":
        return await summarised(ctx, round_number, spec) or (fit, sel)
    return fit, sel


def overflow_stop(
    ctx: RunContext, round_number: int, spec: TurnSpec, fit: Fitted[TurnPrompt], *, provider: bool = False
) -> StopReason:
    """The `context` stop for this speaker's turn, with its figures."""
    config = ctx.config
    model = config.speaker_options(spec.speaker).model
    needs = fit.tokens if provider else fit.tokens_before
    said = f"{model} refused it as too long for its window" if provider else "more than the window holds"
    detail = (
        f"{config.speaker_name(spec.speaker)}'s turn in round {round_number} needs {needs:,} prompt tokens "
        f"+ {fit.reply_tokens:,} for the reply of {model}'s {fit.window:,}-token window: {said} "
        "(history.on_overflow: end)"
    )
    return StopReason(kind="context", detail=detail)


async def summarised(ctx: RunContext, round_number: int, spec: TurnSpec) -> Fit | None:
    """The turn quoting the summary of its older turns and the newest verbatim (history.keep_recent): the
    existing summary when the prompt then fits, else a new one covering every older turn. None when no summary
    can stand in (nothing older, a speaker that may not see every turn it would cover, a failed call)."""
    prompts = ctx.prompts
    current = _with_summary(ctx, round_number, spec)
    if current is not None and not current[0].trimmed:
        return current
    visible = ctx.protocol.visible_turns(ctx.config, ctx.state, round_number)
    older = visible[: max(len(visible) - ctx.config.history.keep_recent, 0)]
    if not older:
        return current
    index = {turn_id(t): i for i, t in enumerate(ctx.state.turns)}
    covers = index[turn_id(older[-1])] + 1
    # A failed summary is asked again only once more turns have piled up, not before every turn.
    if prompts.sees(visible, covers) and covers > ctx.state.summary_tried:
        await summarise(ctx, round_number, covers)
    return _with_summary(ctx, round_number, spec) or current


def _with_summary(ctx: RunContext, round_number: int, spec: TurnSpec) -> Fit | None:
    sel = ctx.prompts.selection(round_number, spec, strategy="summarize")
    if sel is None or not sel.summarised:
        return None
    return ctx.prompts.build_turn(round_number, spec, sel), sel

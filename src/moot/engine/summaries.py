"""Summaries of older turns, made once per span before the prompts that quote them (history.strategy)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from moot.context.windows import LOCAL_TURN_TOKENS
from moot.domain.events import HistorySummarised
from moot.domain.usage import Usage
from moot.engine.calls.retry import CallSite
from moot.errors import one_line
from moot.models.providers import redact
from moot.prompts.history import fenced, history_window, turn_id
from moot.prompts.render import render
from moot.protocols import TurnPrompt, TurnSpec

if TYPE_CHECKING:
    from moot.engine.context import RunContext

# How long a summary of older turns may be: short enough for the embedded model's reply cap.
SUMMARY_WORDS = 150


async def summarise_if_due(ctx: RunContext, round_number: int, turns: tuple[TurnSpec, ...]) -> None:
    """Make the summary a speaker's strategy asks for, once, before the prompts that quote it.

    It covers every turn said so far but the `history.keep_recent` newest, and is made only when
    that span has grown past the last one asked for: one call per span, not per turn."""
    for spec in turns:
        sel = ctx.prompts.selection(round_number, spec)
        if sel is None or not sel.wants_summary:
            continue
        visible = ctx.protocol.visible_turns(ctx.config, ctx.state, round_number)
        older = visible[: max(len(visible) - ctx.config.history.keep_recent, 0)]
        if not older:
            continue
        index = {turn_id(t): i for i, t in enumerate(ctx.state.turns)}
        covers = index[turn_id(older[-1])] + 1
        if not ctx.prompts.sees(visible, covers):  # it would tell this speaker what it may not see
            continue
        made = ctx.state.summary.covers if ctx.state.summary is not None else 0
        # After a failed call, try again only once another span has piled up, not before every turn.
        step = ctx.config.history.keep_recent if ctx.state.summary_tried > made else 1
        if covers >= ctx.state.summary_tried + step:
            await summarise(ctx, round_number, covers)
        return


async def summarise(ctx: RunContext, round_number: int, covers: int) -> None:
    options = ctx.config.summarizer_options()
    previous = ctx.state.summary
    start = previous.covers if previous is not None and previous.summary is not None else 0
    span = ctx.state.turns[start:covers]
    earlier = previous.summary if previous is not None and previous.summary is not None else ""

    def build(chars: int | None) -> TurnPrompt:
        window = history_window(ctx.config, span, max_chars=chars)
        user = render(
            "context_summary.j2",
            previous=fenced(earlier),
            history=window.turns,
            omitted=window.omitted,
            topic=ctx.config.topic,
            words=SUMMARY_WORDS,
        )
        return TurnPrompt(system=render("context_summary_system.j2"), user=user)

    fit = ctx.prompts.fit(options, build, LOCAL_TURN_TOKENS, f"the summary of turns 1-{covers}")
    await ctx.prompts.record_fit(fit, options, "summariser", round_number, "summary")

    async def ignore(text: str) -> None:
        return None

    label = str(options.model)
    summary: str | None = None
    error: str | None = None
    usage, latency = Usage(), 0.0
    try:
        caller = ctx.caller(options)
        call = caller.guarded(CallSite("summariser", "summary", round_number), fit.tokens + fit.reply_tokens)
        reply = await call.run(
            lambda: caller.stream(fit.prompt, purpose="summary", seed=ctx.config.seed, on_text=ignore)
        )
        usage, latency = reply.usage, reply.latency_s
        summary = reply.text.strip() or None
        error = None if summary else "the summariser gave an empty summary"
    except Exception as exc:  # a failed summary costs the debate only older turns, never the debate
        error = one_line(redact(str(exc))) or type(exc).__name__
    await ctx.emit(
        HistorySummarised(
            round=round_number,
            covers=covers,
            last_round=span[-1].round if span else round_number,
            summary=summary,
            model=label,
            error=error,
            usage=usage,
            latency_s=latency,
        )
    )

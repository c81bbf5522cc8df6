"""Ask: structured answers a format needs (a vote, a pairing's winner), from participants, the judge or a voice."""

from __future__ import annotations

from typing import TYPE_CHECKING

from moot.context.windows import LOCAL_JUDGE_TOKENS
from moot.domain.events import DecisionGiven
from moot.domain.state import Decision
from moot.domain.usage import Usage
from moot.engine.budget import call_estimate
from moot.engine.calls.retry import CallSite
from moot.protocols import Ask, AskSpec

if TYPE_CHECKING:
    from moot.engine.context import RunContext


class AskHandler:
    cuttable = True

    def estimate(self, ctx: RunContext, step: Ask) -> Usage:
        total = Usage()
        for ask in step.asks:
            options = ctx.config.speaker_options(ask.by)
            request = ctx.prompts.ask(step.round, ask).prompt
            total = total + call_estimate(options, request, LOCAL_JUDGE_TOKENS)
        return total

    async def take(self, ctx: RunContext, step: Ask) -> bool:
        await ctx.together([_ask(ctx, step.round, spec) for spec in step.asks])
        return False


async def _ask(ctx: RunContext, round_number: int, spec: AskSpec) -> None:
    """One structured answer the format asked for."""
    config = ctx.config
    options = config.speaker_options(spec.by)
    fit = ctx.prompts.ask(round_number, spec)
    await ctx.prompts.record_fit(fit, options, spec.by, round_number, spec.kind)
    request = fit.prompt
    caller = ctx.caller(options)
    result = await caller.ask(
        request.answer_type,
        request,
        seed=ctx.seed_of(spec.by),
        retries=config.judge.retries if config.judge is not None else 2,
        what=spec.kind,
        who="the judge" if spec.by == "judge" else config.speaker_name(spec.by),
        site=CallSite(spec.by, spec.kind, round_number),
        tokens=fit.tokens + fit.reply_tokens,
    )
    given = DecisionGiven(
        round=round_number,
        kind=spec.kind,
        by=spec.by,
        subject=spec.subject,
        model=caller.label,
        answer=result.answer.model_dump(mode="json") if result.answer is not None else None,
        error=result.error,
        attempts=result.attempts,
        usage=result.usage,
        latency_s=result.latency_s,
    )
    # The format's words for the answer travel with it, so every reader shows the same line.
    text = ctx.protocol.decision_text(config, Decision.of(given))
    await ctx.emit(given.model_copy(update={"text": text}))

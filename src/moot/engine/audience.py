"""The audience's two votes (`audience` in the config): before the first round and after the last, whatever the
format schedules. The loop asks `poll_due` before each step; a due vote is taken there, then the format is asked
again. People vote through the run's `People` (the server's audience link) while the vote is open; model personas
are proposed once (like `auto` personas) and each asked, both times, at once.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from moot.context.windows import LOCAL_JUDGE_TOKENS
from moot.domain.audience import AudienceVote
from moot.domain.audience import Phase as AudiencePhase
from moot.domain.events import AudienceCounted, AudienceOpened, AudienceSeated, utc_now
from moot.domain.personas import persona_text
from moot.domain.usage import Usage
from moot.engine.calls.replies import JudgeResult
from moot.engine.calls.retry import CallSite
from moot.engine.personas import propose_personas
from moot.judging.schema import bounded_text, whole_numbers
from moot.prompts.render import render
from moot.protocols import Conclude, Finish, Judge, StartRound, Step, TurnPrompt

if TYPE_CHECKING:
    from moot.engine.context import RunContext


class AudienceBallot(BaseModel):
    """What a persona in the audience answers."""

    choice: Literal["for", "against", "undecided"]
    confidence: int = Field(ge=0, le=100, json_schema_extra=whole_numbers(100))
    reason: str = Field(description="Why, in one sentence", json_schema_extra=bounded_text(200))


def poll_due(ctx: RunContext, step: Step) -> AudiencePhase | None:
    """The audience vote to take before `step`, if one is due."""
    audience = ctx.config.audience
    if audience is None or ctx.state.judging_again is not None:
        return None
    counted = ctx.state.audience_votes
    if isinstance(step, StartRound) and not ctx.state.rounds and "before" not in counted:
        return "before"
    if isinstance(step, Conclude | Judge | Finish) and "before" in counted and "after" not in counted:
        return "after"
    return None


async def poll(ctx: RunContext, phase: AudiencePhase) -> None:
    """One vote of the audience: open to people for `audience.window_s`, the personas asked meanwhile."""
    audience = ctx.config.audience
    assert audience is not None
    if audience.size and not ctx.state.audience_personas and phase == "before":
        await _seat(ctx)
    closes = None
    if audience.people:
        opened = ctx.state.audience_open
        if opened is None or opened.phase != phase:
            opened = AudienceOpened(phase=phase, closes_at=utc_now() + timedelta(seconds=audience.window_s))
            await ctx.emit(opened)
        closes = opened.closes_at
    personas = asyncio.create_task(_personas_vote(ctx, phase))
    try:
        if closes is not None:
            await asyncio.sleep(max((closes - utc_now()).total_seconds(), 0.0))
        votes, usage, attempts, error = await personas
    finally:
        personas.cancel()
    people = (
        await ctx.people.votes(ctx.debate_id, phase) if audience.people and ctx.people is not None else []
    )
    await ctx.emit(
        AudienceCounted(
            phase=phase,
            votes=[*people, *votes],
            model=str(ctx.config.audience_options().model) if audience.size else "people",
            usage=usage,
            attempts=attempts,
            error=error,
        )
    )


async def _seat(ctx: RunContext) -> None:
    audience = ctx.config.audience
    assert audience is not None
    caller = ctx.caller(ctx.config.audience_options())
    ids = [f"audience-{i + 1}" for i in range(audience.size)]
    proposals, result = await propose_personas(ctx.config, caller, ids=ids, seed=ctx.config.seed)
    await ctx.emit(
        AudienceSeated(
            model=caller.label,
            personas=proposals,
            error=result.error,
            attempts=result.attempts,
            usage=result.usage,
            latency_s=result.latency_s,
        )
    )


async def _personas_vote(
    ctx: RunContext, phase: AudiencePhase
) -> tuple[list[AudienceVote], Usage, int, str | None]:
    seated = ctx.state.audience_personas
    if not seated:
        return [], Usage(), 0, None
    results = await asyncio.gather(*(_persona_vote(ctx, pid, phase) for pid in seated))
    votes = [
        AudienceVote(
            voter=pid,
            kind="persona",
            name=_persona_name(pid),
            choice=result.answer.choice,
            confidence=result.answer.confidence,
            reason=" ".join(result.answer.reason.split())[:400],
        )
        for pid, result in zip(seated, results, strict=True)
        if result.answer is not None
    ]
    usage = sum((r.usage for r in results), Usage())
    errors = [r.error for r in results if r.error is not None]
    error = f"{len(errors)} of {len(results)} personas gave no vote: {errors[0]}" if errors else None
    return votes, usage, sum(r.attempts for r in results), error


def _persona_name(pid: str) -> str:
    return f"Audience member {pid.rsplit('-', 1)[-1]}"


async def _persona_vote(ctx: RunContext, pid: str, phase: AudiencePhase) -> JudgeResult[AudienceBallot]:
    config = ctx.config
    options = config.audience_options()
    after = phase == "after"
    persona = persona_text(ctx.state.audience_personas[pid])

    def build(chars: int | None) -> TurnPrompt:
        prompt_ctx = ctx.prompts.prompt_context(ctx.state.rounds[-1].number if ctx.state.rounds else 1)
        window = prompt_ctx.with_budget(chars).history(ctx.state.turns, labelled=True)
        system = render("audience_vote_system.j2", persona=persona, after=after)
        user = render(
            "audience_vote.j2",
            motion=config.topic,
            after=after,
            history=window.turns if after else [],
            omitted=window.omitted if after else 0,
        )
        return TurnPrompt(system=system, user=user)

    fit = ctx.prompts.fit(options, build, LOCAL_JUDGE_TOKENS, f"{_persona_name(pid)}'s vote {phase}")
    seed = config.seed + int(pid.rsplit("-", 1)[-1]) if config.seed is not None else None
    return await ctx.caller(options).ask(
        AudienceBallot,
        fit.prompt,
        seed=seed,
        retries=config.judge.retries if config.judge is not None else 2,
        what="audience vote",
        who=_persona_name(pid),
        site=CallSite("audience", f"vote {phase}"),
        tokens=fit.tokens + fit.reply_tokens,
    )

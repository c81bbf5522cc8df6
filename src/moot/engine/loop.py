"""The run's loop: the next step from the protocol, its handler, the budget checked against the handler's
estimate, then the step taken, until the debate ends, pauses, fails or is interrupted.

Every durable event is appended to the log before the next step is decided (RunContext.emit), so the state the
protocol sees is exactly fold(stored events).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Literal

from moot.domain.assessment import StopReason
from moot.domain.events import (
    DebateCompleted,
    DebateFailed,
    DebateInterrupted,
    DebatePaused,
    DebateQueued,
    DebateResumed,
    DebateStarted,
    Event,
    JudgingRequested,
    Notice,
    PersonasAssigned,
)
from moot.domain.personas import auto_persona_ids
from moot.engine.audience import poll, poll_due
from moot.engine.budget import price_notice
from moot.engine.budget_checks import (
    HARD_STOPS,
    acknowledge_cost,
    after_hard_stop,
    pause_at_cost,
    stop_if_over_budget,
    stop_now,
)
from moot.engine.context import RunContext
from moot.engine.personas import propose_personas
from moot.engine.steps import handler_for
from moot.engine.webhooks import notify_end
from moot.errors import MootError, RunError
from moot.models.providers import redact
from moot.protocols import Judge, Step

CREATED = "created; waiting to be started"
Hold = Literal["created", "queued"]  # what a new debate recorded without running is left as


async def run_events(
    ctx: RunContext,
    *,
    resumed: str | None = None,
    hold: Hold | None = None,
    judging: JudgingRequested | None = None,
) -> AsyncIterator[Event]:
    """Drive the run and yield its events as they are recorded; cancelling the consumer interrupts the run.

    `resumed` is the reason when the run carries a stored debate on; with `hold`, a new debate is recorded and
    left before its first call, `created` (a start runs it) or `queued` (its server starts it when a running slot
    is free); with `judging` (and `resumed`), the run is that judging of the stored
    debate."""
    task = asyncio.create_task(_drive(ctx, resumed, hold, judging))
    deadline = asyncio.create_task(_deadline(ctx)) if ctx.initial.limits.debate_timeout_s else None
    try:
        while (event := await ctx.events.get()) is not None:
            yield event
        await task  # re-raise anything the drive raised
    finally:
        for running in (task, deadline):
            if running is not None and not running.done():
                running.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await running


async def _deadline(ctx: RunContext) -> None:
    """At `limits.debate_timeout_s` of running time, stop the debate: the call under way is cut, the judge
    rules on what exists (within limits.judge_timeout_s)."""
    limit = ctx.initial.limits.debate_timeout_s
    assert limit is not None
    await asyncio.sleep(max(limit - ctx.ran_before, 0.0))
    detail = f"the debate ran for its limit of {limit:g} s (limits.debate_timeout_s)"
    ctx.control.stop(StopReason(kind="deadline", detail=detail))


async def _drive(
    ctx: RunContext, resumed: str | None, hold: Hold | None, judging: JudgingRequested | None
) -> None:
    ctx.started = time.monotonic() - ctx.ran_before
    try:
        if resumed is None:
            await _begin(ctx)
            if hold is not None:
                await ctx.emit(
                    DebatePaused(reason=CREATED, before_start=True) if hold == "created" else DebateQueued()
                )
                return
        else:
            await ctx.emit(
                DebateResumed(reason=resumed, after_status=ctx.state.status, after_seq=ctx.state.last_seq)
            )
            await acknowledge_cost(ctx, resumed, ends_rounds=judging is not None)
            if judging is not None:
                await ctx.emit(judging)
        if ctx.state.judging_again is not None:  # asked for now, or cut off before its end and resumed
            await _judge_again(ctx)
            return
        if auto_persona_ids(ctx.config):  # a new debate's, or one created or cut before they were given
            await _assign_personas(ctx)
        while True:
            if ctx.control.stop_requested and ctx.state.stop_reason is None:
                why = ctx.control.stop_reason or StopReason(kind="user", detail="stopped by the user")
                await stop_now(ctx, why)
            if ctx.state.stop_reason is None and (short := _short_of_participants(ctx)) is not None:
                if not ctx.state.turns:
                    # Nothing to judge: a failure, which `retry` runs again once the cause (a key) is fixed.
                    raise RunError(f"no turn could be taken: {'; '.join(ctx.state.dropped.values())}")
                await stop_now(ctx, short)
            if ctx.state.stop_reason is not None and ctx.state.stop_reason.kind in HARD_STOPS:
                await after_hard_stop(ctx)
                break
            if ctx.control.pause_requested:
                await ctx.emit(DebatePaused())
                break
            step = ctx.protocol.next_step(ctx.scheduled, ctx.state)
            if (phase := poll_due(ctx, step)) is not None:
                await poll(ctx, phase)  # the audience votes before the first round and after the last
                continue
            if await pause_at_cost(ctx, handler_for(step), step):
                break
            if await stop_if_over_budget(ctx, handler_for(step), step):
                continue
            if await _take(ctx, step):
                break
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            await asyncio.shield(ctx.emit(DebateInterrupted(reason=ctx.control.interrupt_reason)))
        raise
    except MootError as exc:
        await ctx.emit(DebateFailed(error=redact(str(exc)), error_type=type(exc).__name__))
    except Exception as exc:  # an unexpected bug must still leave a closed, readable record
        await ctx.emit(DebateFailed(error=redact(f"internal error: {exc!r}"), error_type=type(exc).__name__))
        raise
    finally:
        try:
            await notify_end(ctx)  # before the stream ends, so a CLI run does not exit before its webhooks
        finally:
            ctx.events.put_nowait(None)


async def _judge_again(ctx: RunContext) -> None:
    """A judging asked for after the rounds: the Judge step's own handler with the judges asked for (the run's
    config has them), then the end. A debate whose rounds had not ended (paused, failed) ends them here."""
    again = ctx.state.judging_again
    assert again is not None
    if ctx.state.stop_reason is None:
        detail = f"a verdict was asked for before its rounds ended ({again.reason})"
        await stop_now(ctx, StopReason(kind="user", detail=detail))
    if not ctx.state.judged:
        await _take(ctx, Judge())
    await ctx.emit(DebateCompleted())


async def _take(ctx: RunContext, step: Step) -> bool:
    """Take one step as a task a stop can cut (a debating call, while the rounds have not stopped yet).
    True when the debate is over."""
    handler = handler_for(step)
    cuttable = handler.cuttable and ctx.state.stop_reason is None
    task = asyncio.create_task(handler.take(ctx, step))
    ctx.control.running(task, cuttable=cuttable)
    try:
        return await task
    except asyncio.CancelledError:
        if not ctx.control.cut():
            raise
        return False  # the loop records the stop and goes on to the verdict


async def _begin(ctx: RunContext) -> None:
    config = ctx.initial
    protocol = ctx.protocol
    # Carried by the event so that the CLI, the exports and the page say the same without asking the format.
    await ctx.emit(
        DebateStarted(
            config=config,
            planned_rounds=protocol.planned_rounds(config),
            gives_verdict=protocol.gives_verdict,
            assesses_rounds=protocol.assesses_rounds(config),
            eval_run=ctx.eval_run,
        )
    )
    for message in ctx.protocol.notices(config):
        await ctx.emit(Notice(source=config.format, message=message))
    if (unpriced := price_notice(config)) is not None:
        await ctx.emit(Notice(source="budget", message=unpriced))


async def _assign_personas(ctx: RunContext) -> None:
    """Fill the 'auto' personas with a model's proposal; the recorded event carries them for replays."""
    config = ctx.config
    caller = ctx.caller(config.voice_options())
    proposals, result = await propose_personas(config, caller, ids=auto_persona_ids(config), seed=config.seed)
    await ctx.emit(
        PersonasAssigned(
            model=caller.label,
            personas=proposals,
            reasoning=result.answer.reasoning if result.answer is not None else "",
            error=result.error,
            attempts=result.attempts,
            usage=result.usage,
            latency_s=result.latency_s,
        )
    )


def _short_of_participants(ctx: RunContext) -> StopReason | None:
    """Why the rounds cannot go on after failures: too few participants left, or a format that needs them all."""
    dropped = ctx.state.dropped
    if not dropped:
        return None
    config = ctx.config
    names = ", ".join(config.speaker_name(pid) for pid in dropped)
    left = len(config.participants) - len(dropped)
    if left < max(2, ctx.protocol.min_participants):
        return StopReason(
            kind="participants",
            detail=f"{names} failed; {left} participant{'s' if left != 1 else ''} left, fewer than 2",
        )
    if not ctx.protocol.continues_without:
        them = "them" if len(dropped) > 1 else "it"
        return StopReason(
            kind="participants",
            detail=f"{names} failed; the {config.format} format cannot go on without {them}",
        )
    return None

"""The run's loop: rules, next step, handler, take. Before each of the format's steps the run's features are
asked whether something comes first (moot.engine.rules, moot.engine.features); then the step's handler takes it,
until the debate ends, pauses, fails or is interrupted.

Every durable event is appended to the log before the next step is decided (RunContext.emit), so the state the
protocol sees is exactly fold(stored events).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import AsyncIterator, Sequence
from typing import Literal

from moot.domain.events import (
    DebateFailed,
    DebateInterrupted,
    DebatePaused,
    DebateQueued,
    DebateResumed,
    DebateStarted,
    Event,
    JudgingRequested,
    Notice,
)
from moot.engine.budget import price_notice
from moot.engine.budget_checks import acknowledge_cost
from moot.engine.context import RunContext
from moot.engine.features import for_run
from moot.engine.rules import Feature, Flow, NextStep, observing
from moot.engine.steps import take
from moot.errors import MootError
from moot.models.providers import redact
from moot.protocols import assesses_rounds, planned_rounds

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
    is free); with `judging` (and `resumed`), the run is that judging of the stored debate."""
    features = for_run()
    ctx.features = observing(features)
    task = asyncio.create_task(_drive(ctx, features, resumed, hold, judging))
    try:
        while (event := await ctx.events.get()) is not None:
            yield event
        await task  # re-raise anything the drive raised
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


async def _drive(
    ctx: RunContext,
    features: Sequence[Feature],
    resumed: str | None,
    hold: Hold | None,
    judging: JudgingRequested | None,
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
        for feature in features:
            await feature.on_start(ctx)
        # Rules, next step, handler, take: each feature may act before the format's step (moot.engine.rules).
        while True:
            step = functools.cache(lambda: ctx.protocol.next_step(ctx.scheduled, ctx.state))
            flow = await _before_step(ctx, features, step)
            if flow is Flow.END:
                break
            if flow is Flow.AGAIN:
                continue
            if await take(ctx, step()):
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
            # Before the stream ends, so a CLI run does not exit before its webhooks; a hold's run has none.
            for feature in features:
                await feature.on_end(ctx)
        finally:
            ctx.events.put_nowait(None)


async def _before_step(ctx: RunContext, features: Sequence[Feature], step: NextStep) -> Flow | None:
    """The first feature that acts before the format's next step says what follows; None: take the step."""
    for feature in features:
        if (flow := await feature.before_step(ctx, step)) is not None:
            return flow
    return None


async def _begin(ctx: RunContext) -> None:
    config = ctx.initial
    protocol = ctx.protocol
    # Carried by the event so that the CLI, the exports and the page say the same without asking the format.
    await ctx.emit(
        DebateStarted(
            config=config,
            planned_rounds=planned_rounds(protocol, config),
            gives_verdict=protocol.traits.gives_verdict,
            assesses_rounds=assesses_rounds(protocol, config),
            eval_run=ctx.eval_run,
        )
    )
    for message in ctx.protocol.notices(config):
        await ctx.emit(Notice(source=config.format, message=message))
    if (unpriced := price_notice(config)) is not None:
        await ctx.emit(Notice(source="budget", message=unpriced))

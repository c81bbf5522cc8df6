"""One handler per kind of the protocol's steps (moot.protocols.steps), each over the run's explicit context."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from moot.engine.steps.ask import AskHandler
from moot.engine.steps.base import StepHandler
from moot.engine.steps.judging import AssessHandler, JudgeHandler
from moot.engine.steps.rounds import (
    ConcludeHandler,
    EndRoundHandler,
    FinishHandler,
    StartRoundHandler,
    StopHandler,
)
from moot.engine.steps.speak import SpeakHandler
from moot.protocols import Ask, Assess, Conclude, EndRound, Finish, Judge, Speak, StartRound, Step, Stop

if TYPE_CHECKING:
    from moot.engine.context import RunContext

HANDLERS: dict[type[Any], StepHandler[Any]] = {
    StartRound: StartRoundHandler(),
    Speak: SpeakHandler(),
    Ask: AskHandler(),
    EndRound: EndRoundHandler(),
    Assess: AssessHandler(),
    Stop: StopHandler(),
    Conclude: ConcludeHandler(),
    Judge: JudgeHandler(),
    Finish: FinishHandler(),
}


def handler_for(step: Step) -> StepHandler[Any]:
    """The handler of this step's kind; a protocol's step the engine has no handler for is a bug."""
    return HANDLERS[type(step)]


async def take(ctx: RunContext, step: Step) -> bool:
    """Take one step as a task a stop can cut (a debating call, while the rounds have not stopped yet). True when
    the debate is over."""
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

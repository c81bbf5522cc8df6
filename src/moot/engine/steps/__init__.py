"""One handler per kind of the protocol's steps (moot.protocols.steps), each over the run's explicit context."""

from __future__ import annotations

from typing import Any

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

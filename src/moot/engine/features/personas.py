"""`auto` personas: before the first turn (of a new debate, or one created or cut before they were given), a model
proposes them; the recorded event carries them, so replays and resumes read them from the log."""

from __future__ import annotations

from typing import TYPE_CHECKING

from moot.domain.events import PersonasAssigned
from moot.domain.personas import auto_persona_ids
from moot.engine.personas import propose_personas
from moot.engine.rules import Feature, Flow, NextStep

if TYPE_CHECKING:
    from moot.engine.context import RunContext


class Personas(Feature):
    def __init__(self) -> None:
        self.asked = False  # once a run: a proposal that failed leaves the personas as written

    async def before_step(self, ctx: RunContext, step: NextStep) -> Flow | None:
        if self.asked or ctx.state.judging_again is not None:
            return None
        self.asked = True
        config = ctx.config
        ids = auto_persona_ids(config)
        if not ids:
            return None
        caller = ctx.caller(config.voice_options())
        proposals, result = await propose_personas(config, caller, ids=ids, seed=config.seed)
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
        return Flow.AGAIN

"""One turn's lifecycle, whoever answers it: announced, asked of its answerer under the round's clock, and recorded
as said, cut, skipped or as the speaker's drop. The one module that makes `turn_started` and `turn_completed`.

An answerer is what gives the text: a model through its Caller (moot.engine.steps.speak), a person through the
People port (moot.engine.people). A model's turn is announced when its call begins, so its tokens stream into
it; a person's when their answer comes (they were asked with a durable `turn_awaited`, which the page shows).
The round's time limit (`limits.round_timeout_s`, moot.engine.round_clock) bounds the answer, never the
recording: a turn cancelled while it was being stored would be recorded again as cut.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from moot.domain.events import ParticipantDropped, TurnCompleted, TurnStarted
from moot.domain.faults import FaultKind
from moot.domain.state import turn_key
from moot.domain.usage import Usage
from moot.engine.round_clock import cut_note, seconds_left
from moot.errors import ModelCallError

if TYPE_CHECKING:
    from moot.engine.context import RunContext
    from moot.protocols import TurnSpec


@dataclass(frozen=True)
class Said:
    """The turn's text, as its answerer gave it."""

    text: str
    usage: Usage
    latency_s: float
    first_token_s: float | None = None
    model_version: str | None = None
    skipped: bool = False  # a person who gave no turn in time: `text` is the note saying so


@dataclass(frozen=True)
class Dropped:
    """The speaker failed for good: it speaks no more (its completed turns stay)."""

    fault: FaultKind
    error: str


Outcome = Said | Dropped | None  # None: nothing to record now (a pause, a stop asked for meanwhile)


@dataclass
class Turn:
    """One turn being taken: who, in which round, answered by which model (or `human`)."""

    ctx: RunContext
    round: int
    spec: TurnSpec
    model: str
    together: int
    began: float | None = None  # when its call (or its wait) began, time.monotonic(); None: not yet

    @property
    def names(self) -> dict[str, Any]:
        """What every event of this turn says of it: its round, speaker, whom it answers, and the model."""
        return {
            "round": self.round,
            "participant_id": self.spec.speaker,
            "target": self.spec.target,
            "model": self.model,
        }

    async def announce(self) -> None:
        """Record that the turn has begun (once); a model's answerer does so as its call begins."""
        if turn_key(self.spec.speaker, self.spec.target) in self.ctx.state.speaking:
            return
        await self.ctx.emit(TurnStarted(**self.names, together=self.together))


class Answerer(Protocol):
    # Whether its text streams into the turn as it comes (a model's): the turn is then announced before it is
    # asked, outside the round's clock, as the recording of a turn always is.
    live: bool

    async def answer(self, turn: Turn) -> Outcome:
        """The turn's outcome. A ModelCallError it raises fails the debate (a format's own voice, an error no
        retry classifies); a cancellation by the round's clock is the turn's cut."""
        ...


async def take_turn(turn: Turn, answerer: Answerer) -> None:
    """Take `turn` from `answerer` under the round's clock, and record how it went."""
    ctx = turn.ctx
    left = seconds_left(ctx, turn.round)
    if left == 0.0:  # the round's time is up: nobody is asked
        await record_cut(turn)
        return
    if answerer.live:
        turn.began = time.monotonic()
        await turn.announce()
    clock = asyncio.timeout(left)
    try:
        async with clock:
            outcome = await answerer.answer(turn)
    except TimeoutError:
        if not clock.expired():
            raise
        await record_cut(turn)
        return
    except ModelCallError:
        if (
            clock.expired()
        ):  # a client that made the cancellation its own error: the time ran out all the same
            await record_cut(turn)
            return
        raise
    if isinstance(outcome, Said):
        await turn.announce()
        await ctx.emit(
            TurnCompleted(
                **turn.names,
                text=outcome.text,
                usage=outcome.usage,
                latency_s=outcome.latency_s,
                first_token_s=outcome.first_token_s,
                model_version=outcome.model_version,
                skipped=outcome.skipped,
            )
        )
    elif isinstance(outcome, Dropped):
        await ctx.emit(
            ParticipantDropped(
                participant_id=turn.spec.speaker,
                round=turn.round,
                model=turn.model,
                fault=outcome.fault,
                error=outcome.error,
            )
        )


async def record_cut(turn: Turn) -> None:
    """Record the turn as cut by the round's time limit, with what it had streamed so far."""
    ctx = turn.ctx
    key = turn_key(turn.spec.speaker, turn.spec.target)
    begun = turn.began is not None or key in ctx.state.awaiting
    await turn.announce()  # every turn_completed follows its turn_started
    await ctx.emit(
        TurnCompleted(
            **turn.names,
            text=ctx.state.speaking.get(key, ""),
            # A cancelled call reports no usage (its cost stays unknown, as a stop's cut call's does); a turn never
            # called cost nothing.
            usage=Usage() if turn.began is not None else Usage(cost_usd=0.0),
            latency_s=round(time.monotonic() - turn.began, 3) if turn.began is not None else 0.0,
            cut=True,
            note=cut_note(ctx, begun),
        )
    )


__all__ = ["Answerer", "Dropped", "Outcome", "Said", "Turn", "record_cut", "take_turn"]

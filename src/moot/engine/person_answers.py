"""The engine's side of asking people (moot.engine.people): a person's turn as an answerer (moot.engine.turns) and
a person's verdict, each asked for once, durably (`turn_awaited`, `verdict_awaited`: a run carried on after a
restart waits again, to the same deadline, without asking twice), then waited for on the run's `People`."""

from __future__ import annotations

import asyncio
import contextlib
import time
from asyncio import FIRST_COMPLETED
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from moot.domain.assessment import StopReason
from moot.domain.events import TurnAwaited, VerdictAwaited, utc_now
from moot.domain.person_verdict import PersonVerdict
from moot.domain.state import turn_key, verdict_key
from moot.domain.usage import Usage
from moot.engine.people import People, TurnAsk, VerdictAsk, VerdictCheck, require_people
from moot.engine.turns import Outcome, Said, Turn
from moot.judging.schema import criteria_of

if TYPE_CHECKING:
    from moot.engine.context import RunContext


def deadline(ctx: RunContext) -> datetime | None:
    limit = ctx.config.limits.human_turn_timeout_s
    return utc_now() + timedelta(seconds=limit) if limit is not None else None


def _seconds_left(until: datetime | None) -> float | None:
    return None if until is None else max((until - utc_now()).total_seconds(), 0.0)


def _people(ctx: RunContext) -> People:
    if ctx.people is None:  # require_people refused this before the run; a resume by another edge lands here
        require_people(ctx.config, None)
    assert ctx.people is not None
    return ctx.people


class PersonTurn:
    """A turn a person answers (a participant whose model is `human`): asked for once, durably (`turn_awaited`, so
    a restart waits again to the same deadline), waited for, and given as they wrote it; skipped, or a stop, when
    their own time runs out. The round's time limit is the turn's clock (moot.engine.turns)."""

    live = False

    async def answer(self, turn: Turn) -> Outcome:
        ctx, round_number, spec = turn.ctx, turn.round, turn.spec
        config = ctx.config
        pid = spec.speaker
        participant = config.participant(pid)
        key = turn_key(pid, spec.target)
        awaited = ctx.state.awaiting.get(key)
        if not isinstance(awaited, TurnAwaited):
            awaited = TurnAwaited(
                round=round_number,
                participant_id=pid,
                target=spec.target,
                deadline=deadline(ctx),
                max_chars=config.limits.human_turn_max_chars,
            )
            await ctx.emit(awaited)
        turn_round = ctx.state.round(round_number)
        phase = turn_round.phase if turn_round is not None else None
        # The format words the side and task on the turn where it has its own (the chamber's, a schedule's part).
        stance = spec.stance if spec.stance is not None else participant.stance
        task = spec.task
        if task is None:
            phases = ctx.protocol.phases(config.rounds)
            task = next((p.description for p in phases if p.covers(round_number)), "")
        ask = TurnAsk(
            debate_id=ctx.debate_id,
            round=round_number,
            participant_id=pid,
            name=participant.name,
            stance=stance,
            target=config.speaker_name(spec.target) if spec.target is not None else None,
            phase=phase,
            task=task,
            deadline=awaited.deadline,
            max_chars=awaited.max_chars,
        )
        asked = utc_now()
        turn.began = time.monotonic()
        answer = asyncio.ensure_future(_people(ctx).turn(ask))
        # A pause does not wait for the person: the turn stays asked for (same deadline) and the resume waits again.
        paused = asyncio.ensure_future(ctx.control.until_paused())
        try:
            await asyncio.wait(
                {answer, paused}, timeout=_seconds_left(awaited.deadline), return_when=FIRST_COMPLETED
            )
        finally:
            paused.cancel()
            if not answer.done():
                answer.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await answer
        skipped = False
        if answer.done() and not answer.cancelled():
            text = answer.result()
        elif ctx.control.pause_requested:
            return None
        else:
            limit = config.limits.human_turn_timeout_s
            note = f"{participant.name} gave no turn within {limit:g} s (limits.human_turn_timeout_s)"
            if config.limits.on_human_timeout == "stop":
                ctx.control.stop(StopReason(kind="person", detail=note))
                return None
            text, skipped = f"({note}; the turn was skipped.)", True
        return Said(
            text=text.strip()[: awaited.max_chars],
            usage=Usage(),
            latency_s=round((utc_now() - asked).total_seconds(), 3),
            skipped=skipped,
        )


async def person_verdict_of(
    ctx: RunContext, judge_seat: int | None, name: str, check: VerdictCheck
) -> PersonVerdict | None:
    """A person's verdict: asked for (once, durably) and waited for; None when their time ran out."""
    config = ctx.config
    key = verdict_key(judge_seat)
    awaited = ctx.state.awaiting.get(key)
    if not isinstance(awaited, VerdictAwaited):
        awaited = VerdictAwaited(judge=judge_seat, name=name, deadline=deadline(ctx))
        await ctx.emit(awaited)
    judge = config.judges[judge_seat] if judge_seat is not None else config.judge
    ask = VerdictAsk(
        debate_id=ctx.debate_id,
        judge=judge_seat,
        name=name,
        participants=tuple((p.id, p.name, p.stance) for p in config.participants),
        criteria=tuple(criteria_of(judge)),
        names_winner=ctx.protocol.traits.names_winner,
        deadline=awaited.deadline,
    )
    try:
        return await asyncio.wait_for(_people(ctx).verdict(ask, check), _seconds_left(awaited.deadline))
    except TimeoutError:
        return None

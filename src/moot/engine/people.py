"""Where people answer in a debate: the port a run asks them through, and the engine's side of asking.

A participant or judge whose model is `human` is a person. The engine records what it asks them for
(`turn_awaited`, `verdict_awaited`: durable, so a run carried on after a restart waits again, to the same
deadline, without asking twice) and then waits on the run's `People`, which the edge that runs the debate
provides: the CLI's terminal or standard input (moot.cli.people), the server's join links (moot.server.people).
What they give is recorded like a model's answer: a person's turn is a `turn_completed`, their verdict a
`verdict` (or a panel judge's `judge_verdict`), with no usage, so no model ledger counts them.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from asyncio import FIRST_COMPLETED
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Protocol

from moot.domain.assessment import StopReason
from moot.domain.audience import AudienceVote
from moot.domain.audience import Phase as AudiencePhase
from moot.domain.config import DebateConfig
from moot.domain.events import TurnAwaited, VerdictAwaited, utc_now
from moot.domain.person_verdict import PersonVerdict
from moot.domain.state import turn_key, verdict_key
from moot.domain.usage import Usage
from moot.domain.verdict import ScoredCriterion
from moot.engine.turns import Outcome, Said, Turn
from moot.errors import UserError
from moot.judging.schema import criteria_of

if TYPE_CHECKING:
    from moot.engine.context import RunContext


@dataclass(frozen=True)
class TurnAsk:
    """A person's turn, as the edge shows it to them."""

    debate_id: str
    round: int
    participant_id: str
    name: str
    stance: str
    target: str | None  # whom they answer (a speaker's name), when the format addresses the turn
    phase: str | None
    task: str  # what the format asks of every speaker in this phase
    deadline: datetime | None
    max_chars: int


@dataclass(frozen=True)
class VerdictAsk:
    """A person's verdict, as the edge asks for it."""

    debate_id: str
    judge: int | None  # panel seat, None: the single judge
    name: str
    participants: tuple[tuple[str, str, str], ...]  # (id, name, stance) in config order
    criteria: tuple[ScoredCriterion, ...]
    names_winner: bool
    deadline: datetime | None


class People(Protocol):
    """How a run reaches the people in it. Each call waits as long as it takes (the engine bounds it with
    limits.human_turn_timeout_s); cancelling it (a stop, a pause, a shutdown) must leave nothing half-given."""

    async def turn(self, ask: TurnAsk) -> str:
        """The person's turn: plain text, at most `ask.max_chars` characters."""
        ...

    async def verdict(self, ask: VerdictAsk, check: VerdictCheck) -> PersonVerdict:
        """The person's verdict; `check` raises a UserError naming the field when it cannot stand (the edge asks
        again rather than hand on a verdict the engine would refuse)."""
        ...

    async def votes(self, debate_id: str, phase: AudiencePhase) -> list[AudienceVote]:
        """The people's audience votes in this phase so far (empty: none, or no people in this audience)."""
        ...


class VerdictCheck(Protocol):
    def __call__(self, given: PersonVerdict) -> None: ...


def require_people(config: DebateConfig, people: People | None, *, how: str = "") -> None:
    """Refuse, before anything is written, a config with people in it that this way in cannot ask."""
    seats = config.people()
    if seats and people is None:
        where = how or "this way in"
        raise UserError(
            f"a person answers here, and {where} cannot ask one; hold it with `moot run` (the terminal or "
            "standard input) or `moot serve` (join links)",
            field=f"{seats[0]}" + (".model" if not seats[0].startswith("audience") else ""),
        )


def is_person(config: DebateConfig, speaker: str) -> bool:
    return any(p.id == speaker and p.model.is_person for p in config.participants)


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
        stance, task = ctx.protocol.person_brief(config, ctx.state, spec, round_number)
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
        names_winner=ctx.protocol.names_winner,
        deadline=awaited.deadline,
    )
    try:
        return await asyncio.wait_for(_people(ctx).verdict(ask, check), _seconds_left(awaited.deadline))
    except TimeoutError:
        return None

"""The server's side of people in a debate (moot.engine.people's `People` port): a run that waits for a person's
turn or verdict waits here, on a pending answer per (debate, seat), until the person gives it through their join
link (`POST /api/debates/{id}/turns`, `.../verdict`: moot.server.seats); the audience's people's votes are kept in
the store and handed to the engine when it counts a phase.

While a run waits for a person it holds none of the manager's running slots (`Slots`): a debate may wait for hours,
and debates of models only go on meanwhile. A request that gives an answer returns once the engine has stored what
it recorded (the `turn_completed`, the verdict), which the manager reports here as its events pass (`observe`); if
the run ends first (a stop, a pause, the server shutting down), the request is told its answer was not kept, and
nothing is half-given: the engine asks again when the debate carries on.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from moot.domain.audience import AudienceVote, Choice
from moot.domain.audience import Phase as AudiencePhase
from moot.domain.events import Event, JudgeVerdictGiven, TurnCompleted, VerdictGiven, utc_now
from moot.domain.person_verdict import PersonVerdict
from moot.engine import TurnAsk, VerdictAsk, VerdictCheck
from moot.errors import StateError
from moot.store import EventStore

# How long a request that gives an answer waits for the run to ask for it, when the stored log says it is asked
# for (a run carried on after a restart, a moment from asking again).
ASK_AGAIN_WAIT_S = 10.0


def judge_seat(judge: int | None) -> str:
    """The seat of a person judging: `judge` (the single judge) or `judge-<n>` (panel seat n, 0-based)."""
    return "judge" if judge is None else f"judge-{judge}"


def voter_hash(debate_id: str, voter: str) -> str:
    """A browser's voter id as the store keeps it: hashed with the debate's id, so no two debates share it."""
    return hashlib.sha256(f"{debate_id}\n{voter}".encode()).hexdigest()


class Slots(Protocol):
    """The manager's running slots, as a run waiting for people gives its slot up and takes it back."""

    def waiting(self, debate_id: str, key: object) -> None:
        """The run of `debate_id` starts waiting for people (`key`: what for): its slot goes to another run."""
        ...

    async def answered(self, debate_id: str, key: object) -> None:
        """That wait is over: the run takes a slot again (waiting for one) once it waits for nothing else."""
        ...


@dataclass(eq=False)
class Pending:
    """An answer the engine waits for from one seat."""

    debate_id: str
    seat: str
    ask: TurnAsk | VerdictAsk
    given: asyncio.Future[Any]  # the answer handed to the engine
    check: VerdictCheck | None = None
    stored: asyncio.Future[Event] | None = None  # the event that recorded it (set once an answer is given)


@dataclass
class _Debate:
    """What the people of one debate have in flight."""

    pending: list[Pending] = field(default_factory=list)
    delivered: list[Pending] = field(default_factory=list)  # given, not stored yet
    arrivals: list[asyncio.Future[None]] = field(default_factory=list)  # requests waiting for an ask
    counted: set[str] = field(default_factory=set)  # audience phases the engine has read the votes of
    votes: asyncio.Lock = field(default_factory=asyncio.Lock)


class ServerPeople:
    """The `People` of every run of one DebateManager."""

    def __init__(self, store: EventStore, slots: Slots) -> None:
        self.store = store
        self.slots = slots
        self._debates: collections.defaultdict[str, _Debate] = collections.defaultdict(_Debate)

    # -- the engine's side (moot.engine.people.People) -------------------------------------------------

    async def turn(self, ask: TurnAsk) -> str:
        text: str = await self._wait(Pending(ask.debate_id, ask.participant_id, ask, _future()))
        return text

    async def verdict(self, ask: VerdictAsk, check: VerdictCheck) -> PersonVerdict:
        given: PersonVerdict = await self._wait(
            Pending(ask.debate_id, judge_seat(ask.judge), ask, _future(), check=check)
        )
        return given

    async def votes(self, debate_id: str, phase: AudiencePhase) -> list[AudienceVote]:
        debate = self._debates[debate_id]
        async with debate.votes:  # a vote being stored now is in, or refused as late: never lost
            debate.counted.add(phase)
            stored = await self.store.audience_votes_of(debate_id, phase)
        await self.slots.answered(debate_id, ("audience", phase))
        return [
            AudienceVote(
                voter=f"person-{v.voter_hash[:10]}",
                kind="person",
                choice=v.choice,
                confidence=v.confidence,
            )
            for v in stored
        ]

    async def _wait(self, pending: Pending) -> Any:
        debate = self._debates[pending.debate_id]
        debate.pending.append(pending)
        for arrival in debate.arrivals:
            if not arrival.done():
                arrival.set_result(None)
        debate.arrivals.clear()
        self.slots.waiting(pending.debate_id, pending)
        try:
            return await pending.given
        except asyncio.CancelledError:
            # Given at the moment the run was cut (a stop, the time limit, a shutdown): not recorded, and said so.
            _not_kept(pending, "the debate stopped waiting before your answer was recorded; it was not kept")
            raise
        finally:
            with contextlib.suppress(ValueError):
                debate.pending.remove(pending)
            await self.slots.answered(pending.debate_id, pending)

    # -- the requests' side ---------------------------------------------------------------------------

    def pending(self, debate_id: str, seat: str | None = None) -> list[Pending]:
        """What the runs of `debate_id` wait for now (from `seat` only, when given), oldest first."""
        debate = self._debates.get(debate_id)
        if debate is None:
            return []
        return [p for p in debate.pending if seat is None or p.seat == seat]

    async def asked(self, debate_id: str, seat: str, within: float) -> Pending | None:
        """The oldest answer asked of `seat`, waiting up to `within` seconds for the run to ask for it."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while True:
            found = self.pending(debate_id, seat)
            if found or loop.time() >= deadline:
                return found[0] if found else None
            arrival = _future()
            self._debates[debate_id].arrivals.append(arrival)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(arrival, deadline - loop.time())

    async def give(self, pending: Pending, answer: str | PersonVerdict) -> Event:
        """Hand the person's answer to the run and wait until what records it is stored: that event.
        StateError when the run stopped waiting first (nothing of the answer is kept)."""
        debate = self._debates[pending.debate_id]
        if pending not in debate.pending or pending.given.done():
            raise StateError("this answer is no longer awaited; the debate has moved on")
        debate.pending.remove(pending)
        pending.stored = _future()
        debate.delivered.append(pending)
        pending.given.set_result(answer)
        try:
            return await pending.stored
        finally:
            with contextlib.suppress(ValueError):
                debate.delivered.remove(pending)

    async def vote(
        self,
        debate_id: str,
        voter: str,
        choice: Choice,
        confidence: int,
        open_phase: Callable[[], Awaitable[AudiencePhase]],
    ) -> AudiencePhase:
        """Store a person's vote in the phase open now (`open_phase` says which, or raises a StateError when none
        is). StateError when this voter has voted in it already."""
        debate = self._debates[debate_id]
        async with debate.votes:
            phase = await open_phase()
            if phase in debate.counted:
                raise StateError("the vote is closed")
            stored = await self.store.add_audience_vote(
                debate_id, phase, voter_hash(debate_id, voter), choice, confidence, utc_now()
            )
        if not stored:
            raise StateError(f"this voter has voted {phase} the debate already")
        return phase

    # -- the manager's side ---------------------------------------------------------------------------

    def observe(self, debate_id: str, event: Event) -> None:
        """A stored event of a run: the answer it records, if a request waits for it, is kept."""
        debate = self._debates.get(debate_id)
        if debate is None or not debate.delivered:
            return
        round_number: int | None = None
        match event:
            case TurnCompleted():
                seat, round_number = event.participant_id, event.round
            case JudgeVerdictGiven():
                seat = judge_seat(event.judge)
            case VerdictGiven():
                seat = judge_seat(None)
            case _:
                return
        for pending in debate.delivered:
            ask = pending.ask
            if pending.seat != seat or (isinstance(ask, TurnAsk) and ask.round != round_number):
                continue
            debate.delivered.remove(pending)
            if pending.stored is not None and not pending.stored.done():
                pending.stored.set_result(event)
            return

    def ended(self, debate_id: str) -> None:
        """A run of `debate_id` ended: answers given and not stored were not kept."""
        debate = self._debates.pop(debate_id, None)
        if debate is None:
            return
        for pending in debate.delivered:
            _not_kept(pending, "the debate's run ended before your answer was recorded; it was not kept")
        for arrival in debate.arrivals:
            if not arrival.done():
                arrival.set_result(None)


def _future() -> asyncio.Future[Any]:
    return asyncio.get_running_loop().create_future()


def _not_kept(pending: Pending, why: str) -> None:
    if pending.stored is not None and not pending.stored.done():
        pending.stored.set_exception(StateError(why))


__all__ = ["ASK_AGAIN_WAIT_S", "Pending", "ServerPeople", "Slots", "judge_seat", "voter_hash"]

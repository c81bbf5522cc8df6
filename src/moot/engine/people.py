"""Where people answer in a debate: the port a run asks them through (the engine's side of asking is
moot.engine.person_answers).

A participant or judge whose model is `human` is a person. The engine records what it asks them for
(`turn_awaited`, `verdict_awaited`: durable, so a run carried on after a restart waits again, to the same
deadline, without asking twice) and then waits on the run's `People`, which the edge that runs the debate
provides: the CLI's terminal or standard input (moot.cli.people), the server's join links (moot.server.people).
What they give is recorded like a model's answer: a person's turn is a `turn_completed`, their verdict a
`verdict` (or a panel judge's `judge_verdict`), with no usage, so no model ledger counts them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from moot.domain.audience import AudienceVote
from moot.domain.audience import Phase as AudiencePhase
from moot.domain.config import DebateConfig
from moot.domain.person_verdict import PersonVerdict
from moot.domain.verdict import ScoredCriterion
from moot.errors import UserError


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

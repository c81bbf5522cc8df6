"""What a protocol can ask the engine to do next."""

from __future__ import annotations

from dataclasses import dataclass

from moot.domain.assessment import StopReason


@dataclass(frozen=True)
class StartRound:
    number: int


@dataclass(frozen=True)
class Speak:
    """These participants speak now; more than one means they speak at the same time."""

    round: int
    participant_ids: tuple[str, ...]


@dataclass(frozen=True)
class EndRound:
    number: int


@dataclass(frozen=True)
class Assess:
    """The judge assesses this finished round."""

    round: int


@dataclass(frozen=True)
class Stop:
    """No more rounds: record why."""

    reason: StopReason


@dataclass(frozen=True)
class Judge:
    pass


@dataclass(frozen=True)
class Finish:
    pass


Step = StartRound | Speak | EndRound | Assess | Stop | Judge | Finish

"""What a protocol can ask the engine to do next."""

from __future__ import annotations

from dataclasses import dataclass

from moot.domain.assessment import StopReason


@dataclass(frozen=True)
class StartRound:
    number: int
    phase: str | None = None
    # A round the format owes to the one before it (a design review's refinement, answering its critiques): the
    # rounds' wall-clock budget (`stopping.timeout_s`), spent, does not hold it back.
    owed: bool = False


@dataclass(frozen=True)
class TurnSpec:
    """One text turn: who speaks (a participant id or a voice such as 'moderator'), and to whom, if anyone."""

    speaker: str
    target: str | None = None
    # The speaker's side and this turn's task where the format words them its own way (a person answering reads
    # them; None: the participant's configured stance, and the description of the round's phase).
    stance: str | None = None
    task: str | None = None


@dataclass(frozen=True)
class Speak:
    """These turns are taken now; more than one means they are taken at the same time."""

    round: int
    turns: tuple[TurnSpec, ...]

    @classmethod
    def by(cls, round_number: int, *speakers: str) -> Speak:
        return cls(round_number, tuple(TurnSpec(s) for s in speakers))

    @property
    def participant_ids(self) -> tuple[str, ...]:
        return tuple(t.speaker for t in self.turns)


@dataclass(frozen=True)
class AskSpec:
    """One structured answer a format needs: `kind` names the question, `by` who answers it
    (a participant id, 'judge', or a voice), `subject` what it is about (a match, a participant)."""

    kind: str
    by: str
    subject: str | None = None


@dataclass(frozen=True)
class Ask:
    """These structured answers are asked for now, at the same time."""

    round: int
    asks: tuple[AskSpec, ...]


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
class Conclude:
    """The format states its own result (a vote swing, a bracket, a majority answer) from the state."""


@dataclass(frozen=True)
class Judge:
    pass


@dataclass(frozen=True)
class Finish:
    pass


Step = StartRound | Speak | Ask | EndRound | Assess | Stop | Conclude | Judge | Finish

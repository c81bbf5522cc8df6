"""The contract every debate format fulfils.

A protocol is pure: given the config and the state folded from events so far, it says what happens
next and how each speaker is prompted. Resume after a crash is then just fold + next_step.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from moot.domain.config import DebateConfig, Participant
from moot.domain.state import DebateState, Turn
from moot.prompts.history import HistoryWindow, history_window
from moot.prompts.render import render
from moot.protocols.steps import Step


@dataclass(frozen=True)
class TurnPrompt:
    system: str
    user: str


@dataclass(frozen=True)
class Phase:
    """A stretch of rounds, first to last, in which every speaker gets the same kind of instruction."""

    name: str
    first: int
    last: int
    description: str

    @property
    def rounds(self) -> str:
        """The rounds covered: '1' or '2-4'."""
        return str(self.first) if self.first == self.last else f"{self.first}-{self.last}"

    def covers(self, round_number: int) -> bool:
        return self.first <= round_number <= self.last


class DebateProtocol(ABC):
    """One debate format."""

    name: str
    description: str

    @abstractmethod
    def next_step(self, config: DebateConfig, state: DebateState) -> Step:
        """The next thing to do, decided from the config and the state alone."""

    @abstractmethod
    def format_instructions(self, config: DebateConfig, round_number: int) -> str:
        """Format-specific guidance for a speaker in this round."""

    @abstractmethod
    def phases(self, rounds: int) -> list[Phase]:
        """The phases of a debate of this many rounds, in order; together they cover every round once."""

    def phase(self, rounds: int, round_number: int) -> Phase:
        """The phase this round of a debate of this many rounds is in."""
        return next(p for p in self.phases(rounds) if p.covers(round_number))

    def turn_prompt(
        self,
        config: DebateConfig,
        state: DebateState,
        participant: Participant,
        round_number: int,
        *,
        history_chars: int | None = None,
    ) -> TurnPrompt:
        """The prompt a speaker gets, showing what it may see of the debate so far."""
        visible = self.visible_turns(config, state, round_number)
        window: HistoryWindow = history_window(config, visible, max_chars=history_chars)
        others = [p for p in config.participants if p.id != participant.id]
        system = render(
            "debater_system.j2",
            participant=participant,
            others=others,
            topic=config.topic,
            context=config.context,
            format_name=self.name,
            format_instructions=self.format_instructions(config, round_number).strip(),
            round=round_number,
            rounds=config.rounds,
        )
        user = render(
            "debater_turn.j2",
            participant=participant,
            history=window.turns,
            omitted=window.omitted,
            round=round_number,
            rounds=config.rounds,
        )
        return TurnPrompt(system=system, user=user)

    def visible_turns(self, config: DebateConfig, state: DebateState, round_number: int) -> list[Turn]:
        """Sequential speakers see everything said so far; simultaneous ones only earlier rounds."""
        turns = state.turns
        if config.turn_order == "simultaneous":
            return [t for t in turns if t.round < round_number]
        return list(turns)

"""Free-form: a fixed number of rounds; everyone speaks once per round; then the judge."""

from __future__ import annotations

from moot.domain.config import DebateConfig
from moot.domain.state import DebateState
from moot.protocols.base import DebateProtocol
from moot.protocols.steps import EndRound, Finish, Judge, Speak, StartRound, Step


class FreeForm(DebateProtocol):
    name = "free-form"
    description = "Open exchange over a fixed number of rounds, then a verdict."

    def next_step(self, config: DebateConfig, state: DebateState) -> Step:
        current = state.current_round
        if current is None or current.completed:
            done = current.number if current else 0
            if done < config.rounds:
                return StartRound(done + 1)
            if config.judge is not None and not state.judged:
                return Judge()
            return Finish()
        waiting = tuple(p.id for p in config.participants if not current.spoke(p.id))
        if not waiting:
            return EndRound(current.number)
        if config.turn_order == "simultaneous":
            return Speak(current.number, waiting)
        return Speak(current.number, waiting[:1])

    def format_instructions(self, config: DebateConfig, round_number: int) -> str:
        if round_number == 1:
            stage = "This is the opening round: state your position and your main arguments."
        elif round_number == config.rounds:
            stage = "This is the last round: answer what is still open and close with your strongest case."
        else:
            stage = "Answer the others' latest points and strengthen your case."
        return f"No fixed structure: respond naturally to the discussion so far. {stage}"

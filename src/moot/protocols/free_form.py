"""Free-form: a fixed number of rounds; everyone speaks once per round; then the judge."""

from __future__ import annotations

from moot.domain.config import DebateConfig
from moot.protocols.base import Phase
from moot.protocols.round_robin import RoundRobin, opening_middle_closing

_OPENING = ("opening", "This is the opening round: state your position and your main arguments.")
_MIDDLE = ("discussion", "Answer the others' latest points and strengthen your case.")
_CLOSING = (
    "closing",
    "This is the last round: answer what is still open and close with your strongest case.",
)


class FreeForm(RoundRobin):
    name = "free-form"
    description = "Open exchange over a fixed number of rounds, then a verdict."

    def phases(self, rounds: int) -> list[Phase]:
        # A single round is an opening: there is nothing yet to answer.
        return opening_middle_closing(rounds, _OPENING, _MIDDLE, _CLOSING, single=_OPENING)

    def format_instructions(self, config: DebateConfig, round_number: int) -> str:
        stage = self.phase(config.rounds, round_number).description
        return f"No fixed structure: respond naturally to the discussion so far. {stage}"

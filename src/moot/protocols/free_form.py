"""Free-form: everyone speaks once per round; the judge assesses each round and may end the debate early
(the judge decides when to stop, capped by max rounds); then the verdict."""

from __future__ import annotations

from moot.domain.config import DebateConfig
from moot.protocols.base import Phase, Traits, phase_at
from moot.protocols.round_robin import RoundRobin, opening_middle_closing

_OPENING = ("opening", "This is the opening round: state your position and your main arguments.")
_MIDDLE = ("discussion", "Answer the others' latest points and strengthen your case.")
_CLOSING = (
    "closing",
    "This is the last round: answer what is still open and close with your strongest case.",
)


class FreeForm(RoundRobin):
    name = "free-form"
    description = "Open exchange; the judge decides when to stop (rounds is the cap), then a verdict."
    traits = Traits(
        continues_without=True,
        assesses_by_default=True,
        # The judge-led rounds end when the judge advises it, and when they stop paying off.
        judge_stops_by_default=True,
        diminishing_by_default=True,
    )

    def phases(self, rounds: int) -> list[Phase]:
        # A single round is an opening: there is nothing yet to answer.
        return opening_middle_closing(rounds, _OPENING, _MIDDLE, _CLOSING, single=_OPENING)

    def format_overview(self, config: DebateConfig) -> str:
        # Short: the embedded model's window is small, and each round's own instruction comes with the turn.
        return "No fixed structure: respond naturally to the discussion so far. Round 1 opens, the last round closes."

    def format_instructions(self, config: DebateConfig, round_number: int) -> str:
        return phase_at(self, config.rounds, round_number).description

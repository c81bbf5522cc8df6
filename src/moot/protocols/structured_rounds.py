"""Structured rounds: opening statements (round 1), rebuttals (the rounds between), closing statements (last).

Two rounds are an opening and a closing; a single round is both at once. Everyone speaks once per round,
in the configured turn order; then the judge.
"""

from __future__ import annotations

from moot.domain.config import DebateConfig
from moot.protocols.base import Phase, phase_at
from moot.protocols.round_robin import RoundRobin, opening_middle_closing

_OPENING = ("opening", "Present your initial position and main arguments")
_REBUTTAL = ("rebuttal", "Respond to opponents and strengthen your case")
_CLOSING = ("closing", "Summarize your strongest points and final statement")
_BOTH = ("opening-closing", "State your position and close, all in one round")

# How a phase is headed in the overview, and what a speaker in it is asked to do.
_TITLES = {
    "opening": "Opening",
    "rebuttal": "Rebuttals",
    "closing": "Closing",
    "opening-closing": "Opening and closing",
}
_INSTRUCTIONS = {
    "opening": "Present your core thesis and primary supporting arguments",
    "rebuttal": "Address opponents' arguments and reinforce your position",
    "closing": "Deliver final summary and strongest concluding statement",
    "opening-closing": (
        "State your position and close: present your core thesis and primary supporting arguments, "
        "then deliver your strongest concluding statement"
    ),
}


class StructuredRounds(RoundRobin):
    name = "structured-rounds"
    description = "Opening statements, rebuttals, then closing statements; then a verdict."

    def phases(self, rounds: int) -> list[Phase]:
        return opening_middle_closing(rounds, _OPENING, _REBUTTAL, _CLOSING, single=_BOTH)

    def format_overview(self, config: DebateConfig) -> str:
        lines = ["STRUCTURED ROUNDS FORMAT:"]
        for p in self.phases(config.rounds):
            span = f"Round {p.rounds}" if p.first == p.last else f"Rounds {p.rounds}"
            lines.append(f"  • {_TITLES[p.name]} ({span}): {p.description}")
        return "\n".join(lines)

    def format_instructions(self, config: DebateConfig, round_number: int) -> str:
        current = phase_at(self, config.rounds, round_number)
        return f"Current Phase: {current.name.upper()}\n  → {_INSTRUCTIONS[current.name]}"

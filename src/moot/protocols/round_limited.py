"""Round-limited: a hard cap on rounds, and every speaker is told how many remain, this one included.

Everyone speaks once per round, in the configured turn order; then the judge.
"""

from __future__ import annotations

from moot.domain.config import DebateConfig
from moot.protocols.base import Phase, phase_at
from moot.protocols.round_robin import RoundRobin

_COUNTDOWN = "Develop your case and answer the others; later rounds remain to build on it"
_FINAL = (
    "This is the last round: no later turn can answer what you leave open, so close with your strongest case"
)


def _rounds(n: int) -> str:
    return f"{n} round" if n == 1 else f"{n} rounds"


class RoundLimited(RoundRobin):
    name = "round-limited"
    description = "A fixed budget of rounds, counted down to every speaker; then a verdict."

    def phases(self, rounds: int) -> list[Phase]:
        countdown = [Phase("countdown", 1, rounds - 1, _COUNTDOWN)] if rounds > 1 else []
        return [*countdown, Phase("final", rounds, rounds, _FINAL)]

    def format_overview(self, config: DebateConfig) -> str:
        return "\n".join(
            [
                "ROUND-LIMITED FORMAT:",
                f"  • Maximum {_rounds(config.rounds)} total",
                "  • Each round builds on previous discussion",
            ]
        )

    def format_instructions(self, config: DebateConfig, round_number: int) -> str:
        left = config.rounds - round_number + 1
        return "\n".join(
            [
                f"  • Make your arguments count - {_rounds(left)} remaining, this one included",
                f"  • Round {round_number} of {config.rounds}",
                "",
                f"  → {phase_at(self, config.rounds, round_number).description}",
            ]
        )

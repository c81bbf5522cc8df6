"""The schedule the round-based formats share: everyone speaks once per round, then the judge.

Speakers take turns in the configured order (sequential), or all speak at once (simultaneous). After each
round the judge may assess it (`stopping.assess_rounds`); then `stopping.stop_reason` decides whether another
round is held. Once the rounds stop (one `Stop` step, with its reason), the judge rules, if there is one. A format built on this differs only in what its
speakers are told, round by round: its phases and its instructions.
"""

from __future__ import annotations

from moot.domain.config import DebateConfig
from moot.domain.state import DebateState
from moot.protocols.base import DebateProtocol, NoOptions, Phase, Traits, between_rounds, verdict_then_finish
from moot.protocols.steps import EndRound, Speak, Step

# A phase before its rounds are known: (name, description).
PhaseText = tuple[str, str]


class RoundRobin(DebateProtocol[NoOptions]):
    """Rounds in which every participant speaks once, until the stopping rules end them; then a verdict."""

    traits = Traits(
        continues_without=True,
    )

    def next_step(self, config: DebateConfig, state: DebateState) -> Step:
        current = state.current_round
        if current is None or current.completed:
            return between_rounds(self, config, state) or verdict_then_finish(self, config, state)
        waiting = tuple(p.id for p in config.participants if not current.spoke(p.id))
        if not waiting:
            return EndRound(current.number)
        if config.turn_order == "simultaneous":
            return Speak.by(current.number, *waiting)
        return Speak.by(current.number, waiting[0])


def opening_middle_closing(
    rounds: int, opening: PhaseText, middle: PhaseText, closing: PhaseText, *, single: PhaseText
) -> list[Phase]:
    """Round 1 opens, the last round closes and the rounds between are the middle; one round is `single`."""
    if rounds == 1:
        return [Phase(single[0], 1, 1, single[1])]
    phases = [Phase(opening[0], 1, 1, opening[1])]
    if rounds > 2:
        phases.append(Phase(middle[0], 2, rounds - 1, middle[1]))
    phases.append(Phase(closing[0], rounds, rounds, closing[1]))
    return phases

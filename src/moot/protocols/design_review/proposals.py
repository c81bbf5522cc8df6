"""The design review's proposals: which phase a round is, each participant's latest and final proposal, and
how a turn is quoted to a reader (fenced, clipped to its share of the prompt).

Every other module of the format reads proposals through these: the turn prompts, the judge's synthesis or
merge, the votes and the voted outcome all quote the same final proposals the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from moot.domain.config import DebateConfig
from moot.domain.state import DebateState, Turn
from moot.prompts.history import fenced
from moot.prompts.prompt_context import PromptContext

PhaseName = Literal["proposal", "critique", "refinement"]


def phase_of(round_number: int) -> PhaseName:
    if round_number == 1:
        return "proposal"
    return "critique" if round_number % 2 == 0 else "refinement"


@dataclass(frozen=True)
class Contribution:
    """A turn as the design-review prompts quote it."""

    round: int
    name: str
    kind: PhaseName
    target: str
    text: str


def latest_proposal(state: DebateState, participant_id: str, before_round: int) -> Turn | None:
    """The participant's newest proposal or refinement from a round before `before_round`."""
    own = [
        t
        for t in state.turns
        if t.participant_id == participant_id and t.target is None and t.round < before_round
    ]
    return own[-1] if own else None


def contributions(ctx: PromptContext, turns: list[Turn]) -> tuple[list[Contribution], int]:
    """Turns as quoted contributions, the newest that fit the context's budget, and how many were left out."""
    config = ctx.config
    window = ctx.history(turns)
    shown = [
        Contribution(
            w.round,
            w.name,
            phase_of(w.round),
            config.speaker_name(t.target) if (t := w.turn) is not None and t.target else "",
            w.text,
        )
        for w in window.turns
    ]
    return shown, window.omitted


def _clip(text: str, limit: int | None) -> str:
    """A proposal, fenced, cut to `limit` characters from its start, where its approach is stated."""
    text = fenced(text)
    if limit is None or len(text) <= limit:
        return text
    return text[:limit].rstrip() + " …"


def final_proposals(config: DebateConfig, state: DebateState, round_number: int) -> list[Turn]:
    """Each participant's newest proposal or refinement up to this round, in the config's order; none of those
    who left the review (its author answers no critique of it, and stands by it no more)."""
    return [
        t
        for p in config.participants
        if p.id not in state.dropped and (t := latest_proposal(state, p.id, round_number + 1)) is not None
    ]


def still_in(config: DebateConfig, state: DebateState) -> DebateConfig:
    """The config with only the participants still in the review: the ones its result credits, whichever config
    it is given (the engine schedules without those who left; a prompt is built from everyone)."""
    if not any(p.id in state.dropped for p in config.participants):
        return config
    return config.model_copy(
        update={"participants": [p for p in config.participants if p.id not in state.dropped]}
    )


def _quoted(config: DebateConfig, turn: Turn, limit: int | None) -> Contribution:
    return Contribution(
        turn.round,
        config.speaker_name(turn.participant_id),
        phase_of(turn.round),
        "",
        _clip(turn.text, limit),
    )


@dataclass(frozen=True)
class Left:
    """A participant that failed for good and left the review: in which round, and why (the engine's words)."""

    id: str
    name: str
    round: int
    why: str


def who_left(config: DebateConfig, state: DebateState) -> list[Left]:
    """Those who left the review, in the config's order."""
    # The engine hands the format only those still in: their names are in the config the debate began with.
    team = state.config if state.config is not None else config
    return [
        Left(p.id, p.name, state.dropped_rounds.get(p.id, 0), state.dropped[p.id])
        for p in team.participants
        if p.id in state.dropped
    ]

"""Pairwise judgements asked in both orders, combined so that the order of presentation cannot decide.

A judge shown A then B, and again B then A, should pick the same side both times. When it does, that
side wins; when it picks whichever came first (or second) both times, the pick was the position, not
the argument, and the match is a tie.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class PairJudgement:
    """One judgement of a pair, as presented: `first` was shown before `second`. `winner` is None for a
    tie; `confidence` is the judge's own, 0 to 1 (1 when it gives none)."""

    first: str
    second: str
    winner: str | None
    confidence: float = 1.0

    def __post_init__(self) -> None:
        if self.first == self.second:
            raise ValueError("a pair needs two different participants")
        if self.winner is not None and self.winner not in (self.first, self.second):
            raise ValueError(f"the winner {self.winner!r} is not one of the pair")
        if not 0 <= self.confidence <= 1:
            raise ValueError("confidence must be between 0 and 1")

    @property
    def picked_position(self) -> Literal["first", "second"] | None:
        if self.winner is None:
            return None
        return "first" if self.winner == self.first else "second"


@dataclass(frozen=True)
class PairResult:
    """The combined result: `winner` None is a tie. `consistent` is False when the two orders disagreed;
    `position_bias` names the position picked both times when the judge followed the order instead."""

    pair: tuple[str, str]
    winner: str | None
    confidence: float
    consistent: bool
    position_bias: Literal["first", "second"] | None = None


def combine_both_orders(forward: PairJudgement, backward: PairJudgement) -> PairResult:
    """One result from two judgements of the same pair shown in opposite orders.

    Same winner (or a tie both times): that result, at the mean confidence. One winner and one tie: the
    winner, at half its confidence. Opposite winners: a tie at confidence 0, flagged as position bias.
    """
    if (forward.first, forward.second) != (backward.second, backward.first):
        raise ValueError("the two judgements must be of the same pair, shown in opposite orders")
    pair = (forward.first, forward.second)
    if forward.winner == backward.winner:
        confidence = (forward.confidence + backward.confidence) / 2
        return PairResult(pair, forward.winner, confidence, consistent=True)
    if forward.winner is None or backward.winner is None:
        decided = forward if forward.winner is not None else backward
        return PairResult(pair, decided.winner, decided.confidence / 2, consistent=False)
    # Both named a winner, different ones: each picked the same position, so the position decided.
    return PairResult(pair, None, 0.0, consistent=False, position_bias=forward.picked_position)

"""Turning many answers into one: a majority vote, and an aggregate of rankings by mean position.

Both are pure and deterministic, so a replayed debate reaches the same result:

- Majority vote: the answer given most often wins. A tie is resolved by order: of the tied answers, the
  one whose first voter comes earliest (in the order the votes are given, which is participant order).
  Votes of None (no readable answer) count for nothing; with no votes at all there is no answer.
- Rankings: every ranking lists participant ids best first; a participant's mean rank is the mean of
  the positions (1 = best) it was given. Lower is better. Ties are broken by more first places, then
  more second places, and so on; then by the order of `ids`. A participant no ranking placed comes
  after every ranked one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Majority:
    """The result of a vote: the winning answer (None without votes), its votes, and who voted how."""

    answer: str | None
    votes: int
    voters: int
    tally: dict[str, int]
    tied: tuple[str, ...]

    @property
    def share(self) -> float:
        """The winning answer's votes as a share of all voters, unreadable answers included."""
        return self.votes / self.voters if self.voters else 0.0


def majority(votes: Sequence[str | None]) -> Majority:
    """The majority (plurality) answer of these votes, given in voter order; None entries are no vote."""
    tally = Counter(v for v in votes if v is not None)
    if not tally:
        return Majority(answer=None, votes=0, voters=len(votes), tally={}, tied=())
    top = max(tally.values())
    # Counter keeps first-seen order, so the first tied answer is the one whose first voter came first.
    tied = tuple(answer for answer, count in tally.items() if count == top)
    return Majority(answer=tied[0], votes=top, voters=len(votes), tally=dict(tally), tied=tied)


@dataclass(frozen=True)
class RankAggregate:
    """Rankings combined: the order (best first), each participant's mean rank and position counts."""

    order: tuple[str, ...]
    mean_rank: dict[str, float | None]
    positions: dict[str, list[int]]
    rankings: int


def aggregate_rankings(ids: Sequence[str], rankings: Sequence[Sequence[str]]) -> RankAggregate:
    """Combine rankings (each a list of participant ids, best first) into one order by mean position.

    `positions[id][k]` counts how often `id` was placed (k + 1)-th.
    """
    slots = max((len(r) for r in rankings), default=0)
    positions = {pid: [0] * slots for pid in ids}
    for ranking in rankings:
        for place, pid in enumerate(ranking):
            positions[pid][place] += 1
    mean: dict[str, float | None] = {}
    for pid in ids:
        counts = positions[pid]
        placed = sum(counts)
        mean[pid] = sum((k + 1) * c for k, c in enumerate(counts)) / placed if placed else None
    index = {pid: i for i, pid in enumerate(ids)}

    def key(pid: str) -> tuple[bool, float, list[int], int]:
        m = mean[pid]
        return (m is None, m if m is not None else 0.0, [-c for c in positions[pid]], index[pid])

    return RankAggregate(
        order=tuple(sorted(ids, key=key)), mean_rank=mean, positions=positions, rankings=len(rankings)
    )

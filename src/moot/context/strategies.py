"""Which turns a prompt quotes verbatim, which it drops, and whether a summary stands in for older ones.

Pure arithmetic on token counts: the engine measures the turns a speaker may
see and the room the prompt leaves for them, asks `select`, and builds the prompt through a
`HistoryView` (moot.prompts.history) that applies the answer. The window fit (moot.context.fit) still
runs afterwards as a last resort, so no strategy can make a prompt overflow.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from moot.context.tokens import TokenCounter
from moot.domain.config import StrategyName

# What a quoted turn costs beyond its text: the "[Round N] Name (stance):" line and its fences.
TURN_OVERHEAD_TOKENS = 12
# Hybrid's bands, as shares of the tokens a prompt may take (window less the reply's).
WARN_AT = 0.8
SUMMARISE_AT = 0.9
# In hybrid's warning band the sliding window aims this low, so it does not sit at the 80 % line and
# drop a turn on every prompt.
WINDOW_TARGET = 0.5


@dataclass(frozen=True)
class SummaryRef:
    """The latest summary: it stands in for the first `covers` turns of the history it is applied to."""

    covers: int
    text: str


@dataclass(frozen=True)
class Selection:
    """What a strategy shows of `n` turns (indexes into them), and what it asks of the engine."""

    strategy: StrategyName
    shown: tuple[int, ...]
    dropped: tuple[int, ...]
    summarised: tuple[int, ...]
    summary: str | None
    usage: float
    full_tokens: int
    warning: bool = False
    wants_summary: bool = False

    @property
    def acted(self) -> bool:
        """Whether the prompt quotes less than the whole history."""
        return bool(self.dropped or self.summarised)


def turn_tokens(text: str, counter: TokenCounter) -> int:
    return counter.count(text) + TURN_OVERHEAD_TOKENS


def _newest(indexes: Sequence[int], costs: Sequence[int], budget: int) -> list[int]:
    """The newest of `indexes` whose costs fit `budget` together, in order (none once one does not fit)."""
    kept: list[int] = []
    used = 0
    for i in reversed(indexes):
        if used + costs[i] > budget:
            break
        kept.append(i)
        used += costs[i]
    kept.reverse()
    return kept


def _sliding(costs: Sequence[int], budget: int, keep_opening: int) -> list[int]:
    opening: list[int] = []
    used = 0
    for i in range(min(keep_opening, len(costs))):
        if used + costs[i] > budget:
            break
        opening.append(i)
        used += costs[i]
    rest = range(len(opening), len(costs))
    return opening + _newest(rest, costs, budget - used)


def select(
    texts: Sequence[str],
    strategy: StrategyName,
    *,
    budget: int,
    counter: TokenCounter,
    fixed_tokens: int = 0,
    keep_opening: int = 2,
    keep_recent: int = 4,
    summary: SummaryRef | None = None,
) -> Selection:
    """The turns (`texts`, oldest first) a prompt quotes under `strategy`.

    `budget`: tokens the history may take; `fixed_tokens`: the rest of the prompt (hybrid's bands are
    shares of the two together). `summary`: the latest summary, if any. `wants_summary` says that a new
    summary is due: the older turns no summary covers have grown to `keep_recent`, or the verbatim
    part no longer fits, or hybrid is above 90 % with no summary yet.
    """
    n = len(texts)
    costs = [turn_tokens(t, counter) for t in texts]
    total = sum(costs)
    room = max(fixed_tokens + budget, 1)
    usage = (fixed_tokens + total) / room
    everything = tuple(range(n))

    def result(
        shown: Sequence[int], *, summarised: int = 0, text: str | None = None, warning: bool = False
    ) -> Selection:
        kept = set(shown)
        return Selection(
            strategy,
            tuple(shown),
            tuple(i for i in range(summarised, n) if i not in kept),
            tuple(range(summarised)),
            text if summarised else None,
            usage,
            fixed_tokens + total,
            warning,
            wants(),
        )

    covered = min(summary.covers, n) if summary is not None else 0

    def wants() -> bool:
        if strategy not in ("summarize", "hybrid") or (strategy == "hybrid" and usage <= SUMMARISE_AT):
            return False
        older = max(n - keep_recent - covered, 0)  # not yet summarised, and not among the newest kept
        if older == 0:
            return False
        verbatim = sum(costs[covered:]) + (turn_tokens(summary.text, counter) if summary else 0)
        return older >= keep_recent or verbatim > budget or (strategy == "hybrid" and summary is None)

    def summarised_view(warning: bool = False) -> Selection:
        assert summary is not None
        left = budget - turn_tokens(summary.text, counter)
        return result(
            _newest(range(covered, n), costs, left), summarised=covered, text=summary.text, warning=warning
        )

    if strategy == "full":
        return result(everything)
    if strategy == "truncate":
        return result(_newest(everything, costs, budget))
    if strategy == "sliding-window":
        return result(_sliding(costs, budget, keep_opening))
    if strategy == "summarize":
        if covered:
            return summarised_view()
        return result(_newest(everything, costs, budget))
    # hybrid
    if usage <= WARN_AT:
        return result(everything)
    target = min(budget, int(room * WINDOW_TARGET) - fixed_tokens)
    if covered:
        return summarised_view(warning=usage <= SUMMARISE_AT)
    return result(_sliding(costs, max(target, 0), keep_opening), warning=usage <= SUMMARISE_AT)

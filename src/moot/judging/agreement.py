"""How far a panel's judges agree: Kendall's coefficient of concordance (W) over their rankings."""

from __future__ import annotations

from collections.abc import Sequence


def ranks(scores: Sequence[float]) -> list[float]:
    """Rank 1 for the highest score; tied scores share the mean of the ranks they span (mid-ranks)."""
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    result = [0.0] * len(scores)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and scores[order[end + 1]] == scores[order[start]]:
            end += 1
        shared = (start + end) / 2 + 1
        for k in range(start, end + 1):
            result[order[k]] = shared
        start = end + 1
    return result


def kendalls_w(table: Sequence[Sequence[float]]) -> float | None:
    """W for a table of scores, one row per judge and one column per participant, corrected for ties.

    1 means every judge ranked the participants the same way; 0 means their rankings cancel out. None
    when it is undefined: fewer than two judges or participants, or every judge tied everyone.
    """
    m = len(table)
    n = len(table[0]) if table else 0
    if any(len(row) != n for row in table):
        raise ValueError("every judge must score the same participants")
    if m < 2 or n < 2:
        return None
    ranked = [ranks(row) for row in table]
    totals = [sum(r[i] for r in ranked) for i in range(n)]
    mean = m * (n + 1) / 2
    s = sum((t - mean) ** 2 for t in totals)
    ties = sum(_tie_term(row) for row in table)
    denominator = m * m * (n**3 - n) - m * ties
    if denominator <= 0:
        return None
    return min(1.0, max(0.0, 12 * s / denominator))


def _tie_term(scores: Sequence[float]) -> float:
    """Sum of t^3 - t over the groups of t tied scores in one judge's row."""
    counts: dict[float, int] = {}
    for score in scores:
        counts[score] = counts.get(score, 0) + 1
    return sum(t**3 - t for t in counts.values())


def agreement_text(w: float | None, judges: int) -> str:
    """What W means, in one line."""
    if w is None:
        if judges < 2:
            who = "no judge" if judges == 0 else "only one judge"
            return f"Agreement not measured: {who} gave a valid verdict (it takes two)"
        return "Agreement not measured: every judge scored every participant the same"
    # Bands after Schmidt (1997), the usual reading of W.
    strength = next(
        word
        for floor, word in (
            (0.9, "very strong"),
            (0.7, "strong"),
            (0.5, "moderate"),
            (0.3, "weak"),
            (0.0, "very weak"),
        )
        if w >= floor
    )
    return (
        f"Kendall's W = {w:.2f} over {judges} judges: {strength} agreement on the ranking "
        "(1 = identical rankings, 0 = none)"
    )

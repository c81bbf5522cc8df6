"""The arena's standings: the ratings, the head-to-head records and the diagnostics of one set of rows."""

from __future__ import annotations

from collections.abc import Sequence

from moot.arena.diagnostics import diagnose
from moot.arena.ratings import check_rows, rate, rated, records
from moot.arena.results import MatchRow, Standings


def compute_standings(
    rows: Sequence[MatchRow], models: Sequence[str], *, samples: int = 1000, seed: int = 0
) -> Standings:
    """What the rows say about `models`: every model is rated (one without a rated debate too, unrated), with
    `samples` bootstrap resamples from `seed` for every interval, so the same rows and seed give the same
    standings. Rows naming a model not in `models` are refused (ValueError)."""
    check_rows(rows, models)
    games = rated(rows)
    return Standings(
        ratings=rate(rows, models, samples=samples, seed=seed),
        head_to_head=records(rows, models),
        diagnostics=diagnose(rows, models, samples=samples, seed=seed),
        debates=len(games),
        unrated=len(rows) - len(games),
        samples=samples,
        seed=seed,
    )

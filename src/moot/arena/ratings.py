"""The arena's ratings: a Bradley-Terry fit over the debates that ended in a win or a tie, its bootstrap
intervals, and each model's record.

Bradley-Terry gives each model a strength p, and model i beats model j with probability p_i / (p_i + p_j). A
tie counts half a win to each side: the likelihood keeps its form with fractional wins, so the same fit applies.
A debate without a verdict (outcome `none`) says nothing about either model and is left out.

The fit is Newton's method on win matrices, so that a thousand bootstrap resamples are one stack of matrices
iterated together rather than a thousand Python loops.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from moot.arena.results import Interval, MatchRow, Rating, Record

Array = NDArray[np.float64]

# One virtual debate per model, tied, spread evenly over its opponents. Without it a model that won (or lost)
# every debate has no finite maximum-likelihood strength; with it every pair of models is joined, so the fit
# always exists. It is small beside an arena's real debates (a model usually has tens), so it moves a
# strength little, and only towards the others. See docs/DECISIONS.md.
DEFAULT_PRIOR = 1.0

ELO_BASE = 1500.0
ELO_SCALE = 400 / math.log(10)  # Elo's 400 points per tenfold odds, in natural-log strength units

# Strengths this close are the same strength (the fit stops at ~1e-10): they share a rank.
_SAME_STRENGTH = 1e-7


def rated(rows: Sequence[MatchRow]) -> list[MatchRow]:
    """The rows a rating rests on: debates that ended in a win or a tie."""
    return [row for row in rows if row.outcome != "none"]


def model_index(models: Sequence[str]) -> dict[str, int]:
    """Each model's place in `models`, refusing a model named twice."""
    index = {model: i for i, model in enumerate(models)}
    if len(index) != len(models):
        raise ValueError(f"a model is named twice in {list(models)}")
    return index


def credits(rows: Sequence[MatchRow], models: Sequence[str]) -> Array:
    """One win matrix per rated row, shape (rows, models, models): [r, i, j] is what model i won from model j
    in row r (1 for a win, 0.5 to each side for a tie). Rows without a verdict are left out."""
    index = model_index(models)
    games = rated(rows)
    out = np.zeros((len(games), len(models), len(models)))
    for r, row in enumerate(games):
        i, j = _pair(row, index)
        if row.outcome == "tie":
            out[r, i, j] = out[r, j, i] = 0.5
        else:
            winner, loser = _decided(row)
            out[r, index[winner], index[loser]] = 1.0
    return out


def check_rows(rows: Sequence[MatchRow], models: Sequence[str]) -> None:
    """Refuse (ValueError) a row naming a model not in `models`, or one model on both sides."""
    index = model_index(models)
    for row in rows:
        _pair(row, index)


def _pair(row: MatchRow, index: dict[str, int]) -> tuple[int, int]:
    unknown = [m for m in row.models if m not in index]
    if unknown:
        raise ValueError(f"row {row.key!r} names models not in the arena: {', '.join(unknown)}")
    if row.for_model == row.against_model:
        raise ValueError(f"row {row.key!r}: a model cannot debate itself")
    return index[row.for_model], index[row.against_model]


def _decided(row: MatchRow) -> tuple[str, str]:
    """A won row's winner and loser."""
    if row.winner == row.for_model:
        return row.for_model, row.against_model
    if row.winner == row.against_model:
        return row.against_model, row.for_model
    raise ValueError(f"row {row.key!r}: winner {row.winner!r} is neither of its models")


def fit_strengths(
    wins: Array, *, prior: float = DEFAULT_PRIOR, tol: float = 1e-10, max_iter: int = 200
) -> Array:
    """Bradley-Terry log-strengths from win matrices, each centred to mean 0.

    `wins` is one matrix (models x models) or a stack of them (..., models, models); [i, j] is what i won from j
    (ties already split in halves). `prior` is the number of virtual tied debates each model is given, spread
    evenly over its opponents (`DEFAULT_PRIOR`). With `prior=0` this is the plain maximum-likelihood fit, which
    exists only when no group of models lost every debate to the rest (the "won from" graph is strongly
    connected): a matrix without one gives nan strengths.
    """
    w = np.asarray(wins, dtype=np.float64)
    n = w.shape[-1]
    if prior < 0:
        raise ValueError(f"the prior must be >= 0, got {prior}")
    if n < 2:
        return np.zeros(w.shape[:-1])
    if prior:
        w = w + (prior / (2 * (n - 1))) * (1 - np.eye(n))
    flat = w.reshape(-1, n, n)
    out = np.full(flat.shape[:-1], np.nan)
    fits = _connected(flat)
    out[fits] = _newton(flat[fits], tol, max_iter)
    return out.reshape(w.shape[:-1])


def _connected(w: Array) -> NDArray[np.bool_]:
    """For each matrix, whether every model reaches every other along "won something from" edges."""
    n = w.shape[-1]
    reach = ((w > 0) | np.eye(n, dtype=bool)).astype(np.float64)
    for _ in range(math.ceil(math.log2(n))):
        reach = np.minimum(reach @ reach, 1.0)
    result: NDArray[np.bool_] = reach.min(axis=(-1, -2)) > 0
    return result


def _newton(w: Array, tol: float, max_iter: int) -> Array:
    """Newton's method on the log-likelihood, with step halving, for a stack of matrices that each have a fit.

    Newton rather than Hunter's MM iteration (the textbook Bradley-Terry fit): MM slows to a crawl when the
    strengths are far apart, as when one model sweeps the next in every debate (measured: 127 s for 1,000
    resamples of such an arena, against Newton's few dozen steps). The log-likelihood is concave, so a step
    that is halved until it does not lower the likelihood always gets there.
    """
    n = w.shape[-1]
    games = w + np.swapaxes(w, -1, -2)
    won = w.sum(axis=-1)
    # The likelihood does not move when every strength shifts alike: this term pins the mean at 0.
    pin = np.full((n, n), 1 / n)
    s = np.zeros(w.shape[:-1])
    likelihood = _log_likelihood(w, s)
    for _ in range(max_iter):
        beats = _sigmoid(s[:, :, None] - s[:, None, :])
        gradient = won - (games * beats).sum(axis=-1)
        weight = games * beats * (1 - beats)
        laplacian = np.eye(n) * weight.sum(axis=-1)[:, :, None] - weight
        step = np.linalg.solve(laplacian + pin, gradient[:, :, None])[:, :, 0]
        scale = np.ones(len(s))
        for _ in range(60):
            trial = s + scale[:, None] * step
            trial_likelihood = _log_likelihood(w, trial)
            # A likelihood lower only by rounding is no worse: without the slack the last steps would stall.
            worse = trial_likelihood < likelihood - 1e-12 * (1 + np.abs(likelihood))
            if not worse.any():
                break
            scale = np.where(worse, scale / 2, scale)
        s, likelihood = trial - trial.mean(axis=-1, keepdims=True), trial_likelihood
        if np.abs(scale[:, None] * step).max(initial=0.0) <= tol:
            break
    return s


def _log_likelihood(w: Array, s: Array) -> Array:
    # log P(i beats j) = -log(1 + e^-(s_i - s_j)); logaddexp keeps far-apart strengths from overflowing.
    result: Array = -(w * np.logaddexp(0.0, s[:, None, :] - s[:, :, None])).sum(axis=(-1, -2))
    return result


def _sigmoid(x: Array) -> Array:
    result: Array = 0.5 * (1 + np.tanh(x / 2))  # 1 / (1 + e^-x), without overflow
    return result


def elo(strength: float | Array) -> float | Array:
    """A log-strength on the Elo scale: 1500 + 400 * strength / ln 10."""
    return ELO_BASE + ELO_SCALE * strength


def bootstrap_counts(rng: np.random.Generator, cases: int, samples: int) -> NDArray[np.int64]:
    """How often each case is drawn in each of `samples` resamples with replacement, shape (samples, cases).
    Every figure's bootstrap weights its cases by these counts instead of copying them."""
    if cases == 0 or samples == 0:
        return np.zeros((samples, cases), dtype=np.int64)
    return rng.multinomial(cases, np.full(cases, 1 / cases), size=samples)


def percentile_interval(values: Array) -> Interval | None:
    """The 95 % percentile interval of bootstrap values (nan values, resamples where the figure was
    undefined, left out); None without any."""
    kept = values[~np.isnan(values)]
    if kept.size == 0:
        return None
    low, high = np.percentile(kept, [2.5, 97.5])
    return Interval(low=float(low), high=float(high))


def records(rows: Sequence[MatchRow], models: Sequence[str]) -> dict[str, dict[str, Record]]:
    """Head to head: [model][opponent] is the model's record against that opponent over rated rows. Every
    model has an entry for every other, an empty record when they never met."""
    index = model_index(models)
    tally = {m: {o: [0, 0, 0] for o in models if o != m} for m in models}
    for row in rated(rows):
        _pair(row, index)
        a, b = row.models
        if row.outcome == "tie":
            tally[a][b][2] += 1
            tally[b][a][2] += 1
        else:
            winner, loser = _decided(row)
            tally[winner][loser][0] += 1
            tally[loser][winner][1] += 1
    return {
        m: {o: Record(wins=w, losses=lo, ties=t) for o, (w, lo, t) in opponents.items()}
        for m, opponents in tally.items()
    }


def rate(
    rows: Sequence[MatchRow],
    models: Sequence[str],
    *,
    samples: int = 1000,
    seed: int | np.random.Generator = 0,
    prior: float = DEFAULT_PRIOR,
) -> list[Rating]:
    """Each model's rating, best first.

    The fit covers the models with at least one rated debate, centred to mean 0 over them. A model without one
    has nothing to rate: strength 0 (Elo 1500), no interval, and it ranks after every rated model. The 95 %
    Elo interval is the percentile bootstrap over rated debates resampled with replacement (`samples` times,
    from `seed`); None with `samples=0`. Equal strengths share a rank (1, 1, 3). `prior=0` (for checks) refuses
    rows that have no maximum-likelihood fit (ValueError).
    """
    if samples < 0:
        raise ValueError(f"samples must be >= 0, got {samples}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    table = credits(rows, models)
    head = records(rows, models)
    played = [i for i, m in enumerate(models) if any(_debates(r) for r in head[m].values())]
    strength = np.zeros(len(models))
    low = np.full(len(models), np.nan)
    high = np.full(len(models), np.nan)
    if played:
        sub = table[:, played][:, :, played]
        strength[played] = fit_strengths(sub.sum(axis=0), prior=prior)
        if np.isnan(strength).any():
            raise ValueError(
                "no Bradley-Terry fit without a prior: some models lost every debate to the rest"
            )
        counts = bootstrap_counts(rng, len(sub), samples)
        fits = fit_strengths(np.einsum("br,rij->bij", counts.astype(np.float64), sub), prior=prior)
        # Only without a prior can a resample have no fit; it is left out.
        fits = fits[~np.isnan(fits).any(axis=1)]
        if len(fits):
            low[played], high[played] = np.percentile(elo(fits), [2.5, 97.5], axis=0)
    ranks = _ranks(strength, played)
    out = []
    for i, model in enumerate(models):
        mine = head[model].values()
        wins, losses, ties = (sum(getattr(r, f) for r in mine) for f in ("wins", "losses", "ties"))
        interval = None if np.isnan(low[i]) else Interval(low=float(low[i]), high=float(high[i]))
        out.append(
            Rating(
                model=model,
                rank=ranks[i],
                strength=float(strength[i]),
                elo=float(elo(strength[i])),
                elo_interval=interval,
                wins=wins,
                losses=losses,
                ties=ties,
                debates=wins + losses + ties,
            )
        )
    return sorted(out, key=lambda r: (r.rank, -r.strength, models.index(r.model)))


def _debates(record: Record) -> int:
    return record.wins + record.losses + record.ties


def _ranks(strength: Array, played: list[int]) -> list[int]:
    """Competition ranks (1, 1, 3): rated models by strength, then every unrated model sharing the next rank."""
    ranks = [len(played) + 1] * len(strength)
    for i in played:
        ranks[i] = 1 + sum(1 for j in played if strength[j] > strength[i] + _SAME_STRENGTH)
    return ranks

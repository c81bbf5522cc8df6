"""How far the arena's verdicts can be trusted: the judging's biases, the verdicts' stability when the sides are
swapped, and how far the panel's judges agree. Each figure is an `Estimate` with its 95 % interval.

Figures that are a plain share of independent cases (side, order, swap consistency) take the Wilson interval.
Figures built from several judges' calls in the same debate (agreement, W, self-preference) are not: a debate's
calls hang together, so their interval is the percentile bootstrap over debates, each resample drawing whole
debates with replacement. Each bootstrap draws from its own stream of `seed`, so adding a figure moves no other.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from moot.arena.ratings import bootstrap_counts, percentile_interval
from moot.arena.results import Diagnostics, Estimate, Interval, JudgeCall, MatchRow, SelfPreference
from moot.eval.stats import wilson
from moot.judging import agreement

Array = NDArray[np.float64]

# A judge's pick: a model's label, or this for a tie (no model is labelled with the empty string).
TIE = ""

# Each bootstrapped figure's stream of the seed.
_AGREEMENT, _CONCORDANCE, _SELF = 1, 2, 3


def side_bias(rows: Sequence[MatchRow]) -> Estimate:
    """The for side's share of decisive debates (outcome `win`). With every pair debating both sides, 0.5 is
    no bias; above it the panel favours the for side (or the motions do), whoever argues it. A stored debate
    whose stances said no side (`sided` false, from history) is left out."""
    decisive = [row for row in rows if row.outcome == "win" and row.sided]
    return share(sum(row.winner == row.for_model for row in decisive), len(decisive))


def order_bias(rows: Sequence[MatchRow]) -> Estimate:
    """The first speaker's share of decisive debates, over those where a turn was held (`first` known). 0.5 is
    no bias; above it speaking first helps (framing), below it speaking last does (the last word)."""
    decisive = [row for row in rows if row.outcome == "win" and row.first is not None]
    return share(sum(row.winner == row.first for row in decisive), len(decisive))


def swap_consistency(rows: Sequence[MatchRow]) -> Estimate:
    """Share of (motion, pair of models) whose two debates, sides swapped, the same model won: how far a
    verdict follows the debater rather than the side. Only pairs with both debates decisive count (a later
    row of the same motion and sides replaces an earlier one). Wilson interval over those pairs.

    For reading it: two equally matched models give 0.5 by chance alone; a model that wins every time gives 1.
    """
    sides: dict[tuple[str, frozenset[str]], dict[str, MatchRow]] = defaultdict(dict)
    for row in rows:
        sides[row.motion_id, frozenset(row.models)][row.for_model] = row
    pairs = [list(both.values()) for both in sides.values() if len(both) == 2]
    decided = [(a.winner, b.winner) for a, b in pairs if a.outcome == b.outcome == "win"]
    return share(sum(a == b for a, b in decided), len(decided))


def judge_agreement(rows: Sequence[MatchRow], *, samples: int = 1000, seed: int = 0) -> Estimate | None:
    """Share of judge pairs that made the same pick in the same debate, pooled over debates: a debate with
    three judges gives three pairs. A tie is a pick ("tie") like a model; recused judges and judges without a
    verdict are left out. None when no debate has two judges' picks. Bootstrap over those debates."""
    panels = [p for p in (picks(row.judges) for row in rows) if len(p) >= 2]
    if not panels:
        return None
    same = np.array([_agreeing_pairs(list(p.values())) for p in panels], dtype=np.float64)
    pairs = np.array([len(p) * (len(p) - 1) / 2 for p in panels])
    counts = bootstrap_counts(_rng(seed, _AGREEMENT), len(panels), samples).astype(np.float64)
    return Estimate(
        value=float(same.sum() / pairs.sum()),
        interval=_interval(counts @ same / (counts @ pairs), samples),
        n=len(panels),
    )


def kendalls_w(
    rows: Sequence[MatchRow], models: Sequence[str], *, samples: int = 1000, seed: int = 0
) -> Estimate | None:
    """Kendall's W of the judges' rankings of the models: each judge ranks the models by its own share of
    their debates it judged won (a tie half), across the arena. 1: every judge ranks the models alike; 0: their
    rankings cancel out. Over the models every judge has judged (a recused judge may miss its own model's).
    None with fewer than two judges; value None when W is undefined (fewer than two such models, or every
    judge scored them alike). Bootstrap over debates with a pick.
    """
    judged = [(row, p) for row in rows if (p := picks(row.judges))]
    judges = sorted({j for _, p in judged for j in p})
    if len(judges) < 2:
        return None
    # credit[k, d, m]: what judge k gave model m in debate d; seen[k, d, m]: whether it judged m there.
    credit = np.zeros((len(judges), len(judged), len(models)))
    seen = np.zeros_like(credit)
    place = {m: i for i, m in enumerate(models)}
    for d, (row, p) in enumerate(judged):
        unknown = [m for m in row.models if m not in place]
        if unknown:
            raise ValueError(f"row {row.key!r} names models not in the arena: {', '.join(unknown)}")
        for k, judge in enumerate(judges):
            if judge in p:
                for model in row.models:
                    seen[k, d, place[model]] = 1
                    credit[k, d, place[model]] = _credit(p[judge], model)
    common = np.flatnonzero(seen.sum(axis=1).min(axis=0) > 0)
    credit, seen = credit[:, :, common], seen[:, :, common]
    value = _w(credit.sum(axis=1) / seen.sum(axis=1))
    if value is None:
        return Estimate(value=None, n=len(judged))
    counts = bootstrap_counts(_rng(seed, _CONCORDANCE), len(judged), samples).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        tables = np.einsum("bd,kdm->bkm", counts, credit) / np.einsum("bd,kdm->bkm", counts, seen)
    draws = np.array([_w(table) if not np.isnan(table).any() else None for table in tables], dtype=float)
    return Estimate(value=value, interval=_interval(draws, samples), n=len(judged))


def self_preference(rows: Sequence[MatchRow], *, samples: int = 1000, seed: int = 0) -> list[SelfPreference]:
    """For each judge that judged debates its own model took part in (self-judging allowed): how often it
    picked its own model (a tie half), against how often the panel's other judges picked that model in the
    same debates (pooled over their calls). A positive difference is the judge favouring its own model beyond
    what the other judges saw. Only debates where another judge gave a pick count: it takes one to compare
    with, so a one-judge panel gives none. Bootstrap over those debates."""
    cases: dict[tuple[str, str], list[tuple[float, float, int]]] = defaultdict(list)
    for row in rows:
        p = picks(row.judges)
        for call in row.judges:
            if call.own is None or call.judge not in p:
                continue
            others = [pick for judge, pick in p.items() if judge != call.judge]
            if others:
                own = _credit(p[call.judge], call.own)
                cases[call.judge, call.own].append(
                    (own, sum(_credit(o, call.own) for o in others), len(others))
                )
    return [
        _self_preference(judge, model, np.array(found), samples, _rng(seed, _SELF, n))
        for n, ((judge, model), found) in enumerate(sorted(cases.items()))
    ]


def _self_preference(
    judge: str, model: str, found: Array, samples: int, rng: np.random.Generator
) -> SelfPreference:
    own, others, calls = found[:, 0], found[:, 1], found[:, 2]
    counts = bootstrap_counts(rng, len(found), samples).astype(np.float64)
    own_draws = counts @ own / counts.sum(axis=1)
    others_draws = counts @ others / (counts @ calls)
    n = len(found)

    def estimate(value: float, draws: Array) -> Estimate:
        return Estimate(value=value, interval=_interval(draws, samples), n=n)

    own_rate, others_rate = float(own.mean()), float(others.sum() / calls.sum())
    return SelfPreference(
        judge=judge,
        model=model,
        own_rate=estimate(own_rate, own_draws),
        others_rate=estimate(others_rate, others_draws),
        difference=estimate(own_rate - others_rate, own_draws - others_draws),
    )


def diagnose(
    rows: Sequence[MatchRow], models: Sequence[str], *, samples: int = 1000, seed: int = 0
) -> Diagnostics:
    """Every figure above for one arena."""
    return Diagnostics(
        side_bias=side_bias(rows),
        order_bias=order_bias(rows),
        swap_consistency=swap_consistency(rows),
        judge_agreement=judge_agreement(rows, samples=samples, seed=seed),
        kendalls_w=kendalls_w(rows, models, samples=samples, seed=seed),
        self_preference=self_preference(rows, samples=samples, seed=seed),
    )


def share(hits: int, n: int) -> Estimate:
    """hits / n with its Wilson interval; value None without cases."""
    if n == 0:
        return Estimate(value=None, n=0)
    low, high = wilson(hits, n)
    return Estimate(value=hits / n, interval=Interval(low=low, high=high), n=n)


def picks(calls: Sequence[JudgeCall]) -> dict[str, str]:
    """Each judge's pick in one debate (a model, or `TIE`), leaving out recused judges and those without a
    verdict."""
    out = {}
    for call in calls:
        if call.recused or call.outcome == "none":
            continue
        if call.outcome == "tie":
            out[call.judge] = TIE
        elif call.winner is not None:
            out[call.judge] = call.winner
    return out


def _credit(pick: str, model: str) -> float:
    """What a pick gives a model: 1 if it names the model, a half for a tie, else 0."""
    return 0.5 if pick == TIE else float(pick == model)


def _agreeing_pairs(chosen: list[str]) -> int:
    return sum(chosen[a] == chosen[b] for a in range(len(chosen)) for b in range(a + 1, len(chosen)))


def _w(table: Array) -> float | None:
    return agreement.kendalls_w(table.tolist())


def _interval(draws: Array, samples: int) -> Interval | None:
    return percentile_interval(draws) if samples else None


def _rng(seed: int, *stream: int) -> np.random.Generator:
    return np.random.default_rng([seed, *stream])

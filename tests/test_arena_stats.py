"""The arena's statistics: the Bradley-Terry fit (against the `choix` package and against hand-solved cases), the
bootstrap intervals, and each diagnostic, checked on a simulated arena whose truth was planted and whose expected
figures are worked out exactly from the planted parameters (by enumeration, not by another simulation)."""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from moot.arena import diagnostics as diag
from moot.arena.ratings import DEFAULT_PRIOR, credits, fit_strengths, rate, records
from moot.arena.results import Estimate, JudgeCall, MatchRow, Rating, Standings
from moot.arena.standings import compute_standings
from moot.judging.agreement import kendalls_w

Array = NDArray[np.float64]
ELO = 400 / math.log(10)


def row(
    for_model: str,
    against_model: str,
    winner: str | None,
    *,
    outcome: str | None = None,
    first: str | None = None,
    judges: Sequence[JudgeCall] = (),
    motion: str = "m1",
    key: str | None = None,
) -> MatchRow:
    """A row; outcome `win` when a winner is given, else `tie` (pass `outcome="none"` for no verdict)."""
    decided = outcome or ("win" if winner else "tie")
    return MatchRow.model_validate(
        {
            "key": key or f"{motion}:{for_model}:{against_model}",
            "debate_id": key or f"{motion}:{for_model}:{against_model}",
            "motion_id": motion,
            "motion": motion,
            "for_model": for_model,
            "against_model": against_model,
            "first": first,
            "winner": winner,
            "outcome": decided,
            "judges": list(judges),
        }
    )


def call(judge: str, winner: str | None, *, outcome: str | None = None, **more: object) -> JudgeCall:
    decided = outcome or ("win" if winner else "tie")
    return JudgeCall.model_validate({"judge": judge, "winner": winner, "outcome": decided, **more})


def by_model(ratings: list[Rating]) -> dict[str, Rating]:
    return {r.model: r for r in ratings}


def kendall_tau(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's tau-a: concordant minus discordant pairs, over all pairs."""
    pairs = list(itertools.combinations(range(len(x)), 2))
    return sum(float(np.sign((x[a] - x[b]) * (y[a] - y[b]))) for a, b in pairs) / len(pairs)


def contains(estimate: Estimate | None, truth: float) -> bool:
    assert estimate is not None and estimate.interval is not None
    return estimate.interval.low - 1e-12 <= truth <= estimate.interval.high + 1e-12


# --- the fit against choix ----------------------------------------------------------------------------


def random_rows(rng: np.random.Generator, models: list[str], motions: int, *, ties: float) -> list[MatchRow]:
    """Every ordered pair on each motion, the winner drawn from random strengths, some debates tied."""
    strengths = rng.normal(0, 1, len(models))
    out = []
    for m in range(motions):
        for i, j in itertools.permutations(range(len(models)), 2):
            if rng.random() < ties:
                out.append(row(models[i], models[j], None, motion=f"m{m}"))
                continue
            p = 1 / (1 + math.exp(strengths[j] - strengths[i]))
            won = models[i] if rng.random() < p else models[j]
            out.append(row(models[i], models[j], won, motion=f"m{m}"))
    return out


def choix_data(rows: list[MatchRow], models: list[str], virtual_ties: bool) -> list[tuple[int, int]]:
    """The rows as choix's (winner, loser) pairs, every count doubled so that a tie is one win each way; with
    `virtual_ties`, one tied debate more per pair (what `prior = models - 1` adds)."""
    place = {m: i for i, m in enumerate(models)}
    data: list[tuple[int, int]] = []
    for r in rows:
        a, b = place[r.for_model], place[r.against_model]
        if r.outcome == "tie":
            data += [(a, b), (b, a)]
        else:
            w = place[r.winner or ""]
            data += [(w, b if w == a else a)] * 2
    if virtual_ties:
        for a, b in itertools.combinations(range(len(models)), 2):
            data += [(a, b), (b, a)]
    return data


def reference() -> Any:
    """choix, the reference fit, imported by the tests that compare with it: it brings scipy, a second of
    import that every test worker would otherwise pay while collecting."""
    import choix

    return choix


@pytest.mark.parametrize("solver", ["ilsr", "mm"])
def test_the_fit_matches_choix_without_a_prior(solver: str) -> None:
    models = [f"lab:m{i}" for i in range(6)]
    rows = random_rows(np.random.default_rng(11), models, motions=4, ties=0.15)
    ours = by_model(rate(rows, models, samples=0, prior=0))
    data = choix_data(rows, models, virtual_ties=False)
    choix = reference()
    if solver == "ilsr":
        theirs = choix.ilsr_pairwise(len(models), data, tol=1e-12, max_iter=10_000)
    else:
        theirs = choix.mm_pairwise(len(models), data, tol=1e-12, max_iter=100_000)
    theirs = theirs - theirs.mean()
    assert [ours[m].strength for m in models] == pytest.approx(list(theirs), abs=1e-6)
    assert abs(theirs).max() > 0.3  # a real spread, not everyone at 0


def test_the_prior_is_one_virtual_tie_per_model_as_choix_sees_it() -> None:
    # With prior = models - 1, each pair gets one virtual tied debate: choix can be given it as data. The data
    # has a model that won every debate, which has no finite strength without the prior.
    models = ["a", "b", "c", "d"]
    rows = random_rows(np.random.default_rng(3), models, motions=3, ties=0.1)
    rows = [r for r in rows if "a" not in r.models] + [
        row(x, y, "a", motion=f"m{k}") for k in range(3) for x, y in (("a", "b"), ("c", "a"), ("d", "a"))
    ]
    ours = by_model(rate(rows, models, samples=0, prior=len(models) - 1))
    theirs = reference().ilsr_pairwise(len(models), choix_data(rows, models, virtual_ties=True), tol=1e-12)
    assert [ours[m].strength for m in models] == pytest.approx(list(theirs - theirs.mean()), abs=1e-6)
    assert ours["a"].rank == 1 and math.isfinite(ours["a"].strength)


# --- hand-solved cases ----------------------------------------------------------------------------------


def test_three_wins_in_four_is_400_log10_3_elo_points() -> None:
    rows = [row("A", "B", "A", motion=f"m{k}") for k in range(3)] + [row("B", "A", "B")]
    ratings = by_model(rate(rows, ["A", "B"], samples=0, prior=0))
    assert ratings["A"].elo - ratings["B"].elo == pytest.approx(400 * math.log10(3), abs=1e-6)
    assert ratings["A"].strength == pytest.approx(math.log(3) / 2, abs=1e-8)  # centred: -B
    assert ratings["A"].elo + ratings["B"].elo == pytest.approx(3000)
    assert (ratings["A"].wins, ratings["A"].losses, ratings["A"].debates, ratings["A"].rank) == (3, 1, 4, 1)


def test_the_default_prior_adds_half_a_win_each_way_between_two_models() -> None:
    rows = [row("A", "B", "A", motion=f"m{k}") for k in range(4)]
    ratings = by_model(rate(rows, ["A", "B"], samples=0))
    # 4 + 0.5 wins against 0 + 0.5: odds 9.
    assert DEFAULT_PRIOR == 1.0
    assert ratings["A"].strength - ratings["B"].strength == pytest.approx(math.log(9), abs=1e-8)


def test_a_symmetric_cycle_rates_everyone_equal_and_they_share_rank_1() -> None:
    rows = [row("A", "B", "A"), row("B", "C", "B"), row("C", "A", "C")]
    for prior in (0.0, DEFAULT_PRIOR):
        ratings = rate(rows, ["A", "B", "C"], samples=0, prior=prior)
        assert [r.strength for r in ratings] == pytest.approx([0, 0, 0], abs=1e-9)
        assert [r.rank for r in ratings] == [1, 1, 1]
        assert [r.model for r in ratings] == ["A", "B", "C"]  # equal: in the order given


def test_ties_count_half_a_win_to_each_side() -> None:
    # A: 1 win + 2 ties = 2 of 3 against B's 1 of 3 (prior 0): odds 2.
    rows = [row("A", "B", "A"), row("A", "B", None, motion="m2"), row("B", "A", None)]
    ratings = by_model(rate(rows, ["A", "B"], samples=0, prior=0))
    assert ratings["A"].strength - ratings["B"].strength == pytest.approx(math.log(2), abs=1e-8)
    assert (ratings["A"].wins, ratings["A"].ties, ratings["B"].losses, ratings["B"].ties) == (1, 2, 1, 2)
    only_ties = rate(rows[1:], ["A", "B"], samples=0, prior=0)
    assert [r.strength for r in only_ties] == pytest.approx([0, 0], abs=1e-9)


def test_the_bootstrap_interval_is_as_wide_as_the_standard_error_says() -> None:
    # 300 of 400 debates to A: the log-odds' standard error is 1/sqrt(n p (1 - p)), half of it for each centred
    # strength, so A's 95 % Elo interval spans about 1.96 of those each side of the fit.
    rows = [row("A", "B", "A" if k < 300 else "B", key=f"d{k}") for k in range(400)]
    a = by_model(rate(rows, ["A", "B"], samples=2000, seed=1, prior=0))["A"]
    half = 1.96 * ELO / math.sqrt(400 * 0.75 * 0.25) / 2
    assert a.elo_interval is not None
    assert a.elo_interval.high - a.elo_interval.low == pytest.approx(2 * half, rel=0.1)
    assert (a.elo_interval.low + a.elo_interval.high) / 2 == pytest.approx(a.elo, abs=0.1 * half)


def test_the_win_matrix_credits_wins_and_split_ties() -> None:
    rows = [row("A", "B", "B"), row("A", "B", None), row("A", "B", None, outcome="none")]
    table = credits(rows, ["A", "B"])
    assert table.shape == (2, 2, 2)  # the row without a verdict is left out
    assert table.sum(axis=0).tolist() == [[0.0, 0.5], [1.5, 0.0]]


def test_without_a_prior_a_fit_that_does_not_exist_is_nan_and_refused() -> None:
    # A and B beat C and D in every debate between the groups: their gap has no maximum-likelihood value.
    wins = np.array([[0, 2, 3, 3], [2, 0, 3, 3], [0, 0, 0, 1], [0, 0, 1, 0]], dtype=np.float64)
    assert np.isnan(fit_strengths(wins, prior=0)).all()
    assert np.isfinite(fit_strengths(wins)).all()
    with pytest.raises(ValueError, match="without a prior"):
        rate([row("A", "B", "A")], ["A", "B"], prior=0)


def test_a_clean_sweep_down_the_order_is_fitted_fast_and_finite() -> None:
    # Each model beats every weaker one in every debate: strengths far apart, where an MM iteration crawls.
    models = list("ABCDEF")
    rows = [
        row(x, y, min(x, y), motion=f"m{k}") for k in range(20) for x, y in itertools.permutations(models, 2)
    ]
    start = time.perf_counter()
    ratings = rate(rows, models, samples=1000)
    assert time.perf_counter() - start < 5  # about 0.1 s; an MM iteration took seconds to minutes
    assert [r.model for r in ratings] == models
    assert all(r.elo_interval is not None and math.isfinite(r.elo_interval.high) for r in ratings)
    assert ratings[0].elo - ratings[1].elo > 400


def test_the_fit_is_batched_one_matrix_per_resample() -> None:
    one = np.array([[0, 3, 1], [1, 0, 2], [2, 1, 0]], dtype=np.float64)
    two = one.T.copy()
    stacked = fit_strengths(np.stack([one, two]))
    assert stacked[0] == pytest.approx(fit_strengths(one), abs=1e-9)
    assert stacked[1] == pytest.approx(fit_strengths(two), abs=1e-9)
    assert stacked.sum(axis=1) == pytest.approx([0, 0], abs=1e-9)


# --- a planted arena ------------------------------------------------------------------------------------

MODELS = ["lab:ace", "lab:bold", "lab:calm", "lab:deft", "lab:eager", "lab:frank"]
JUDGES = ["judge-1 lab:calm", "judge-2 other:x", "judge-3 other:y"]  # judge-1 is calm's model


@dataclass(frozen=True)
class Plant:
    """The truth of a simulated arena. Each judge picks the for side with probability
    sigmoid(s_for - s_against + side + order * (+1 first / -1 last) + swing + own), where `swing` is the debate's
    own turn of fortune (+-`swing` with equal odds, seen by every judge: it is what makes judges agree), and
    `own` is judge-1's `self_pref` for calm (+ when calm argues for, - against). The panel's verdict is the
    majority of its three judges (all self-judging allowed, none recused). Every pair debates every motion
    twice, sides swapped; the first speaker is the for side on even motions and the against side on odd
    ones, so side and order are not confounded."""

    strengths: tuple[float, ...] = (1.2, 0.6, 0.1, -0.3, -0.7, -0.9)
    side: float = 0.0
    order: float = 0.0
    swing: float = 0.6
    self_pref: float = 0.0
    motions: int = 20
    own: int = 2  # judge-1's model: calm
    judges: tuple[str, ...] = field(default=tuple(JUDGES))


@dataclass(frozen=True)
class Debate:
    motion: int
    pro: int  # the for side's model
    con: int
    first: int


def plan(plant: Plant) -> list[Debate]:
    out = []
    for m in range(plant.motions):
        for i, j in itertools.combinations(range(len(plant.strengths)), 2):
            for pro, con in ((i, j), (j, i)):
                out.append(Debate(m, pro, con, pro if m % 2 == 0 else con))
    return out


def judge_probs(plant: Plant, d: Debate, swing: float) -> Array:
    """Each judge's probability of picking the for side, given the debate's swing."""
    s = plant.strengths
    logit = s[d.pro] - s[d.con] + plant.side + plant.order * (1 if d.first == d.pro else -1) + swing
    own = plant.self_pref * ((d.pro == plant.own) - (d.con == plant.own))
    logits = np.array([logit + own, logit, logit], dtype=np.float64)
    probs: Array = 1 / (1 + np.exp(-logits))
    return probs


def majority(q: Array) -> float:
    """The probability that at least two of three independent judges pick the for side."""
    a, b, c = q
    return float(a * b * c + a * b * (1 - c) + a * (1 - b) * c + (1 - a) * b * c)


def swings(plant: Plant) -> tuple[float, float]:
    return (plant.swing, -plant.swing)


def expected_for_wins(plant: Plant, d: Debate) -> float:
    return float(np.mean([majority(judge_probs(plant, d, e)) for e in swings(plant)]))


def simulate(plant: Plant, seed: int) -> list[MatchRow]:
    rng = np.random.default_rng(seed)
    names = MODELS[: len(plant.strengths)]
    out = []
    for n, d in enumerate(plan(plant)):
        swing = plant.swing if rng.random() < 0.5 else -plant.swing
        pro_picks = rng.random(3) < judge_probs(plant, d, swing)
        pro, con = names[d.pro], names[d.con]
        calls = [
            call(
                judge,
                pro if picked else con,
                own=names[plant.own] if k == 0 and plant.own in (d.pro, d.con) else None,
            )
            for k, (judge, picked) in enumerate(zip(plant.judges, pro_picks, strict=True))
        ]
        winner = pro if pro_picks.sum() >= 2 else con
        out.append(
            row(pro, con, winner, first=names[d.first], judges=calls, motion=f"m{d.motion}", key=f"d{n}")
        )
    return out


@dataclass(frozen=True)
class Truth:
    """The expected figures of a planted arena, exactly."""

    elo: Array
    side_bias: float
    order_bias: float
    swap_consistency: float
    judge_agreement: float
    kendalls_w: float | None
    own_rate: float
    others_rate: float


def truth(plant: Plant) -> Truth:
    debates = plan(plant)
    k = len(plant.strengths)
    p_for = {d: expected_for_wins(plant, d) for d in debates}
    # The fit's target: the same fit (same prior) on the expected win matrix.
    wins = np.zeros((k, k))
    for d, p in p_for.items():
        wins[d.pro, d.con] += p
        wins[d.con, d.pro] += 1 - p
    groups: dict[tuple[int, frozenset[int]], list[Debate]] = {}
    for d in debates:
        groups.setdefault((d.motion, frozenset((d.pro, d.con))), []).append(d)
    # Swapped debates are independent given the plant; "the same model won both" is pro-won one and con the other.
    same = [p_for[a] * (1 - p_for[b]) + (1 - p_for[a]) * p_for[b] for a, b in groups.values()]
    agree, share, seen = [], np.zeros((3, k)), np.zeros((3, k))
    own, others = [], []
    for d in debates:
        for e in swings(plant):
            q = judge_probs(plant, d, e)
            agree.append(
                np.mean([q[a] * q[b] + (1 - q[a]) * (1 - q[b]) for a, b in ((0, 1), (0, 2), (1, 2))])
            )
            share[:, d.pro] += q / 2
            share[:, d.con] += (1 - q) / 2
            seen[:, [d.pro, d.con]] += 0.5
            if plant.own in (d.pro, d.con):
                picked = q if d.pro == plant.own else 1 - q
                own.append(picked[0])
                others.append((picked[1] + picked[2]) / 2)
    return Truth(
        elo=1500 + ELO * fit_strengths(wins),
        side_bias=float(np.mean(list(p_for.values()))),
        order_bias=float(np.mean([p if d.first == d.pro else 1 - p for d, p in p_for.items()])),
        swap_consistency=float(np.mean(same)),
        judge_agreement=float(np.mean(agree)),
        kendalls_w=kendalls_w((share / seen).tolist()),
        own_rate=float(np.mean(own)),
        others_rate=float(np.mean(others)),
    )


PLANTED = Plant(side=0.35, order=-0.3, self_pref=1.2)


@pytest.fixture(scope="module")
def planted() -> tuple[Standings, Truth]:
    rows = simulate(PLANTED, seed=7)
    return compute_standings(rows, MODELS, samples=1000, seed=5), truth(PLANTED)


def test_the_ratings_recover_the_planted_order(planted: tuple[Standings, Truth]) -> None:
    standings, _ = planted
    fitted = by_model(standings.ratings)
    tau = kendall_tau([fitted[m].strength for m in MODELS], PLANTED.strengths)
    assert tau >= 0.85
    assert standings.ratings[0].model == "lab:ace" and standings.ratings[-1].model == "lab:frank"
    assert standings.debates == 600 and standings.unrated == 0
    assert all(r.debates == 200 for r in standings.ratings)


def test_the_elo_intervals_hold_the_planted_strengths(planted: tuple[Standings, Truth]) -> None:
    standings, expected = planted
    fitted = by_model(standings.ratings)
    held = [
        (interval := fitted[m].elo_interval) is not None and interval.low <= elo <= interval.high
        for m, elo in zip(MODELS, expected.elo, strict=True)
    ]
    assert sum(held) >= 5, (held, expected.elo, [fitted[m].elo_interval for m in MODELS])
    # The fit's target keeps the planted order: the panel's majority sharpens the gaps, it does not reorder.
    assert list(np.argsort(-expected.elo)) == list(range(len(MODELS)))


def test_each_diagnostic_interval_holds_its_expected_value(planted: tuple[Standings, Truth]) -> None:
    d, expected = planted[0].diagnostics, planted[1]
    assert contains(d.side_bias, expected.side_bias) and d.side_bias.n == 600
    assert contains(d.order_bias, expected.order_bias) and d.order_bias.n == 600
    assert contains(d.swap_consistency, expected.swap_consistency) and d.swap_consistency.n == 300
    assert contains(d.judge_agreement, expected.judge_agreement)
    assert expected.kendalls_w is not None and expected.kendalls_w < 1  # judge-1 ranks its own calm first
    assert contains(d.kendalls_w, expected.kendalls_w)
    [self_pref] = d.self_preference
    assert (self_pref.judge, self_pref.model, self_pref.own_rate.n) == (JUDGES[0], "lab:calm", 200)
    assert contains(self_pref.own_rate, expected.own_rate)
    assert contains(self_pref.others_rate, expected.others_rate)
    assert contains(self_pref.difference, expected.own_rate - expected.others_rate)


def test_the_planted_biases_are_told_apart_from_none(planted: tuple[Standings, Truth]) -> None:
    d, expected = planted[0].diagnostics, planted[1]
    assert expected.side_bias > 0.55 and not contains(d.side_bias, 0.5)
    assert expected.order_bias < 0.45 and not contains(d.order_bias, 0.5)
    [self_pref] = d.self_preference
    assert not contains(self_pref.difference, 0.0)


def test_without_planted_biases_the_intervals_hold_the_neutral_values() -> None:
    plant = replace(PLANTED, side=0.0, order=0.0, self_pref=0.0)
    expected = truth(plant)
    # The balanced design makes these exact, which checks the enumeration too.
    assert expected.side_bias == pytest.approx(0.5, abs=1e-12)
    assert expected.order_bias == pytest.approx(0.5, abs=1e-12)
    assert expected.own_rate == pytest.approx(expected.others_rate, abs=1e-12)
    rows = simulate(plant, seed=8)
    assert contains(diag.side_bias(rows), 0.5)
    assert contains(diag.order_bias(rows), 0.5)
    [self_pref] = diag.self_preference(rows, samples=500, seed=1)
    assert contains(self_pref.difference, 0.0)


def test_a_large_side_bias_is_found_and_measured() -> None:
    plant = replace(PLANTED, side=1.5, order=0.0)
    rows = simulate(plant, seed=9)
    found = diag.side_bias(rows)
    assert not contains(found, 0.5)
    assert contains(found, truth(plant).side_bias)
    assert contains(diag.order_bias(rows), 0.5)


def test_a_judge_that_agrees_with_no_one_lowers_agreement_and_w() -> None:
    # judge-3 picks at random: agreement falls towards a half and W well below the planted arena's.
    plant = replace(PLANTED, self_pref=0.0)
    rows = simulate(plant, seed=10)
    rng = np.random.default_rng(4)
    noisy = [
        r.model_copy(
            update={
                "judges": [
                    *r.judges[:2],
                    call(JUDGES[2], r.for_model if rng.random() < 0.5 else r.against_model),
                ]
            }
        )
        for r in rows
    ]
    before = diag.judge_agreement(rows, samples=300)
    after = diag.judge_agreement(noisy, samples=300)
    w_before = diag.kendalls_w(rows, MODELS, samples=300)
    w_after = diag.kendalls_w(noisy, MODELS, samples=300)
    assert before is not None and after is not None and w_before is not None and w_after is not None
    assert after.interval is not None and before.interval is not None
    assert after.interval.high < before.interval.low
    assert w_before.value is not None and w_after.value is not None
    assert w_after.value < w_before.value


# --- diagnostics by hand ------------------------------------------------------------------------------------


def test_side_and_order_bias_count_decisive_debates() -> None:
    rows = [
        row("A", "B", "A", first="A"),
        row("B", "A", "B", first="A"),
        row("A", "B", "B", first="B", motion="m2"),
        row("B", "A", None, first="B", motion="m2"),  # a tie: not decisive
        row("A", "B", None, outcome="none", motion="m3"),
        row("B", "A", "A", motion="m3"),  # no turn held: left out of the order
    ]
    assert diag.side_bias(rows).value == pytest.approx(2 / 4)
    assert diag.side_bias(rows).n == 4
    assert diag.order_bias(rows).value == pytest.approx(2 / 3)
    assert diag.order_bias(rows).n == 3


def test_swap_consistency_pairs_each_motion_and_pair_with_sides_swapped() -> None:
    rows = [
        row("A", "B", "A"),
        row("B", "A", "A"),  # A both times: consistent
        row("A", "B", "A", motion="m2"),
        row("B", "A", "B", motion="m2"),  # the for side both times: not
        row("A", "C", "A", motion="m3"),
        row("C", "A", None, motion="m3"),  # a tie: left out
        row("B", "C", "B", motion="m4"),  # its swap never ran: left out
    ]
    found = diag.swap_consistency(rows)
    assert (found.value, found.n) == (0.5, 2)


def test_judge_agreement_counts_judge_pairs_and_ties_as_picks() -> None:
    rows = [
        row("A", "B", "A", judges=[call("j1", "A"), call("j2", "A"), call("j3", "B")]),  # 1 of 3 pairs
        row("A", "B", None, judges=[call("j1", None), call("j2", None)]),  # both tie: agree
        row(
            "A",
            "B",
            "B",
            judges=[call("j1", "B"), call("j2", "A", recused=True), call("j3", None, outcome="none")],
        ),  # one pick left: no pair
    ]
    found = diag.judge_agreement(rows, samples=200)
    assert found is not None
    assert found.value == pytest.approx(2 / 4) and found.n == 2
    assert found.interval is not None and 0 <= found.interval.low <= found.interval.high <= 1


def test_kendalls_w_ranks_models_by_each_judges_win_share() -> None:
    agree = [
        row(x, y, w, judges=[call("j1", w), call("j2", w)], motion=f"m{k}")
        for k, (x, y, w) in enumerate([("A", "B", "A"), ("B", "C", "B"), ("A", "C", "A")])
    ]
    found = diag.kendalls_w(agree, ["A", "B", "C"], samples=100)
    assert found is not None and found.value == pytest.approx(1.0)
    reversed_ = [
        r.model_copy(
            update={
                "judges": [
                    r.judges[0],
                    call("j2", r.against_model if r.winner == r.for_model else r.for_model),
                ]
            }
        )
        for r in agree
    ]
    opposed = diag.kendalls_w(reversed_, ["A", "B", "C"], samples=100)
    assert opposed is not None and opposed.value == pytest.approx(0.0)


def test_kendalls_w_leaves_out_a_model_a_judge_never_judged() -> None:
    # j2 is recused from C's debates: W is over A and B, on which the two judges agree.
    rows = [
        row("A", "B", "A", judges=[call("j1", "A"), call("j2", "A")]),
        row("A", "C", "C", judges=[call("j1", "C"), call("j2", "C", recused=True)]),
        row("B", "C", "C", judges=[call("j1", "C"), call("j2", "B", recused=True)]),
    ]
    found = diag.kendalls_w(rows, ["A", "B", "C"], samples=50)
    assert found is not None and found.value == pytest.approx(1.0)


def test_self_preference_compares_a_judge_with_the_rest_of_its_panel() -> None:
    rows = [
        row(
            "A",
            "B",
            "A",
            judges=[call("j1 A", "A", own="A"), call("j2", "B"), call("j3", None)],
            motion=f"m{k}",
        )
        for k in range(4)
    ] + [row("B", "C", "B", judges=[call("j1 A", "B"), call("j2", "B")])]  # A not debating
    [found] = diag.self_preference(rows, samples=200)
    assert (found.judge, found.model, found.own_rate.n) == ("j1 A", "A", 4)
    assert found.own_rate.value == pytest.approx(1.0)
    assert found.others_rate.value == pytest.approx(0.25)  # j2 never, j3's tie half
    assert found.difference.value == pytest.approx(0.75)
    assert found.difference.interval is not None
    assert found.difference.interval.low == pytest.approx(0.75)  # every debate alike: no spread


# --- edge cases -----------------------------------------------------------------------------------------


def test_no_rated_rows_give_no_figures() -> None:
    models = ["A", "B", "C"]
    for rows in ([], [row("A", "B", None, outcome="none"), row("B", "C", None, outcome="none")]):
        standings = compute_standings(rows, models, samples=200)
        assert (standings.debates, standings.unrated) == (0, len(rows))
        assert [
            (r.model, r.rank, r.strength, r.elo, r.elo_interval, r.debates) for r in standings.ratings
        ] == [(m, 1, 0.0, 1500.0, None, 0) for m in models]
        d = standings.diagnostics
        assert d.side_bias == d.order_bias == d.swap_consistency == Estimate(value=None, n=0)
        assert d.judge_agreement is None and d.kendalls_w is None and d.self_preference == []
        assert standings.head_to_head["A"]["B"].wins == 0 and set(standings.head_to_head["A"]) == {"B", "C"}


def test_rows_without_a_verdict_are_counted_unrated_and_left_out() -> None:
    rows = [row("A", "B", "A"), row("B", "A", None, outcome="none"), row("A", "B", None)]
    standings = compute_standings(rows, ["A", "B"], samples=50)
    assert (standings.debates, standings.unrated) == (2, 1)
    assert standings.head_to_head["A"]["B"].model_dump() == {"wins": 1, "losses": 0, "ties": 1}
    assert standings.head_to_head["B"]["A"].model_dump() == {"wins": 0, "losses": 1, "ties": 1}


def test_a_model_that_won_everything_stays_finite() -> None:
    rows = [
        row(x, y, "A" if "A" in (x, y) else x, motion=f"m{k}")
        for k in range(3)
        for x, y in itertools.permutations("ABC", 2)
    ]
    ratings = compute_standings(rows, ["A", "B", "C"], samples=300).ratings
    top = ratings[0]
    assert (top.model, top.rank, top.wins, top.losses) == ("A", 1, 12, 0)
    assert top.elo_interval is not None
    assert all(math.isfinite(x) for x in (top.strength, top.elo, top.elo_interval.low, top.elo_interval.high))
    assert top.elo_interval.low > max(r.elo for r in ratings[1:])


def test_a_model_without_a_rated_debate_is_listed_last_without_an_interval() -> None:
    rows = [row("A", "B", "A"), row("B", "A", "B"), row("A", "B", "A", motion="m2")]
    ratings = compute_standings(rows, ["Z", "A", "B"], samples=100).ratings
    assert [(r.model, r.rank) for r in ratings] == [("A", 1), ("B", 2), ("Z", 3)]
    assert (ratings[2].debates, ratings[2].elo, ratings[2].elo_interval) == (0, 1500.0, None)
    assert ratings[0].strength + ratings[1].strength == pytest.approx(0)  # centred over the rated
    assert all(r.elo_interval is not None for r in ratings[:2])


def test_one_judge_gives_no_agreement_w_or_self_preference() -> None:
    rows = [row("A", "B", "A", judges=[call("j1 A", "A", own="A")], motion=f"m{k}") for k in range(3)]
    d = compute_standings(rows, ["A", "B"], samples=50).diagnostics
    assert d.judge_agreement is None and d.kendalls_w is None and d.self_preference == []


def test_a_row_naming_a_model_outside_the_arena_is_refused() -> None:
    with pytest.raises(ValueError, match="not in the arena: C"):
        compute_standings([row("A", "C", None, outcome="none")], ["A", "B"])
    with pytest.raises(ValueError, match="neither of its models"):
        rate([row("A", "B", "C")], ["A", "B", "C"])
    with pytest.raises(ValueError, match="named twice"):
        records([], ["A", "A"])


def test_the_same_seed_gives_the_same_standings_and_no_samples_no_intervals() -> None:
    rows = simulate(replace(PLANTED, motions=2), seed=1)
    once = compute_standings(rows, MODELS, samples=200, seed=3)
    assert compute_standings(rows, MODELS, samples=200, seed=3) == once
    other = compute_standings(rows, MODELS, samples=200, seed=4)
    assert other.ratings[0].elo_interval != once.ratings[0].elo_interval
    bare = compute_standings(rows, MODELS, samples=0)
    assert all(r.elo_interval is None for r in bare.ratings)
    assert bare.diagnostics.judge_agreement is not None and bare.diagnostics.judge_agreement.interval is None
    assert bare.diagnostics.side_bias.interval is not None  # Wilson needs no resampling


def test_300_debates_of_6_models_with_1000_resamples_take_well_under_a_few_seconds() -> None:
    rows = simulate(replace(PLANTED, motions=10, self_pref=1.0), seed=2)
    assert len(rows) == 300
    start = time.perf_counter()
    compute_standings(rows, MODELS, samples=1000, seed=0)
    # About 0.2 s here; the bound only catches a fit gone back to a Python loop per resample.
    assert time.perf_counter() - start < 10

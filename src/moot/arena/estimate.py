"""What an arena will cost before it runs: each pair's first debate estimated on stand-in models (the engine's
`estimate_debate`: no call, nothing leaves the machine), counted once per debate the pair holds. Motions differ
only in their text, so one motion's debate stands for the others."""

from __future__ import annotations

from dataclasses import replace

from moot.arena.plan import ArenaPlan
from moot.engine import Estimate, ModelEstimate, estimate_debate


async def estimate_arena(plan: ArenaPlan) -> Estimate:
    per_pair = 2 * len(plan.motions.items)
    totals: dict[str, ModelEstimate] = {}
    seen: set[tuple[str, str]] = set()
    for match in plan.matches():
        pair = (match.for_model.label, match.against_model.label)
        if tuple(sorted(pair)) in seen:
            continue
        seen.add((min(pair), max(pair)))
        est = await estimate_debate(plan.config(match))
        for m in est.models:
            scaled = _times(m, per_pair)
            totals[m.model] = _plus(totals[m.model], scaled) if m.model in totals else scaled
    return Estimate(models=list(totals.values()))


def _times(m: ModelEstimate, n: int) -> ModelEstimate:
    return replace(
        m,
        calls_low=m.calls_low * n,
        calls_high=m.calls_high * n,
        input_low=m.input_low * n,
        input_high=m.input_high * n,
        output_low=m.output_low * n,
        output_high=m.output_high * n,
        cost_low=None if m.cost_low is None else m.cost_low * n,
        cost_high=None if m.cost_high is None else m.cost_high * n,
    )


def _plus(a: ModelEstimate, b: ModelEstimate) -> ModelEstimate:
    def cost(x: float | None, y: float | None) -> float | None:
        return None if x is None or y is None else x + y

    return replace(
        a,
        calls_low=a.calls_low + b.calls_low,
        calls_high=a.calls_high + b.calls_high,
        input_low=a.input_low + b.input_low,
        input_high=a.input_high + b.input_high,
        output_low=a.output_low + b.output_low,
        output_high=a.output_high + b.output_high,
        cost_low=cost(a.cost_low, b.cost_low),
        cost_high=cost(a.cost_high, b.cost_high),
    )

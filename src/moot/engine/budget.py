"""Budgets: what the next call may cost, and whether the limits in `config.limits` allow it.

Tokens are counted by `moot.context.count_tokens` (the model's own tokenizer where moot has it, else a
calibrated estimate). Prices come from genai-prices; local and fake models cost nothing.
"""

from __future__ import annotations

import genai_prices

from moot.context.fit import PromptLike
from moot.context.tokens import count_tokens
from moot.domain.config import DebateConfig, Limits, ModelOptions
from moot.domain.models import ModelRef
from moot.domain.providers import find_provider
from moot.domain.state import DebateState
from moot.domain.usage import Usage
from moot.errors import ConfigError

# A reply's length when the config sets no max_tokens: a generous turn, so a budget check errs on the safe side.
DEFAULT_REPLY_TOKENS = 1024


def estimate_tokens(text: str, model: ModelRef) -> int:
    """Tokens `model` will see in a text: its own tokenizer where moot has it, else a calibrated estimate."""
    return count_tokens(text, model)


def price(model: ModelRef, input_tokens: int, output_tokens: int) -> float | None:
    """USD for these tokens on this model; None when genai-prices does not know it."""
    if model.is_local:
        return 0.0
    spec = find_provider(model.provider)
    provider = spec.pricing_name if spec is not None else None  # None: a server of unknown make, by name
    name = model.name
    try:
        calc = genai_prices.calc_price(
            genai_prices.Usage(input_tokens=input_tokens, output_tokens=output_tokens),
            name,
            provider_id=provider,
        )
    except Exception:  # genai-prices raises several types for unknown models; all mean "no price"
        return None
    return float(calc.total_price)


def reply_tokens(options: ModelOptions, local_tokens: int) -> int:
    """The most a reply may take: the config's max_tokens, else the engine's cap for local models."""
    if options.max_tokens is not None:
        return options.max_tokens
    return local_tokens if options.model.provider == "local" else DEFAULT_REPLY_TOKENS


def call_estimate(options: ModelOptions, prompt: PromptLike, local_tokens: int) -> Usage:
    """One call's usage, estimated before it is made: its prompt and the longest reply it may get
    (`reply_tokens`, with `local_tokens` as the cap of a local model)."""
    input_tokens = estimate_tokens(prompt.system + prompt.user, options.model)
    output_tokens = reply_tokens(options, local_tokens)
    cost = price(options.model, input_tokens, output_tokens)
    return Usage(
        requests=1,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cost_usd=cost,
        unpriced_requests=1 if cost is None else 0,
    )


def over_budget(limits: Limits, spent: Usage, call: Usage, *, verdict: bool) -> str | None:
    """Why `call` may not be made after `spent`, or None when it fits.

    Debating calls must fit in the limits less the judge's reserve; the verdict may use the whole limit.
    """
    keep = 0.0 if verdict else limits.judge_reserve
    if limits.token_limit is not None:
        allowed = limits.token_limit * (1 - keep)
        after = spent.total_tokens + call.total_tokens
        if after > allowed:
            return (
                f"token_limit: {spent.total_tokens:,} tokens spent + ~{call.total_tokens:,} for the next call "
                f"> {allowed:,.0f} allowed{_reserve(keep)}"
            )
    if limits.cost_limit is not None and call.cost_usd is not None:
        allowed_usd = limits.cost_limit * (1 - keep)
        spent_usd = spent.cost_usd or 0.0
        if spent_usd + call.cost_usd > allowed_usd:
            return (
                f"cost_limit: ${spent_usd:.4f} spent + ~${call.cost_usd:.4f} for the next call "
                f"> ${allowed_usd:.4f} allowed{_reserve(keep)}"
            )
    return None


def _reserve(keep: float) -> str:
    return f" (after keeping {keep:.0%} for the verdict)" if keep else ""


def _models(config: DebateConfig) -> list[ModelRef]:
    """Every model this debate may call: participants, judges and their fallbacks, the moderator, the history's
    summarizer, the audience's model and the stopping rules' embedding model."""
    models = [p.model for p in config.participants]
    models += [j.model for j in config.judges] + [f.model for j in config.judges for f in j.fallback]
    if config.judge is not None:
        models += [config.judge.model, *(f.model for f in config.judge.fallback)]
    for options in (config.moderator, config.history.summarizer, config.audience and config.audience.model):
        if options:
            models.append(options.model)
    if config.stopping.embeddings is not None:
        models.append(config.stopping.embeddings)
    return models


def unpriced_models(config: DebateConfig) -> list[str]:
    """The models of this debate that genai-prices cannot price (local and fake ones cost nothing)."""
    return list(dict.fromkeys(str(m) for m in _models(config) if price(m, 1000, 1000) is None))


def costs_nothing(config: DebateConfig) -> bool:
    """Whether every model this debate may call is free by `price` (local, fake and people's seats: they run
    here): its cost is $0 before any call is made, not unknown."""
    return all(price(m, 1000, 1000) == 0.0 for m in _models(config))


def check_budget_prices(config: DebateConfig) -> None:
    """A cost limit needs every model's price: refuse, before any call, a config that names an unpriced one.

    (`warn_at_cost` only warns, so an unpriced model there gets a notice at the start instead: see
    `price_notice`.)"""
    if config.limits.cost_limit is None:
        return
    unpriced = unpriced_models(config)
    if unpriced:
        raise ConfigError(
            f"genai-prices has no price for {unpriced[0]}, so the cost cannot be checked; "
            "use token_limit instead, or a priced model",
            field="limits.cost_limit",
        )


def price_notice(config: DebateConfig) -> str | None:
    """What to tell the user when warn_at_cost or pause_at_cost is set but some calls cannot be priced."""
    limits = config.limits
    named = [f"limits.{f}" for f in ("warn_at_cost", "pause_at_cost") if getattr(limits, f) is not None]
    if not named or limits.cost_limit is not None:
        return None
    unpriced = unpriced_models(config)
    if not unpriced:
        return None
    counts = "counts" if len(named) == 1 else "count"
    return f"{' and '.join(named)} {counts} only priced calls: genai-prices has no price for {', '.join(unpriced)}"


def cost_left(state: DebateState) -> tuple[float | None, int | None]:
    """What the rounds not yet held would cost at the mean cost of the finished rounds' turns, and how many
    there are (the verdict and assessments not counted).
    (None, None) when no round has finished, the format plans no fixed number, or a call had no price."""
    held = [r for r in state.rounds if r.completed]
    planned = state.planned_rounds
    if not held or planned is None or state.usage.unpriced_requests:
        return None, None
    per_round = sum((t.usage.cost_usd or 0.0) for r in held for t in r.turns) / len(held)
    left = max(planned - len(held), 0)
    return per_round * left, left

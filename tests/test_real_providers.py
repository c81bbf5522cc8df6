"""End to end against the real providers: on each provider whose key is in the
environment, a two-participant, one-round debate with a judge, through the engine as `moot run` drives it.

Marked `real`: plain `pytest` (the fast tier) leaves these out, and `pytest -m ""` (the README's test
command, CI) skips each provider without a key, saying which variable to set, before anything is built or
any network is touched. With a key, a debate costs a fraction of a cent on the models below; another
model is `MOOT_REAL_<PROVIDER>_MODEL` (e.g. MOOT_REAL_OPENAI_MODEL=openai:gpt-4.1-nano).

    OPENAI_API_KEY=sk-... .venv/bin/pytest -m real tests/test_real_providers.py
"""

from __future__ import annotations

import os

import pytest
from pydantic_ai import models

from moot.domain.config import DebateConfig, validate_config
from moot.domain.models import ModelRef
from moot.domain.providers import BUILT_IN, ProviderSpec
from moot.domain.state import fold
from moot.domain.verdict import CRITERIA, Verdict
from moot.engine import InMemoryLog, run_debate
from moot.engine.budget import price

# A cheap, current model per provider that moot builds itself and prices through genai-prices.
CHEAP: dict[str, str] = {
    "openai": "openai:gpt-4o-mini",
    "anthropic": "anthropic:claude-haiku-4-5",
    "google": "google:gemini-2.5-flash-lite",
    "groq": "groq:llama-3.1-8b-instant",
    "mistral": "mistral:mistral-small-latest",
    "openrouter": "openrouter:openai/gpt-4o-mini",
}
# A guard, not a budget: the debate below costs well under a cent on every model above.
COST_LIMIT_USD = 0.25


def keyed_providers() -> list[ProviderSpec]:
    """The built-in providers that call their own servers with a key (not a local or user-named server)."""
    return [
        p for p in BUILT_IN if p.key_vars and p.key_required and not p.runs_here and p.base_url != "required"
    ]


def test_every_keyed_provider_has_a_cheap_model_to_test_with() -> None:
    # Not marked `real`: runs in the fast tier, so a provider added to the registry is not silently untested.
    assert sorted(p.name for p in keyed_providers()) == sorted(CHEAP)
    for name, model in CHEAP.items():
        assert model.startswith(f"{name}:"), model
        assert price(ModelRef.model_validate(model), 1000, 1000), f"{model} has no price in genai-prices"


def config_for(model: str) -> dict[str, object]:
    seat = {"model": model, "max_tokens": 300}
    return {
        "topic": "Should a city make its buses free to ride?",
        "participants": [
            {"name": "Ada", "stance": "for free buses", **seat},
            {"name": "Bo", "stance": "against free buses", **seat},
        ],
        "rounds": 1,
        "judge": {"model": model, "max_tokens": 1500},
        "limits": {"cost_limit": COST_LIMIT_USD, "turn_timeout_s": 120, "judge_timeout_s": 180},
        "stopping": {"assess_rounds": False},
    }


def key_var(spec: ProviderSpec) -> str | None:
    return next((var for var in spec.key_vars if os.environ.get(var)), None)


@pytest.mark.real
@pytest.mark.parametrize("spec", keyed_providers(), ids=lambda p: p.name)
async def test_a_one_round_debate_with_a_judge_on(
    spec: ProviderSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    if key_var(spec) is None:
        pytest.skip(f"{spec.name}: no key in the environment (set {' or '.join(spec.key_vars)} to run it)")
    # tests/conftest.py forbids model requests for every other test; this one is for them.
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)
    model = os.environ.get(f"MOOT_REAL_{spec.name.upper()}_MODEL", CHEAP[spec.name])
    config: DebateConfig = validate_config(config_for(model))
    log = InMemoryLog()
    async for _ in run_debate(config, log=log):
        pass
    state = fold(log.events)

    assert state.status == "completed", state.error
    assert [t.participant_id for t in state.turns] == ["ada", "bo"]
    for turn in state.turns:
        assert turn.text.strip(), f"{turn.participant_id} said nothing"
        assert turn.usage.requests >= 1 and turn.usage.input_tokens > 0 and turn.usage.output_tokens > 0
    assert state.judge_usage.requests >= 1 and state.judge_usage.input_tokens > 0
    assert state.judge_usage.output_tokens > 0

    verdict = state.verdict
    assert verdict is not None, f"no verdict: {state.verdict_error}"
    assert (
        Verdict.model_validate(verdict.model_dump()) == verdict
    )  # the winner is the top score, ties explicit
    assert sorted(s.participant_id for s in verdict.scores) == ["ada", "bo"]
    for s in verdict.scores:
        assert set(s.criteria) == set(CRITERIA) and all(0 <= v <= 10 for v in s.criteria.values())
        assert s.reasoning.strip()
    assert verdict.summary.strip()

    total = state.usage
    if price(config.participants[0].model, 1000, 1000):
        assert total.cost_usd is not None and 0 < total.cost_usd < COST_LIMIT_USD
        assert total.unpriced_requests == 0


@pytest.mark.parametrize("spec", keyed_providers(), ids=lambda p: p.name)
async def test_without_a_key_a_provider_is_skipped_naming_the_variable(
    spec: ProviderSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What CI does: no key, so a skip with the reason pytest's summary (-ra) shows, before any model is built.
    for var in spec.key_vars:
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(pytest.skip.Exception, match=rf"^{spec.name}: no key in the environment \(set "):
        await test_a_one_round_debate_with_a_judge_on(spec, monkeypatch)
    assert models.ALLOW_MODEL_REQUESTS is False

"""Context windows: genai-prices' bundled data first, moot's own table only for models it lists no window for.

Expected windows are read from genai-prices through its public `calc_price` (the model it prices carries its
`context_window`), so a new genai-prices release cannot make these tests guess wrong.
"""

from __future__ import annotations

import socket

import genai_prices
import pytest

from moot.context import windows
from moot.context.windows import DEFAULT_WINDOW, FAKE_WINDOW, family_window, known_window
from moot.domain.models import ModelRef
from moot.domain.providers import find_provider


def _listed(name: str, provider_id: str | None) -> int | None:
    """genai-prices' own answer: the window of the model `calc_price` prices, None when it finds no model."""
    try:
        calc = genai_prices.calc_price(genai_prices.Usage(input_tokens=1), name, provider_id=provider_id)
    except LookupError:
        return None
    return calc.model.context_window


def _pricing_id(model: ModelRef) -> str | None:
    spec = find_provider(model.provider)
    return spec.pricing_name if spec is not None else None


@pytest.mark.parametrize(
    "model",
    [
        "openai:gpt-4.1-nano",
        "openai:gpt-4o",
        "openai:gpt-5",
        "openai:o4-mini",
        "anthropic:claude-sonnet-4-5",
        "google:gemini-2.0-flash",
        "deepseek:deepseek-chat",
        "openrouter:openai/gpt-4o",
        # A server of unknown make is priced by the name alone, and its window found the same way.
        "openai-compatible:gpt-4o",
    ],
)
def test_a_model_genai_prices_knows_gets_its_window_from_there(model: str) -> None:
    ref = ModelRef.model_validate(model)
    listed = _listed(ref.name, _pricing_id(ref))
    assert listed is not None
    assert known_window(ref) == listed


def test_genai_prices_wins_where_moot_s_table_says_otherwise() -> None:
    ref = ModelRef.model_validate("groq:qwen/qwen3-32b")
    listed = _listed(ref.name, "groq")
    assert listed is not None and listed != family_window(ref)  # the table's qwen family says 32,768
    assert known_window(ref) == listed


def test_a_name_listed_without_a_window_gets_its_maker_s() -> None:
    # OpenRouter's entry has a price and no window; Anthropic's own entry has the window.
    ref = ModelRef.model_validate("openrouter:anthropic/claude-3.5-sonnet")
    assert _listed(ref.name, "openrouter") is None
    maker = _listed("claude-3.5-sonnet", "anthropic")
    assert maker is not None
    assert known_window(ref) == maker


@pytest.mark.parametrize(
    ("model", "window"),
    [
        # Listed by genai-prices (priced) without a window: moot's family table.
        ("groq:llama-3.3-70b-versatile", 131_072),
        ("groq:llama3-8b-8192", 8192),
        ("mistral:mistral-large-latest", 131_072),
        ("google:gemini-2.5-pro", 1_048_576),
        # Not listed at all: the table, else the default.
        ("openai-compatible:qwen2.5-7b-instruct", 32_768),
        ("openai-compatible:my-own-model", DEFAULT_WINDOW),
    ],
)
def test_a_model_genai_prices_gives_no_window_gets_moot_s_table_or_default(model: str, window: int) -> None:
    ref = ModelRef.model_validate(model)
    assert windows.genai_prices_window(ref.name, _pricing_id(ref)) is None
    assert _listed(ref.name, _pricing_id(ref)) is None
    assert known_window(ref) == family_window(ref) == window


def test_models_that_run_here_and_fixed_windows_never_ask_genai_prices(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def asked(name: str, provider_id: str | None) -> int | None:
        raise AssertionError(f"genai-prices asked about {name}")

    monkeypatch.setattr(windows, "genai_prices_window", asked)
    assert known_window(ModelRef.model_validate("local:smollm2")) == 2048
    assert known_window(ModelRef.model_validate("fake:ada")) == FAKE_WINDOW
    assert known_window(ModelRef.model_validate("ollama:gpt-4o")) == 8192  # Ollama's num_ctx, not OpenAI's


def test_the_lookup_reads_the_bundled_data_without_the_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_network(*args: object) -> None:
        raise AssertionError("the window lookup touched the network")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    windows.genai_prices_window.cache_clear()
    assert known_window(ModelRef.model_validate("anthropic:claude-sonnet-4-5")) == _listed(
        "claude-sonnet-4-5", "anthropic"
    )
    assert known_window(ModelRef.model_validate("openai-compatible:my-own-model")) == DEFAULT_WINDOW

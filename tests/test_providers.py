"""Real pydantic-ai provider adapters against a fake OpenAI-compatible server on loopback."""

from __future__ import annotations

import pytest
from pydantic_ai import models

from moot.domain.config import validate_config
from moot.domain.events import TokenDelta
from moot.domain.models import ModelRef
from moot.domain.state import fold
from moot.engine import InMemoryLog, run_debate
from moot.models.providers import SPECS, build_model, redact
from tests.fake_openai_server import fake_openai_server


@pytest.fixture
def allow_loopback_requests() -> object:
    # The suite forbids model requests; this test's requests go only to its own 127.0.0.1 server.
    with models.override_allow_model_requests(True):
        yield None


@pytest.mark.usefixtures("allow_loopback_requests")
async def test_a_debate_through_an_openai_compatible_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-the-real-openai-key-0000")
    monkeypatch.delenv("MOOT_OPENAI_COMPATIBLE_API_KEY", raising=False)
    with fake_openai_server() as (url, seen):
        config = validate_config(
            {
                "topic": "Tabs or spaces?",
                "rounds": 2,
                "stopping": {"assess_rounds": False},  # the requests below are the turns and the verdict
                "participants": [
                    {"name": "Tabs", "model": "openai-compatible:house-model", "base_url": url},
                    {"name": "Spaces", "model": "compat:house-model", "base_url": url},
                ],
            }
        )
        log = InMemoryLog()
        events = [e async for e in run_debate(config, log=log)]  # the real resolver: no fakes in moot
    state = fold(log.events)
    assert state.status == "completed", state.error
    assert [t.text for t in state.turns] == ["Served over HTTP by a fake server on loopback."] * 4
    assert all(t.usage.input_tokens == 40 and t.usage.output_tokens == 12 for t in state.turns)
    assert state.verdict is not None and {s.participant_id for s in state.verdict.scores} == {
        "tabs",
        "spaces",
    }
    # Streamed: each turn's deltas (coalesced, moot.engine.coalesce) join up to its text, and come before it.
    for turn in state.turns:
        said = [e for e in events if isinstance(e, TokenDelta) and e.participant_id == turn.participant_id]
        assert "".join(e.text for e in said).strip().count(turn.text) == 2  # two rounds each
    # Four streamed turns, then one judge call with the verdict tool, streamed too (its silence limit reads the
    # stream); the OpenAI key never left the machine.
    assert [bool(r.get("stream")) for r in seen.requests] == [True] * 5
    assert seen.requests[-1]["tools"][0]["function"]["parameters"]["properties"]["scores"]
    assert all(auth == "Bearer not-needed" for auth in seen.authorizations)


@pytest.mark.usefixtures("allow_loopback_requests")
async def test_the_compatible_key_variable_is_sent_when_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MOOT_OPENAI_COMPATIBLE_API_KEY", "house-key-123456")
    with fake_openai_server() as (url, seen):
        config = validate_config(
            {
                "topic": "T",
                "rounds": 1,
                "judge": None,
                "participants": [
                    {"name": "A", "model": "openai-compatible:m", "base_url": url},
                    {"name": "B", "model": "openai-compatible:m", "base_url": url},
                ],
            }
        )
        [e async for e in run_debate(config)]
    assert seen.authorizations == ["Bearer house-key-123456"] * 2


@pytest.mark.parametrize("provider", ["openai", "openrouter", "ollama"])
def test_every_built_in_provider_builds_a_model_without_network(
    provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in SPECS[provider].key_vars:
        monkeypatch.setenv(var, "test-key-value")
    name = "openai/some-model" if provider == "openrouter" else "some-model"
    model = build_model(
        validate_config(
            {"topic": "T", "participants": [{"name": "A", "model": f"{provider}:{name}"}, {"name": "B"}]}
        ).participants[0]
    )
    assert model.model_name == name
    assert ModelRef.model_validate(f"{provider}:{name}").provider == provider


def test_redact_removes_configured_keys_and_key_shaped_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "plainsecretvalue")
    text = redact("bad key plainsecretvalue; Incorrect API key provided: sk-proj-ab****wxyz")
    assert "plainsecretvalue" not in text and "wxyz" not in text and text.count("[redacted]") == 2

"""The provider registry: one row per provider, read by everything that once listed providers by hand; any prefix
pydantic-ai builds is accepted, its missing SDK or key reported before the run; `GET /api/meta`."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any, get_args

import pytest
from fastapi.testclient import TestClient
from pydantic_ai import models
from pydantic_ai.models import OpenAIChatCompatibleProvider
from pydantic_ai.providers import infer_provider_class
from typer.testing import CliRunner

from moot.cli.app import app
from moot.context.windows import known_window
from moot.domain.config import VOICES, validate_config
from moot.domain.models import PROVIDERS, ModelRef
from moot.domain.providers import BUILT_IN, PYDANTIC_AI_PREFIXES, find_provider
from moot.domain.state import fold
from moot.engine import InMemoryLog, run_debate
from moot.engine.tools import NO_FUNCTION_TOOLS, WEB_SEARCH_PROVIDERS
from moot.errors import MissingKeyError, ProviderNotInstalledError
from moot.install import pydantic_ai_install_command
from moot.models.faults import classify
from moot.models.pricing import FREE_SYSTEMS
from moot.models.providers import SPECS, build_model, check_available, spec_of_system
from moot.models.rate_limits import DEFAULT_LIMITS
from moot.protocols import PROTOCOLS
from moot.server import create_app
from moot.server.settings import ServerSettings
from tests.fake_openai_server import fake_openai_server


def options(ref: str, **more: Any) -> Any:
    data = {
        "topic": "T",
        "participants": [{"name": "A", "model": ref, **more}, {"name": "B", "model": "fake:b"}],
    }
    return validate_config(data).participants[0]


def test_every_pydantic_ai_prefix_is_one_pydantic_ai_knows() -> None:
    for prefix in PYDANTIC_AI_PREFIXES:
        with contextlib.suppress(
            ImportError
        ):  # known to pydantic-ai, its SDK not installed here; unknown: ValueError
            infer_provider_class(prefix)
    # Every OpenAI-compatible provider pydantic-ai lists is reachable (github: retired).
    own = {spec.name for spec in BUILT_IN}
    assert set(get_args(OpenAIChatCompatibleProvider.__value__)) - own - {"github", "github-copilot"} <= set(
        PYDANTIC_AI_PREFIXES
    )
    assert not own & set(PYDANTIC_AI_PREFIXES)


def test_the_tables_that_listed_providers_by_hand_are_the_registrys() -> None:
    assert list(PROVIDERS) == [spec.name for spec in BUILT_IN] == list(SPECS)
    assert set(DEFAULT_LIMITS) == set(PROVIDERS)
    assert DEFAULT_LIMITS["anthropic"].requests_per_minute == 50 and DEFAULT_LIMITS["local"].concurrent == 1
    assert set(WEB_SEARCH_PROVIDERS) == {s.name for s in BUILT_IN if "web_search" in s.native_tools}
    assert {"local", "human"} == NO_FUNCTION_TOOLS
    assert {"llama.cpp", "local", "fake", "function", "test"} <= FREE_SYSTEMS
    assert known_window(ModelRef.model_validate("ollama:gpt-4o")) == 8192  # the row's fixed window wins
    for system, provider in {"google-gla": "google", "google-vertex": "google", "llama.cpp": "local"}.items():
        spec = spec_of_system(system)
        assert spec is not None and spec.name == provider
    assert spec_of_system("function") is None  # pydantic-ai's test models belong to no provider


def test_a_pydantic_ai_prefix_is_accepted_and_its_missing_key_named_before_the_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    assert str(ModelRef.model_validate("grok:grok-4")) == "xai:grok-4"
    with pytest.raises(
        MissingKeyError, match=r"^participant 1, model: deepseek needs DEEPSEEK_API_KEY; set it"
    ):
        check_available(options("deepseek:deepseek-chat"), field="participants.0.model")
    code = CliRunner().invoke(app, ["run", "T", "-p", "deepseek:deepseek-chat", "-p", "fake:b"])
    assert code.exit_code == 2
    assert (
        "participant 1 (Proponent), model: deepseek needs DEEPSEEK_API_KEY" in code.stderr
        and "Traceback" not in code.stderr
    )


def test_a_pydantic_ai_provider_whose_sdk_is_missing_names_the_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "cohere", None)  # as on an install without the Cohere SDK
    for name in [n for n in sys.modules if n.startswith("pydantic_ai.providers.cohere")]:
        monkeypatch.delitem(sys.modules, name)
    with pytest.raises(ProviderNotInstalledError) as caught:
        check_available(options("cohere:command-r"), field="judge.model")
    assert str(caught.value) == (
        f"judge.model: the cohere provider is not installed; run `{pydantic_ai_install_command('cohere')}`"
    )


def test_a_pydantic_ai_provider_builds_with_one_attempt_per_call(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-deepseek-test-0000")
    check_available(options("deepseek:deepseek-chat"), field="participants.0.model")
    model = build_model(options("deepseek:deepseek-chat"))
    assert model.model_name == "deepseek-chat" and model.system == "deepseek"
    assert (model.settings or {}).get("max_retries") == 0  # moot's retry policy is the only one


@pytest.fixture
def allow_loopback_requests() -> Any:
    with models.override_allow_model_requests(True):
        yield None


@pytest.mark.usefixtures("allow_loopback_requests")
async def test_a_debate_through_a_provider_only_pydantic_ai_knows(monkeypatch: pytest.MonkeyPatch) -> None:
    # vLLM has no row of moot's: pydantic-ai's VLLMProvider reads its server and key from its own variables.
    with fake_openai_server() as (url, seen):
        monkeypatch.setenv("VLLM_BASE_URL", url)
        monkeypatch.setenv("VLLM_API_KEY", "vllm-house-key-0000")
        config = validate_config(
            {
                "topic": "T",
                "rounds": 1,
                "judge": None,
                "participants": [{"name": "A", "model": "vllm:house"}, {"name": "B", "model": "vllm:house"}],
            }
        )
        log = InMemoryLog()
        [e async for e in run_debate(config, log=log)]
    state = fold(log.events)
    assert state.status == "completed", state.error
    assert [t.text for t in state.turns] == ["Served over HTTP by a fake server on loopback."] * 2
    assert seen.authorizations == ["Bearer vllm-house-key-0000"] * 2


def test_a_fault_of_a_pydantic_ai_provider_is_classified_by_its_name() -> None:
    from pydantic_ai import exceptions as pai

    exc = pai.ModelHTTPError.for_category(pai.ModelAuthenticationError, status_code=401, model_name="m")
    assert classify(exc, provider="deepseek", model="m").kind == "authentication"


def test_api_meta_serves_providers_limits_voices_aliases_and_formats(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GROQ_API_KEY", "gsk-meta-secretvalue-0001")
    settings = ServerSettings(max_rounds=7, max_participants=4, max_tokens=2000)
    with TestClient(create_app(str(tmp_path / "moot.db"), settings=settings)) as client:
        r = client.get("/api/meta")
        models_rows = client.get("/api/models").json()
    assert r.status_code == 200 and "secretvalue" not in r.text
    meta = r.json()
    limits = meta["limits"]
    assert (limits["max_rounds"], limits["max_participants"], limits["max_tokens"]) == (7, 4, 2000)
    assert limits["min_participants"] == 2 and limits["base_url_allowed"] is False
    assert meta["limit_variables"]["max_rounds"] == "MOOT_MAX_ROUNDS"
    assert meta["voices"] == VOICES
    assert meta["formats"] == list(PROTOCOLS)
    assert meta["aliases"]["gemini"] == "google" and meta["aliases"]["grok"] == "xai"
    assert meta["default_model"] == "local:smollm2"
    assert meta["other_providers"] == list(PYDANTIC_AI_PREFIXES)
    providers = {p["name"]: p for p in meta["providers"]}
    assert meta["providers"] == models_rows
    assert list(providers)[: len(BUILT_IN)] == [s.name for s in BUILT_IN]
    assert providers["groq"]["key_set"] is True and providers["groq"]["key_vars"] == ["GROQ_API_KEY"]
    assert providers["openai-compatible"]["base_url"] == "required"
    assert providers["ollama"]["base_url"] == "optional"
    assert providers["ollama"]["default_url"] == "http://127.0.0.1:11434/v1"
    assert providers["openai"]["base_url"] == "none"
    assert providers["fake"]["install"] is None and providers["openai"]["plugin"] is None


def test_a_row_decides_the_base_url_rule_the_domain_checks() -> None:
    spec = find_provider("compat")
    assert spec is not None and spec.name == "openai-compatible" and spec.base_url == "required"
    assert str(options("ollama:llama3.2").model) == "ollama:llama3.2"


@pytest.mark.parametrize("spec", [s for s in BUILT_IN if s.pydantic_ai_provider], ids=lambda s: s.name)
def test_one_builder_per_wire_makes_every_row_s_model(spec: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from moot.models.openai_client import EndCheckedOpenAI

    for var in spec.key_vars:
        monkeypatch.setenv(var, "test-key-value-0000")
    monkeypatch.setenv("OLLAMA_BASE_URL", "http://127.0.0.1:9/ollama/v1")
    name = "openai/some-model" if spec.model_needs_vendor else "some-model"
    more = {"base_url": "http://127.0.0.1:9/v1"} if spec.base_url == "required" else {}
    model = build_model(options(f"{spec.name}:{name}", **more))
    assert model.model_name == name
    built = spec_of_system(model.system)
    assert built is not None and built.name in (spec.name, spec.pydantic_ai_provider)
    assert (model.settings or {}).get("max_retries") == 0
    client = getattr(model, "client", None)
    if spec.wire in ("openai-chat", "openrouter"):  # moot's client, whose streams check their end marker
        assert isinstance(client, EndCheckedOpenAI)
        expected = {
            "openai": "https://api.openai.com/v1/",
            "openrouter": "https://openrouter.ai/api/v1/",
            "ollama": "http://127.0.0.1:9/ollama/v1/",  # OLLAMA_BASE_URL moves the default server
            "openai-compatible": "http://127.0.0.1:9/v1/",
        }[spec.name]
        assert str(client.base_url) == expected
        assert client.api_key == "test-key-value-0000"  # from the row's own variable
        if (
            not spec.key_required
        ):  # a server that takes no key gets a placeholder, never another provider's key
            monkeypatch.setenv("OPENAI_API_KEY", "sk-the-real-openai-key-0000")
            for var in spec.key_vars:
                monkeypatch.delenv(var)
            keyless = build_model(options(f"{spec.name}:{name}", **more))
            keyless_client = getattr(keyless, "client", None)
            assert isinstance(keyless_client, EndCheckedOpenAI) and keyless_client.api_key == "not-needed"

"""Model references -> pydantic-ai models. Keys come from the environment of this process only."""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from moot.domain.config import COMPAT_KEY_VAR, ModelOptions

if TYPE_CHECKING:
    from pydantic_ai.models import Model
    from pydantic_ai.settings import ModelSettings
from moot.domain.models import PROVIDERS
from moot.errors import MissingKeyError, ProviderNotInstalledError
from moot.install import install_command

OLLAMA_DEFAULT_URL = "http://127.0.0.1:11434/v1"
OPENROUTER_URL = "https://openrouter.ai/api/v1"  # pydantic-ai's OpenRouterProvider.base_url


# moot's retry policy (limits.retry) is the only one: the vendor SDKs would otherwise retry 429s, 5xx,
# timeouts and dropped connections twice on their own, unseen by the policy, its events and its limits.
def one_attempt() -> ModelSettings:
    """A model's default settings: a fresh dict each, as pydantic-ai keeps it on the model."""
    return {"max_retries": 0}


@dataclass(frozen=True)
class ProviderSpec:
    """How to reach one provider: its key variables, its Python package, its model class."""

    name: str
    key_vars: tuple[str, ...] = ()
    key_required: bool = True
    module: str | None = None  # a module that exists only when the provider's extra is installed
    extra: str | None = None  # the extra that installs `module`; None: moot's own dependencies do
    # Whether its streams end with a marker (a finish reason, `[DONE]`), so one that ends without is a reply
    # cut short (moot.models.stream_ends); moot's own models have no wire to cut.
    end_marker: bool = True

    @property
    def description(self) -> str:
        return PROVIDERS[self.name]

    def key(self) -> str | None:
        return next((os.environ[v] for v in self.key_vars if os.environ.get(v)), None)

    def install_hint(self) -> str | None:
        """The command that installs this provider, or None when it is installed."""
        return None if self.installed() else install_command(self.extra)

    def installed(self) -> bool:
        if self.module is None:
            return True
        try:
            return importlib.util.find_spec(self.module) is not None
        except ModuleNotFoundError:  # the parent package of a dotted name is missing
            return False


SPECS: dict[str, ProviderSpec] = {
    s.name: s
    for s in (
        ProviderSpec("openai", ("OPENAI_API_KEY",), module="openai"),
        ProviderSpec("anthropic", ("ANTHROPIC_API_KEY",), module="anthropic", extra="anthropic"),
        ProviderSpec("google", ("GOOGLE_API_KEY", "GEMINI_API_KEY"), module="google.genai", extra="google"),
        ProviderSpec("groq", ("GROQ_API_KEY",), module="groq", extra="groq"),
        ProviderSpec("mistral", ("MISTRAL_API_KEY",), module="mistralai", extra="mistral"),
        ProviderSpec("openrouter", ("OPENROUTER_API_KEY",), module="openai"),
        ProviderSpec("ollama", (), key_required=False, module="openai"),
        ProviderSpec("openai-compatible", (COMPAT_KEY_VAR,), key_required=False, module="openai"),
        ProviderSpec("local", (), key_required=False, module="llama_cpp", end_marker=False),
        ProviderSpec("fake", (), key_required=False, end_marker=False),
    )
}
# pydantic-ai's `Model.system` for the providers moot builds, where it differs from moot's provider name.
_SYSTEMS = {"google-gla": "google", "google-vertex": "google", "llama.cpp": "local"}


def provider_of_system(system: str) -> str:
    """moot's provider name for a pydantic-ai `Model.system` (its own name where they agree)."""
    return _SYSTEMS.get(system, system)


def spec_of_system(system: str) -> ProviderSpec | None:
    """The provider a built model belongs to, by its `Model.system`; None for pydantic-ai's own test models."""
    return SPECS.get(provider_of_system(system))


# Shapes of API keys as vendors echo them in error messages, sometimes half-masked (sk-ab***yz).
_KEY_LIKE = re.compile(r"\b(?:sk|pk|rk|gsk|AIza|key)[-_A-Za-z0-9*]{8,}")


def redact(text: str) -> str:
    """`text` with every configured key, and anything shaped like one, replaced: error messages are stored."""
    for spec in SPECS.values():
        for var in spec.key_vars:
            value = os.environ.get(var)
            if value and len(value) >= 6:
                text = text.replace(value, "[redacted]")
    return _KEY_LIKE.sub("[redacted]", text)


def check_available(options: ModelOptions, *, field: str) -> None:
    """Fail before a debate starts if this model cannot be called: missing package or key."""
    spec = SPECS[options.model.provider]
    if not spec.installed():
        raise ProviderNotInstalledError(field=field, provider=spec.name, extra=spec.extra)
    if spec.key_required and spec.key() is None:
        raise MissingKeyError(field=field, provider=spec.name, env_var=" or ".join(spec.key_vars))


def build_model(options: ModelOptions) -> Model:
    """A pydantic-ai model for these options. Call `check_available` first for a friendly error."""
    provider = options.model.provider
    return _BUILDERS[provider](options)


def _openai(options: ModelOptions) -> Model:
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from moot.models.openai_client import openai_client

    client = openai_client(base_url=None, api_key=SPECS["openai"].key())
    return OpenAIChatModel(
        options.model.name, provider=OpenAIProvider(openai_client=client), settings=one_attempt()
    )


def _anthropic(options: ModelOptions) -> Model:
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    return AnthropicModel(
        options.model.name,
        provider=AnthropicProvider(api_key=SPECS["anthropic"].key()),
        settings=one_attempt(),
    )


def _google(options: ModelOptions) -> Model:
    from pydantic_ai.models.google import GoogleModel
    from pydantic_ai.providers.google import GoogleProvider

    return GoogleModel(
        options.model.name, provider=GoogleProvider(api_key=SPECS["google"].key()), settings=one_attempt()
    )


def _groq(options: ModelOptions) -> Model:
    from pydantic_ai.models.groq import GroqModel
    from pydantic_ai.providers.groq import GroqProvider

    return GroqModel(
        options.model.name, provider=GroqProvider(api_key=SPECS["groq"].key()), settings=one_attempt()
    )


def _mistral(options: ModelOptions) -> Model:
    from pydantic_ai.models.mistral import MistralModel
    from pydantic_ai.providers.mistral import MistralProvider

    return MistralModel(
        options.model.name, provider=MistralProvider(api_key=SPECS["mistral"].key()), settings=one_attempt()
    )


def _openrouter(options: ModelOptions) -> Model:
    from pydantic_ai.models.openrouter import OpenRouterModel
    from pydantic_ai.providers.openrouter import OpenRouterProvider

    from moot.models.openai_client import openai_client

    client = openai_client(base_url=OPENROUTER_URL, api_key=SPECS["openrouter"].key())
    return OpenRouterModel(
        options.model.name, provider=OpenRouterProvider(openai_client=client), settings=one_attempt()
    )


def _ollama(options: ModelOptions) -> Model:
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.ollama import OllamaProvider

    from moot.models.openai_client import openai_client

    url = str(options.base_url) if options.base_url else os.environ.get("OLLAMA_BASE_URL", OLLAMA_DEFAULT_URL)
    # Ollama needs no key, but the SDK wants one; a server behind a proxy may take OLLAMA_API_KEY.
    client = openai_client(base_url=url, api_key=os.environ.get("OLLAMA_API_KEY") or "api-key-not-set")
    return OpenAIChatModel(
        options.model.name, provider=OllamaProvider(openai_client=client), settings=one_attempt()
    )


def _compatible(options: ModelOptions) -> Model:
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from moot.models.openai_client import openai_client

    # Never send OPENAI_API_KEY to an arbitrary server: such servers get their own variable.
    key = SPECS["openai-compatible"].key() or "not-needed"
    client = openai_client(base_url=str(options.base_url), api_key=key)
    return OpenAIChatModel(
        options.model.name, provider=OpenAIProvider(openai_client=client), settings=one_attempt()
    )


def _local(options: ModelOptions) -> Model:
    from moot.models.local import get_local_model

    return get_local_model(options.model.name)


def _fake(options: ModelOptions) -> Model:
    from moot.models.fake import fake_model

    return fake_model(options.model.name)


_BUILDERS: dict[str, Callable[[ModelOptions], Model]] = {
    "openai": _openai,
    "anthropic": _anthropic,
    "google": _google,
    "groq": _groq,
    "mistral": _mistral,
    "openrouter": _openrouter,
    "ollama": _ollama,
    "openai-compatible": _compatible,
    "local": _local,
    "fake": _fake,
}

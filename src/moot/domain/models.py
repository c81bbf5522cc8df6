"""Model references: the `provider:model` strings users write."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, PlainSerializer, WithJsonSchema, model_validator

# Providers moot knows how to reach. The key is what users type before the colon.
PROVIDERS: dict[str, str] = {
    "openai": "OpenAI",
    "anthropic": "Anthropic",
    "google": "Google Gemini",
    "groq": "Groq",
    "mistral": "Mistral",
    "openrouter": "OpenRouter",
    "ollama": "Ollama (local server)",
    "openai-compatible": "Any OpenAI-compatible server (needs base_url)",
    "local": "Embedded llama.cpp model, no key, no network",
    "fake": "Scripted fake for demos and tests (no model at all)",
}

# Typed aliases that read naturally; all resolve to a canonical provider.
PROVIDER_ALIASES: dict[str, str] = {
    "gemini": "google",
    "google-gla": "google",
    "compat": "openai-compatible",
    "openai-compat": "openai-compatible",
    "llama": "local",
}

# The providers that reach a server the user names; every other provider ignores a base_url, so one given to
# them is a mistake to report, not a setting to drop.
BASE_URL_PROVIDERS = ("openai-compatible", "ollama")

DEFAULT_MODEL = "local:smollm2"

_NAME = re.compile(r"^[A-Za-z0-9][\w.:/@+-]*$")


class ModelRef(BaseModel):
    """A parsed `provider:model` reference such as `openai:gpt-4o` or `local:smollm2`."""

    model_config = ConfigDict(frozen=True)

    provider: str
    name: str

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        if isinstance(value, str):
            return parse_model_ref(value)
        return value

    def __str__(self) -> str:
        return f"{self.provider}:{self.name}"

    @property
    def is_local(self) -> bool:
        return self.provider in ("local", "fake")


def parse_model_ref(text: str) -> dict[str, str]:
    """Split and check `provider:model`; raises ValueError with the fix in its message."""
    text = text.strip()
    provider, sep, name = text.partition(":")
    provider = provider.strip().lower()
    name = name.strip()
    if not sep or not provider or not name:
        raise ValueError(
            f"model reference {text!r} must look like 'provider:model', e.g. 'openai:gpt-4o' or 'local:smollm2'"
        )
    provider = PROVIDER_ALIASES.get(provider, provider)
    if provider not in PROVIDERS:
        known = ", ".join(sorted(PROVIDERS))
        raise ValueError(f"unknown provider {provider!r} in {text!r}; use one of: {known}")
    if not _NAME.match(name):
        raise ValueError(f"model name {name!r} in {text!r} has characters a model name cannot have")
    if provider == "openrouter" and "/" not in name:
        raise ValueError(
            f"OpenRouter names the upstream vendor: write 'openrouter:openai/{name}', not {text!r}"
        )
    return {"provider": provider, "name": name}


# In configs, JSON and the JSON Schema a model reference is a plain string.
ModelRefField = Annotated[
    ModelRef,
    PlainSerializer(str, return_type=str),
    WithJsonSchema(
        {
            "type": "string",
            "pattern": r"^[a-z-]+:.+$",
            "description": "provider:model, e.g. openai:gpt-4o, anthropic:claude-sonnet-4-5, local:smollm2",
            "examples": ["local:smollm2", "openai:gpt-4o", "ollama:llama3.2"],
        }
    ),
]

"""Model references: the `provider:model` strings users write."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, PlainSerializer, WithJsonSchema, model_validator

from moot.domain.providers import BUILT_IN, find_provider, plugin_problems, provider_names
from moot.domain.text import unknown

# moot's own providers and what each is (the registry, moot.domain.providers, holds every fact about them).
PROVIDERS: dict[str, str] = {spec.name: spec.description for spec in BUILT_IN}
# moot's typed aliases that read naturally; all resolve to a canonical provider (plugins' too: `aliases()`, read
# when asked, so importing this module loads no plugin).
PROVIDER_ALIASES: dict[str, str] = {alias: spec.name for spec in BUILT_IN for alias in spec.aliases}
# moot's providers that reach a server the user names; others take no base_url (a registry row's `base_url`).
BASE_URL_PROVIDERS = tuple(spec.name for spec in BUILT_IN if spec.takes_base_url)

DEFAULT_MODEL = "local:smollm2"
HUMAN = "human"  # the provider whose "model" is a person: `human` alone reads as `human:person`

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
    def is_person(self) -> bool:
        """Whether a person answers for it (`human`): the engine asks them, not a model."""
        return self.provider == HUMAN

    @property
    def is_local(self) -> bool:
        """Whether it runs in this process: no network, no cost."""
        spec = find_provider(self.provider)
        return spec is not None and spec.runs_here


def parse_model_ref(text: str) -> dict[str, str]:
    """Split and check `provider:model`; raises ValueError with the fix in its message."""
    text = text.strip()
    if text.lower() == HUMAN:  # `-p human,name=Ada`: a person takes the seat (moot.domain.people)
        return {"provider": HUMAN, "name": "person"}
    provider, sep, name = text.partition(":")
    provider = provider.strip().lower()
    name = name.strip()
    if not sep or not provider or not name:
        raise ValueError(
            f"model reference {text!r} must look like 'provider:model', e.g. 'openai:gpt-4o' or 'local:smollm2'"
        )
    spec = find_provider(provider)
    broken = next((p for p in plugin_problems() if p.name == provider), None) if spec is None else None
    if broken is not None:
        raise ValueError(
            f"provider {provider!r} in {text!r} comes from the plugin {broken.distribution or broken.name}, which "
            f"moot ignored: {broken.reason}"
        )
    if spec is None:
        raise ValueError(
            unknown("provider", provider, provider_names(), where=f" in {text!r}", listed_by="`moot models`")
        )
    provider = spec.name
    if not _NAME.match(name):
        raise ValueError(f"model name {name!r} in {text!r} has characters a model name cannot have")
    if spec.model_needs_vendor and "/" not in name:
        raise ValueError(
            f"{spec.description} names the upstream vendor: write '{provider}:openai/{name}', not {text!r}"
        )
    return {"provider": provider, "name": name}


# In configs, JSON and the JSON Schema a model reference is a plain string.
ModelRefField = Annotated[
    ModelRef,
    PlainSerializer(str, return_type=str),
    WithJsonSchema(
        {
            "type": "string",
            "pattern": r"^([a-z-]+:.+|human)$",
            "description": "provider:model, e.g. openai:gpt-4o, anthropic:claude-sonnet-4-5, local:smollm2; "
            "human: a person takes the seat",
            "examples": ["local:smollm2", "openai:gpt-4o", "ollama:llama3.2", "human"],
        }
    ),
]

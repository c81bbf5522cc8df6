"""The builders behind the registry's rows: one per kind of wire, driven by the row, not one per provider.

- OpenAI's wire (openai, ollama, openai-compatible, openrouter): moot's own OpenAI client
  (moot.models.openai_client, whose streams check their end marker) at the row's server, handed to the row's
  pydantic-ai provider; on the chat wire (openai, ollama, openai-compatible) the model is moot's
  `OpenAIWireModel` (moot.models.openai_wire), which streams a text turn itself, at about an eighth of the SDK
  path's CPU a token, and leaves the rest to pydantic-ai's `OpenAIChatModel`;
- a vendor SDK (anthropic, google, groq, mistral): the row's pydantic-ai provider with the key moot read;
- pydantic-ai's other providers: its `infer_model`, which reads their keys itself;
- a plugin: the row's own `module:function`;
- moot's embedded and fake models.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from moot.domain.config import ModelOptions
from moot.domain.providers import ProviderSpec
from moot.errors import ConfigError, one_line
from moot.models.providers import key_of, one_attempt

if TYPE_CHECKING:
    from pydantic_ai.models import Model
    from pydantic_ai.providers import Provider

# The model class for each wire moot builds itself (module, class): pydantic-ai's, but on the chat wire moot's
# subclass of it whose streamed text turns skip the SDK (moot.models.openai_wire).
_MODEL_CLASSES: dict[str, tuple[str, str]] = {
    "openai-chat": ("moot.models.openai_wire", "OpenAIWireModel"),
    "openrouter": ("pydantic_ai.models.openrouter", "OpenRouterModel"),
    "anthropic": ("pydantic_ai.models.anthropic", "AnthropicModel"),
    "google": ("pydantic_ai.models.google", "GoogleModel"),
    "groq": ("pydantic_ai.models.groq", "GroqModel"),
    "mistral": ("pydantic_ai.models.mistral", "MistralModel"),
}
_OPENAI_WIRE = frozenset({"openai-chat", "openrouter"})
# What the OpenAI SDK is given when a server takes no key (it refuses to start without one).
NO_KEY = "not-needed"


def build(spec: ProviderSpec, options: ModelOptions) -> Model:
    """The pydantic-ai model for `options` through `spec`'s row."""
    return _BY_WIRE.get(spec.wire, _pydantic_ai_class)(spec, options)


def server_url(spec: ProviderSpec, options: ModelOptions) -> str | None:
    """The server a call goes to: the config's base_url, else the row's variable, else its default (None: the
    SDK's own)."""
    if options.base_url is not None and spec.takes_base_url:
        return str(options.base_url)
    return (os.environ.get(spec.url_var) if spec.url_var else None) or spec.default_url


def _provider(spec: ProviderSpec, **kwargs: Any) -> Provider[Any]:
    from pydantic_ai.providers import infer_provider_class

    return infer_provider_class(spec.pydantic_ai_provider or spec.name)(**kwargs)


def _model_class(spec: ProviderSpec) -> Callable[..., Model]:
    module, name = _MODEL_CLASSES[spec.wire]
    return cast("Callable[..., Model]", getattr(importlib.import_module(module), name))


def _pydantic_ai_class(spec: ProviderSpec, options: ModelOptions) -> Model:
    """A row moot builds with pydantic-ai's classes: the OpenAI wire through moot's client, else the SDK's."""
    from moot.models.shared import shared

    # One provider (its client and connection pool) per provider, server and key, shared by the debates of
    # this process (moot.models.shared).
    key = key_of(spec)
    if spec.wire in _OPENAI_WIRE:
        url = server_url(spec, options)
        provider = shared(spec.name, url, key, lambda: _openai_provider(spec, url, key))
    else:
        provider = shared(spec.name, None, key, lambda: _provider(spec, api_key=key))
    return _model_class(spec)(options.model.name, provider=provider, settings=one_attempt())


def _openai_provider(spec: ProviderSpec, url: str | None, key: str | None) -> Provider[Any]:
    from moot.models.openai_client import EndCheckedOpenAI
    from moot.models.shared import http_client

    client = EndCheckedOpenAI(base_url=url, api_key=key or NO_KEY, http_client=http_client(url))
    return _provider(spec, openai_client=client)


def _through_infer_model(spec: ProviderSpec, options: ModelOptions) -> Model:
    """Any other provider pydantic-ai knows, as its `infer_model` makes it (keys from its own variables), its
    streams checked for their end marker as moot's own providers' are (moot.models.stream_ends)."""
    from pydantic_ai.models import infer_model

    model = infer_model(f"{spec.name}:{options.model.name}")
    # infer_model takes no settings; one attempt per call, as for every other model (see one_attempt).
    model._settings = {**(model.settings or {}), **one_attempt()}
    return _end_checked(model)


def _end_checked(model: Model) -> Model:
    """`model` with streams that fail when they end before their end marker, where only the wire can tell.

    On OpenAI's chat wire (most of pydantic-ai's providers, Azure's and vLLM's included) pydantic-ai takes a missing
    finish reason for a `stop`, so the check is the one moot's own OpenAI client makes, in the client pydantic-ai
    built. Every other class pydantic-ai builds (the Responses API, Bedrock, Cohere, Hugging Face, xAI) leaves the
    stop reason or the state of a stream cut short unset, which `raise_if_cut` reads for the provider's row.
    """
    from pydantic_ai.models.openai import OpenAIChatModel

    if isinstance(model, OpenAIChatModel):
        from moot.models.openai_client import check_stream_ends

        check_stream_ends(model.client)
    return model


def _plugin(spec: ProviderSpec, options: ModelOptions) -> Model:
    """A plugin's model, from its `module:function` builder (moot.domain.providers.PluginBuilder)."""
    from pydantic_ai.models import Model

    module_name, _, name = (spec.builder or "").partition(":")
    where = f"the {spec.name} plugin ({spec.plugin})"
    try:
        builder = getattr(importlib.import_module(module_name), name)
    except Exception as exc:  # whatever the plugin's module raises on import is why it cannot build
        raise ConfigError(f"{where} cannot load its builder {spec.builder}: {one_line(exc)}") from None
    model = builder(options.model.name, base_url=server_url(spec, options), api_key=key_of(spec))
    if not isinstance(model, Model):
        raise ConfigError(f"{where}'s builder gave {type(model).__name__}, not a pydantic-ai Model")
    return model


def _local(spec: ProviderSpec, options: ModelOptions) -> Model:
    from moot.models.local import get_local_model

    return get_local_model(options.model.name)


def _fake(spec: ProviderSpec, options: ModelOptions) -> Model:
    from moot.models.fake import fake_model

    return fake_model(options.model.name)


def _human(spec: ProviderSpec, options: ModelOptions) -> Model:
    from moot.models.person import person_model

    return person_model()


_BY_WIRE: dict[str, Callable[[ProviderSpec, ModelOptions], Model]] = {
    "human": _human,
    "pydantic-ai": _through_infer_model,
    "plugin": _plugin,
    "local": _local,
    "fake": _fake,
}

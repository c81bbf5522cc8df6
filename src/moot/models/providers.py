"""Model references -> pydantic-ai models, by the provider registry's rows (moot.domain.providers).

Keys come from the environment of this process only, never from a request or a config.
"""

from __future__ import annotations

import importlib.util
import os
import re
from typing import TYPE_CHECKING

from moot.domain.config import ModelOptions
from moot.domain.providers import (
    BUILT_IN,
    PYDANTIC_AI_PREFIXES,
    ProviderSpec,
    find_provider,
    providers,
    pydantic_ai_spec,
)
from moot.domain.providers import provider_of_system as provider_of_system
from moot.errors import ConfigError, MissingKeyError, ProviderNotInstalledError, UserError, cli_hint
from moot.install import install_command, pydantic_ai_install_command

if TYPE_CHECKING:
    from pydantic_ai.models import Model
    from pydantic_ai.settings import ModelSettings

# moot's own rows by name. Lookups read this dict before the registry, so a test may swap a row in it.
SPECS: dict[str, ProviderSpec] = {spec.name: spec for spec in BUILT_IN}
OLLAMA_DEFAULT_URL = SPECS["ollama"].default_url
OPENROUTER_URL = SPECS["openrouter"].default_url


# moot's retry policy (limits.retry) is the only one: the vendor SDKs would otherwise retry 429s, 5xx,
# timeouts and dropped connections twice on their own, unseen by the policy, its events and its limits.
def one_attempt() -> ModelSettings:
    """A model's default settings: a fresh dict each, as pydantic-ai keeps it on the model."""
    return {"max_retries": 0}


def spec_of(provider: str) -> ProviderSpec | None:
    """The row of a provider name or alias: moot's own (SPECS), a plugin's or pydantic-ai's; None if unknown."""
    return SPECS.get(provider) or find_provider(provider)


def spec_of_system(system: str) -> ProviderSpec | None:
    """The provider a built model belongs to, by its `Model.system` (a provider moot builds through pydantic-ai's
    `infer_model` is named by its prefix); None for pydantic-ai's own test models."""
    name = provider_of_system(system)
    if (spec := SPECS.get(name) or providers().get(name)) is not None:
        return spec
    return pydantic_ai_spec(name) if name in PYDANTIC_AI_PREFIXES else None


def key_of(spec: ProviderSpec) -> str | None:
    """The first of the row's key variables that is set in this process's environment."""
    return next((os.environ[v] for v in spec.key_vars if os.environ.get(v)), None)


def installed(spec: ProviderSpec) -> bool:
    if spec.module is None:
        return True
    try:
        return importlib.util.find_spec(spec.module) is not None
    except ModuleNotFoundError:  # the parent package of a dotted name is missing
        return False


def install_hint(spec: ProviderSpec) -> str | None:
    """The command that installs this provider, or None when it is installed."""
    return None if installed(spec) else install_command(spec.extra)


# Shapes of API keys as vendors echo them in error messages, sometimes half-masked (sk-ab***yz).
_KEY_LIKE = re.compile(r"\b(?:sk|pk|rk|gsk|AIza|key)[-_A-Za-z0-9*]{8,}")


def redact(text: str) -> str:
    """`text` with every configured key, and anything shaped like one, replaced: error messages are stored."""
    for spec in {**providers(), **SPECS}.values():
        for var in spec.key_vars:
            value = os.environ.get(var)
            if value and len(value) >= 6:
                text = text.replace(value, "[redacted]")
    return _KEY_LIKE.sub("[redacted]", text)


def check_available(options: ModelOptions, *, field: str) -> None:
    """Fail before a debate starts if this model cannot be called: missing package or key."""
    spec = spec_of(options.model.provider)
    if spec is None:  # validated configs name known providers; a plugin may have gone since
        raise ConfigError(
            f"unknown provider {options.model.provider!r}" + cli_hint(" (`moot models` lists them)"),
            field=field,
        )
    if spec.wire == "pydantic-ai":
        _check_through_pydantic_ai(spec, field=field)
        return
    if not installed(spec):
        raise ProviderNotInstalledError(field=field, provider=spec.name, extra=spec.extra)
    if spec.key_required and key_of(spec) is None:
        raise MissingKeyError(field=field, provider=spec.name, env_var=" or ".join(spec.key_vars))


# pydantic-ai's words for a missing SDK (`pip install "pydantic-ai-slim[cohere]"`) and a missing key
# ("Set the `DEEPSEEK_API_KEY` environment variable ...").
_PAI_GROUP = re.compile(r"pydantic-ai-slim\[([\w-]+)\]")
_PAI_KEY = re.compile(r"`([A-Z][A-Z0-9_]*(?:KEY|TOKEN|SECRET|ID|ENDPOINT|URL|VERSION|REGION)[A-Z0-9_]*)`")


def _check_through_pydantic_ai(spec: ProviderSpec, *, field: str) -> None:
    """Make pydantic-ai's provider now (it reads its key and imports its SDK), so a missing one is a UserError
    naming the field, the variable and the install command before anything runs."""
    from pydantic_ai.exceptions import UserError as PydanticAIUserError
    from pydantic_ai.providers import infer_provider

    try:
        infer_provider(spec.name)
    except ImportError as exc:
        group = _PAI_GROUP.search(str(exc))
        raise ProviderNotInstalledError(
            field=field,
            provider=spec.name,
            extra=None,
            install=pydantic_ai_install_command(group[1] if group else spec.name),
        ) from None
    except PydanticAIUserError as exc:
        variables = _PAI_KEY.findall(str(exc))
        if variables:
            raise MissingKeyError(field=field, provider=spec.name, env_var=" or ".join(variables)) from None
        raise ConfigError(f"{spec.name}: {redact(str(exc))}", field=field) from None


def build_model(options: ModelOptions) -> Model:
    """A pydantic-ai model for these options. Call `check_available` first for a friendly error."""
    from moot.models.builders import build

    spec = spec_of(options.model.provider)
    if spec is None:
        raise UserError(
            f"unknown provider {options.model.provider!r}" + cli_hint(" (`moot models` lists them)")
        )
    return build(spec, options)

"""What this process can reach, provider by provider: the registry's rows with what only this machine knows
(key set, package installed). `moot models`, `/api/models` and `/api/meta` all show this one list."""

from __future__ import annotations

from dataclasses import dataclass

from moot.domain.providers import PYDANTIC_AI_PREFIXES, BaseUrlRule, PluginProblem, plugin_problems, providers
from moot.models.providers import SPECS, install_hint, installed, key_of


@dataclass(frozen=True)
class ProviderStatus:
    name: str
    description: str
    key_vars: tuple[str, ...]
    key_required: bool
    key_set: bool
    installed: bool
    install: str | None  # the command that installs it; None when installed
    base_url: BaseUrlRule
    default_url: str | None
    aliases: tuple[str, ...]
    plugin: str | None  # the distribution of a plugin's provider; None: moot's own

    @property
    def key_state(self) -> str:
        if not self.key_vars:
            return "not needed"
        if self.key_set:
            return "set"
        return "missing" if self.key_required else "optional, not set"


def provider_statuses() -> list[ProviderStatus]:
    """moot's own providers, then the plugins', each with whether its key is set (never the key)."""
    rows = {**providers(), **SPECS}  # SPECS first in spirit: a row swapped there (tests) is the one shown
    ordered = [*SPECS, *(name for name in rows if name not in SPECS)]
    return [
        ProviderStatus(
            name=spec.name,
            description=spec.description,
            key_vars=spec.key_vars,
            key_required=spec.key_required,
            key_set=key_of(spec) is not None,
            installed=installed(spec),
            install=install_hint(spec),
            base_url=spec.base_url,
            default_url=spec.default_url,
            aliases=spec.aliases,
            plugin=spec.plugin,
        )
        for spec in (rows[name] for name in ordered)
    ]


def other_prefixes() -> tuple[str, ...]:
    """The prefixes moot passes to pydantic-ai's `infer_model` (keys and SDKs as pydantic-ai documents them)."""
    return PYDANTIC_AI_PREFIXES


def broken_plugins() -> tuple[PluginProblem, ...]:
    return plugin_problems()

"""The model names a client offers where a model is typed (the page's model fields, from `GET /api/meta`): a
few examples per provider, each with whether this server can call it now and, if not, why in words. They are
examples, not a catalogue: any name a provider serves works, and a provider with no examples here (a plugin,
pydantic-ai's own prefixes) is still usable by name."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from moot.models.catalog import ProviderStatus
from moot.models.local.weights import LOCAL_MODELS

# Current, widely served models of moot's own providers (the embedded models come from their own table).
EXAMPLES: dict[str, tuple[str, ...]] = {
    "openai": ("gpt-4o", "gpt-4o-mini"),
    "anthropic": ("claude-sonnet-4-5",),
    "google": ("gemini-2.5-flash",),
    "groq": ("llama-3.3-70b-versatile",),
    "mistral": ("mistral-large-latest",),
    "openrouter": ("anthropic/claude-sonnet-4.5",),
    "ollama": ("llama3.2",),
    "local": tuple(LOCAL_MODELS),
    "fake": ("demo",),
    "human": ("person",),  # a person takes the seat: `moot serve` gives them a join link
}


@dataclass(frozen=True)
class ModelSuggestion:
    model: str  # provider:model
    provider: str
    problem: str | None  # why this server cannot call it now (None: it can)


def problem_of(row: ProviderStatus) -> str | None:
    """Why this server cannot call the provider's models now, in a few words; None when it can."""
    if not row.installed:
        return f"not installed: {row.install}" if row.install else "not installed"
    if row.key_required and not row.key_set:
        return f"{' or '.join(row.key_vars)} not set"
    return None


def suggested_models(statuses: Iterable[ProviderStatus], first: Iterable[str] = ()) -> list[ModelSuggestion]:
    """`first` (the server's default and starting models), then each provider's examples; within that order,
    the models this server can call before those it cannot. A model of an unknown provider is left out."""
    rows = {row.name: row for row in statuses}
    names = [*first, *(f"{provider}:{model}" for provider, models in EXAMPLES.items() for model in models)]
    out: list[ModelSuggestion] = []
    for name in dict.fromkeys(names):  # each once, in order
        provider = name.split(":", 1)[0]
        row = rows.get(provider)
        if row is not None:
            out.append(ModelSuggestion(model=name, provider=provider, problem=problem_of(row)))
    return sorted(out, key=lambda s: s.problem is not None)  # stable: the order above within each group

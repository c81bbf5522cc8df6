"""What an agent may ask for, listed: the formats, the presets, and the models this server can call now. Each
is read from the one place moot keeps it (the format registry, the presets folders, the provider registry with
this process's keys), as `moot formats`, `moot presets`, `moot models` and the page read them; a key's value
never leaves the process, only whether it is set."""

from __future__ import annotations

from pydantic import BaseModel, Field

from moot.config_files.presets import list_presets
from moot.domain.models import DEFAULT_MODEL
from moot.domain.text import first_sentence
from moot.models.catalog import provider_statuses
from moot.models.suggestions import EXAMPLES, problem_of
from moot.protocols import PROTOCOLS, format_title

# People answer through the server's join links; a tool call has nobody to seat (the tools refuse it).
NOT_FOR_TOOLS = frozenset({"human"})


class FormatInfo(BaseModel):
    name: str = Field(description="What `format` takes")
    title: str
    description: str = Field(description="What it is, in a sentence")
    names_winner: bool = Field(
        description="Whether the judge's verdict names a winner; consensus formats name none, and a format whose "
        "result is its own may name one there (an Oxford vote's side, a tournament's champion: its description says)"
    )
    gives_verdict: bool = Field(
        description="Whether a judge gives a verdict; else the result is the format's own"
    )


class FormatList(BaseModel):
    formats: list[FormatInfo]


class PresetInfo(BaseModel):
    name: str = Field(description="What `preset` takes")
    description: str
    format: str
    speakers: int = Field(description="How many participants it seats")
    source: str = Field(description="shipped with moot, or the user's own (moot presets save)")


class PresetList(BaseModel):
    presets: list[PresetInfo]


class ProviderInfo(BaseModel):
    name: str = Field(description="The prefix of its models: NAME:model")
    description: str
    key: str = Field(description="set, not needed, or optional, not set (the key's value is never shown)")
    examples: list[str] = Field(description="Models to try, as participants, judge or chair take them")


class Unavailable(BaseModel):
    name: str
    why: str = Field(description="What it needs first: its key variable, or its package")


class ModelList(BaseModel):
    providers: list[ProviderInfo] = Field(description="Providers whose models this server can call now")
    unavailable: list[Unavailable] = Field(description="The others, and what each needs")
    default_model: str = Field(description="What a debate with no models configured runs on (no key, local)")


def formats() -> FormatList:
    return FormatList(
        formats=[
            FormatInfo(
                name=name,
                title=format_title(name),
                description=first_sentence(protocol.description),
                names_winner=protocol.traits.names_winner and protocol.traits.gives_verdict,
                gives_verdict=protocol.traits.gives_verdict,
            )
            for name, protocol in PROTOCOLS.items()
        ]
    )


def format_choices() -> str:
    """Each format on one line's worth: `name: what it is`, for a tool's description of its `format`."""
    return "; ".join(f"{f.name}: {f.description.rstrip('.')}" for f in formats().formats)


def presets() -> PresetList:
    return PresetList(
        presets=[
            PresetInfo(
                name=p.name,
                description=p.description,
                format=p.format,
                speakers=p.participant_count,
                source=p.source,
            )
            for p in list_presets()
        ]
    )


def models() -> ModelList:
    usable: list[ProviderInfo] = []
    unavailable: list[Unavailable] = []
    for row in provider_statuses():
        if row.name in NOT_FOR_TOOLS:
            continue
        problem = problem_of(row)
        if problem is not None:
            unavailable.append(Unavailable(name=row.name, why=problem))
            continue
        usable.append(
            ProviderInfo(
                name=row.name,
                description=row.description,
                key=row.key_state,
                examples=[f"{row.name}:{model}" for model in EXAMPLES.get(row.name, ())],
            )
        )
    return ModelList(providers=usable, unavailable=unavailable, default_model=DEFAULT_MODEL)


def formats_text(listed: FormatList) -> str:
    return "\n".join(f"{f.name} ({f.title}): {f.description} {_judged(f)}" for f in listed.formats)


def _judged(listed: FormatInfo) -> str:
    if listed.names_winner:
        return "The verdict names a winner."
    if listed.gives_verdict:
        return "The verdict scores the speakers and names no winner."
    return "No verdict: the result is the format's own."


def presets_text(listed: PresetList) -> str:
    return "\n".join(
        f"{p.name}: {p.description} ({p.format}, {p.speakers} speakers, {p.source})" for p in listed.presets
    )


def models_text(listed: ModelList) -> str:
    lines = [
        f"{p.name}: {p.description}; key {p.key}"
        + (f"; e.g. {', '.join(p.examples)}" if p.examples else "; any model it serves, as NAME:model")
        for p in listed.providers
    ]
    lines += [f"{u.name}: unavailable, {u.why}" for u in listed.unavailable]
    lines.append(f"Default model: {listed.default_model} (local, no key)")
    return "\n".join(lines)


__all__ = [
    "FormatInfo",
    "FormatList",
    "ModelList",
    "PresetInfo",
    "PresetList",
    "ProviderInfo",
    "Unavailable",
    "format_choices",
    "formats",
    "formats_text",
    "models",
    "models_text",
    "presets",
    "presets_text",
]

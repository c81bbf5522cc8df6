"""What a client needs to know about this server before it writes a config: `GET /api/meta` (its providers,
the limits it enforces, the speakers' reserved voices, model aliases, format names, the palette, and the
config a new form starts from) and `GET /api/models` (the providers alone). Both are read from the registry,
the config's own definitions and the server's settings, never copied by hand; a provider's key is reported
as set or not, never sent; the models it suggests say which this server cannot call now, and why. The web page
loads it once and keeps no copy of any of it."""

from __future__ import annotations

from typing import Any, Literal, get_args

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from moot.config_files.compose import starting_config
from moot.config_files.user_defaults import UserDefaults, load_user_defaults
from moot.domain.config import (
    MAX_FALLBACKS,
    MAX_JUDGES,
    MIN_PARTICIPANTS,
    VOICES,
    DebateConfig,
    Diversity,
    DriftAction,
    JudgeConfig,
    Participant,
    RoleName,
    Stopping,
    Temperatures,
    TurnOrder,
    panel_judge_name,
)
from moot.domain.models import DEFAULT_MODEL, ModelRef
from moot.domain.providers import aliases
from moot.errors import ConfigError
from moot.export.palette import PALETTE, VOICE_COLOUR
from moot.models.catalog import ProviderStatus, broken_plugins, other_prefixes, provider_statuses
from moot.models.suggestions import suggested_models
from moot.problem_templates import templates
from moot.protocols import PROTOCOLS
from moot.roles import ROLES
from moot.server.configs import MAX_TEXT
from moot.server.seats import seat_of
from moot.server.settings import ServerSettings, env_name

router = APIRouter()

# What a new config starts with where the default model's provider is not installed: a form that runs as it is.
DEMO_MODEL = "fake:demo"


class ProviderInfo(BaseModel):
    name: str
    description: str
    key_vars: list[str]
    key_required: bool
    key_set: bool
    installed: bool
    install: str | None = Field(description="The command that installs it on the server; null when installed")
    base_url: Literal["none", "optional", "required"] = Field(
        description="none: it calls its own servers; optional: a default server, another may be named; "
        "required: the config names the server"
    )
    default_url: str | None = Field(description="The server it calls when the config names none")
    aliases: list[str] = Field(description="Other prefixes that mean this provider")
    plugin: str | None = Field(description="The package of a third-party plugin; null for moot's own")


class ModelInfo(BaseModel):
    model: str = Field(description="provider:model")
    provider: str
    problem: str | None = Field(
        description="Why this server cannot call it now (a key not set, a package not installed); null: it can"
    )


class PluginProblemInfo(BaseModel):
    name: str
    distribution: str | None
    reason: str


class Limits(BaseModel):
    """The limits this server enforces on a debate (its settings, `MOOT_*`) and the config's own bounds."""

    min_participants: int
    max_participants: int
    max_rounds: int
    max_tokens: int = Field(description="Highest max_tokens any model call may ask for")
    max_judges: int
    max_fallbacks: int
    max_body_bytes: int
    max_config_chars: int = Field(description="Longest config text `/api/configs/parse` reads")
    max_running_per_token: int
    base_url_allowed: bool = Field(description="Whether a request may name a base_url at all")


class Choice(BaseModel):
    values: list[str]
    default: str = Field(description="What a config that leaves the field out gets")


class Choices(BaseModel):
    """The values a config's fields of a fixed set take, and their defaults."""

    turn_order: Choice
    persona_diversity: Choice
    drift: Choice = Field(description="stopping.drift: what a participant's relevance below 5/10 does")


class Bounds(BaseModel):
    """The lengths and ranges a config's fields must keep (its schema's), for a form's controls."""

    topic_chars: int
    name_chars: int = Field(description="A participant's or judge's name")
    persona_chars: int
    stance_chars: int
    temperature: tuple[float, float] = Field(description="Lowest and highest temperature")


class RoleInfo(BaseModel):
    name: RoleName
    title: str = Field(description="The name a participant of this role gets when it has none")
    focus: str


class TemplateVariable(BaseModel):
    description: str
    default: str | None


class TemplateInfo(BaseModel):
    name: str
    title: str
    description: str
    topic: str = Field(description="The topic with `{variable}` placeholders")
    variables: dict[str, TemplateVariable]
    format: str = Field(description="The format it suggests where the config names none")
    roles: list[RoleName] = Field(
        description="The role agents it suggests where the config names no participants"
    )


class Meta(BaseModel):
    providers: list[ProviderInfo]
    other_providers: list[str] = Field(
        description="Further prefixes built through pydantic-ai (keys and packages as its docs give them)"
    )
    broken_plugins: list[PluginProblemInfo]
    default_model: str
    models: list[ModelInfo] = Field(
        description="Model names to suggest where a model is typed: examples per provider, those this server "
        "can call first; any other name a provider serves works too"
    )
    aliases: dict[str, str] = Field(description="Prefix aliases and the provider each stands for")
    voices: dict[str, str] = Field(description="Reserved speaker ids of the formats' voices and their names")
    formats: list[str] = Field(description="The format names a config's `format` takes")
    fixed_rounds: dict[str, dict[int, int]] = Field(
        description="The formats whose structure fixes their length: for each, the rounds it holds by the "
        "number of participants it takes (a config's `rounds` does not change it)"
    )
    limits: Limits
    limit_variables: dict[str, str] = Field(description="The environment variable that sets each limit")
    palette: list[str] = Field(
        description="A participant's colour by its place in the config (wrapping), as the exports and terminal use"
    )
    voice_colour: str = Field(description="The colour of the format's own voices (moderator, judge, ...)")
    starting_model: str = Field(
        description="The model a new config starts with here: default_model when its provider is installed, "
        f"else {DEMO_MODEL} (no model at all), so a new config runs as it is"
    )
    new_config: dict[str, Any] = Field(
        description="A new config before its topic is written, with what the server fills in shown "
        "(names, stances, rounds), as a form starts"
    )
    panel_judge_names: list[str] = Field(
        description="The name each panel judge gets by its place when it has none"
    )
    choices: Choices
    bounds: Bounds
    roles: list[RoleInfo] = Field(description="The role presets a participant's `role` takes, in their order")
    templates: list[TemplateInfo] = Field(
        description="The problem templates a config names with `template` (filled with `vars`), as `moot "
        "templates` lists them"
    )
    temperatures: dict[str, float | None] = Field(
        description="The temperature each kind of call gets where neither its model nor the config's "
        "`temperatures` sets one (debater, judge, personas, summary); null: none is sent"
    )
    fields: list[str] = Field(
        description="The fields a config holds at its top level, in their order (`moot schema` describes each)"
    )


class SeatMeta(BaseModel):
    """/api/meta as a join link reads it: what the join page draws with, never the server's providers, keys,
    limits or plugins (those are the operator's)."""

    voices: dict[str, str] = Field(description="Reserved speaker ids of the formats' voices and their names")
    palette: list[str] = Field(description="A participant's colour by its place in the config (wrapping)")
    voice_colour: str = Field(description="The colour of the format's own voices (moderator, judge, ...)")


def provider_info(row: ProviderStatus) -> ProviderInfo:
    return ProviderInfo(
        name=row.name,
        description=row.description,
        key_vars=list(row.key_vars),
        key_required=row.key_required,
        key_set=row.key_set,
        installed=row.installed,
        install=row.install,
        base_url=row.base_url,
        default_url=row.default_url,
        aliases=list(row.aliases),
        plugin=row.plugin,
    )


@router.get("/api/models")
async def models() -> list[ProviderInfo]:
    """Providers and whether this server has their key (never the key itself)."""
    return [provider_info(row) for row in provider_statuses()]


@router.get("/api/meta", response_model=Meta | SeatMeta)
async def meta(request: Request) -> Meta | SeatMeta:
    """Everything a client needs to write a config this server accepts; with a join link's token, only what its
    page draws with (SeatMeta)."""
    if seat_of(request.scope) is not None:
        return SeatMeta(voices=dict(VOICES), palette=list(PALETTE), voice_colour=VOICE_COLOUR)
    settings: ServerSettings = request.app.state.settings
    limits = Limits(
        min_participants=MIN_PARTICIPANTS,
        max_participants=settings.max_participants,
        max_rounds=settings.max_rounds,
        max_tokens=settings.max_tokens,
        max_judges=MAX_JUDGES,
        max_fallbacks=MAX_FALLBACKS,
        max_body_bytes=settings.max_body_bytes,
        max_config_chars=MAX_TEXT,
        max_running_per_token=settings.max_running_per_token,
        base_url_allowed=bool(settings.allowed_base_urls),
    )
    variables = {
        name: env_name(name)
        for name in (
            "max_participants",
            "max_rounds",
            "max_tokens",
            "max_body_bytes",
            "max_running_per_token",
        )
    }
    variables["base_url_allowed"] = env_name("allowed_base_urls")
    statuses = provider_statuses()
    starting = DEFAULT_MODEL if _installed(statuses, DEFAULT_MODEL) else DEMO_MODEL
    return Meta(
        providers=[provider_info(row) for row in statuses],
        other_providers=list(other_prefixes()),
        broken_plugins=[
            PluginProblemInfo(name=p.name, distribution=p.distribution, reason=p.reason)
            for p in broken_plugins()
        ],
        default_model=DEFAULT_MODEL,
        models=[
            ModelInfo(model=s.model, provider=s.provider, problem=s.problem)
            for s in suggested_models(statuses, first=(starting, DEFAULT_MODEL))
        ],
        aliases=aliases(),
        voices=dict(VOICES),
        formats=list(PROTOCOLS),
        fixed_rounds=FIXED_ROUNDS,
        limits=limits,
        limit_variables=variables,
        palette=list(PALETTE),
        voice_colour=VOICE_COLOUR,
        starting_model=starting,
        new_config=_starting_config(starting),
        panel_judge_names=[panel_judge_name(i) for i in range(MAX_JUDGES)],
        choices=CHOICES,
        bounds=BOUNDS,
        roles=ROLE_INFO,
        templates=TEMPLATE_INFO,
        temperatures=Temperatures().model_dump(),
        fields=list(DebateConfig.model_fields),
    )


def _starting_config(starting: str) -> dict[str, Any]:
    """The config a new form starts from: the defaults `moot configure` (or PUT /api/config) saved, read on
    every request so a change shows at once; none saved, two participants of `starting`."""
    try:
        defaults = load_user_defaults()
    except ConfigError:
        defaults = UserDefaults()  # a broken file is GET /api/config's to report; the form still draws
    return starting_config(starting, defaults)


def _bound(model: type[BaseModel], field: str, key: Literal["maxLength", "minimum", "maximum"]) -> Any:
    """A bound the config's own schema gives a field (an optional field's sits in its `anyOf`)."""
    prop = model.model_json_schema()["properties"][field]
    for part in (prop, *prop.get("anyOf", ())):
        if key in part:
            return part[key]
    raise LookupError(f"{model.__name__}.{field} has no {key}")


CHOICES = Choices(
    turn_order=Choice(
        values=list(get_args(TurnOrder)), default=DebateConfig.model_fields["turn_order"].default
    ),
    persona_diversity=Choice(
        values=list(get_args(Diversity)), default=DebateConfig.model_fields["persona_diversity"].default
    ),
    drift=Choice(values=list(get_args(DriftAction)), default=Stopping.model_fields["drift"].default),
)
BOUNDS = Bounds(
    topic_chars=_bound(DebateConfig, "topic", "maxLength"),
    name_chars=min(_bound(Participant, "name", "maxLength"), _bound(JudgeConfig, "name", "maxLength")),
    persona_chars=_bound(Participant, "persona", "maxLength"),
    stance_chars=_bound(Participant, "stance", "maxLength"),
    temperature=(
        _bound(Participant, "temperature", "minimum"),
        _bound(Participant, "temperature", "maximum"),
    ),
)


def _fixed_rounds() -> dict[str, dict[int, int]]:
    out: dict[str, dict[int, int]] = {}
    for name, protocol in PROTOCOLS.items():
        counts = range(protocol.traits.min_participants, protocol.traits.max_participants + 1)
        lengths = {n: protocol.fixed_length(n) for n in counts}
        if fixed := {n: r for n, r in lengths.items() if r is not None}:
            out[name] = fixed
    return out


FIXED_ROUNDS = _fixed_rounds()
ROLE_INFO = [RoleInfo(name=r.name, title=r.title, focus=r.focus) for r in ROLES.values()]
TEMPLATE_INFO = [
    TemplateInfo(
        name=t.name,
        title=t.title,
        description=t.description,
        topic=t.topic,
        variables={
            k: TemplateVariable(description=v.description, default=v.default) for k, v in t.variables.items()
        },
        format=t.format,
        roles=list(t.roles),
    )
    for t in templates().values()
]


def _installed(statuses: list[ProviderStatus], model: str) -> bool:
    provider = ModelRef.model_validate(model).provider
    return any(row.name == provider and row.installed for row in statuses)

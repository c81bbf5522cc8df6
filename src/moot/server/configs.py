"""What the web page's new-debate form asks of the server before it starts a debate: read a config file,
write one, check one as POST /api/debates would, and have a model propose personas.

None of them reads this server's files: a config's `context_file` is refused, and YAML anchors too (an
alias-bomb of a few kilobytes expands past any memory).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Annotated, Any, Literal

import yaml
from fastapi import APIRouter, Body, HTTPException, Query, Request
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from moot.config_files import RequestedConfig
from moot.config_files.compose import Composed, DebateRequest, compose
from moot.config_files.defaults import without_defaults
from moot.config_syntax import syntax_error
from moot.domain.config import (
    MAX_PARTICIPANTS,
    MAX_TOPIC,
    MIN_PARTICIPANTS,
    DebateConfig,
    Diversity,
    JudgeConfig,
    ModelOptions,
    config_error,
)
from moot.domain.personas import ProposedPersona, persona_text
from moot.domain.text import TopicText
from moot.engine import Caller, ModelResolver, check_live, check_run, propose_personas
from moot.errors import ConfigError, UserError, one_line
from moot.server.security import check_config

# A config with the largest context (200,000 characters) and room for the rest; the body limit still applies.
MAX_TEXT = 300_000
# Far more than any config needs (format_options are the deepest, a few levels), far less than the
# serialiser's own limit.
MAX_DEPTH = 32
_TOO_DEEP = f"the config is nested more than {MAX_DEPTH} levels deep"

router = APIRouter(tags=["configs"])


class ConfigText(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(
        max_length=MAX_TEXT, description="A debate config as YAML or JSON (`moot run --config`)"
    )


class Checked(BaseModel):
    ok: Literal[True] = True
    origins: dict[str, str] = Field(
        default_factory=dict,
        description="Where each value of the composed config came from, by its dotted path (request, preset "
        "NAME, template NAME, saved defaults, format default, default); a path not listed takes the nearest "
        "listed one above it",
    )
    notes: list[str] = Field(default_factory=list, description="One line for each list a layer replaced")


class PersonaRequest(ModelOptions):
    """The model (and its options) that proposes, with what it proposes for."""

    topic: TopicText = Field(min_length=1, max_length=MAX_TOPIC)
    count: int = Field(default=MIN_PARTICIPANTS, ge=MIN_PARTICIPANTS, le=MAX_PARTICIPANTS)
    diversity: Diversity = "multi-perspective"


class PersonaProposal(BaseModel):
    personas: list[ProposedPersona]
    texts: list[str] = Field(
        description="Each proposal as a participant's persona text, as a debate gives an 'auto' persona"
    )
    reasoning: str


def requested(data: dict[str, Any], *, saved_defaults: bool) -> Composed:
    """A config sent as data (a request body, a file's text, an edit) composed as a config file is; it may not
    read this server's files (`context_file`), and a mistake is one ConfigError naming the field."""
    if "context_file" in data:
        raise ConfigError(
            "a request may not read this server's files; paste the text into context instead",
            field="context_file",
        )
    try:
        return compose(DebateRequest.of(data, saved_defaults=saved_defaults))
    except ValidationError as exc:  # composing translates its own; a template's may slip through
        raise config_error(exc) from None


def requested_config(data: dict[str, Any]) -> DebateConfig:
    """A config as written (a file's text, an edit of a stored one): moot's defaults, not this machine's saved
    ones, fill it, so what reads back is what was written."""
    return requested(data, saved_defaults=False).config


@router.post("/api/configs/parse", response_model=None, responses={200: {"model": DebateConfig}})
def parse_config(body: ConfigText) -> dict[str, Any]:
    """A config file's text (YAML or JSON, as `moot run --config` reads it) as a checked DebateConfig, with
    what the CLI fills in filled (names, stances, a format's rounds) and the other defaults left out. A 422
    names the field at fault. `context_file` is refused: paste the context into `context`."""
    return without_defaults(requested_config(_load(body.text)))


@router.post(
    "/api/configs/yaml",
    response_class=PlainTextResponse,
    responses={200: {"content": {"text/yaml": {}}}},
)
def config_yaml(config: DebateConfig) -> PlainTextResponse:
    """The config as a YAML file without its default values, loadable by `/api/configs/parse` and by
    `moot run --config`."""
    return PlainTextResponse(to_yaml(config), media_type="text/yaml; charset=utf-8")


@router.post(
    "/api/configs/draft-yaml",
    response_class=PlainTextResponse,
    responses={200: {"content": {"text/yaml": {}}}},
)
def draft_yaml(config: Annotated[dict[str, Any], Body()]) -> PlainTextResponse:
    """A config being written, as YAML for an editor: a valid one as `/api/configs/yaml` writes it (filled as
    POST /api/debates fills it, its defaults left out); an unfinished one (no topic yet, a number out of range)
    as it was sent, so it can be finished in the editor, where `/api/configs/parse` and `/api/configs/check`
    say what is wrong with it."""
    check_depth(config)
    try:
        data = without_defaults(requested_config(config))
    except (UserError, ValidationError):
        data = config
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    return PlainTextResponse(text, media_type="text/yaml; charset=utf-8")


@router.post("/api/configs/check")
async def check(
    request: Request,
    config: RequestedConfig,
    live: Annotated[
        bool,
        Query(
            description="Also ask each provider, with one cheap call per distinct model (a model listing or a "
            "reply of a few tokens), whether the key and the model name work (a 422 naming the field)"
        ),
    ] = False,
) -> Checked:
    """Every check POST /api/debates runs before it starts a debate, without starting one: this server's
    limits and allowlists, the format's rules, and each model's package and API key (a 422 such as
    `participants.0.model: openai needs OPENAI_API_KEY`); with `live=true`, the providers' own word on each
    key and model name (it costs a call each)."""
    check_config(config, request.app.state.settings)
    checked = check_run(config, _resolver(request))
    if live:
        await check_live(checked.config, checked.resolve)
    composed = requested(await request.json(), saved_defaults=True)  # the body again, for its origins
    return Checked(origins=composed.origins, notes=composed.notes)


@router.post("/api/personas")
async def personas(request: Request, body: PersonaRequest) -> PersonaProposal:
    """Ask `model` for `count` positions and personas on `topic`, as a debate with `persona: auto` does
    when it starts. The model passes the same checks as a debate's; a model that gives no valid
    proposal is a 502 saying why."""
    options = JudgeConfig.model_validate(body.model_dump(include=set(ModelOptions.model_fields)))
    model = options.model_dump(mode="json", include={"model", "base_url"}, exclude_none=True)
    config = compose(
        DebateRequest(
            fields={
                "topic": body.topic,
                # No stance: the proposals give each its position.
                "participants": [
                    {"name": f"Speaker {i + 1}", "stance": "", **model} for i in range(body.count)
                ],
                "judge": options.model_dump(mode="json", exclude_none=True),
                "persona_diversity": body.diversity,
            },
            saved_defaults=False,
        )
    ).config
    try:
        check_config(config, request.app.state.settings)
        resolve = check_run(config, _resolver(request)).resolve
    except UserError as exc:  # named after the request's fields, not the config built from them
        field = (exc.field or "model").rsplit(".", 1)[-1]
        raise ConfigError(exc.public().removeprefix(f"{exc.field}: "), field=field) from None
    ids = [p.id for p in config.participants]
    caller = Caller(options, resolve(options), config.limits)
    proposals, result = await propose_personas(config, caller, ids=ids, seed=None)
    if result.answer is None or len(proposals) < len(ids):
        raise HTTPException(
            502, f"{options.model} proposed no personas: {one_line(result.error or 'no answer')}"
        )
    chosen = [proposals[i] for i in ids]
    return PersonaProposal(
        personas=chosen, texts=[persona_text(p) for p in chosen], reasoning=result.answer.reasoning
    )


def to_yaml(config: DebateConfig) -> str:
    """The config as YAML, defaults left out, that reads back as the same config."""
    return yaml.safe_dump(without_defaults(config), sort_keys=False, allow_unicode=True, width=100)


def _load(text: str) -> dict[str, Any]:
    """The mapping in a config's text: JSON when it starts with `{`, else YAML without anchors."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        if text.lstrip().startswith("{"):
            data = json.loads(text)
        else:
            _check_events(yaml.parse(text, Loader=loader))
            data = yaml.load(text, Loader=loader)
        # Only what JSON can hold (YAML also makes dates and bytes), so the answer can be written back.
        data = json.loads(json.dumps(data))
    except (yaml.YAMLError, json.JSONDecodeError) as exc:
        raise ConfigError(syntax_error(exc, text).in_text()) from None
    except (TypeError, ValueError):
        raise ConfigError("a config holds only text, numbers, true/false, lists and mappings") from None
    except RecursionError:
        raise ConfigError(_TOO_DEEP) from None
    if not isinstance(data, dict):
        raise ConfigError("a config must hold a mapping of fields (topic, participants, ...)")
    if _deeper_than(data, MAX_DEPTH):
        raise ConfigError(_TOO_DEEP)
    return data


def _check_events(events: Iterator[yaml.Event]) -> None:
    """Refuse aliases and deep nesting while PyYAML is still parsing (it has built nothing yet), so nesting
    past MAX_DEPTH gets moot's message, not whatever a PyYAML release says at its own limit. Only brackets its
    scanner reads ahead in one go (thousands of `[`) can meet that limit first: then it is "not valid YAML"."""
    depth = 0
    for event in events:
        if isinstance(event, yaml.AliasEvent):
            raise ConfigError("YAML anchors and aliases (*name) are not accepted here; write the values out")
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise ConfigError(_TOO_DEEP)
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def check_depth(data: Any) -> None:
    """A ConfigError when a request's config nests deeper than MAX_DEPTH: what walks it (merging, checking)
    recurses, and no config is that deep."""
    if _deeper_than(data, MAX_DEPTH):
        raise ConfigError(_TOO_DEEP)


def _deeper_than(data: Any, levels: int) -> bool:
    """Whether lists and mappings nest more than `levels` deep (level by level: no recursion to exhaust)."""
    level = [data]
    for _ in range(levels):
        level = [
            child
            for item in level
            for child in (item.values() if isinstance(item, dict) else item if isinstance(item, list) else ())
        ]
        if not level:
            return False
    return True


def _resolver(request: Request) -> ModelResolver | None:
    # The resolver the app's debates use (tests give fakes); None: the real providers, checked for keys.
    resolve: ModelResolver | None = request.app.state.manager.resolve
    return resolve


__all__ = ["MAX_TEXT", "check_depth", "router", "to_yaml"]

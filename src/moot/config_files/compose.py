"""One way in: every way a debate is asked for makes a `DebateRequest`, and `compose` alone makes its config.

The ways in are the CLI's flags and its wizard, a config file (moot's layout or a design team's), a preset, a
problem template, the saved defaults of `moot configure`, the server's POST, PUT and PATCH, the MCP tools,
`/v1/chat/completions`, eval, the arena and the Python API. Each one only reads what it was given into a request
(another tool's spelling is translated by its reader); the defaults are filled here and nowhere else
(tests/test_one_way_in.py holds every other module to that).

Precedence, lowest first. A later layer's value replaces an earlier one's; the settings mappings (`MERGED`) are
merged key by key, and a layer that gives `judge` or `judges` replaces the other:

1. moot's own defaults: DebateConfig's, a format's own rounds, two rounds on the embedded model
2. the saved defaults (`moot configure`): the format, the participants (or the design team) and each one's
   model by its place, the judge, the rounds; they fill only what no layer above gives
3. a problem template: its topic, and its suggested format and roles
4. a preset
5. a config file
6. the request itself: the flags, a request body, a tool call's arguments

`Composed` keeps the config with where each value came from (`origins`, shown by `moot run --show-config` and
`POST /api/configs/check`) and one line for each list a layer replaced (`notes`): never silently.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from moot.config_files.aliases import with_moot_names
from moot.config_files.defaults import fill_defaults, without_defaults
from moot.config_files.design_team_config import from_design_team_config
from moot.config_files.user_defaults import DESIGN_REVIEW, UserDefaults, load_user_defaults
from moot.domain.config import DebateConfig, ModelOptions, validate_config
from moot.domain.models import DEFAULT_MODEL
from moot.domain.personas import AUTO
from moot.errors import ConfigError
from moot.problem_templates import get_template

# Settings mappings: a layer that gives some of their keys keeps the others a lower layer gave.
MERGED = ("limits", "stopping", "history", "temperatures", "format_options", "judge", "audience", "moderator")
# Keys that name a layer rather than a config field.
_LAYER_KEYS = ("preset", "template", "vars")
# The origins of values nobody gave.
DEFAULT = "default"
FORMAT_DEFAULT = "format default"
EMBEDDED_DEFAULT = "embedded-model default"
SAVED = "saved defaults"
# The embedded model is small: two rounds keep a debate quick and inside its window.
EMBEDDED_ROUNDS = 2


class ConfigFile(BaseModel):
    """A config file's fields as its reader translated them to moot's names (`read_config_file`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="How the file is named in origins and notes: its file name")
    fields: dict[str, Any]


class DebateRequest(BaseModel):
    """What a way in asks for, before anything is filled in: the config fields the person gave, in moot's names,
    and the layers to start from. `compose` turns it into a DebateConfig."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fields: dict[str, Any] = Field(
        default_factory=dict, description="The config fields asked for (topic, participants, rounds, ...)"
    )
    given_by: str = Field(
        default="request", description="What `fields` are called in origins: flag, request, tool call, ..."
    )
    spelled: dict[str, str] = Field(
        default_factory=dict,
        description="How a field was written where it was asked for (participants: -p), for the notes",
    )
    file: ConfigFile | None = None
    preset: str | None = Field(
        default=None,
        description="A preset to start from (`moot presets` lists them); the fields given override it",
    )
    template: str | None = Field(
        default=None,
        description="A problem template that makes the topic (`moot templates` lists them), filled from `vars`",
    )
    vars: dict[str, str] = Field(default_factory=dict, description="The template's variables")
    agents: list[str] | None = Field(
        default=None, description="A design team by roles; the agents' models come from the lower layers"
    )
    auto_personas: bool = Field(default=False, description="Every participant without a persona gets 'auto'")
    saved_defaults: bool = Field(
        default=True,
        description="Whether this machine's saved defaults apply (off where a measurement must not depend on them)",
    )

    @classmethod
    def of(cls, data: Mapping[str, Any], *, given_by: str = "request", **options: Any) -> DebateRequest:
        """A request from a config's data written in any spelling moot reads (its own, a design team's file,
        `agents`/`num_rounds`), as a request body or a tool call gives it."""
        return cls(fields=with_moot_names(from_design_team_config(dict(data))), given_by=given_by, **options)


class Composed(BaseModel):
    """A composed config, with where each of its values came from."""

    model_config = ConfigDict(frozen=True)

    config: DebateConfig
    origins: dict[str, str] = Field(
        description="A value's dotted path (rounds, stopping.min_rounds, participants.0.model) -> where it came "
        "from; a path not listed takes the origin of the nearest listed one above it, else the default"
    )
    notes: list[str] = Field(default_factory=list, description="One line for each list a layer replaced")

    def origin(self, path: str) -> str:
        while path:
            if path in self.origins:
                return self.origins[path]
            path = path.rpartition(".")[0]
        return DEFAULT

    def annotated_yaml(self) -> str:
        """The config as a YAML file (its default values left out) with each value's origin as a comment."""
        lines: list[str] = []
        _emit(without_defaults(self.config), "", 0, lines, self.origin, in_list=False)
        return "\n".join(lines) + "\n"


def compose(request: DebateRequest | Mapping[str, Any], *, saved: UserDefaults | None = None) -> Composed:
    """The config a request asks for, every layer applied in the order of the module's doc. `saved` stands for
    the saved defaults file (tests, a server's own); left out, it is read when the request takes saved defaults.
    A mistake is one ConfigError naming the field."""
    data, origins, notes = _composed(request, saved)
    return Composed(config=validate_config(data), origins=origins, notes=notes)


def composed_data(request: DebateRequest | Mapping[str, Any]) -> dict[str, Any]:
    """The data `compose` validates, for a caller that validates it as part of its own model (a request body,
    whose every mistake pydantic then lists)."""
    return _composed(request, None)[0]


def _composed(
    request: DebateRequest | Mapping[str, Any], saved: UserDefaults | None
) -> tuple[dict[str, Any], dict[str, str], list[str]]:
    if not isinstance(request, DebateRequest):
        request = DebateRequest.of(request)
    top = dict(request.fields)
    file = dict(request.file.fields) if request.file is not None else {}
    layers: list[tuple[str, dict[str, Any]]] = []
    preset, template = (_named(key, getattr(request, key), top, file) for key in ("preset", "template"))
    variables = {**_vars(file.pop("vars", None)), **_vars(top.pop("vars", None)), **request.vars}
    if template is not None:
        layers.append(_template_layer(template, variables, [file, top], preset))
    elif variables:
        raise ConfigError(
            "vars fill a template's variables; name one with --template NAME (template: in a config file)",
            field="vars",
        )
    if preset is not None:
        layers.append(_preset_layer(preset))
    if request.file is not None:
        layers.append((f"file {request.file.name}", file))
    layers.append((request.given_by, top))

    data: dict[str, Any] = {}
    origins: dict[str, str] = {}
    notes: list[str] = []
    for origin, layer in layers:
        _apply(data, origins, layer, origin, notes, request.spelled)
    if request.agents:
        _team(data, origins, request, notes, given="participants" in top)
    defaults = (
        saved if saved is not None else load_user_defaults() if request.saved_defaults else UserDefaults()
    )
    _fill_saved(data, origins, defaults, SAVED if request.saved_defaults or saved is not None else DEFAULT)
    if request.auto_personas and isinstance(data.get("participants"), list):
        for i, p in enumerate(data["participants"]):
            if isinstance(p, dict) and not str(p.get("persona") or "").strip():
                data["participants"][i] = {**p, "persona": AUTO}
                origins[f"participants.{i}.persona"] = request.given_by
    _fill(data, origins)
    return data, origins, notes


def compose_config(data: Mapping[str, Any], **options: Any) -> DebateConfig:
    """The config of a request given as data (`DebateRequest.of`'s options), without the origins."""
    return compose(DebateRequest.of(data, **options)).config


def starting_config(model: str, saved: UserDefaults) -> dict[str, Any]:
    """What a new config is before its topic is written (the page's empty form): composed as a request with
    only an empty topic is, the saved defaults applied, `model` for participants where none is saved. Shown so
    it can be changed; not validated (its topic is still to come)."""
    if not saved.participants:
        saved = saved.model_copy(update={"participants": [ModelOptions(model=model)]})
    data, _, _ = _composed(DebateRequest(fields={"topic": ""}), saved)
    data.setdefault("format", DebateConfig.model_fields["format"].default)
    data.setdefault("rounds", DebateConfig.model_fields["rounds"].default)
    return data


def with_saved_models(data: dict[str, Any], saved: UserDefaults) -> dict[str, Any]:
    """A config's data (a preset's, shown) with the saved models where it names none, as `compose` gives them."""
    out = dict(data)
    _fill_saved(out, {}, saved, SAVED, whole=False)
    return out


def over(base: Mapping[str, Any], layer: Mapping[str, Any]) -> dict[str, Any]:
    """`layer`'s keys over `base`'s, as one layer goes over another (a file's over the preset it names)."""
    data = dict(base)
    _apply(data, {}, layer, "", [], {})
    return data


def _apply(
    data: dict[str, Any],
    origins: dict[str, str],
    layer: Mapping[str, Any],
    origin: str,
    notes: list[str],
    spelled: Mapping[str, str],
) -> None:
    for key, value in layer.items():
        if key in ("judge", "judges"):
            other = "judges" if key == "judge" else "judge"
            # One layer's panel replaces a lower layer's single judge, and the other way round.
            if other in data and other not in layer and not (key == "judges" and not value):
                del data[other]
                _forget(origins, other)
        if key in MERGED and isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
            for sub in value:
                _forget(origins, f"{key}.{sub}")
                origins[f"{key}.{sub}"] = origin
            continue
        if key in ("participants", "judges") and isinstance(data.get(key), list) and data[key]:
            replaced = origins.get(key, "")
            if replaced.startswith(("file ", "preset ")):
                notes.append(_replaced(spelled.get(key, origin), data[key], key, replaced))
        data[key] = value
        _forget(origins, key)
        origins[key] = origin


def _replaced(who: str, old: list[Any], key: str, where: str, extra: str = "") -> str:
    what = key if len(old) != 1 else key.removesuffix("s")
    return f"{who} replaced the {len(old)} {what} of {where.removeprefix('file ')}{extra}"


def _forget(origins: dict[str, str], key: str) -> None:
    for path in [p for p in origins if p == key or p.startswith(f"{key}.")]:
        del origins[path]


def _named(key: str, asked: object, top: dict[str, Any], file: dict[str, Any]) -> object:
    """The preset or template a request names: its own, else its fields', else its file's."""
    fields, written = top.pop(key, None), file.pop(key, None)
    return next((name for name in (asked, fields, written) if name is not None), None)


def _vars(values: object) -> dict[str, str]:
    if values is None:
        return {}
    if not isinstance(values, Mapping):
        raise ConfigError("give vars as a mapping of variable: value", field="vars")
    return {str(k): str(v) for k, v in values.items()}


def _template_layer(
    name: object, variables: dict[str, str], above: list[dict[str, Any]], preset: object
) -> tuple[str, dict[str, Any]]:
    if any(layer.get("topic") for layer in above):
        raise ConfigError("give either a topic or a template, not both", field="template")
    template = get_template(str(name))
    layer: dict[str, Any] = {"topic": template.fill(variables), "format": template.format}
    if template.roles:
        # No model: the saved one for that place, else the embedded model.
        layer["participants"] = [{"role": role} for role in template.roles]
    return f"template {template.name}", layer


def _preset_layer(name: object) -> tuple[str, dict[str, Any]]:
    from moot.config_files.presets import load_preset  # presets check their data through this module

    if not isinstance(name, str) or not name.strip():
        raise ConfigError(
            "give a preset's name, e.g. preset: council (moot presets lists them)", field="preset"
        )
    preset = load_preset(name)
    return f"preset {preset.name}", dict(preset.data)


def _team(
    data: dict[str, Any], origins: dict[str, str], request: DebateRequest, notes: list[str], *, given: bool
) -> None:
    """`--agents ROLE,...`: an agent of a role a lower layer already has is that agent, model and all; another
    takes the model of the lower layer's agent at its place; with neither, the saved model at its place."""
    from moot.roles import parse_roles

    if given:
        raise ConfigError(
            "give the debaters once: --agents ROLES (models from moot configure) or -p MODEL,role=ROLE ...",
            field="--agents",
        )
    before = [p for p in data.get("participants") or [] if isinstance(p, dict)]
    team = [_agent(role, i, before) for i, role in enumerate(parse_roles(",".join(request.agents or [])))]
    lower = origins.get("participants", "")
    if before and lower.startswith(("file ", "preset ")):
        kept = sum(1 for agent in team if agent in before)
        notes.append(
            _replaced(
                "--agents",
                before,
                "participants",
                origins["participants"],
                f" (kept {kept} by role; the others take the models of its agents by place)",
            )
        )
    data["participants"] = team
    _forget(origins, "participants")
    origins["participants"] = request.given_by
    for i, agent in enumerate(team):  # what an agent kept of the lower layer's is that layer's
        if agent in before:
            origins[f"participants.{i}"] = lower
        elif "model" in agent:
            origins[f"participants.{i}.model"] = lower
    if "format" not in data:
        data["format"] = DESIGN_REVIEW
        origins["format"] = request.given_by


def _agent(role: str, place: int, given: list[dict[str, Any]]) -> dict[str, Any]:
    same = next((p for p in given if p.get("role") == role), None)
    if same is not None:
        return same
    at_place = given[place % len(given)] if given else {}
    # Its model where it is reached too: a `base_url` server's model means nothing without the address.
    return {"role": role, **{k: at_place[k] for k in ("model", "base_url") if k in at_place}}


def _fill_saved(
    data: dict[str, Any], origins: dict[str, str], saved: UserDefaults, label: str, *, whole: bool = True
) -> None:
    """What the saved defaults give where no layer gave it (`whole`: the format and rounds too, not only models)."""
    given = saved.model_fields_set

    def said(field: str) -> str:
        return label if field in given else DEFAULT

    if whole and "format" not in data and saved.format is not None:
        data["format"] = saved.format
        origins["format"] = said("format")
    if "participants" not in data:
        if data.get("format") == DESIGN_REVIEW:
            data["participants"] = [{"role": role} for role in saved.team]
            origins["participants"] = said("team")
        else:
            data["participants"] = saved.participant_models()
            origins["participants"] = said("participants")
    if isinstance(data["participants"], list):
        for i, p in enumerate(data["participants"]):
            if isinstance(p, dict) and "model" not in p:
                data["participants"][i] = {**saved.participant(i), **p}
                origins[f"participants.{i}.model"] = said("participants")
    judge = saved.judge_data()
    if judge is not None and "judges" not in data:
        if "judge" not in data:
            data["judge"] = judge
            origins["judge"] = label
        elif isinstance(data["judge"], dict) and "model" not in data["judge"]:
            data["judge"] = {**judge, **data["judge"]}
            origins["judge.model"] = label
    if whole and "rounds" not in data and saved.rounds is not None:
        data["rounds"] = saved.rounds
        origins["rounds"] = label


def _fill(data: dict[str, Any], origins: dict[str, str]) -> None:
    """moot's own defaults: participants' names and a two-sided debate's stances, a format's rounds (two on the
    embedded model)."""
    from moot.protocols import PROTOCOLS
    from moot.protocols.round_robin import RoundRobin

    fmt = data.get("format", DebateConfig.model_fields["format"].default)
    protocol = PROTOCOLS.get(fmt) if isinstance(fmt, str) else None  # an unknown one is the config's check's
    participants = data.get("participants")
    if isinstance(participants, list) and all(isinstance(p, dict) for p in participants):
        sides = protocol is None or protocol.traits.names_winner
        filled = fill_defaults(participants, sides=sides)
        for i, (before, after) in enumerate(zip(participants, filled, strict=True)):
            for key in after.keys() - before.keys():
                origins[f"participants.{i}.{key}"] = DEFAULT
        data["participants"] = filled
        local = all(str(p.get("model", DEFAULT_MODEL)).startswith("local:") for p in filled)
        if "rounds" not in data and local and isinstance(protocol, RoundRobin):
            data["rounds"] = EMBEDDED_ROUNDS
            origins["rounds"] = EMBEDDED_DEFAULT
    if "rounds" not in data and protocol is not None and protocol.traits.default_rounds is not None:
        data["rounds"] = protocol.traits.default_rounds
        origins["rounds"] = FORMAT_DEFAULT


def _emit(value: Any, path: str, indent: int, lines: list[str], origin: Any, *, in_list: bool) -> None:
    """YAML by hand, one value a line, so that each line can carry its value's origin."""
    pad = " " * indent
    if isinstance(value, dict):
        for n, (key, item) in enumerate(value.items()):
            at = f"{path}.{key}" if path else str(key)
            lead = f"{pad[:-2]}- " if in_list and n == 0 else pad
            if isinstance(item, dict | list) and item:
                lines.append(f"{lead}{_scalar(key)}:  # {origin(at)}")
                _emit(item, at, indent + 2, lines, origin, in_list=False)
            else:
                lines.append(f"{lead}{_scalar(key)}: {_scalar(item)}  # {origin(at)}")
        return
    for i, item in enumerate(value):
        at = f"{path}.{i}"
        if isinstance(item, dict) and item:
            _emit(item, at, indent + 2, lines, origin, in_list=True)
        else:
            lines.append(f"{pad}- {_scalar(item)}  # {origin(at)}")


def _scalar(value: Any) -> str:
    # Text of several lines is one double-quoted line ("a\nb"), so the origin still ends its line.
    style = '"' if isinstance(value, str) and "\n" in value else None
    text = yaml.safe_dump(
        value, default_flow_style=True, default_style=style, allow_unicode=True, width=1_000_000
    )
    return text.removesuffix("\n").removesuffix("\n...").strip()


__all__ = [
    "EMBEDDED_ROUNDS",
    "MERGED",
    "Composed",
    "ConfigFile",
    "DebateRequest",
    "compose",
    "compose_config",
    "composed_data",
    "over",
    "starting_config",
    "with_saved_models",
]

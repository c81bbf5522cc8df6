"""Debate configs from YAML/TOML/JSON files and from the CLI's compact participant specs."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import BeforeValidator

from moot.config_files.aliases import with_moot_names
from moot.config_files.compose import ConfigFile, DebateRequest, compose, compose_config, composed_data
from moot.config_files.defaults import DEFAULT_STANCES as DEFAULT_STANCES
from moot.config_files.design_team_config import from_design_team_config
from moot.config_syntax import SyntaxErrors, syntax_error
from moot.domain.config import DebateConfig
from moot.domain.models import DEFAULT_MODEL
from moot.errors import ConfigError

SPEC_KEYS = (
    "name",
    "id",
    "stance",
    "persona",
    "role",
    "temperature",
    "max_tokens",
    "base_url",
    "system_prompt",
    "color",
)
# Split on commas that start a `key=` pair, so values (a stance, a persona) may contain commas.
_SPEC_SPLIT = re.compile(r",\s*(?=[A-Za-z_]+\s*=)")


def read_config_file(path: Path) -> dict[str, Any]:
    """The raw mapping in a .yaml/.yml/.toml/.json file; `context_file` is read relative to it."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            f"cannot read {path}: {exc.strerror or exc}; check the path", field="--config"
        ) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path} is not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start}); save it as UTF-8",
            field="--config",
        ) from None
    try:
        if path.suffix in (".yaml", ".yml"):
            data = yaml.safe_load(text)
        elif path.suffix == ".toml":
            data = tomllib.loads(text)
        elif path.suffix == ".json":
            data = json.loads(text)
        else:
            raise ConfigError(f"{path.name}: use a .yaml, .yml, .toml or .json file", field="--config")
    except SyntaxErrors as exc:
        raise ConfigError(syntax_error(exc, text).in_file(str(path)), field="--config") from None
    if not isinstance(data, dict):
        raise ConfigError(
            f"{path.name} must hold a mapping of fields (topic, participants, ...)", field="--config"
        )
    if "context_file" in data:
        data["context"] = read_context(path.parent / str(data.pop("context_file")), field="context_file")
    # Renamed here too, so that flags given beside the file (-p, -j, -r) meet moot's names.
    return with_moot_names(from_design_team_config(data))


def read_context(path: Path, *, field: str = "--context-file") -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError(f"cannot read context file {path}: {reason}", field=field) from None


def parse_participant_spec(spec: str, *, index: int) -> dict[str, Any]:
    """`MODEL[,key=value...]` -> participant fields. E.g. `openai:gpt-4o,name=Ada,stance=for`."""
    field = f"--participant {index + 1}"
    head, *pairs = _SPEC_SPLIT.split(spec.strip())
    head = head.strip()
    out: dict[str, Any] = {}
    if re.fullmatch(r"[A-Za-z_]+\s*=.*", head, re.S):
        pairs.insert(0, head)
        head = ""
    out["model"] = head or DEFAULT_MODEL
    for pair in pairs:
        key, _, value = pair.partition("=")
        key = key.strip()
        if key not in SPEC_KEYS:
            raise ConfigError(f"unknown key {key!r}; use {', '.join(SPEC_KEYS)}", field=field)
        out[key] = value.strip()
    return out


def parse_options(specs: list[str], *, field: str = "--option") -> dict[str, Any]:
    """`KEY=VALUE` settings, each value read as YAML (`3`, `true`, `[rebuttal]`), else kept as text."""
    options: dict[str, Any] = {}
    for spec in specs:
        key, sep, value = spec.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{spec!r} is not KEY=VALUE; write e.g. {field} mode=weak", field=field)
        try:
            options[key.strip()] = yaml.safe_load(value) if value.strip() else ""
        except yaml.YAMLError:
            options[key.strip()] = value
    return options


def build_config(data: dict[str, Any]) -> DebateConfig:
    """A DebateConfig from a raw mapping in any spelling moot reads, moot's defaults filled (not this machine's
    saved ones: a program's config means the same on every machine)."""
    return compose_config(data, given_by="python", saved_defaults=False)


def _requested(data: Any) -> Any:
    return composed_data(data) if isinstance(data, dict) else data


# A debate requested of this machine's server: composed with the defaults `moot configure` (or PUT /api/config)
# saved where it names no participants, models, judge or rounds, as `moot run` gives them.
RequestedConfig = Annotated[DebateConfig, BeforeValidator(_requested)]


def load_config(path: Path, **overrides: Any) -> DebateConfig:
    """A DebateConfig from a file, with non-None overrides on top (moot's defaults, not the saved ones)."""
    fields = {k: v for k, v in overrides.items() if v is not None}
    file = ConfigFile(name=path.name, fields=read_config_file(path))
    return compose(DebateRequest(file=file, fields=fields, given_by="python", saved_defaults=False)).config

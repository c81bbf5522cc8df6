"""Debate configs from YAML/TOML/JSON files and from the CLI's compact participant specs."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import BeforeValidator

from moot.config_syntax import SyntaxErrors, syntax_error
from moot.domain.config import DebateConfig, validate_config
from moot.domain.models import DEFAULT_MODEL
from moot.domain.personas import AUTO
from moot.errors import ConfigError
from moot.problem_templates import apply_template
from moot.protocols import get_protocol
from moot.roles import ROLES

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
)
# Split on commas that start a `key=` pair, so values (a stance, a persona) may contain commas.
_SPEC_SPLIT = re.compile(r",\s*(?=[A-Za-z_]+\s*=)")

DEFAULT_STANCES = ("for the motion", "against the motion")


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
    return data


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


def mark_auto_personas(participants: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every participant without a persona of its own gets an 'auto' one (`--auto-personas`)."""
    return [p if str(p.get("persona") or "").strip() else {**p, "persona": AUTO} for p in participants]


def fill_defaults(participants: list[dict[str, Any]], *, sides: bool = True) -> list[dict[str, Any]]:
    """Give unnamed participants names (a role's title, for one with a role preset) and, in a two-sided
    debate (`sides`: a format that names a winner), opposite stances."""
    filled = []
    two_sided = sides and len(participants) == 2
    for i, p in enumerate(participants):
        p = dict(p)
        if not p.get("name"):
            role = next((r for r in ROLES.values() if r.name == p.get("role")), None)
            if role is not None:
                same = sum(q.get("role") == role.name for q in participants) > 1
                p["name"] = f"{role.title} {i + 1}" if same else role.title
            else:
                p["name"] = ("Proponent", "Opponent")[i] if two_sided else f"Speaker {i + 1}"
        # An 'auto' persona brings its own position: a default stance would pre-empt it.
        if "stance" not in p and two_sided and str(p.get("persona", "")).strip().lower() != AUTO:
            p["stance"] = DEFAULT_STANCES[i]
        filled.append(p)
    return filled


def build_config(data: dict[str, Any]) -> DebateConfig:
    """Validate a raw mapping (from a file, flags or a request) into a DebateConfig."""
    return validate_config(fill_config(data))


def fill_config(data: dict[str, Any]) -> dict[str, Any]:
    """A raw mapping with what a user may leave out filled in, as every way in fills it (files, flags, the
    API): a template's topic, participants' names and two-sided stances, a format's own rounds."""
    data = apply_template(data)
    participants = data.get("participants")
    if isinstance(participants, list) and all(isinstance(p, dict) for p in participants):
        # Consensus formats (design review, council...) have no sides to give stances for.
        sides = get_protocol(str(data.get("format", "free-form"))).names_winner
        data = {**data, "participants": fill_defaults(participants, sides=sides)}
    if "rounds" not in data and isinstance(data.get("format"), str):
        default = get_protocol(data["format"]).default_rounds
        if default is not None:
            data = {**data, "rounds": default}
    return data


def _filled(data: Any) -> Any:
    return fill_config(data) if isinstance(data, dict) else data


# A DebateConfig as a request body: filled as a config file is before it is checked (pydantic reports the rest).
FilledConfig = Annotated[DebateConfig, BeforeValidator(_filled)]


def load_config(path: Path, **overrides: Any) -> DebateConfig:
    """A DebateConfig from a file, with non-None overrides applied on top."""
    data = read_config_file(path)
    data.update({k: v for k, v in overrides.items() if v is not None})
    return build_config(data)
